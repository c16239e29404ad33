"""The downgrade decision form: approve or reject, with grounds of at least a sentence.

It will not submit until the grounds pass the same check the domain applies
(:func:`curiosity_tui.contract.downgrades.check_grounds`)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, TextArea

from curiosity_tui.contract.downgrades import PendingDowngrade, check_grounds
from curiosity_tui.errors import TransitionError
from curiosity_tui.widgets.literal import clean


class DecideScreen(ModalScreen[tuple[str, str] | None]):
    """Returns (decision, grounds) or None."""

    DEFAULT_CSS = """
    DecideScreen { align: center middle; }
    DecideScreen > Vertical { width: 100; max-width: 95%; height: auto; max-height: 95%;
        border: round $accent; background: $surface; padding: 0 1; }
    DecideScreen TextArea { height: 6; }
    DecideScreen #decide-error { color: $error; height: auto; }
    DecideScreen Horizontal { height: auto; }
    DecideScreen Button { margin-right: 2; }
    """
    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit", id="decide.submit", priority=True),
        Binding("ctrl+a", "choose('approve')", "Approve", id="decide.approve", priority=True),
        Binding("ctrl+r", "choose('reject')", "Reject", id="decide.reject", priority=True),
        Binding("escape", "cancel", "Cancel", id="decide.cancel"),
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
            yield Static("", id="decide-choice")
            with Horizontal():
                yield Button("Approve (ctrl+a)", id="approve", variant="success")
                yield Button("Reject (ctrl+r)", id="reject", variant="error")
            yield Label("Grounds (at least a sentence; recorded with your name)")
            yield TextArea(id="decide-grounds", soft_wrap=True)
            yield Static("", id="decide-error")
            yield Static(Text("ctrl+s submit · esc cancel", style="dim"))

    def on_mount(self) -> None:
        self._show_choice()
        self.query_one(TextArea).focus()

    def _show_choice(self) -> None:
        style = "bold green" if self.decision == "approve" else "bold red"
        t = Text("decision: ")
        t.append(self.decision.upper(), style=style)
        self.query_one("#decide-choice", Static).update(t)

    def action_choose(self, decision: str) -> None:
        self.decision = decision
        self._show_choice()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_choose(str(event.button.id))
        self.query_one(TextArea).focus()

    def action_submit(self) -> None:
        grounds = self.query_one(TextArea).text
        try:
            text = check_grounds(grounds, "decision grounds")
        except TransitionError as err:
            self.query_one("#decide-error", Static).update(Text(str(err)))
            return
        self.dismiss((self.decision, text))

    def action_cancel(self) -> None:
        self.dismiss(None)
