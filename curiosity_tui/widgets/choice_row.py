"""A focusable row of choices, one key each (rating categories, approve / reject).

The row only shows the choices and which one is taken; the screen that owns it binds the
keys (as priority bindings acting only while a row has focus), so a letter typed into a
text field can never be read as a choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.widget import Widget

__all__ = ["Choice", "ChoiceRow"]


@dataclass(frozen=True)
class Choice:
    key: str
    id: str
    label: str
    help: str = ""


class ChoiceRow(Widget, can_focus=True):
    DEFAULT_CSS = """
    ChoiceRow { height: auto; padding: 0 1; border-left: outer $panel; }
    ChoiceRow:focus { border-left: outer $accent; background: $boost; }
    """

    chosen: reactive[str | None] = reactive(None)

    def __init__(
        self, group: str, choices: list[Choice], *, id: str | None = None, hint: str = ""
    ) -> None:
        super().__init__(id=id)
        self.group = group
        self.choices = choices
        self.hint = hint

    def render(self) -> Text:
        t = Text(end="")
        for i, c in enumerate(self.choices):
            if i:
                t.append("\n")
            mark = "●" if c.id == self.chosen else "○"
            style = "bold reverse" if c.id == self.chosen else "bold"
            t.append(f"{mark} ")
            t.append(f"[{c.key}] {c.label}", style=style)
            if c.help:
                t.append(f" — {c.help}", style="dim")
        if self.hint and self.has_focus:
            t.append(f"\n{self.hint}", style="italic dim")
        return t

    def on_focus(self, event: events.Focus) -> None:
        self.refresh(layout=True)

    def on_blur(self, event: events.Blur) -> None:
        self.refresh(layout=True)

    def key_of(self, choice_id: str) -> str:
        return next(c.key for c in self.choices if c.id == choice_id)
