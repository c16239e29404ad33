"""The rating screen: one blind item at a time, keyboard first.

Flow for one item: press a category key (shown in brackets) → the grounds line of that
question takes focus → type one line → Enter → (for questions that take quotes) the quote
line takes focus; Enter checks a quote verbatim against the item and adds it, or shows why
it was refused; Enter on an empty quote line leaves it → next category key … → Ctrl+S saves
the item (atomically) and moves on. Esc leaves any input so category keys work again.
``[`` / ``]`` go to the previous / next item; an item already rated opens with its latest
answers, and saving it again appends a revision.

The screen is self-contained: ``RatingScreen(packdir, rater)``. It reads the pack's
manifest, items and this rater's own ratings file only (via :class:`RatingSession`) —
never another rater's file, never the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key
from textual.screen import Screen
from textual.validation import Function
from textual.widgets import Footer, Input, Static

from curiosity_tui.errors import CuriosityError
from curiosity_tui.packs.rating import QuestionAnswer, RatingSession, check_quote, normalise_ws
from curiosity_tui.packs.schemes import Question

__all__ = ["RatingScreen"]


class RatingScreen(Screen[None]):
    DEFAULT_CSS = """
    RatingScreen { layout: vertical; }
    #rating-status { height: 1; padding: 0 1; background: $primary-background; }
    #rating-body { height: 1fr; }
    #rating-item { width: 3fr; padding: 0 1; border-right: solid $primary-lighten-2; }
    #rating-form { width: 2fr; padding: 0 1; }
    .section-title { text-style: bold; margin-top: 1; color: $accent; }
    .section-text { margin-bottom: 1; }
    .section-empty { color: $text-muted; text-style: italic; margin-bottom: 1; }
    .q-block { height: auto; }
    #rating-keys { color: $text-muted; }
    .q-prompt { text-style: bold; margin-top: 1; }
    .q-help { color: $text-muted; }
    .q-cats { margin: 0 0 0 1; }
    .q-quotes { margin: 0 0 0 1; color: $text; }
    .q-quote-msg { color: $error; margin: 0 0 0 1; }
    #rating-message { height: auto; min-height: 1; padding: 0 1; }
    #rating-message.error { color: $error; }
    #rating-message.ok { color: $success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save item", id="rating.save", priority=True),
        Binding("left_square_bracket", "prev", "Previous", id="rating.prev"),
        Binding("right_square_bracket", "next", "Next", id="rating.next"),
        Binding("escape", "leave_input", "Leave input", id="rating.leave", show=False),
        Binding("ctrl+r", "remove_quote", "Remove last quote", id="rating.remove_quote"),
    ]

    def __init__(self, packdir: str | Path, rater: str, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.session = RatingSession(packdir, rater)
        self.scheme = self.session.scheme
        self.key_map = self.scheme.key_map()
        self.index = self.session.resume_index()
        self.categories: dict[str, str | None] = {}
        self.quotes: dict[str, list[str]] = {}
        self._warned = False

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="rating-status")
        with Horizontal(id="rating-body"):
            with VerticalScroll(id="rating-item"):
                for i, title in enumerate(self.scheme.sections, start=1):
                    yield Static(title, classes="section-title", id=f"section-title-{i}")
                    yield Static("", classes="section-text", id=f"section-{i}", markup=False)
            with VerticalScroll(id="rating-form"):
                yield Static(
                    "letter key = category · Enter = next field · Esc = leave field · "
                    "Ctrl+S = save item · [ / ] = previous / next item",
                    id="rating-keys",
                    markup=False,
                )
                for q in self.scheme.questions:
                    yield from self._compose_question(q)
                yield Static("", id="rating-message")
        yield Footer()

    def _compose_question(self, q: Question) -> ComposeResult:
        with Vertical(id=f"q-{q.id}", classes="q-block"):
            yield Static(f"{q.id.upper()}. {q.prompt}", classes="q-prompt", markup=False)
            if q.help:
                yield Static(q.help, classes="q-help", markup=False)
            yield Static("", classes="q-cats", id=f"cats-{q.id}")
            yield Input(
                placeholder="grounds: one line" + (" (required)" if q.grounds_required else ""),
                id=f"grounds-{q.id}",
                validators=[Function(lambda s: bool(s.strip()), "grounds are required")]
                if q.grounds_required
                else [],
                validate_on=["changed", "submitted"],
            )
            if q.max_quotes:
                yield Input(
                    placeholder=f"quote{' (1 required)' if q.min_quotes else ''}, exact; "
                    f"Enter adds (max {q.max_quotes})",
                    id=f"quote-{q.id}",
                )
                yield Static("", classes="q-quotes", id=f"quotes-{q.id}", markup=False)
                yield Static("", classes="q-quote-msg", id=f"quote-msg-{q.id}", markup=False)

    def on_mount(self) -> None:
        self._load(self.index)

    # -- state <-> widgets ---------------------------------------------------------
    @property
    def item_id(self) -> str:
        return self.session.order[self.index]

    def _load(self, index: int) -> None:
        self.index = index
        item = self.session.pack.item(self.item_id)
        for i, text in enumerate(item.sections, start=1):
            w = self.query_one(f"#section-{i}", Static)
            if text.strip():
                w.update(text)
                w.set_classes("section-text")
            else:
                w.update("(empty)")
                w.set_classes("section-empty")
        self.query_one("#rating-item", VerticalScroll).scroll_home(animate=False)
        latest = self.session.latest().get(self.item_id)
        for q in self.scheme.questions:
            ans = latest.answers.get(q.id) if latest else None
            self.categories[q.id] = ans.category if ans else None
            self.quotes[q.id] = list(ans.quotes) if ans else []
            grounds = self.query_one(f"#grounds-{q.id}", Input)
            grounds.value = ans.grounds if ans else ""
            if q.max_quotes:
                self.query_one(f"#quote-{q.id}", Input).value = ""
                self.query_one(f"#quote-msg-{q.id}", Static).update("")
            self._refresh_question(q)
        self._warned = False
        if latest:
            self._message(f"rated before (revision {latest.revision}); saving appends a revision")
        else:
            self._message("")
        self._refresh_status()
        self.set_focus(None)

    def _refresh_question(self, q: Question) -> None:
        chosen = self.categories.get(q.id)
        t = Text()
        for c in q.categories:
            style = "bold reverse" if c.id == chosen else ""
            t.append(f"[{c.key}] {c.label}", style=style)
            t.append("   ")
        self.query_one(f"#cats-{q.id}", Static).update(t)
        if q.max_quotes:
            qs = self.quotes[q.id]
            self.query_one(f"#quotes-{q.id}", Static).update(
                "\n".join(f"{i}. “{x}”" for i, x in enumerate(qs, start=1)) if qs else "(no quotes)"
            )

    def _refresh_status(self) -> None:
        s = self.session
        self.query_one("#rating-status", Static).update(
            f"item {self.index + 1} of {s.n} ({self.item_id}) · rated {s.done()} of {s.n} · "
            f"rater {s.rater}"
        )

    def _message(self, text: str, kind: str = "") -> None:
        w = self.query_one("#rating-message", Static)
        w.update(Text(text))
        w.set_classes(kind)

    @property
    def progress(self) -> tuple[int, int, int]:
        """(current item 1-based, items rated, items in the pack)."""
        return self.index + 1, self.session.done(), self.session.n

    # -- keys ------------------------------------------------------------------------
    def on_key(self, event: Key) -> None:
        if isinstance(self.focused, Input):
            return
        char = event.character
        if char and char in self.key_map:
            qid, cat = self.key_map[char]
            self.categories[qid] = cat
            self._refresh_question(self.scheme.question(qid))
            self.query_one(f"#grounds-{qid}", Input).focus()
            event.stop()
            event.prevent_default()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        wid = event.input.id or ""
        event.stop()
        if wid.startswith("grounds-"):
            qid = wid.removeprefix("grounds-")
            q = self.scheme.question(qid)
            if q.grounds_required and not event.value.strip():
                self._message(f"{qid}: grounds are required (one line)", "error")
                return
            if q.max_quotes:
                self.query_one(f"#quote-{qid}", Input).focus()
            else:
                self.set_focus(None)
        elif wid.startswith("quote-"):
            qid = wid.removeprefix("quote-")
            self._add_quote(qid, event.value)

    def _add_quote(self, qid: str, value: str) -> bool:
        q = self.scheme.question(qid)
        box = self.query_one(f"#quote-{qid}", Input)
        msg = self.query_one(f"#quote-msg-{qid}", Static)
        if not value.strip():
            msg.update("")
            self.set_focus(None)
            return False
        quote = normalise_ws(value)
        if len(self.quotes[qid]) >= q.max_quotes:
            msg.update(f"refused: at most {q.max_quotes} quotes (Ctrl+R removes the last)")
            return False
        if quote in self.quotes[qid]:
            msg.update("refused: already quoted")
            return False
        chk = check_quote(quote, self.session.pack.item(self.item_id).sections)
        if not chk.ok:
            msg.update(f"refused: {chk.reason}")
            return False
        self.quotes[qid].append(quote)
        box.value = ""
        msg.update(f"accepted (section {chk.section})")
        self._refresh_question(q)
        return True

    # -- actions -----------------------------------------------------------------------
    def action_leave_input(self) -> None:
        self.set_focus(None)

    def action_remove_quote(self) -> None:
        focused = self.focused
        qid = None
        if isinstance(focused, Input) and (focused.id or "").startswith(("quote-", "grounds-")):
            qid = (focused.id or "").split("-", 1)[1]
        if qid is None:
            with_quotes = [q.id for q in self.scheme.questions if self.quotes.get(q.id)]
            qid = with_quotes[-1] if with_quotes else None
        if qid and self.quotes.get(qid):
            removed = self.quotes[qid].pop()
            self._refresh_question(self.scheme.question(qid))
            self._message(f"removed quote “{removed[:40]}”")

    def answers(self) -> dict[str, QuestionAnswer]:
        out: dict[str, QuestionAnswer] = {}
        for q in self.scheme.questions:
            cat = self.categories.get(q.id)
            if cat is None:
                continue
            out[q.id] = QuestionAnswer(
                category=cat,
                grounds=self.query_one(f"#grounds-{q.id}", Input).value,
                quotes=list(self.quotes[q.id]),
            )
        return out

    def action_save(self) -> None:
        # A quote still typed in a box is checked and added first, as if Enter was pressed.
        for q in self.scheme.questions:
            if q.max_quotes:
                box = self.query_one(f"#quote-{q.id}", Input)
                if box.value.strip() and not self._add_quote(q.id, box.value):
                    self._message(
                        f"{q.id}: the quote being typed was refused; fix or clear it", "error"
                    )
                    return
        try:
            rec = self.session.save(self.item_id, self.answers())
        except CuriosityError as err:
            self._message(str(err), "error")
            return
        self._warned = False
        done = self.session.done()
        if self.index + 1 < self.session.n:
            self._load(self.index + 1)
            self._message(
                f"saved {rec.item}" + (f" (revision {rec.revision})" if rec.revision else ""),
                "ok",
            )
        else:
            self._refresh_status()
            self._message(
                f"saved {rec.item}. "
                + (
                    "All items are rated — thank you. [ goes back to revise."
                    if done == self.session.n
                    else f"{self.session.n - done} item(s) still unrated; ] / [ to reach them."
                ),
                "ok",
            )

    def has_unsaved_changes(self) -> bool:
        """Does the form differ from what is saved for this item (or from blank)?"""
        latest = self.session.latest().get(self.item_id)
        for q in self.scheme.questions:
            saved = latest.answers.get(q.id) if latest else None
            grounds = normalise_ws(self.query_one(f"#grounds-{q.id}", Input).value)
            now = (self.categories.get(q.id), grounds, self.quotes.get(q.id, []))
            was = (saved.category, saved.grounds, saved.quotes) if saved else (None, "", [])
            if now != was:
                return True
        return False

    def _move(self, delta: int) -> None:
        target = self.index + delta
        if not 0 <= target < self.session.n:
            self._message("no more items in that direction")
            return
        if self.has_unsaved_changes() and not self._warned:
            self._message(
                "unsaved changes on this item: Ctrl+S to save, or press again to discard", "error"
            )
            self._warned = True  # a second press moves on
            return
        self._load(target)

    def action_prev(self) -> None:
        self._move(-1)

    def action_next(self) -> None:
        self._move(+1)
