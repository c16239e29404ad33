"""Opening a blind pack from the workspace to rate it, as a named rater.

This modal only asks who is rating and asks the app to open the rating screen. Nothing on this
path leads to other raters' work: the agreement tables are a coordinator's view, opened from
the workspace (``g`` on a pack), never from here. The pack's key is never read here."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from curiosity_tui.errors import CuriosityError
from curiosity_tui.screens.base import navigator


class PackOpenScreen(ModalScreen[None]):
    HELP_TITLE = "Open a pack"
    DEFAULT_CSS = """
    PackOpenScreen { align: center middle; }
    PackOpenScreen > Vertical { width: 80; max-width: 95%; height: auto; border: round $accent;
        background: $surface; padding: 0 1; }
    PackOpenScreen #pack-error { color: $error; height: auto; }
    """
    BINDINGS = [
        Binding("ctrl+r", "rate", "Rate", id="pack.rate", priority=True),
        Binding("escape", "cancel", "Cancel", id="pack.cancel"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Pack {self.path.name}", style="bold"))
            yield Label("Rater name (one word; you see only your own ratings)")
            yield Input(
                value=os.environ.get("CURIOSITY_RATER") or os.environ.get("USER") or "",
                id="pack-rater",
            )
            yield Static("", id="pack-error")
            yield Static(
                Text(
                    "enter / ctrl+r rate · esc cancel · ctrl+b leaves the rating screen",
                    style="dim",
                )
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.action_rate()

    def action_rate(self) -> None:
        rater = self.query_one(Input).value.strip()
        if not rater:
            self.query_one("#pack-error", Static).update("A rater name is required.")
            return
        try:  # a bad pack or rater raises before anything changes; then this dialog closes
            navigator(self).open_rating(self.path, rater, closing=self)
        except CuriosityError as err:
            self.query_one("#pack-error", Static).update(Text(str(err)))

    def action_cancel(self) -> None:
        self.dismiss()
