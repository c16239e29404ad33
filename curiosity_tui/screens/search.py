"""Search the ledger (at the browser's current point) by node id or text; pick a result."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from curiosity_tui.ledger.node_record import NodeRecord
from curiosity_tui.ledger.view import LedgerView
from curiosity_tui.widgets.literal import short
from curiosity_tui.widgets.status import STATUS_STYLE, glyph


class SearchScreen(ModalScreen[tuple[str, list[str]] | None]):
    HELP_TITLE = "Search"
    """Returns (chosen node id, all matching ids) or None."""

    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    SearchScreen > Vertical { width: 100; max-width: 95%; height: 70%; margin-top: 3;
        border: round $accent; background: $surface; }
    SearchScreen OptionList { height: 1fr; }
    SearchScreen #search-count { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="search.cancel"),
        Binding("down", "to_results", "Results", show=False, id="search.results"),
    ]

    def __init__(self, nodes: dict[str, NodeRecord]) -> None:
        super().__init__()
        self.nodes = nodes
        self.results: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Input(
                placeholder="node id (q12 or 12) or words in a question or fact", id="search-input"
            )
            yield Static("", id="search-count")
            yield OptionList(id="search-results")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        found = LedgerView.search(self.nodes, event.value)
        self.results = [nid for nid, _ in found]
        ol = self.query_one(OptionList)
        ol.clear_options()
        options = []
        for nid, where in found:
            n = self.nodes[nid]
            label = Text(no_wrap=True, end="")
            label.append(glyph(n["status"]) + " ", style=STATUS_STYLE.get(n["status"], ""))
            label.append(f"{nid:<7}", style="bold")
            label.append(f"{n['status']:<9}", style=STATUS_STYLE.get(n["status"], ""))
            label.append(f"[{where}] ", style="dim")
            label.append(short(n["text"], 56))
            options.append(Option(label, id=nid))
        ol.add_options(options)
        more = " (first 200)" if len(found) >= 200 else ""
        self.query_one("#search-count", Static).update(
            Text(f"{len(found)} match(es){more}" if event.value.strip() else "", style="dim")
        )

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if self.results:
            self.dismiss((self.results[0], list(self.results)))

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss((event.option.id, list(self.results)))

    def action_to_results(self) -> None:
        if self.results:
            self.query_one(OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
