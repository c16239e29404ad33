"""The exact input a session received (its saved rendering, verbatim), session by session.

For the next, not-yet-run session it shows what that session would receive from the current
state, and says so. ``i`` cycles through the session record's other saved call inputs.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from curiosity_tui.ledger.view import LedgerView
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.literal import literal


class RenderingScreen(AppScreen):
    HELP_TITLE = "Session input"
    HELP = "The exact text each session received (saved verbatim in its session record)."
    DEFAULT_CSS = """
    RenderingScreen #rendering-title { height: auto; padding: 0 1; background: $boost; }
    RenderingScreen VerticalScroll { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [
        Binding("left_square_bracket", "step(-1)", "Earlier session", id="rendering.prev"),
        Binding("right_square_bracket", "step(1)", "Later session", id="rendering.next"),
        Binding("i", "next_input", "Other call inputs", id="rendering.inputs"),
        Binding("escape", "back", "Back", id="rendering.back"),
    ]

    def __init__(self, view: LedgerView, session: int) -> None:
        super().__init__()
        self.view = view
        self.sessions = view.session_numbers()
        self.session = session if session in self.sessions else self.sessions[-1]
        self.kind_index = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="rendering-title")
        with VerticalScroll():
            yield Static("", id="rendering-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"session input · {self.view.path.name}"
        self._show()

    def _kinds(self) -> list[str]:
        rec = self.view.ledger.session_record(self.session)
        kinds = ["rendering"]
        if rec is not None:
            kinds += sorted(k for k in rec.inputs if k != "rendering")
        return kinds

    def _show(self) -> None:
        kinds = self._kinds()
        kind = kinds[self.kind_index % len(kinds)]
        rec = self.view.ledger.session_record(self.session)
        title = Text(end="")
        title.append(f"session {self.session}", style="bold")
        if kind == "rendering":
            body = self.view.rendering(self.session)
            if rec is not None:
                title.append("  ·  the rendering it received, saved verbatim in its session record")
            else:
                title.append(
                    "  ·  not run yet: what it would receive from the current state", style="yellow"
                )
        else:
            body = rec.inputs.get(kind, "") if rec is not None else ""
            title.append(f"  ·  input of the {kind!r} call, verbatim")
        title.append(
            f"\nsessions: {', '.join(str(s) for s in self.sessions)}  ·  inputs: "
            f"{', '.join(kinds)} ({len(body)} characters)",
            style="dim",
        )
        self.query_one("#rendering-title", Static).update(title)
        self.query_one("#rendering-body", Static).update(literal(body))
        self.query_one(VerticalScroll).scroll_home(animate=False)

    def action_step(self, step: int) -> None:
        i = self.sessions.index(self.session)
        j = max(0, min(len(self.sessions) - 1, i + step))
        if j != i:
            self.session = self.sessions[j]
            self.kind_index = 0
            self._show()

    def action_next_input(self) -> None:
        self.kind_index += 1
        self._show()

    def action_back(self) -> None:
        self.dismiss()
