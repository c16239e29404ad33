"""The two places this package reads a private part of Textual, and why each is needed.

Everything else in the package uses Textual's public API. These two have no public
equivalent, and each is needed for a correctness reason; ``tests/test_textual_private.py``
has a test for each that fails when Textual changes under it (a renamed attribute, another
layout of a node's bindings).

* :func:`own_bindings` — a widget's own (non-priority) bindings for a key, read from the
  node's binding map (``DOMNode._bindings``). Keys typed in a burst (a fast typist, a paste,
  ``tmux send-keys``) must land in order: Textual applies a widget's editing bindings
  (backspace, cursor keys …) only once the key has bubbled back up to the app, after the
  characters typed behind it. :mod:`curiosity_tui.widgets.ordered` runs them in the widget's
  own task instead, in order with the characters, and needs to know which binding a key has.
  Textual offers only the bindings of the *focused* chain (``Screen.active_bindings``), and in
  a burst the widget handling a key is often no longer the focused one.
* :func:`add_priority_binding` — a priority binding added to one screen at run time
  (``BindingsMap.bind`` on the node's map). The rating and adjudication screens bind the keys
  of the pack's coding scheme, which are only known when the pack is opened. They must be
  priority bindings: the app runs those before it reads the next key, so in a burst (a
  category key, Enter, the grounds typed after it) the pick and its focus move to the grounds
  field happen before the typed text arrives. (Textual still leaves a key to a focused field
  that types it.) Textual's public ``bind`` exists only on ``App`` (every screen would get
  them), and ``BINDINGS`` is fixed per class.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.dom import DOMNode

__all__ = ["add_priority_binding", "own_bindings"]


def own_bindings(node: DOMNode, key: str) -> tuple[Binding, ...]:
    """The bindings ``node`` itself declares for ``key`` (its class's ``BINDINGS``, merged
    over its bases as Textual merges them), priority ones included."""
    return tuple(node._bindings.key_to_bindings.get(key, ()))


def add_priority_binding(node: DOMNode, key: str, action: str, description: str) -> None:
    """Bind ``key`` to ``action`` on ``node`` only, as a hidden priority binding."""
    node._bindings.bind(key, action, description, show=False, priority=True)
