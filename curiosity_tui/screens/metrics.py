"""Metrics and the pre-registered verdict for the workspace's runs.

The tables are the analysis layer's own (:func:`curiosity_tui.analysis.tables.format_tables`,
the same as ``curiosity-tui metrics``); the verdict is computed mechanically from the latest
lock of the prereg chain beside the runs (``curiosity-tui verdict``), or the screen says that
nothing was locked. Computed in a thread worker: numpy and scikit-learn load only here.
"""

from __future__ import annotations

from pathlib import Path

from rich.markdown import Markdown
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from curiosity_tui.errors import CuriosityError
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.literal import clean


class MetricsScreen(AppScreen):
    HELP_TITLE = "Metrics and verdict"
    HELP = (
        "Per-configuration metric tables over the runs, and the mechanical verdict of the "
        "locked decision rule (locked metrics only; everything else is exploratory)."
    )
    DEFAULT_CSS = """
    MetricsScreen VerticalScroll { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [
        Binding("r", "recompute", "Recompute", id="metrics.recompute"),
        Binding("escape", "back", "Back", id="metrics.back"),
    ]

    def __init__(self, runs: Path) -> None:
        super().__init__()
        self.runs_dir = Path(runs)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("computing…", style="dim"), id="metrics-status", classes="hint")
        with VerticalScroll():
            yield Static("", id="verdict-body")
            yield Static("", id="metrics-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"metrics · {self.runs_dir.name}"
        self.compute()

    @work(thread=True, exclusive=True, group="metrics")
    def compute(self) -> None:
        from curiosity_tui.analysis.prereg import find_chain
        from curiosity_tui.analysis.registry import default_registry
        from curiosity_tui.analysis.rundata import load_runs
        from curiosity_tui.analysis.tables import format_tables
        from curiosity_tui.analysis.verdict import format_report, verdict_for_dir

        call = self.app.call_from_thread
        try:
            runs = load_runs([self.runs_dir])
            tables = format_tables(runs, default_registry()) if runs else ""
        except CuriosityError as err:
            call(self._status, f"cannot compute metrics: {err}", "red")
            return
        verdict: str | None = None
        note = "no prereg chain beside these runs: nothing was locked, so there is no verdict"
        if find_chain(self.runs_dir) is not None:
            try:
                verdict = format_report(verdict_for_dir(self.runs_dir))
                note = "verdict from the latest lock of the prereg chain"
            except CuriosityError as err:
                note = f"verdict not computed: {err}"
        call(self._show, len(runs), tables, verdict, note)

    def _status(self, message: str, style: str = "") -> None:
        self.query_one("#metrics-status", Static).update(Text(clean(message), style=style))

    def _show(self, n: int, tables: str, verdict: str | None, note: str) -> None:
        self._status(f"{n} run(s) under {self.runs_dir} · {note}")
        self.query_one("#verdict-body", Static).update(
            Text(clean(verdict)) if verdict else Text("")
        )
        self.query_one("#metrics-body", Static).update(
            Markdown(tables) if tables else Text("No runs here.", style="dim")
        )

    def action_recompute(self) -> None:
        self._status("computing…", "dim")
        self.compute()

    def action_back(self) -> None:
        self.dismiss()
