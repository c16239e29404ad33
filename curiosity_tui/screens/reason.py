"""A modal form for a curator action: a reason (always), and a priority or a merge target
when the action needs one. It will not submit without a reason."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from curiosity_tui.widgets.literal import short


@dataclass
class ActionForm:
    """What the form returns."""

    reason: str
    priority: int | None = None
    target: str | None = None


class ReasonScreen(ModalScreen[ActionForm | None]):
    DEFAULT_CSS = """
    ReasonScreen { align: center middle; }
    ReasonScreen > Vertical { width: 90; max-width: 95%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1; }
    ReasonScreen Label { margin-top: 1; }
    ReasonScreen OptionList { height: 10; }
    ReasonScreen #form-error { color: $error; height: auto; }
    """
    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit", id="form.submit", priority=True),
        Binding("escape", "cancel", "Cancel", id="form.cancel"),
    ]

    def __init__(
        self,
        title: str,
        *,
        priority: bool = False,
        priority_default: int | None = None,
        targets: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__()
        self.form_title = title
        self.want_priority = priority
        self.priority_default = priority_default
        self.targets = targets

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.form_title, style="bold"))
            if self.want_priority:
                yield Label("Priority (1 ranks first; empty clears it)")
                yield Input(
                    value="" if self.priority_default is None else str(self.priority_default),
                    id="form-priority",
                    type="integer",
                )
            if self.targets is not None:
                yield Label("Merge into (type to filter, ↓ to pick)")
                yield Input(placeholder="node id or words", id="form-target-filter")
                yield OptionList(
                    *[
                        Option(Text(f"{nid:<7} {short(text, 70)}"), id=nid)
                        for nid, text in self.targets
                    ],
                    id="form-target",
                )
            yield Label("Reason (required; recorded in the journal)")
            yield Input(placeholder="why", id="form-reason")
            yield Static("", id="form-error")
            yield Static(
                Text("ctrl+s submit · esc cancel · enter in the reason submits", style="dim")
            )

    def on_mount(self) -> None:
        first = self.query("Input").first()
        first.focus()

    @on(Input.Changed, "#form-target-filter")
    def _filter(self, event: Input.Changed) -> None:
        assert self.targets is not None
        needle = event.value.strip().casefold()
        ol = self.query_one("#form-target", OptionList)
        ol.clear_options()
        ol.add_options(
            [
                Option(Text(f"{nid:<7} {short(text, 70)}"), id=nid)
                for nid, text in self.targets
                if not needle or needle in nid.casefold() or needle in text.casefold()
            ]
        )
        if ol.option_count:
            ol.highlighted = 0

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "form-reason":
            self.action_submit()
        else:
            self.focus_next()

    def _error(self, message: str) -> None:
        self.query_one("#form-error", Static).update(Text(message))

    def action_submit(self) -> None:
        reason = self.query_one("#form-reason", Input).value.strip()
        priority: int | None = None
        target: str | None = None
        if self.want_priority:
            raw = self.query_one("#form-priority", Input).value.strip()
            if raw:
                try:
                    priority = int(raw)
                except ValueError:
                    self._error("Priority must be a whole number (1 ranks first).")
                    return
                if priority < 1:
                    self._error("Priority must be 1 or more.")
                    return
        if self.targets is not None:
            ol = self.query_one("#form-target", OptionList)
            if ol.highlighted is None or ol.option_count == 0:
                self._error("Pick the node to merge into.")
                return
            target = ol.get_option_at_index(ol.highlighted).id
        if not reason:
            self._error("A reason is required.")
            self.query_one("#form-reason", Input).focus()
            return
        self.dismiss(ActionForm(reason=reason, priority=priority, target=target))

    def action_cancel(self) -> None:
        self.dismiss(None)
