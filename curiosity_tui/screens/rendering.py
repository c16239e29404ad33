"""The exact input a session received (its saved rendering, verbatim), session by session.

For the next, not-yet-run session it shows what that session would receive from the current
state, and says so. ``i`` cycles through the session record's other saved call inputs, the
list of its calls (kind, start and end time), and then its calls, each shown as the exact input
beside the model's raw reply, under the values it was sampled with and its times.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Header, Static

from curiosity_tui.ledger.view import LedgerView
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.call_list import call_detail, call_list
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import literal


class RenderingScreen(AppScreen):
    HELP_TITLE = "Session input"
    HELP = "The exact text each session received (saved verbatim in its session record)."
    DEFAULT_CSS = """
    RenderingScreen #rendering-title { height: auto; padding: 0 1; background: $boost; }
    RenderingScreen #rendering-panes { height: 1fr; }
    RenderingScreen VerticalScroll { height: 1fr; width: 1fr; padding: 0 1; }
    RenderingScreen #reply-pane { border-left: solid $accent; display: none; }
    RenderingScreen #reply-pane.shown { display: block; }
    """
    BINDINGS = [
        Binding("left_square_bracket", "step(-1)", "Earlier session", id="rendering.prev"),
        Binding("right_square_bracket", "step(1)", "Later session", id="rendering.next"),
        Binding("i", "next_input", "Calls: input / reply", id="rendering.inputs"),
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
        with Horizontal(id="rendering-panes"):
            with VerticalScroll(id="input-pane"):
                yield Static("", id="rendering-body")
            with VerticalScroll(id="reply-pane"):
                yield Static("", id="reply-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"session input · {self.view.path.name}"
        self._show()

    def _kinds(self) -> list[str]:
        """ "rendering", the record's other saved inputs, then "call N" for each call."""
        rec = self.view.ledger.session_record(self.session)
        kinds = ["rendering"]
        if rec is not None:
            kinds += sorted(k for k in rec.inputs if k != "rendering")
            kinds += ["calls"] if rec.calls else []  # the call list (issue 23.4)
            kinds += [f"call {i}" for i in range(1, len(rec.calls) + 1)]
        return kinds

    def _show(self) -> None:
        kinds = self._kinds()
        kind = kinds[self.kind_index % len(kinds)]
        rec = self.view.ledger.session_record(self.session)
        title = Text(end="")
        title.append(f"session {self.session}", style="bold")
        reply: str | None = None
        listing: Text | None = None
        if kind == "calls" and rec is not None:
            body = ""
            listing = call_list(rec.calls)
            title.append(f"  ·  its {len(rec.calls)} model calls: when each began and ended")
        elif kind == "rendering":
            body = self.view.rendering(self.session)
            if rec is not None:
                title.append("  ·  the rendering it received, saved verbatim in its session record")
            else:
                title.append(
                    "  ·  not run yet: what it would receive from the current state", style="yellow"
                )
        elif kind.startswith("call ") and rec is not None:
            n = int(kind.split()[1])
            call = rec.calls[n - 1]
            body, reply = call.request_text, call.response_text
            title.append(f"  ·  call {n} of {len(rec.calls)}: {call.kind}")
            title.append(f" ({call.model or 'model ?'})", style="dim")
            title.append("  ·  left: its exact input  ·  right: the model's raw reply")
            if call.error:
                title.append(f"  ·  error: {call.error}", style="red")
            title.append_text(call_detail(call))
        else:
            body = rec.inputs.get(kind, "") if rec is not None else ""
            title.append(f"  ·  input of the {kind!r} call, verbatim")
        title.append(
            f"\nsessions: {', '.join(str(s) for s in self.sessions)}  ·  {len(kinds)} view(s), "
            f"i for the next  ·  {len(body)} characters in",
            style="dim",
        )
        if reply is not None:
            title.append(f", {len(reply)} out", style="dim")
        self.query_one("#rendering-title", Static).update(title)
        self.query_one("#rendering-body", Static).update(listing or literal(body))
        self.query_one("#reply-body", Static).update(
            literal(reply) if reply else Text("(no reply text)", style="dim italic")
        )
        self.query_one("#reply-pane").set_class(reply is not None, "shown")
        for pane in self.query(VerticalScroll):
            pane.scroll_home(animate=False)

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
