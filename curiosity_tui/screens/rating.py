"""The rating screen: one blind item at a time, keyboard first, the rater's guide beside it.

Flow for one item: the first question's category row has focus; its keys (shown in
brackets) pick a category and move to that question's grounds line → type one line → Enter
→ (for questions that take quotes) the quote line → Enter checks a quote verbatim and adds
it, or says why it was refused → Enter on an empty quote line goes to the next question's
category row … → Ctrl+S saves the item (atomically) and moves on. Esc leaves a text field
for its category row. Category keys act only while a category row has focus, so typed text
is never read as a category (see :mod:`curiosity_tui.widgets.ordered` for how a burst of
keys stays in order). ``[`` / ``]`` (on a category row) go to the previous / next item; an
item left with unsaved edits keeps them as a draft, restored when the rater comes back.
Drafts are also written to the rater's drafts file (:mod:`curiosity_tui.packs.drafts`) as
they change, so a killed session resumes at the item being typed with its draft.

The screen is self-contained: ``RatingScreen(packdir, rater)``. It reads the pack's
manifest, items and this rater's own ratings and flags files only — never another rater's
file, never the key.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from curiosity_tui.errors import CuriosityError, os_reason
from curiosity_tui.packs.drafts import DraftStore, ItemDraft
from curiosity_tui.packs.flags import FlagStore
from curiosity_tui.packs.item_timer import ItemTimer, time_left
from curiosity_tui.packs.rating import (
    QuestionAnswer,
    RatingSession,
    check_quote,
    normalise_ws,
    quote_length_problem,
)
from curiosity_tui.packs.schemes import Question
from curiosity_tui.widgets.choice_row import Choice, ChoiceRow
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.grounds_input import GroundsInput
from curiosity_tui.widgets.item_text import ItemText, quote_question
from curiosity_tui.widgets.ordered import OrderedInput, drain
from curiosity_tui.widgets.rating_guide import RatingGuide
from curiosity_tui.widgets.rating_layout import RATING_CSS
from curiosity_tui.widgets.textual_private import add_priority_binding

__all__ = ["Draft", "RatingScreen"]

KEYS_LINE = (
    "On a category row: its letter picks · Enter goes to grounds · [ / ] previous / next item "
    "· Del removes the last quote.  In a field: Enter next field · Esc back to the row.  "
    "Ctrl+S save item · Ctrl+L items · Ctrl+F flag · Ctrl+G guide · Ctrl+T quote from text"
)


@dataclass
class Draft:
    """Unsaved edits of one item, kept while the rater looks at other items."""

    categories: dict[str, str | None] = field(default_factory=dict)
    grounds: dict[str, str] = field(default_factory=dict)
    quotes: dict[str, list[str]] = field(default_factory=dict)


#: below this many rows the guide opens folded to its title line (issue 28: at 100x30 it
#: pushed Q1's choices to row 26)
GUIDE_OPEN_MIN_HEIGHT = 40


class RatingScreen(Screen[None]):
    HELP_TITLE: ClassVar[str] = "Rating — keys"
    HELP: ClassVar[str] = (
        "Rate one item at a time: pick a category on each question's row, give one line of "
        "grounds, quote the item exactly where asked (type it, paste it, or pick it from the "
        "text with Ctrl+T), Ctrl+S to save. Category keys act only on a category row."
    )
    DEFAULT_CSS = RATING_CSS

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save item", id="rating.save", priority=True),
        Binding("enter", "enter", "Next field", id="rating.enter", priority=True, show=False),
        Binding("escape", "leave_input", "Leave field", id="rating.leave", priority=True),
        Binding("tab", "step(1)", "Next field", id="rating.tab", priority=True, show=False),
        Binding(
            "shift+tab",
            "step(-1)",
            "Previous field",
            id="rating.backtab",
            priority=True,
            show=False,
        ),
        Binding("left_square_bracket", "prev", "Previous item", id="rating.prev", priority=True),
        Binding("right_square_bracket", "next", "Next item", id="rating.next", priority=True),
        Binding(
            "delete", "remove_quote", "Remove last quote", id="rating.remove_quote", priority=True
        ),
        Binding("ctrl+l", "toggle_items", "Items", id="rating.items", priority=True),
        Binding("ctrl+f", "flag", "Flag…", id="rating.flag", priority=True),
        Binding("ctrl+g", "toggle_guide", "Guide", id="rating.guide", priority=True),
        Binding("ctrl+t", "pick_text", "Pick quote", id="rating.pick_text", priority=True),
    ]

    def __init__(self, packdir: str | Path, rater: str, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.session = RatingSession(packdir, rater)
        self.timer = ItemTimer()  # time on item, time away excluded (decision 427)
        self.scheme = self.session.scheme
        self.key_map = self.scheme.key_map()
        self.flags = FlagStore(self.session.pack.path, rater, self.session.pack.manifest.pack_id)
        self.draft_store = DraftStore(self.session.pack, rater)
        kept = self.draft_store.load()
        self.drafts: dict[str, Draft] = {i: Draft(**d.model_dump()) for i, d in kept.drafts.items()}
        order = self.session.order
        self.index = order.index(kept.current) if kept.current else self.session.resume_index()
        self.categories: dict[str, str | None] = {}
        self.quotes: dict[str, list[str]] = {}
        self.revealed: set[str] = set()  # questions whose errors are shown
        # (question, grounds) right after a category key: an Enter before anything is typed
        # confirms the pick and stays in the grounds (raters press key, Enter, then type).
        self._picked: tuple[str, str] | None = None
        self._quote_msg_for: dict[str, str] = {}  # question → the quote text its message is about
        self.quote_target: str | None = None  # the question a quote picked from the text joins
        self.quote_note = ""  # the last quote's verdict (accepted / refused: why)
        self._pick_from: ItemText | None = None  # the section the rater last picked from
        for key, (qid, cat) in self.key_map.items():
            label = self.scheme.question(qid).category(cat).label
            add_priority_binding(self, key, f"pick('{key}')", f"{qid}: {label}")

    # -- layout ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="rating-top"):
            yield Static(id="rating-status")
            yield ProgressBar(total=self.session.n, show_eta=False, id="rating-progress")
        with Horizontal(id="rating-body"):
            yield OptionList(id="rating-items")
            with VerticalScroll(id="rating-item"):
                for i, title in enumerate(self.scheme.sections, start=1):
                    yield Static(title, classes="section-title", id=f"section-title-{i}")
                    yield ItemText(classes="section-text", id=f"section-{i}")
            with Vertical(id="rating-side"):
                yield RatingGuide(self.scheme.title, self.scheme.instructions, id="rating-guide")
                with VerticalScroll(id="rating-form"):
                    yield Static(KEYS_LINE, id="rating-keys", markup=False)
                    for q in self.scheme.questions:
                        yield from self._compose_question(q)
                    yield OrderedInput(
                        placeholder="note for the coordinator (Enter saves, empty withdraws "
                        "the flag, Esc cancels)",
                        id="rating-flag",
                    )
                # below the scrolling form, so a message is in view whatever is scrolled
                # (inside the form it sat below the fold on a 50-row terminal)
                yield Static("", id="rating-message")
        yield Footer()

    def _compose_question(self, q: Question) -> ComposeResult:
        with Vertical(id=f"q-{q.id}", classes="q-block"):
            yield Static(f"{q.id.upper()}. {q.prompt}", classes="q-prompt", markup=False)
            if q.help:
                yield Static(q.help, classes="q-help", markup=False)
            choices = [Choice(c.key, c.id, c.label, c.help) for c in q.categories]
            yield ChoiceRow(q.id, choices, id=f"cats-{q.id}")
            yield GroundsInput(
                placeholder="grounds: one line" + (" (required)" if q.grounds_required else ""),
                id=f"grounds-{q.id}",
            )
            if q.max_quotes:
                need = f"{q.min_quotes} required, " if q.min_quotes else ""
                yield Static(
                    (q.quote_help + "  " if q.quote_help else "")
                    + f"Quotes: {need}at most {q.max_quotes}; each copied exactly, at least "
                    f"{q.quote_min_chars} characters and {q.quote_min_words} words.",
                    classes="q-quote-help",
                    markup=False,
                )
                yield OrderedInput(placeholder="quote, exact; Enter adds it", id=f"quote-{q.id}")
                yield Static("", classes="q-quotes", id=f"quotes-{q.id}", markup=False)
                yield Static("", classes="q-quote-msg", id=f"quote-msg-{q.id}", markup=False)
            yield Static("", classes="q-error", id=f"error-{q.id}", markup=False)

    def on_mount(self) -> None:
        self.watch(self.app, "app_focus", self._app_focus, init=False)
        if self.app.size.height < GUIDE_OPEN_MIN_HEIGHT:  # Q1's choices first (issue 28)
            self.query_one(RatingGuide).fold(True)
        self._load(self.index)
        if self.draft_store.note:
            self._message(self.draft_store.note, "error")

    # -- the drafts file: this item's unsaved edits and every kept draft -----------------------
    def _app_focus(self, focused: bool) -> None:
        """Time away (the terminal reports the app lost focus) is not time on the item."""
        if focused:
            self.timer.resume()
        else:
            self.timer.pause()

    def _persist(self) -> None:
        """Write the drafts file on every change (only when a draft changed; without fsync:
        a draft must survive a killed process, not a power cut)."""
        drafts = dict(self.drafts)
        if self.has_unsaved_changes():
            drafts[self.item_id] = self.current_draft()
        else:
            drafts.pop(self.item_id, None)
        try:
            self.draft_store.save(
                {i: ItemDraft(**asdict(d)) for i, d in drafts.items()}, self.item_id
            )
        except OSError as err:
            self._message(f"draft not kept on disk: {os_reason(err)}", "error")

    # -- widgets by question -----------------------------------------------------------
    def _row(self, qid: str) -> ChoiceRow:
        return self.query_one(f"#cats-{qid}", ChoiceRow)

    def _grounds(self, qid: str) -> Input:
        return self.query_one(f"#grounds-{qid}", Input)

    def _quote_box(self, qid: str) -> Input:
        return self.query_one(f"#quote-{qid}", Input)

    @staticmethod
    def _qid_of(widget: Widget | None) -> str | None:
        wid = (widget.id or "") if widget is not None else ""
        for prefix in ("cats-", "grounds-", "quote-"):
            if wid.startswith(prefix) and not wid.startswith("quote-msg-"):
                return wid.removeprefix(prefix)
        return None

    # -- state <-> widgets ---------------------------------------------------------
    @property
    def item_id(self) -> str:
        return self.session.order[self.index]

    def _saved_draft(self) -> Draft:
        latest = self.session.latest().get(self.item_id)
        d = Draft()
        for q in self.scheme.questions:
            ans = latest.answers.get(q.id) if latest else None
            d.categories[q.id] = ans.category if ans else None
            d.grounds[q.id] = ans.grounds if ans else ""
            d.quotes[q.id] = list(ans.quotes) if ans else []
        return d

    def current_draft(self) -> Draft:
        d = Draft()
        for q in self.scheme.questions:
            d.categories[q.id] = self.categories.get(q.id)
            d.grounds[q.id] = normalise_ws(self._grounds(q.id).value)
            d.quotes[q.id] = list(self.quotes.get(q.id, []))
        return d

    def _load(self, index: int) -> None:
        self.index = index
        self.timer.show(self.item_id)
        item = self.session.pack.item(self.item_id)
        for i, text in enumerate(item.sections, start=1):
            w = self.query_one(f"#section-{i}", ItemText)
            w.show(text if text.strip() else "(empty)")
            w.set_classes("section-text" if text.strip() else "section-empty")
        self.query_one("#rating-item", VerticalScroll).scroll_home(animate=False)
        draft = self.drafts.get(self.item_id)
        self._apply(draft or self._saved_draft())
        self.revealed = set()
        latest = self.session.latest().get(self.item_id)
        if draft is not None:
            self._message("your unsaved draft of this item is back; Ctrl+S saves it", "error")
        elif latest:
            self._message(f"rated before (revision {latest.revision}); saving appends a revision")
        else:
            self._message("")
        self._refresh_status()
        self._focus_row(self.scheme.questions[0].id)
        self._persist()

    def _apply(self, d: Draft) -> None:
        for q in self.scheme.questions:
            self.categories[q.id] = d.categories.get(q.id)
            self.quotes[q.id] = list(d.quotes.get(q.id, []))
            self._row(q.id).chosen = self.categories[q.id]
            self._grounds(q.id).value = d.grounds.get(q.id, "")
            if q.max_quotes:
                self._quote_box(q.id).value = ""
                self.query_one(f"#quote-msg-{q.id}", Static).update("")
            self._refresh_quotes(q)
            self.query_one(f"#error-{q.id}", Static).update("")

    def _refresh_quotes(self, q: Question) -> None:
        if q.max_quotes:
            qs = self.quotes[q.id]
            self.query_one(f"#quotes-{q.id}", Static).update(
                "\n".join(f"{i}. “{x}”" for i, x in enumerate(qs, start=1)) if qs else "(no quotes)"
            )

    def _refresh_status(self) -> None:
        s = self.session
        flagged = " · flagged" if self.item_id in self.flags.current() else ""
        self.query_one("#rating-status", Static).update(
            f"item {self.index + 1} of {s.n} ({self.item_id}) · rated {s.done()} of {s.n} · "
            f"rater {s.rater}{flagged}{time_left(self.timer, s.n - s.done())}"
        )
        self.query_one("#rating-progress", ProgressBar).update(progress=s.done())
        self._refresh_items()

    def _message(self, text: str, kind: str = "") -> None:
        w = self.query_one("#rating-message", Static)
        w.update(Text(text))
        w.set_classes(kind)

    @property
    def progress(self) -> tuple[int, int, int]:
        """(current item 1-based, items rated, items in the pack)."""
        return self.index + 1, self.session.done(), self.session.n

    # -- errors: shown after leaving a field or a save attempt, cleared when fixed -----------
    def problems(self, qid: str) -> list[str]:
        q = self.scheme.question(qid)
        out: list[str] = []
        if self.categories.get(qid) is None:
            keys = " / ".join(f"[{c.key}]" for c in q.categories)
            out.append(f"pick a category ({keys} on the row)")
        if q.grounds_required and not self._grounds(qid).value.strip():
            out.append("grounds are required (one line)")
        if len(self.quotes.get(qid, [])) < q.min_quotes:
            out.append(f"at least {q.min_quotes} quote(s) required")
        return out

    def _reveal(self, qid: str) -> None:
        self.revealed.add(qid)
        self._refresh_errors(qid)

    def _refresh_errors(self, qid: str) -> None:
        text = "; ".join(self.problems(qid)) if qid in self.revealed else ""
        self.query_one(f"#error-{qid}", Static).update(f"{qid}: {text}" if text else "")

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        wid = event.input.id or ""
        if wid.startswith("grounds-"):
            self._refresh_errors(wid.removeprefix("grounds-"))
            self._persist()
        elif wid.startswith("quote-"):
            qid = wid.removeprefix("quote-")
            if self._quote_msg_for.get(qid) != event.value:  # edited since the verdict
                self.query_one(f"#quote-msg-{qid}", Static).update("")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter is handled by the priority binding (action_enter)

    # -- focus moves (always synchronous: Screen.set_focus inside a priority binding) --------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        focused = self.focused
        if action in ("pick", "remove_quote"):
            return isinstance(focused, ChoiceRow)
        if action == "leave_input":
            return isinstance(focused, (Input, OptionList, ItemText))
        return True

    def _focus_row(self, qid: str) -> None:
        """Focus a category row with its question's prompt in view above it."""
        self.set_focus(self._row(qid), scroll_visible=False)
        self.query_one(f"#q-{qid}").scroll_visible(animate=False, top=True)

    def _next_qid(self, qid: str) -> str:
        ids = [q.id for q in self.scheme.questions]
        return ids[min(ids.index(qid) + 1, len(ids) - 1)]

    async def action_pick(self, key: str) -> None:
        await drain(self.focused)
        qid, cat = self.key_map[key]
        self.categories[qid] = cat
        self._row(qid).chosen = cat
        self._refresh_errors(qid)
        self.set_focus(self._grounds(qid))
        self._picked = (qid, self._grounds(qid).value)
        self._persist()

    async def action_enter(self) -> None:
        focused = self.focused
        await drain(focused)
        self._persist()
        qid = self._qid_of(focused)
        picked, self._picked = self._picked, None
        if isinstance(focused, OptionList):
            if focused.highlighted is not None:
                self._jump(focused.highlighted)
        elif isinstance(focused, ItemText):
            self._add_picked(focused)
        elif focused is not None and focused.id == "rating-flag":
            self._save_flag()
        elif isinstance(focused, ChoiceRow) and qid:
            if self.categories.get(qid) is not None:
                self.set_focus(self._grounds(qid))
        elif qid and focused is not None and (focused.id or "").startswith("grounds-"):
            if picked == (qid, self._grounds(qid).value):
                if picked[1]:
                    self._message(
                        "Enter again keeps these grounds; typing adds to them, ctrl+u clears them"
                    )
                return
            q = self.scheme.question(qid)
            if q.grounds_required and not self._grounds(qid).value.strip():
                self._reveal(qid)
                return
            self._reveal(qid)
            if q.max_quotes:
                self.set_focus(self._quote_box(qid))
            else:
                self._focus_row(self._next_qid(qid))
        elif qid:  # a quote line
            box = self._quote_box(qid)
            if box.value.strip():
                self._add_quote(qid, box.value)
            else:
                self._reveal(qid)
                self._focus_row(self._next_qid(qid))

    async def action_leave_input(self) -> None:
        focused = self.focused
        await drain(focused)
        self._persist()
        if isinstance(focused, ItemText):
            self._back_to_quote()
            return
        if isinstance(focused, OptionList):
            self.query_one("#rating-items").remove_class("open")
        elif focused is not None and focused.id == "rating-flag":
            self.query_one("#rating-flag").remove_class("open")
            self._message("flag not changed")
        qid = self._qid_of(focused)
        if qid:
            self._reveal(qid)
        self._focus_row(qid or self.scheme.questions[0].id)

    async def action_step(self, delta: int) -> None:
        focused = self.focused
        await drain(focused)
        self._persist()
        qid = self._qid_of(focused)
        if qid and isinstance(focused, Input):
            self._reveal(qid)
        if delta > 0:
            self.focus_next()
        else:
            self.focus_previous()

    # -- quotes ------------------------------------------------------------------------------
    def _add_quote(self, qid: str, value: str, *, typed: bool = True) -> bool:
        """Check a quote (typed in the quote line, or picked from the text) and add it."""
        q = self.scheme.question(qid)
        box = self._quote_box(qid)
        self._quote_msg_for[qid] = box.value  # the message holds until the line is edited
        quote = normalise_ws(value)
        chk = check_quote(quote, self.session.pack.item(self.item_id).sections)
        refused = (
            f"at most {q.max_quotes} quotes (Del on the row removes the last)"
            if len(self.quotes[qid]) >= q.max_quotes
            else "already quoted"
            if quote in self.quotes[qid]
            else quote_length_problem(quote, q) or (None if chk.ok else chk.reason)
        )
        self.quote_note = f"refused: {refused}" if refused else f"accepted (section {chk.section})"
        msg = self.query_one(f"#quote-msg-{qid}", Static)
        msg.update(Text(self.quote_note, style="red" if refused else "green"))
        if refused:
            return False
        self.quotes[qid].append(quote)
        if typed:
            self._quote_msg_for[qid] = box.value = ""
        self._refresh_quotes(q)
        self._refresh_errors(qid)
        self._persist()
        return True

    # -- quotes picked from the item's text (decision 571) ------------------------------------
    @on(events.DescendantFocus)
    def _focus_moved(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, ItemText):
            self._pick_from = event.widget
        elif qid := self._qid_of(event.widget):
            self.quote_target = qid

    async def action_pick_text(self) -> None:
        """From a question into the item's text to pick its quote; from the text, back."""
        focused = self.focused
        await drain(focused)
        qid = quote_question(self.scheme.questions, self._qid_of(focused) or self.quote_target)
        if isinstance(focused, ItemText) or qid is None:
            self._back_to_quote()
            return
        self.quote_target = qid
        self.set_focus(self._pick_from or self.query_one("#section-1", ItemText))
        self._quote_say(qid, "from the text: arrows move; shift+arrows, or space then arrows, "
                        "select; Enter adds the selection; Esc back")  # fmt: skip

    def _add_picked(self, text: ItemText) -> None:
        qid = quote_question(self.scheme.questions, self.quote_target)
        if qid is None:
            return
        if not text.picked.strip():
            self._quote_say(qid, "select a span first: shift+arrows, or space then arrows, or drag")
        elif self._add_quote(qid, text.picked, typed=False):
            text.drop()
        self.query_one(f"#quote-msg-{qid}").scroll_visible(animate=False)

    def _quote_say(self, qid: str, text: str) -> None:
        """A line under the question's quotes, in view (the quote's verdict goes there too)."""
        self._quote_msg_for[qid] = self._quote_box(qid).value
        self.query_one(f"#quote-msg-{qid}", Static).update(Text(text, style="italic"))
        self.query_one(f"#quote-msg-{qid}").scroll_visible(animate=False)

    def _back_to_quote(self) -> None:
        qid = quote_question(self.scheme.questions, self.quote_target)
        if qid is None:
            self._message("no question of this scheme takes quotes")
            return
        self.set_focus(self._quote_box(qid))
        self.query_one(f"#q-{qid}").scroll_visible(animate=False, top=True)

    async def action_remove_quote(self) -> None:
        qid = self._qid_of(self.focused)
        if qid and self.quotes.get(qid):
            removed = self.quotes[qid].pop()
            self._refresh_quotes(self.scheme.question(qid))
            self._refresh_errors(qid)
            self._message(f"removed quote “{removed[:40]}”")
            self._persist()

    # -- saving ------------------------------------------------------------------------------
    def answers(self) -> dict[str, QuestionAnswer]:
        out: dict[str, QuestionAnswer] = {}
        for q in self.scheme.questions:
            cat = self.categories.get(q.id)
            if cat is None:
                continue
            out[q.id] = QuestionAnswer(
                category=cat, grounds=self._grounds(q.id).value, quotes=list(self.quotes[q.id])
            )
        return out

    def _pending_quotes_ok(self) -> bool:
        """A quote still typed in a box is checked and added first, as if Enter was pressed."""
        for q in self.scheme.questions:
            if q.max_quotes:
                box = self._quote_box(q.id)
                if box.value.strip() and not self._add_quote(q.id, box.value):
                    self._message(
                        f"not saved: {q.id}: the quote being typed was refused; fix or clear it",
                        "error",
                    )
                    self.set_focus(box)
                    return False
        return True

    async def action_save(self) -> None:
        await drain(self.focused)
        if not self._pending_quotes_ok():
            return
        wrong = [q.id for q in self.scheme.questions if self.problems(q.id)]
        for qid in wrong:
            self._reveal(qid)
        if wrong:
            first = wrong[0]
            self._message(f"not saved: {first}: {'; '.join(self.problems(first))}", "error")
            if self.categories.get(first) is None:
                self._focus_row(first)
            else:
                self.set_focus(self._grounds(first))
            return
        try:
            timing = self.timer.timing(self.item_id)
            rec = self.session.save(self.item_id, self.answers(), timing=timing)
        except CuriosityError as err:
            self._message(f"not saved: {err}", "error")
            return
        self.drafts.pop(self.item_id, None)
        self._persist()
        saved = f"saved {rec.item}" + (f" (revision {rec.revision})" if rec.revision else "")
        if self.index + 1 < self.session.n:
            self._load(self.index + 1)
            self._message(saved, "ok")
            return
        self._refresh_status()
        done = self.session.done()
        self._message(
            f"{saved}. "
            + (
                "All items are rated — thank you. [ goes back to revise."
                if done == self.session.n
                else f"{self.session.n - done} item(s) still unrated; Ctrl+L lists them."
            ),
            "ok",
        )

    def has_unsaved_changes(self) -> bool:
        """Does the form differ from what is saved for this item (or from blank)?"""
        return self.current_draft() != self._saved_draft()

    # -- moving between items: edits are kept as a draft, never dropped ------------------------
    def _jump(self, target: int) -> None:
        if not 0 <= target < self.session.n:
            self._message("no more items in that direction")
            return
        kept = ""
        if self.has_unsaved_changes():
            self.drafts[self.item_id] = self.current_draft()
            kept = f"draft of item {self.index + 1} kept (not saved); "
        else:
            self.drafts.pop(self.item_id, None)
        self.query_one("#rating-items").remove_class("open")
        self._load(target)
        if kept:
            self._message(kept + "come back to it and Ctrl+S to save", "error")

    async def action_prev(self) -> None:
        await drain(self.focused)
        self._jump(self.index - 1)

    async def action_next(self) -> None:
        await drain(self.focused)
        self._jump(self.index + 1)

    # -- item list, flags, guide -------------------------------------------------------------
    def item_marks(self) -> list[tuple[str, str]]:
        """(item id, state) in pack order; state is rated / unrated, + draft, + flagged."""
        latest, flags = self.session.latest(), self.flags.current()
        out = []
        for iid in self.session.order:
            state = "rated" if iid in latest else "unrated"
            if iid in self.drafts:
                state += " · draft"
            if iid in flags:
                state += " · flagged"
            out.append((iid, state))
        return out

    def _refresh_items(self) -> None:
        ol = self.query_one("#rating-items", OptionList)
        ol.clear_options()
        for i, (iid, state) in enumerate(self.item_marks(), start=1):
            glyph = "✓" if state.startswith("rated") else "·"
            flag = " ⚑" if "flagged" in state else ""
            draft = " ✎" if "draft" in state else ""
            ol.add_option(Option(Text(f"{glyph} {i:>3} {iid}{draft}{flag}"), id=iid))
        ol.highlighted = self.index

    async def action_toggle_items(self) -> None:
        await drain(self.focused)
        ol = self.query_one("#rating-items", OptionList)
        if ol.has_class("open"):
            ol.remove_class("open")
            self._focus_row(self.scheme.questions[0].id)
            return
        self._refresh_items()
        ol.add_class("open")
        self.set_focus(ol)
        self._message("items: ✓ rated · unrated ✎ draft ⚑ flagged — Enter jumps, Esc closes")

    async def action_flag(self) -> None:
        await drain(self.focused)
        box = self.query_one("#rating-flag", Input)
        box.value = self.flags.current().get(self.item_id, "")
        box.add_class("open")
        self.set_focus(box)
        self._message("flag this item for the coordinator: type a note, Enter saves")

    def _save_flag(self) -> None:
        box = self.query_one("#rating-flag", Input)
        try:
            rec = self.flags.set(self.item_id, box.value)
        except (CuriosityError, OSError) as err:
            self._message(f"flag not saved: {err}", "error")
            return
        box.remove_class("open")
        self._refresh_status()
        self._focus_row(self.scheme.questions[0].id)
        self._message(
            f"flagged {rec.item} for the coordinator"
            if rec.note
            else f"flag on {rec.item} withdrawn",
            "ok",
        )

    async def action_toggle_guide(self) -> None:
        self.query_one(RatingGuide).toggle()
