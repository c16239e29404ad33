"""The rater's guide beside the rating form: the scheme's title and instructions, folded to
its title line on a short terminal until asked (issue 28: at 100x30 it pushed Q1's choices
to row 26), hidden and shown again by the rating screen's ctrl+g."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

__all__ = ["RatingGuide"]


class RatingGuide(VerticalScroll):
    def __init__(self, title: str, instructions: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.guide_title = title
        self.instructions = instructions

    def compose(self) -> ComposeResult:
        yield Static(self.text(), id="rating-guide-text")

    def text(self, *, folded: bool = False) -> Text:
        t = Text(end="")
        t.append("Guide", style="bold underline")
        if folded:
            t.append(f"  (Ctrl+G opens it)  {self.guide_title}", style="dim")  # the key first
            return t
        t.append(f"  {self.guide_title}  (Ctrl+G hides)\n", style="dim")
        t.append(self.instructions)
        return t

    def fold(self, folded: bool) -> None:
        """Folded: the one title line."""
        self.set_class(folded, "folded")
        self.query_one("#rating-guide-text", Static).update(self.text(folded=folded))

    def toggle(self) -> None:
        """ctrl+g: a folded guide opens; an open one hides, a hidden one shows."""
        if self.has_class("folded"):
            self.fold(False)
        else:
            self.toggle_class("closed")
