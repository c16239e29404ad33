"""The analysis screen: the tables of ``curiosity-tui metrics``, ``verdict`` and ``sweep`` for a
set of runs, with the ε curve and per-run values drawn as charts.

Five views, switched by key (1–5) or by clicking a tab:

1. **Metrics** — every registry metric, one column per configuration (mean over runs and n,
   as ``metrics`` prints); the highlighted metric's definition, unit, denominator, per-run
   values (run by run) and the between-configuration differences of the report's standard
   comparisons with their 95% bootstrap intervals (runs resampled) below.
2. **Report tables** — the §8 ledger table, the P2 and P3 tables, tokens and truncation, the
   pooled ``regen_dup_share`` and Pearson r, for whatever configurations are present; the
   open life of questions as a Kaplan–Meier step chart per configuration.
3. **Verdict** — the locked rule evaluated on the locked metrics only, each clause with its
   figures, per-run values and interval; the prereg chronology; every other metric under
   "exploratory". Without a locked plan the view says so and shows no verdict.
4. **ε sweep** — preservation rate at each ε per configuration, a column chart on a fixed
   0–1 axis, and the caveat that the sweep re-classifies recorded Δ values (not runs).
5. **Per-run chart** — one bar per run for a chosen metric (``n``/``p`` or the select), grouped
   by configuration with the mean beneath.

All figures come from the domain modules: :func:`curiosity_tui.analysis.overview.compute_analysis`
assembles them, in a thread worker (numpy and scikit-learn are imported there, never when this
module is imported). The views are built by widgets: :mod:`~curiosity_tui.widgets.charts`,
:mod:`~curiosity_tui.widgets.metric_detail`, :mod:`~curiosity_tui.widgets.report_tables`,
:mod:`~curiosity_tui.widgets.verdict_view`; this file holds the screen: layout, loading, keys.
Every string that came from a ledger or a plan (run ids, configuration names, rule text,
notes) is shown literally.

Standalone: ``AnalysisApp(paths).run()`` (:mod:`curiosity_tui.app.standalone`); inside the
main app: ``navigator(screen).open_analysis(paths)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import (
    DataTable,
    Header,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.analysis.overview import NO_LOCK, AnalysisData, compute_analysis
from curiosity_tui.analysis.practice import banner as practice_banner
from curiosity_tui.analysis.practice import scripted_run_ids
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.charts import RunBars, epsilon_curve
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean, lit, num
from curiosity_tui.widgets.metric_detail import metric_detail
from curiosity_tui.widgets.report_tables import report_tables, row_table
from curiosity_tui.widgets.verdict_view import verdict_widgets

__all__ = ["VIEWS", "AnalysisScreen"]

VIEWS = ("metrics", "tables", "verdict", "sweep", "chart")

# -------------------------------------------------------------------------- screen


class AnalysisScreen(AppScreen):
    """Metric tables, verdict, ε sweep and per-run charts for a set of runs."""

    HELP_TITLE = "Analysis"
    HELP = (
        "The tables of `curiosity-tui metrics`, `verdict` and `sweep` for the runs shown in the "
        "title. 1 metrics (Enter on a metric charts it), 2 the report's tables, 3 the verdict "
        "(locked metrics only; the rest is exploratory), 4 the ε sweep with its curve, 5 "
        "per-run values as bars (n / N change the metric). Intervals: percentile bootstrap, "
        "runs resampled, 10,000 draws, seeded."
    )
    DEFAULT_CSS = """
    AnalysisScreen #analysis-status { height: auto; padding: 0 1; background: $panel; }
    AnalysisScreen TabbedContent { height: 1fr; }
    AnalysisScreen TabPane { padding: 0; height: 1fr; }
    AnalysisScreen #metric-table { height: 1fr; }
    AnalysisScreen #metric-detail-scroll { height: 1fr; border-top: solid $primary-darken-2; }
    AnalysisScreen #metric-detail { padding: 0 1; }
    AnalysisScreen .an-body { height: 1fr; padding: 0 1; }
    AnalysisScreen .an-body DataTable { margin-bottom: 1; }
    AnalysisScreen .an-title { text-style: bold; color: $accent; margin-top: 1; }
    AnalysisScreen .an-note { color: $text-muted; }
    AnalysisScreen .sweep-caveat { margin-bottom: 1; }
    AnalysisScreen .sweep-curve { margin-top: 1; }
    AnalysisScreen #verdict-headline { text-style: bold; margin-top: 1; }
    AnalysisScreen #chart-metric { width: 60; }
    AnalysisScreen #chart-body { height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "view('metrics')", "Metrics", id="analysis.metrics"),
        Binding("2", "view('tables')", "Report tables", id="analysis.tables"),
        Binding("3", "view('verdict')", "Verdict", id="analysis.verdict"),
        Binding("4", "view('sweep')", "ε sweep", id="analysis.sweep"),
        Binding("5", "view('chart')", "Per-run chart", id="analysis.chart"),
        Binding("n", "cycle_metric(1)", "Next metric", id="analysis.next_metric"),
        Binding("N", "cycle_metric(-1)", "Previous metric", id="analysis.prev_metric"),
        Binding("r", "reload", "Reload", id="analysis.reload"),
        Binding("escape", "back", "Back", id="analysis.back"),
    ]

    def __init__(self, paths: Iterable[Path | str], chain: Path | None = None) -> None:
        super().__init__()
        self.paths = [Path(p) for p in paths]
        self.chain = Path(chain) if chain is not None else None
        self.data: AnalysisData | None = None
        self.error: str | None = None
        self.metric: str | None = None  # the metric of the detail pane and the chart

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            Text("loading runs and computing metrics (bootstrap, 10,000 draws)…", style="dim"),
            id="analysis-status",
        )
        with TabbedContent(id="analysis-tabs", initial="metrics"):
            with TabPane("1 Metrics", id="metrics"), Vertical():
                yield row_table("metric-table", fit=False)
                with VerticalScroll(id="metric-detail-scroll"):
                    yield Static("", id="metric-detail")
            with TabPane("2 Report tables", id="tables"):
                yield VerticalScroll(id="tables-body", classes="an-body")
            with TabPane("3 Verdict", id="verdict"):
                yield VerticalScroll(id="verdict-body", classes="an-body")
            with (
                TabPane("4 ε sweep", id="sweep"),
                VerticalScroll(id="sweep-body", classes="an-body"),
            ):
                yield Static("", classes="an-title", id="sweep-title")
                yield row_table("sweep-table")
                yield Vertical(id="sweep-curves")
            with TabPane("5 Per-run chart", id="chart"), Vertical():
                yield Select[str]([], prompt="metric", id="chart-metric")
                with VerticalScroll(id="chart-body"):
                    yield RunBars(id="chart-bars")
        yield Footer()

    def on_mount(self) -> None:
        where = ", ".join(clean(p, oneline=True) for p in self.paths)
        self.title = "analysis"
        self.sub_title = where
        self.query_one("#metric-table", DataTable).focus()
        self.action_reload()

    # -- loading ------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.query_one("#analysis-tabs", TabbedContent).loading = True
        self.query_one("#analysis-status", Static).update(
            Text("loading runs and computing metrics (bootstrap, 10,000 draws)…", style="dim")
        )
        self._load()

    @work(thread=True, exclusive=True, group="analysis", exit_on_error=False)
    def _load(self) -> None:
        from curiosity_tui.errors import CuriosityError

        try:
            data = compute_analysis(self.paths, self.chain)
        except CuriosityError as err:
            self.app.call_from_thread(self._failed, str(err))
            return
        except Exception as err:  # a bug must not take the app down: say what happened
            self.app.call_from_thread(self._failed, f"{type(err).__name__}: {err}")
            return
        if not get_current_worker().is_cancelled:  # a newer reload supersedes this one
            self.app.call_from_thread(self._show, data)

    def _failed(self, message: str) -> None:
        if not self.is_attached:
            return
        self.error = message
        self.query_one("#analysis-tabs", TabbedContent).loading = False
        self.query_one("#analysis-status", Static).update(lit(message, "bold red"))

    def _show(self, data: AnalysisData) -> None:
        if not self.is_attached:
            return
        self.data = data
        self.error = None
        n_cfg = len(data.doc.configs)
        status = Text(
            f"{len(data.runs)} run(s) in {n_cfg} configuration(s) · "
            + ", ".join(
                f"{clean(c, oneline=True)} n={len(data.doc.runs[c])}" for c in data.doc.configs
            ),
            end="",
        )
        chain = f"prereg chain: {clean(data.chain, oneline=True)}" if data.chain else NO_LOCK
        status.append(f" · {chain}", style="dim")
        label = practice_banner(data.doc.replies, scripted_runs=scripted_run_ids(data.doc))
        if label:  # practice never looks like results (decision 442)
            status = Text.assemble((label, "bold reverse red"), "\n", status)
        self.query_one("#analysis-status", Static).update(status)
        if self.metric not in data.infos:
            self.metric = next(iter(data.infos), None)
        self._fill_metrics(data)
        self._fill_tables(data)
        self._fill_verdict(data)
        self._fill_sweep(data)
        self._fill_chart(data)
        self.query_one("#analysis-tabs", TabbedContent).loading = False

    # -- 1 metrics ------------------------------------------------------------------------
    def _fill_metrics(self, data: AnalysisData) -> None:
        doc = data.doc
        table = self.query_one("#metric-table", DataTable)
        table.clear(columns=True)
        table.add_column(Text("metric", style="bold"), key="metric")
        for c in doc.configs:
            table.add_column(lit(c, "bold"), key=c)
        for name, info in data.infos.items():
            label = Text(name, end="")
            if info.embedder:
                label.append(f" [{info.embedder}]", style="cyan")
            cells: list[Text] = [label]
            for c in doc.configs:
                agg = doc.metrics[name][c]
                cells.append(
                    num(f"{fmt(agg.value)} (n={agg.n})")
                    if agg.value is not None
                    else num("—", "dim")
                )
            table.add_row(*cells, key=name)
        if self.metric in data.infos:
            table.move_cursor(row=list(data.infos).index(self.metric))
        self._show_detail()

    def metric_cell(self, metric: str, config: str) -> str:
        """The metric table's cell text for (metric, config) — for tests and the palette."""
        table = self.query_one("#metric-table", DataTable)
        return str(table.get_cell(metric, config))

    def _show_detail(self) -> None:
        data, m = self.data, self.metric
        detail = self.query_one("#metric-detail", Static)
        detail.update("" if data is None or m is None else metric_detail(data, m))

    @on(DataTable.RowHighlighted, "#metric-table")
    def _metric_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key and self.data is not None and key in self.data.infos and key != self.metric:
            self.metric = key
            self._show_detail()
            self._show_chart()

    @on(DataTable.RowSelected, "#metric-table")
    def _metric_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key and self.data is not None and key in self.data.infos:
            self.metric = key
            self._show_chart()
            self.action_view("chart")

    # -- 2 report tables -------------------------------------------------------------------
    def _fill_tables(self, data: AnalysisData) -> None:
        body = self.query_one("#tables-body", VerticalScroll)
        body.remove_children()
        body.mount_all(report_tables(data.doc))
        from curiosity_tui.widgets.relay_tables import relay_widgets

        body.mount_all(relay_widgets(data.relay_rows, data.relay_transitions))
        from curiosity_tui.widgets.survival_chart import survival_widgets

        body.mount_all(survival_widgets(data.survival))

    # -- 3 verdict ---------------------------------------------------------------------------
    def _fill_verdict(self, data: AnalysisData) -> None:
        body = self.query_one("#verdict-body", VerticalScroll)
        body.remove_children()
        body.mount_all(verdict_widgets(data))

    # -- 4 ε sweep ---------------------------------------------------------------------------
    def _fill_sweep(self, data: AnalysisData) -> None:
        title = self.query_one("#sweep-title", Static)
        table = self.query_one("#sweep-table", DataTable)
        curves = self.query_one("#sweep-curves", Vertical)
        table.clear(columns=True)
        curves.remove_children()
        if not data.sweeps:
            title.update(
                Text(
                    "ε sweep: no recorded Δ values in these runs (only arms with tension "
                    "evaluation record Δ)"
                )
            )
            table.display = False
            return
        table.display = True
        title.update(Text("ε sweep — re-classification of recorded Δ values, not runs"))
        table.add_column(Text("ε", style="bold"), key="epsilon")
        for r in data.sweeps:
            table.add_column(lit(f"{r.label} rate", "bold"), key=f"{r.label}:rate")
            table.add_column(lit(f"{r.label} preserved / n", "bold"), key=f"{r.label}:count")
        for i, row in enumerate(data.sweeps[0].rows):
            cells: list[Text] = [num(f"{row.epsilon:.2f}")]
            for r in data.sweeps:
                rr = r.rows[i]
                mark = "bold" if rr.epsilon in r.recorded_epsilons else ""
                cells.append(num(fmt(rr.rate), mark))
                cells.append(num(f"{rr.preserved}/{rr.n}", mark))
            table.add_row(*cells, key=f"{row.epsilon:.2f}")
        widgets: list[Widget] = []
        for r in data.sweeps:
            widgets.append(Static(epsilon_curve(r), classes="sweep-curve", id=None))
            widgets.append(Static(lit(r.caveat, "italic"), classes="an-note sweep-caveat"))
        curves.mount_all(widgets)

    # -- 5 per-run chart ---------------------------------------------------------------------
    def _fill_chart(self, data: AnalysisData) -> None:
        select = self.query_one("#chart-metric", Select)
        with select.prevent(Select.Changed):
            select.set_options([(Text(name), name) for name in data.infos])
            if self.metric is not None:
                select.value = self.metric
        self._show_chart()

    def _show_chart(self) -> None:
        if self.data is None or self.metric is None:
            return
        select = self.query_one("#chart-metric", Select)
        if select.value != self.metric:
            with select.prevent(Select.Changed):
                select.value = self.metric
        self.query_one("#chart-bars", RunBars).show(
            self.data.doc, self.metric, self.data.infos.get(self.metric)
        )

    @on(Select.Changed, "#chart-metric")
    def _chart_metric_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.metric:
            self._set_metric(event.value)

    def _set_metric(self, name: str) -> None:
        if self.data is None:
            return
        self.metric = name
        table = self.query_one("#metric-table", DataTable)
        names = list(self.data.infos)
        if name in names and table.row_count:
            table.move_cursor(row=names.index(name))
        self._show_detail()
        self._show_chart()

    def action_cycle_metric(self, step: int) -> None:
        if self.data is None or not self.data.infos:
            return
        names = list(self.data.infos)
        i = names.index(self.metric) if self.metric in names else 0
        self._set_metric(names[(i + step) % len(names)])

    # -- views and navigation ------------------------------------------------------------------
    @property
    def view(self) -> str:
        return self.query_one("#analysis-tabs", TabbedContent).active

    def action_view(self, name: str) -> None:
        tabs = self.query_one("#analysis-tabs", TabbedContent)
        tabs.active = name
        target: Widget | None
        target = {
            "metrics": self.query_one("#metric-table"),
            "tables": self.query_one("#tables-body"),
            "verdict": self.query_one("#verdict-body"),
            "sweep": self.query_one("#sweep-body"),
            "chart": self.query_one("#chart-metric"),
        }.get(name)
        if target is not None:
            target.focus()

    def action_back(self) -> None:
        """Back to the screen below; the standalone analysis app exits instead."""
        self.nav.close_screen(self)
