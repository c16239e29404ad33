"""The downgrade decision form: approve or reject, with grounds of at least a sentence.

It will not submit until the grounds pass the same check the domain applies
(:func:`curiosity_tui.contract.downgrades.check_grounds`).

Keys: the decision row takes ``a`` (approve) and ``x`` (reject) — the same keys as the
downgrade list — and only while it has focus, so the letters typed into the grounds are
never read as a decision. Tab / Shift+Tab move between the row and the grounds, Ctrl+S
submits, Esc cancels; every one of them first lets the grounds finish the keys already typed
(:mod:`curiosity_tui.widgets.ordered`)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from curiosity_tui.contract.downgrades import PendingDowngrade, check_grounds
from curiosity_tui.errors import TransitionError
from curiosity_tui.screens.form_base import FormSteps, leave_key, step_keys, submit_key
from curiosity_tui.widgets.choice_row import Choice, ChoiceRow
from curiosity_tui.widgets.literal import clean
from curiosity_tui.widgets.ordered import OrderedTextArea, drain

DECISIONS = [
    Choice("a", "approve", "Approve", "the requirement is waived or weakened as proposed"),
    Choice("x", "reject", "Reject", "the requirement stays as it is"),
]


class DecideScreen(FormSteps, ModalScreen[tuple[str, str] | None]):
    """Returns (decision, grounds) or None."""

    HELP_TITLE: ClassVar[str] = "Downgrade decision — keys"
    DEFAULT_CSS = """
    DecideScreen { align: center middle; }
    DecideScreen > Vertical { width: 100; max-width: 95%; height: auto; max-height: 95%;
        border: round $accent; background: $surface; padding: 0 1; }
    DecideScreen TextArea { height: 6; }
    DecideScreen #decide-error { color: $error; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        submit_key("decide"),
        Binding("a", "choose('approve')", "Approve", id="decide.approve", priority=True),
        Binding("x", "choose('reject')", "Reject", id="decide.reject", priority=True),
        *step_keys("decide"),
        leave_key("decide", "cancel", "Cancel"),
    ]

    def __init__(self, proposal: PendingDowngrade, decision: str = "approve") -> None:
        super().__init__()
        self.proposal = proposal
        self.decision = decision

    def compose(self) -> ComposeResult:
        p = self.proposal
        with Vertical():
            head = Text(end="")
            head.append(
                f"Decide downgrade {p.id}: {p.action} {p.node}/{p.requirement}\n", style="bold"
            )
            head.append("requirement: ", style="dim")
            head.append(clean(p.requirement_text) + "\n")
            if p.new_text:
                head.append("weaker text: ", style="dim")
                head.append(clean(p.new_text) + "\n")
            head.append(f"proposed by {clean(p.proposed_by)} in s{p.session}: ", style="dim")
            head.append(clean(p.grounds))
            yield Static(head)
            yield Label("Decision (a / x while this row has focus; Shift+Tab reaches it)")
            yield ChoiceRow("decision", DECISIONS, id="decide-choice")
            yield Label("Grounds (at least a sentence; recorded with your name)")
            yield OrderedTextArea(id="decide-grounds", soft_wrap=True)
            yield Static("", id="decide-error")
            yield Static(Text("ctrl+s submit · esc cancel · tab / shift+tab move", style="dim"))

    def on_mount(self) -> None:
        self.query_one(ChoiceRow).chosen = self.decision
        self.set_focus(self.query_one(TextArea))  # now, not after a refresh

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose":
            return isinstance(self.focused, ChoiceRow)
        return True

    async def action_choose(self, decision: str) -> None:
        self.decision = decision
        self.query_one(ChoiceRow).chosen = decision
        self.set_focus(self.query_one(TextArea))

    async def action_submit(self) -> None:
        await drain(self.focused)
        grounds = self.query_one(TextArea).text
        try:
            text = check_grounds(grounds, "decision grounds")
        except TransitionError as err:
            self.query_one("#decide-error", Static).update(Text(str(err)))
            return
        self.dismiss((self.decision, text))

    async def action_cancel(self) -> None:
        self.dismiss(None)
