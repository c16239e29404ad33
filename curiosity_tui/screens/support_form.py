"""The support judgement form (decision 520): does this verified passage establish the
requirement? yes / no / partly, with grounds of at least a sentence, recorded with your name.

It will not submit without a verdict and grounds that pass the domain's own check
(:func:`curiosity_tui.contract.downgrades.check_grounds`).

Keys: the verdict row has focus first; ``y`` (supports), ``n`` (does not) and ``p`` (partly)
act only while it has focus — like a rating scheme's category keys, they are bound on the row's
form alone and never read from the grounds — and move on to the grounds. Tab / Shift+Tab move
between the row and the grounds, Ctrl+S submits, Esc cancels; each first lets the grounds
finish the keys already typed (:mod:`curiosity_tui.widgets.ordered`)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from curiosity_tui.contract.downgrades import check_grounds
from curiosity_tui.contract.support import SupportItem
from curiosity_tui.errors import TransitionError
from curiosity_tui.screens.form_base import FormSteps, leave_key, step_keys, submit_key
from curiosity_tui.widgets.choice_row import Choice, ChoiceRow
from curiosity_tui.widgets.literal import clean
from curiosity_tui.widgets.ordered import OrderedTextArea, drain
from curiosity_tui.widgets.textual_private import add_priority_binding

VERDICTS = [
    Choice("y", "yes", "Supports", "the passage establishes the requirement"),
    Choice("n", "no", "Does not support", "it does not bear on it, or does not establish it"),
    Choice("p", "partly", "Partly", "it establishes part of it (not enough to satisfy)"),
]


class SupportJudgeScreen(FormSteps, ModalScreen[tuple[str, str] | None]):
    """Returns (verdict, grounds) or None."""

    HELP_TITLE: ClassVar[str] = "Support judgement — keys"
    DEFAULT_CSS = """
    SupportJudgeScreen { align: center middle; }
    SupportJudgeScreen > Vertical { width: 100; max-width: 95%; height: auto; max-height: 95%;
        border: round $accent; background: $surface; padding: 0 1; }
    SupportJudgeScreen TextArea { height: 6; }
    SupportJudgeScreen #judge-error { color: $error; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        submit_key("judge"),
        *step_keys("judge"),
        leave_key("judge", "cancel", "Cancel"),
    ]

    def __init__(self, item: SupportItem) -> None:
        super().__init__()
        self.item = item
        self.verdict: str | None = None
        for c in VERDICTS:  # the row's keys: on this form only, acting while the row has focus
            add_priority_binding(self, c.key, f"pick('{c.id}')", c.label)

    def compose(self) -> ComposeResult:
        i = self.item
        with Vertical():
            head = Text(end="")
            head.append(
                f"Does this passage establish {i.node}/{i.requirement}? ({i.evidence_id})\n",
                style="bold",
            )
            head.append("requirement: ", style="dim")
            head.append(clean(i.requirement_text) + "\n")
            head.append("passage (verified in its source): ", style="dim")
            head.append(clean(i.passage))
            yield Static(head)
            yield Label("Verdict (y / n / p while this row has focus; Shift+Tab reaches it)")
            yield ChoiceRow("verdict", VERDICTS, id="judge-choice")
            yield Label("Grounds (at least a sentence; recorded with your name)")
            yield OrderedTextArea(id="judge-grounds", soft_wrap=True)
            yield Static("", id="judge-error")
            yield Static(Text("ctrl+s submit · esc cancel · tab / shift+tab move", style="dim"))

    def on_mount(self) -> None:
        self.set_focus(self.query_one(ChoiceRow))  # now, not after a refresh

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick":
            return isinstance(self.focused, ChoiceRow)
        return True

    async def action_pick(self, verdict: str) -> None:
        self.verdict = verdict
        self.query_one(ChoiceRow).chosen = verdict
        self.set_focus(self.query_one(TextArea))

    async def action_submit(self) -> None:
        await drain(self.focused)
        error = self.query_one("#judge-error", Static)
        if self.verdict is None:
            error.update(Text("choose a verdict: y, n or p on the verdict row"))
            return
        try:
            text = check_grounds(self.query_one(TextArea).text)
        except TransitionError as err:
            error.update(Text(str(err)))
            return
        self.dismiss((self.verdict, text))

    async def action_cancel(self) -> None:
        self.dismiss(None)
