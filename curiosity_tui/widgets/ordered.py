"""Keystrokes handled in the order they were typed, against the widget they were meant for.

A terminal delivers a fast typist (or a paste, or ``tmux send-keys``) as one burst of key
events. Textual forwards each key to the widget focused *when the app reads it* and lets that
widget handle it later in its own task; focus changes made by ``Widget.focus()`` wait for a
later turn too, and a widget's own bindings (backspace, cursor keys …) run only once the key
has bubbled back up to the app. In a burst, keys therefore land in the wrong field or are
applied out of order. The pieces here close those gaps:

* :func:`drain` — wait until a widget has handled every key already queued to it, so an
  action that reads a field sees exactly what was typed before the key that triggered it;
* a form moves focus only inside *priority* bindings (run by the app before it reads the
  next key) and with ``Screen.set_focus`` (immediate), never ``Widget.focus()``;
* :class:`OrderedInput` / :class:`OrderedTextArea` run their own editing bindings in their
  own task, in order with the characters around them;
* :func:`push_when_ready` — push a form and return only once it is mounted and focused, so
  the keys that follow reach its first field.

Public Textual API throughout (``on_key`` with ``prevent_default``, the awaitable
``push_screen``), but for the lookup of a widget's own bindings, which lives with the other
private reach of this package in :mod:`curiosity_tui.widgets.textual_private`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.events import Key
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.widgets import DataTable, Input, OptionList, TextArea

from curiosity_tui.widgets.textual_private import own_bindings

__all__ = [
    "OrderedDataTable",
    "OrderedInput",
    "OrderedOptionList",
    "OrderedTextArea",
    "drain",
    "push_when_ready",
]

# Only a safety net: a widget that stops running while we wait must not hang the app.
_DRAIN_LIMIT_S = 5.0


async def drain(widget: MessagePump | None) -> None:
    """Return once ``widget`` has handled every message queued to it before this call."""
    if widget is None or not widget.is_running:
        return
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def mark() -> None:
        if not done.done():
            done.set_result(None)

    if not widget.call_later(mark):
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(done), _DRAIN_LIMIT_S)


async def _own_binding(widget: Input | TextArea | OptionList | DataTable[Any], event: Key) -> bool:
    """Run ``widget``'s own (non-priority) binding for ``event`` now, in the widget's task."""
    for binding in own_bindings(widget, event.key):
        if binding.priority:
            continue
        event.stop()
        event.prevent_default()
        await widget.run_action(binding.action)
        return True
    return False


class OrderedInput(Input):
    """An :class:`Input` whose editing keys are applied in order with the typed text."""

    async def on_key(self, event: Key) -> None:
        # a key run here prevents the default (Input's own handler); the others go on to it
        if not (event.is_printable or event.key == "enter"):
            await _own_binding(self, event)


class OrderedTextArea(TextArea):
    """A :class:`TextArea` whose editing keys are applied in order with the typed text."""

    async def on_key(self, event: Key) -> None:
        if not (event.is_printable or event.key in ("enter", "tab")):
            await _own_binding(self, event)


class OrderedOptionList(OptionList):
    """An :class:`OptionList` whose cursor keys move the highlight in order with the burst."""

    async def on_key(self, event: Key) -> None:
        if event.key != "enter":
            await _own_binding(self, event)


class OrderedDataTable(DataTable[Any]):
    """A :class:`DataTable` whose cursor keys move the cursor in order with the burst (the
    screen's priority Enter then reads the row the keys before it reached)."""

    async def on_key(self, event: Key) -> None:
        if event.key != "enter":
            await _own_binding(self, event)


async def push_when_ready(
    app: App[Any], screen: Screen[Any], callback: Callable[[Any], Any] | None = None
) -> None:
    """Push ``screen`` and wait until it has mounted (and set its focus in ``on_mount``)."""
    await app.push_screen(screen, callback)  # Textual's AwaitMount: once on_mount has run
