"""A person takes session t of a C run (issue 15, the relay): on the left exactly the rendering a
model would receive (the same bytes, shown literally), the forced focus, its requirements and —
if a model ran the judge-before for this session — its framings and dependencies, saying which;
on the right the deliverable's form (:mod:`curiosity_tui.widgets.human_form`).

ctrl+s validates the deliverable by the model's rules and commits it as one batch with actor
``human:<name>`` (:func:`~curiosity_tui.protocol.human_session.commit_human_session`); the
screen then closes with ``True``. esc leaves with ``False``: the draft is on disk (saved on
every change, atomically) and reopens with the form next time. Enter / tab walk the fields;
every key that moves focus first lets the field finish the keys typed before it, so a burst
lands as typed (widgets/ordered.py).
"""

from __future__ import annotations

import contextlib
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Header, Input, OptionList, Static, TextArea

from curiosity_tui.clock import utc_now_micro as utc_now
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.protocol.human_drafts import HumanDraft, drop_draft, load_draft, save_draft
from curiosity_tui.protocol.human_session import (
    HumanSessionInput,
    check_human_deliverable,
    commit_human_session,
    human_session_input,
    passage_problem,
)
from curiosity_tui.protocol.schemas import JudgeBeforeResponse
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.screens.form_base import FormSteps, leave_key, step_keys, submit_key
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.human_form import HumanForm, deliverable_from_fields, form_fields
from curiosity_tui.widgets.literal import literal
from curiosity_tui.widgets.ordered import drain

__all__ = ["HumanSessionScreen"]

SAVE_AFTER_S = 0.3  # a typed change reaches the draft file within this


