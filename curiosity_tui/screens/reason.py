"""A modal form for a curator action: a reason (always), and a priority or a merge target
when the action needs one. It will not submit without a reason.

Keys that move focus or submit are priority bindings that first let the field finish the
keys already typed into it (:mod:`curiosity_tui.widgets.ordered`), so a form typed in one
burst is recorded exactly as typed."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from curiosity_tui.screens.form_base import FormSteps, leave_key, step_keys, submit_key
from curiosity_tui.widgets.literal import short
from curiosity_tui.widgets.ordered import OrderedInput, OrderedOptionList, drain


@dataclass
class ActionForm:
    """What the form returns."""

    reason: str
    priority: int | None = None
    target: str | None = None


class _TargetFilter(OrderedInput):
    """The target filter: ↓/↑ move the pick in the list below without leaving the filter
    (decision 444), in order with the characters typed before them."""

    async def on_key(self, event: Key) -> None:
        # Textual runs the bases' key handlers (OrderedInput's, Input's) after this one
        # unless the default is prevented
        screen = self.screen
        if event.key in ("down", "up") and isinstance(screen, ReasonScreen):
            event.stop()
            event.prevent_default()
            screen.move_target(1 if event.key == "down" else -1, self.value)


class _TargetList(OrderedOptionList):
    """The target list: text typed here goes on in the reason field instead of vanishing."""

    async def on_key(self, event: Key) -> None:
        # as above: OrderedOptionList's handler runs after this one unless prevented
        screen = self.screen
        if event.is_printable and event.character and isinstance(screen, ReasonScreen):
            event.stop()
            event.prevent_default()
            screen.type_reason(event.character)


class ReasonScreen(FormSteps, ModalScreen[ActionForm | None]):
    DEFAULT_CSS = """
    ReasonScreen { align: center middle; }
    ReasonScreen > Vertical { width: 90; max-width: 95%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1; }
    ReasonScreen Label { margin-top: 1; }
    ReasonScreen OptionList { height: 10; }
    ReasonScreen #form-error { color: $error; height: auto; }
    """
    BINDINGS = [
        submit_key("form"),
        leave_key("form", "cancel", "Cancel"),
        Binding("enter", "enter", "Next field / submit", id="form.enter", priority=True),
        *step_keys("form"),
    ]

    def __init__(
        self,
        title: str,
        *,
        priority: bool = False,
        priority_default: int | None = None,
        targets: list[tuple[str, str]] | None = None,
        target_label: str = "Merge into",
    ) -> None:
        super().__init__()
        self.form_title = title
        self.target_label = target_label
        self.want_priority = priority
        self.priority_default = priority_default
        self.targets = targets
        self._applied_filter: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.form_title, style="bold"))
            if self.want_priority:
                yield Label("Priority (1 ranks first; empty clears it)")
                yield OrderedInput(
                    value="" if self.priority_default is None else str(self.priority_default),
                    id="form-priority",
                    type="integer",
                )
            if self.targets is not None:
                yield Label(f"{self.target_label} (type to filter, ↓/↑ to pick)")
                yield _TargetFilter(placeholder="id or words", id="form-target-filter")
                yield _TargetList(
                    *[
                        Option(Text(f"{nid:<7} {short(text, 70)}"), id=nid)
                        for nid, text in self.targets
                    ],
                    id="form-target",
                )
                yield Static("", id="form-target-echo")
            yield Label("Reason (required; recorded in the journal)")
            # no select-all on focus: text typed on the target list goes on here (decision 444)
            yield OrderedInput(placeholder="why", id="form-reason", select_on_focus=False)
            yield Static("", id="form-error")
            yield Static(
                Text("ctrl+s submit · esc cancel · enter in the reason submits", style="dim")
            )

    def on_mount(self) -> None:
        self.set_focus(self.query("Input").first())  # now, not after a refresh
        if self.targets is not None:
            self._echo()

    # -- the target: filter, pick, echo (decision 444) ---------------------------------
    def chosen_target(self) -> tuple[str, str] | None:
        """The target the form would submit: the list's highlighted row."""
        if self.targets is None:
            return None
        ol = self.query_one("#form-target", OptionList)
        if ol.highlighted is None or ol.option_count == 0:
            return None
        tid = ol.get_option_at_index(ol.highlighted).id
        return next(((i, t) for i, t in self.targets if i == tid), None)

    def _echo(self) -> None:
        chosen = self.chosen_target()
        echo = Text("→ ", style="bold")
        if chosen is None:
            echo.append("nothing matches the filter", style="yellow")
        else:
            echo.append(chosen[0], style="bold")
            echo.append(f" · {short(chosen[1], 70)}")
        self.query_one("#form-target-echo", Static).update(echo)

    def move_target(self, delta: int, filter_value: str) -> None:
        """↓/↑ from the filter: apply what was typed so far, then move the pick."""
        if filter_value != self._applied_filter:
            self._apply_filter(filter_value)
        ol = self.query_one("#form-target", OptionList)
        if ol.option_count:
            current = ol.highlighted if ol.highlighted is not None else -delta
            ol.highlighted = max(0, min(ol.option_count - 1, current + delta))
        self._echo()

    def type_reason(self, text: str) -> None:
        """Text typed on the list goes on in the reason field (it never vanishes)."""
        reason = self.query_one("#form-reason", Input)
        self.set_focus(reason)
        reason.insert_text_at_cursor(text)

    @on(OptionList.OptionHighlighted, "#form-target")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._echo()

    @on(Input.Changed, "#form-target-filter")
    def _filter(self, event: Input.Changed) -> None:
        if event.value != self._applied_filter:
            self._apply_filter(event.value)

    def _apply_filter(self, value: str) -> None:
        assert self.targets is not None
        self._applied_filter = value
        needle = value.strip().casefold()
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
        self._echo()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter is the priority binding below

    async def action_enter(self) -> None:
        focused = self.focused
        await drain(focused)
        filter_changed = (
            isinstance(focused, Input)
            and focused.id == "form-target-filter"
            and focused.value != self._applied_filter
        )
        if filter_changed:
            assert isinstance(focused, Input)
            self._apply_filter(focused.value)
        if isinstance(focused, Input) and focused.id == "form-reason":
            self._submit()
        else:
            self.focus_next()

    def _error(self, message: str) -> None:
        self.query_one("#form-error", Static).update(Text(message))

    async def action_submit(self) -> None:
        await drain(self.focused)
        self._submit()

    def _submit(self) -> None:
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
                self._error(f"Pick one: {self.target_label.lower()}.")
                return
            target = ol.get_option_at_index(ol.highlighted).id
        if not reason:
            self._error("A reason is required.")
            self.set_focus(self.query_one("#form-reason", Input))
            return
        self.dismiss(ActionForm(reason=reason, priority=priority, target=target))

    async def action_cancel(self) -> None:
        self.dismiss(None)
