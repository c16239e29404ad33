"""One section of a rating item as text a rater moves through and marks a quote in
(issue 28, item 11; decision 571).

A read-only :class:`~textual.widgets.TextArea`: the cursor keys move (``ctrl+←/→`` by
word), ``shift`` with them selects, and so does a mouse drag where the terminal sends one. A
terminal that sends no shifted arrows is served by ``space``: it drops a mark at the cursor,
and every move after it extends the selection from the mark (``space`` again lifts it). The text
cannot be edited, and no typed letter leaves it (a letter is not read as a category or as
the app's ``q``). The rating screen adds the selection as a quote (its Enter): exact by
construction, and still checked against the item like a typed quote.

Keys are applied in the widget's own task, in order with the keys around them (see
:mod:`curiosity_tui.widgets.ordered`), so a burst of moves and marks selects exactly what a
rater pressing them one by one would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.events import Key
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from curiosity_tui.packs.schemes import Question
from curiosity_tui.widgets.textual_private import own_bindings

__all__ = ["ItemText", "quote_question"]

#: cursor moves that extend the selection while a mark is down (their ``select`` form)
MOVES = {
    "cursor_up",
    "cursor_down",
    "cursor_left",
    "cursor_right",
    "cursor_word_left",
    "cursor_word_right",
    "cursor_line_start",
    "cursor_line_end",
}


class ItemText(TextArea):
    DEFAULT_CSS = """
    ItemText { height: auto; border: none; padding: 0; background: transparent; }
    ItemText:focus { border: none; background: $boost; }
    ItemText .text-area--cursor-line { background: transparent; }
    ItemText.empty { color: $text-muted; text-style: italic; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "mark", "Mark (moves select)", id="itemtext.mark"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(
            "", read_only=True, soft_wrap=True, show_line_numbers=False, id=id, classes=classes
        )
        #: where ``space`` dropped the mark; None = no mark (moves move, shift+moves select)
        self.mark: tuple[int, int] | None = None

    def show(self, text: str) -> None:
        """Another item's section: its text, cursor at the start, no selection, no mark."""
        self.load_text(text)
        self.mark = None
        self.selection = Selection.cursor((0, 0))

    @property
    def picked(self) -> str:
        """The selected span, exactly as the item has it ('' when nothing is selected)."""
        return self.selected_text

    def drop(self) -> None:
        """After the span became a quote: no selection, no mark; the cursor stays."""
        self.mark = None
        self.selection = Selection.cursor(self.selection.end)

    def action_mark(self) -> None:
        if self.mark is None:
            self.mark = self.selection.end
            self.selection = Selection.cursor(self.mark)
        else:
            self.drop()

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """Printable keys are this widget's (never a category key, never the app's ``q``)."""
        return character is not None and character.isprintable()

    async def on_key(self, event: Key) -> None:
        if event.key in ("enter", "tab", "shift+tab", "escape"):
            return  # the screen's (priority bindings)
        for binding in own_bindings(self, event.key):
            if binding.priority:
                continue
            event.stop()
            event.prevent_default()
            action = binding.action
            if self.mark is not None and action in MOVES:  # extend from the mark
                action = f"{action}(True)"
            await self.run_action(action)
            return
        if event.is_printable:  # read-only: nothing typed lands anywhere
            event.stop()
            event.prevent_default()


def quote_question(questions: Sequence[Question], qid: str | None) -> str | None:
    """The question a picked quote joins: ``qid`` when it takes quotes, else the next one
    that does, else the first that does (None: the scheme takes no quotes)."""
    order = [q.id for q in questions]
    takes = [q.id for q in questions if q.max_quotes]
    start = order.index(qid) if qid in order else 0
    return next((i for i in order[start:] if i in takes), takes[0] if takes else None)