class HumanSessionScreen(FormSteps, AppScreen):
    HELP_TITLE = "Human session"
    HELP = (
        "You take this session. Left: exactly what a model would receive. Right: your "
        "deliverable. ctrl+s validates it by the model's rules and commits it as one batch in "
        "your name; esc leaves, keeping a draft that reopens next time."
    )
    DEFAULT_CSS = """
    HumanSessionScreen #hs-panes { height: 1fr; }
    HumanSessionScreen #hs-left { width: 50%; border-right: solid $panel; padding: 0 1; }
    HumanSessionScreen HumanForm { width: 1fr; padding: 0 1; }
    HumanSessionScreen .hs-label { margin-top: 1; color: $text-muted; }
    HumanSessionScreen .hs-choice { height: auto; max-height: 6; }
    HumanSessionScreen .hs-text { height: 5; }
    HumanSessionScreen #hs-error { color: $error; height: auto; }
    """
    BINDINGS = [
        submit_key("human"),
        leave_key("human", "back", "Back"),
        # Enter: a new line in the answer and reason (TextAreas), else the next field
        Binding("enter", "enter", "Next field", id="human.enter", priority=True, show=False),
        *step_keys("human"),
    ]

    def __init__(
        self,
        ledger: Ledger,
        t: int,
        person: str,
        *,
        judge: JudgeBeforeResponse | None = None,
        judge_by: str | None = None,
    ) -> None:
        super().__init__()
        self.ledger = ledger
        self.t = t
        self.person = person
        self.input: HumanSessionInput = human_session_input(
            ledger, t, judge=judge, judge_by=judge_by
        )
        self.started = utc_now()
        self._save_pending = False
        self.committed = False
        self.notice = ""

    # -- layout -----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        inp = self.input
        problems = {
            f"{r.id}:{i}": passage_problem(self.ledger, src, text)
            for r in inp.requirements
            for i, (src, text) in enumerate(r.passages, start=1)
        }
        yield Header()
        with Horizontal(id="hs-panes"):
            with VerticalScroll(id="hs-left"):
                yield Static(self._summary(), id="hs-summary")
                yield Static(Text("The input a model would receive (literal):", style="bold"))
                yield Static(literal(inp.rendering), id="hs-rendering")
            yield HumanForm(form_fields(inp, problems), id="hs-form")
        yield Static("", id="hs-error")
        yield Footer()

    def _summary(self) -> Text:
        inp = self.input
        out = Text()
        out.append(f"Session {inp.session} · you: human:{self.person} · contract {inp.contract}\n")
        out.append("Focus ", style="bold")
        out.append(f"{inp.focus}: ")
        out.append_text(literal(inp.focus_text))
        out.append("\n")
        for r in inp.requirements:
            out.append(f"  {r.id} [{r.status}] ")
            out.append_text(literal(r.text, oneline=True))
            out.append(f" · {len(r.passages)} passage(s) retrieved\n")
        if inp.judge is None:
            out.append("No model ran the judge for this session.\n", style="dim")
        else:
            out.append(f"Judge-before run by {inp.judge.by}:\n", style="bold")
            for i, fr in enumerate(inp.judge.framings, start=1):
                out.append(f"  F{i} ")
                out.append_text(literal(fr, oneline=True))
                out.append("\n")
            for i, dep in enumerate(inp.judge.dependencies, start=1):
                out.append(f"  D{i} ")
                out.append_text(literal(dep, oneline=True))
                out.append("\n")
        return out

    def on_mount(self) -> None:
        if not self.is_attached:  # the app is exiting as this screen mounts: its widgets
            return  # may already be going, and nothing is left to show (issue 25)
        self.title = f"human session {self.t} · {self.ledger.path.name} · human:{self.person}"
        form = self.query_one(HumanForm)
        draft, problem = load_draft(self.ledger.path, self.t, self.person)
        if draft is not None:
            form.restore(draft.fields)
            self.started = draft.started or self.started
            self.notice = "your draft of this session is back"
        elif problem:
            self.notice = problem
        self._error(self.notice)
        first = form.query("Input, OptionList, TextArea").first()
        self.set_focus(first)

    # -- the draft --------------------------------------------------------------------
    def form_values(self) -> dict[str, str]:
        return self.query_one(HumanForm).values()

    def save_draft_now(self) -> None:
        self._save_pending = False
        if self.committed:
            return  # a timer set before the commit: the draft is gone for good
        try:
            fields = self.form_values()
        except NoMatches:
            return  # the form is already gone (the app is closing): the last save stands
        draft = HumanDraft(session=self.t, person=self.person, started=self.started, fields=fields)
        try:
            save_draft(self.ledger.path, draft)
        except OSError as err:
            self._error(f"draft not saved: {err}")

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(OptionList.OptionHighlighted)
    def _changed(self, event: Any) -> None:
        if not self.is_mounted or self._save_pending:
            return
        self._save_pending = True
        self.set_timer(SAVE_AFTER_S, self.save_draft_now)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter is the priority binding

    # -- actions ----------------------------------------------------------------------
    async def action_enter(self) -> None:
        """Enter: a new line in the answer and reason (several lines), else the next field."""
        focused = self.focused
        await drain(focused)
        if isinstance(focused, TextArea):
            focused.insert("\n")
            return
        await self.action_step(1)

    def _error(self, message: str) -> None:
        with contextlib.suppress(NoMatches):
            self.query_one("#hs-error", Static).update(Text(message))

    async def action_submit(self) -> None:
        await drain(self.focused)
        self.save_draft_now()
        try:
            hd = deliverable_from_fields(self.input, self.form_values())
            problems = check_human_deliverable(self.input, hd)
            if problems:
                self._error("Not committed: " + "; ".join(problems))
                return
            commit_human_session(self.ledger, self.t, self.person, hd, started=self.started)
        except CuriosityError as err:
            self._error(f"Not committed: {err}")
            return
        self.committed = True
        drop_draft(self.ledger.path, self.t, self.person)
        self.dismiss(True)

    async def action_back(self) -> None:
        await drain(self.focused)
        self.save_draft_now()
        self.dismiss(False)
