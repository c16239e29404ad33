"""What the four forms share (the downgrade decision, the curator's reason, adjudication and
the human session): the keys that submit, leave and step between fields, and the stepping.

Every key that moves focus or submits is a priority binding that first lets the focused field
finish the keys already typed into it (:func:`curiosity_tui.widgets.ordered.drain`), so a form
typed in one burst is recorded exactly as typed. A form's binding ids live in its own
namespace (``decide.tab``, ``form.tab``, ...), so a keymap can remap each form's keys apart.

Not a screen: a mixin before the form's screen class (``class DecideScreen(FormSteps,
ModalScreen[...])``), so importing it is not a sibling import.
"""

from __future__ import annotations

from typing import Any, cast

from textual.binding import Binding
from textual.screen import Screen

from curiosity_tui.widgets.ordered import drain

__all__ = ["FormSteps", "leave_key", "step_keys", "submit_key"]


def submit_key(ns: str, action: str = "submit") -> Binding:
    """ctrl+s: submit the form (id ``<ns>.<action>``)."""
    return Binding("ctrl+s", action, "Submit", id=f"{ns}.{action}", priority=True)


def leave_key(ns: str, action: str, description: str) -> Binding:
    """esc: leave the form — cancel it, or go back keeping a draft (id ``<ns>.<action>``)."""
    return Binding("escape", action, description, id=f"{ns}.{action}", priority=True)


def step_keys(ns: str) -> list[Binding]:
    """tab / shift+tab: the next and the previous field (ids ``<ns>.tab``, ``<ns>.backtab``)."""
    return [
        Binding("tab", "step(1)", "Next field", id=f"{ns}.tab", priority=True, show=False),
        Binding(
            "shift+tab", "step(-1)", "Previous field", id=f"{ns}.backtab", priority=True, show=False
        ),
    ]


class FormSteps:
    """The stepping every form does: the focused field finishes its keys, then focus moves."""

    async def action_step(self, delta: int) -> None:
        screen = cast(Screen[Any], self)
        await drain(screen.focused)
        if delta > 0:
            screen.focus_next()
        else:
            screen.focus_previous()
