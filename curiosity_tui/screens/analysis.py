"""The analysis screen: the tables of ``curiosity-tui metrics``, ``verdict`` and ``sweep`` for a
set of runs, with the ε curve and per-run values drawn as charts.

Five views, switched by key (1–5) or by clicking a tab:

1. **Metrics** — every registry metric, one column per configuration (mean over runs and n,
   as ``metrics`` prints); the highlighted metric's definition, unit, denominator, per-run
   values (run by run) and the between-configuration differences of the report's standard
   comparisons with their 95% bootstrap intervals (runs resampled) below.
2. **Report tables** — the §8 ledger table, the P2 and P3 tables, tokens and truncation, the
   pooled ``regen_dup_share`` and Pearson r, for whatever configurations are present.
3. **Verdict** — the locked rule evaluated on the locked metrics only, each clause with its
   figures, per-run values and interval; the prereg chronology; every other metric under
   "exploratory". Without a locked plan the view says so and shows no verdict.
4. **ε sweep** — preservation rate at each ε per configuration, a column chart on a fixed
   0–1 axis, and the caveat that the sweep re-classifies recorded Δ values (not runs).
5. **Per-run chart** — one bar per run for a chosen metric (``n``/``p`` or the select), grouped
   by configuration with the mean beneath.

All figures come from the domain modules (:mod:`curiosity_tui.analysis`); this file only lays
them out. Loading runs and computing the bootstrap intervals runs in a thread worker; numpy and
scikit-learn are imported there, never when this module is imported. Every string that came
from a ledger or a plan (run ids, configuration names, rule text, notes) is shown literally.

Standalone: ``AnalysisApp(paths).run()``; inside the main app:
``app.push_screen(AnalysisScreen(paths))``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from curiosity_tui.app import CSS as APP_CSS
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.literal import clean, short

if TYPE_CHECKING:
    from curiosity_tui.analysis.aggregate import Difference
    from curiosity_tui.analysis.registry import MetricInfo
    from curiosity_tui.analysis.sweep import SweepResult
    from curiosity_tui.analysis.tables import MetricsDoc
    from curiosity_tui.analysis.verdict import ClauseResult, Verdict, VerdictReport

__all__ = [
    "AnalysisApp",
    "AnalysisData",
    "AnalysisScreen",
    "compute_analysis",
    "epsilon_curve",
    "hbar",
    "run_bars",
]

VIEWS = ("metrics", "tables", "verdict", "sweep", "chart")
NO_LOCK = "no locked plan"

# ------------------------------------------------------------------------- the data


@dataclass
class AnalysisData:
    """Everything the screen shows, computed off the event loop by :func:`compute_analysis`."""

    paths: list[Path]
    runs: list[tuple[str, str]]  # (config, run_id), in load order
    doc: MetricsDoc
    infos: dict[str, MetricInfo]  # registry order
    pairs: list[tuple[str, str, str]]  # standard comparisons present: (a, b, label)
    sweeps: list[SweepResult]
    chain: Path | None
    verdict: VerdictReport | None
    #: why there is no verdict (starts with NO_LOCK when nothing was locked)
    verdict_problem: str = ""


def _find_chain(paths: Sequence[Path], chain: Path | None) -> Path | None:
    from curiosity_tui.analysis.prereg import CHAIN_FILE, find_chain

    if chain is not None:
        chain = Path(chain)
        return chain / CHAIN_FILE if chain.is_dir() else chain
    for p in paths:
        found = find_chain(Path(p))
        if found is not None:
            return found
    return None


def compute_analysis(paths: Sequence[Path], chain: Path | None = None) -> AnalysisData:
    """Load the runs and compute the metric tables, ε sweeps and (if a plan is locked) the
    verdict, exactly as the ``metrics``, ``sweep`` and ``verdict`` commands do. Slow (the
    bootstrap; numpy and scikit-learn): call it in a worker."""
    from curiosity_tui.analysis.prereg import load_verified_chain
    from curiosity_tui.analysis.registry import default_registry
    from curiosity_tui.analysis.rundata import load_runs
    from curiosity_tui.analysis.sweep import sweep_runs
    from curiosity_tui.analysis.tables import PAIR_LABELS, STANDARD_PAIRS, build
    from curiosity_tui.analysis.verdict import verdict_for
    from curiosity_tui.errors import CuriosityError, InputError

    paths = [Path(p) for p in paths]
    reg = default_registry()
    runs = load_runs(paths)
    if not runs:
        where = ", ".join(str(p) for p in paths) or "(no paths)"
        raise InputError(f"{where}: no runs found (ledger dirs or *.run.json files)")
    doc = build(runs, reg)
    pairs = [
        (a, b, PAIR_LABELS[(a, b)])
        for a, b in STANDARD_PAIRS
        if a in doc.configs and b in doc.configs
    ]
    sweeps = sweep_runs(runs)
    found = _find_chain(paths, chain)
    verdict = None
    problem = ""
    if found is None or not found.is_file():
        where = str(found) if found is not None else " or ".join(str(p) for p in paths)
        problem = (
            f"{NO_LOCK}: no prereg.jsonl in {where} (or the parent directory), so there is no "
            "decision rule to evaluate. Lock one with `curiosity-tui prereg lock PLAN.toml "
            "--stage before-runs`; the metric tables are exploratory until then."
        )
    else:
        try:
            entries = load_verified_chain(found)
            if not entries:
                problem = f"{NO_LOCK}: {found} holds no lock"
            else:
                verdict = verdict_for(entries, runs, registry=reg)
        except CuriosityError as err:
            problem = f"no verdict: the prereg chain cannot be used: {err}"
    return AnalysisData(
        paths=paths,
        runs=[(r.config, r.run_id) for r in runs],
        doc=doc,
        infos={m.name: m.info() for m in reg},
        pairs=pairs,
        sweeps=sweeps,
        chain=found if found is not None and found.is_file() else None,
        verdict=verdict,
        verdict_problem=problem,
    )


# ------------------------------------------------------------------ text helpers


def fmt(value: float | None, digits: int = 2) -> str:
    """As the CLI prints a figure (``analysis.aggregate.fmt``, without importing numpy)."""
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_interval(d: Difference) -> str:
    if d.ci_low is None or d.ci_high is None:
        return "no interval"
    return f"[{d.ci_low:+.2f}, {d.ci_high:+.2f}]"


def lit(text: object, style: str = "", *, justify: Any = None) -> Text:
    """One line of ledger text, literally (no markup, control characters made visible)."""
    return Text(clean(text, oneline=True), style=style, end="", justify=justify)


def num(text: str, style: str = "") -> Text:
    return Text(text, style=style, justify="right", end="")


# ------------------------------------------------------------------------- charts

EIGHTHS = " ▏▎▍▌▋▊▉"  # left-aligned partial blocks, 0/8 … 7/8
RISERS = " ▁▂▃▄▅▆▇"  # bottom-aligned partial blocks, 0/8 … 7/8


def hbar(value: float, scale: float, width: int, full: str = "█") -> str:
    """A horizontal bar of ``|value| / scale * width`` cells, to an eighth of a cell (to a
    whole cell when ``full`` is a shade, which has no partial glyphs)."""
    if scale <= 0 or width <= 0:
        return ""
    ratio = min(abs(value) / scale, 1.0)
    if full != "█":
        return full * round(ratio * width)
    eighths = round(ratio * width * 8)
    whole, rem = divmod(eighths, 8)
    return full * whole + (EIGHTHS[rem] if rem else "")


def run_bars(doc: MetricsDoc, metric: str, info: MetricInfo | None, width: int = 100) -> Text:
    """Per-run values of ``metric`` as horizontal bars, grouped by configuration, each group
    followed by its mean (shaded ░). One scale for every bar; the value is printed beside
    each bar, so the chart reads without colour."""
    out = Text(no_wrap=True, end="")
    out.append(metric, style="bold")
    if info is not None:
        emb = f" [{info.embedder}]" if info.embedder else ""
        out.append(emb, style="cyan")
        out.append(f" — {clean(info.definition, oneline=True)}\n", style="")
        direction = {True: "higher is better", False: "lower is better", None: "no direction"}[
            info.higher_is_better
        ]
        out.append(
            f"unit: {info.unit} · {clean(info.denominator, oneline=True)} · {direction}\n",
            style="dim",
        )
    else:
        out.append("\n")
    by_config = doc.metrics.get(metric, {})
    values = [v.value for agg in by_config.values() for v in agg.per_run if v.value is not None] + [
        agg.value for agg in by_config.values() if agg.value is not None
    ]
    scale = max((abs(v) for v in values), default=0.0)
    ids = [v.run_id for agg in by_config.values() for v in agg.per_run]
    label_w = min(max([len(clean(i, oneline=True)) for i in ids] + [6]), 32)
    value_w = max([len(fmt(v)) for v in values] + [4])
    bar_w = max(10, min(72, width - label_w - value_w - 8))
    out.append(f"scale: one full bar = {fmt(scale)}\n", style="dim")
    for config, agg in by_config.items():
        out.append("\n")
        out.append(clean(config, oneline=True), style="bold")
        out.append(
            f"   mean {fmt(agg.value)} · n={agg.n}"
            + (f" · {agg.n_missing} run(s) without a value" if agg.n_missing else "")
            + "\n",
            style="dim",
        )
        rows = [(short(v.run_id, label_w), v.value, "█", "") for v in agg.per_run]
        rows.append(("mean", agg.value, "░", "dim"))
        for label, value, full, style in rows:
            out.append(f"  {label:<{label_w}} ", style=style)
            if value is None:
                out.append(f"{'':<{bar_w}} {'—':>{value_w}}  not defined for this run\n", "dim")
                continue
            bar = hbar(value, scale, bar_w, full)
            if value < 0:
                bar = bar.replace("█", "▒")
            out.append(f"{bar:<{bar_w}}", style=style or ("red" if value < 0 else "green"))
            out.append(f" {fmt(value):>{value_w}}\n", style=style)
    if not by_config:
        out.append("\nno values\n", style="dim")
    out.rstrip()
    return out


CURVE_HEIGHT = 8
CURVE_COL = 5
CURVE_GAP = 2


def epsilon_curve(result: SweepResult, height: int = CURVE_HEIGHT) -> Text:
    """Preservation rate against ε as a column chart on a fixed 0–1 axis (a rate of 0.87 must
    not look empty next to 1.00, which a min–max scaled sparkline would draw), with the ε
    labels, the recorded ε marked ▲, and each column's rate and count printed under it."""
    out = Text(no_wrap=True, end="")
    rec = ", ".join(f"{e:g}" for e in result.recorded_epsilons) or "not recorded"
    out.append(clean(result.label, oneline=True), style="bold")
    out.append(
        f" — preservation rate vs ε ({result.n} recorded Δ; recorded ε = {rec})\n", style="dim"
    )
    step = CURVE_COL + CURVE_GAP
    levels = [
        None if r.rate is None else round(max(0.0, min(1.0, r.rate)) * height * 8)
        for r in result.rows
    ]
    for row in range(height):
        level = height - 1 - row  # 0 = bottom row
        if row == 0:
            axis = "1.00 ┤"
        elif level == height // 2 - 1:  # labels mark the top edge of their row
            axis = "0.50 ┤"
        else:
            axis = "     │"
        out.append(axis, style="dim")
        for eighths in levels:
            out.append(" " * CURVE_GAP)
            if eighths is None:
                out.append(" " * CURVE_COL)
                continue
            whole, rem = divmod(eighths, 8)
            if level < whole:
                cell = "█"
            elif level == whole and rem:
                cell = RISERS[rem]
            else:
                cell = " "
            out.append(cell * CURVE_COL, style="green")
        out.append("\n")
    out.append("0.00 └" + "─" * (step * len(result.rows)) + "\n", style="dim")
    lines = [
        ("   ε  ", [f"{r.epsilon:.2f}" for r in result.rows], "bold"),
        (
            "      ",
            ["▲ rec" if r.epsilon in result.recorded_epsilons else "" for r in result.rows],
            "yellow",
        ),
        (" rate ", [fmt(r.rate) for r in result.rows], ""),
        ("  n   ", [f"{r.preserved}/{r.n}" for r in result.rows], "dim"),
    ]
    for head, cells, style in lines:
        out.append(head, style="dim")
        for c in cells:
            out.append(" " * CURVE_GAP + f"{c:^{CURVE_COL}}", style=style)
        out.append("\n")
    out.rstrip()
    return out


class RunBars(Static):
    """The per-run bar chart; redrawn to the widget's width."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.chart_text = Text("")
        self._args: tuple[Any, str, Any] | None = None

    def show(self, doc: MetricsDoc, metric: str, info: MetricInfo | None) -> None:
        self._args = (doc, metric, info)
        self._draw(self.size.width)

    def _draw(self, width: int) -> None:
        if self._args is None:
            return
        self.chart_text = run_bars(*self._args, width=width or 100)
        self.update(self.chart_text)

    def on_resize(self, event: Any) -> None:
        if self._args is not None and event.size.width != getattr(self, "_drawn_w", None):
            self._drawn_w = event.size.width
            self._draw(event.size.width)


# -------------------------------------------------------------------------- screen


def _table(table_id: str | None = None, *, fit: bool = True) -> DataTable[Any]:
    """A row-cursor table; ``fit``: as tall as its rows (set inline: the app's stylesheet gives
    every DataTable ``height: 1fr``, and app CSS outranks a screen's DEFAULT_CSS)."""
    t: DataTable[Any] = DataTable(id=table_id, cursor_type="row", zebra_stripes=True)
    if fit:
        t.styles.height = "auto"
        t.styles.max_height = 40
    return t


class AnalysisScreen(AppScreen):
    """Metric tables, verdict, ε sweep and per-run charts for a set of runs."""

    HELP_TITLE = "Analysis"
    HELP = (
        "The tables of `curiosity-tui metrics`, `verdict` and `sweep` for the runs shown in the "
        "title. 1 metrics (Enter on a metric charts it), 2 the report's tables, 3 the verdict "
        "(locked metrics only; the rest is exploratory), 4 the ε sweep with its curve, 5 "
        "per-run values as bars (n / p change the metric). Intervals: percentile bootstrap, "
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
        Binding("p", "cycle_metric(-1)", "Prev metric", id="analysis.prev_metric"),
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
                yield _table("metric-table", fit=False)
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
                yield _table("sweep-table")
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
        if data is None or m is None:
            detail.update("")
            return
        info = data.infos[m]
        t = Text(end="")
        t.append(m, style="bold")
        if info.embedder:
            t.append(f" [{info.embedder}]", style="cyan")
        t.append(f" — {clean(info.definition, oneline=True)}\n")
        flags = [
            f
            for f, on_ in (("structural", info.structural), ("bookkeeping", info.bookkeeping))
            if on_
        ]
        direction = {True: "higher is better", False: "lower is better", None: "no direction"}[
            info.higher_is_better
        ]
        t.append(
            f"unit: {info.unit} · denominator: {clean(info.denominator, oneline=True)} · "
            f"{direction}{' · ' + ', '.join(flags) if flags else ''}\n",
            style="dim",
        )
        t.append("\nper run\n", style="bold")
        width = max((len(clean(c, oneline=True)) for c in data.doc.configs), default=4)
        for c in data.doc.configs:
            agg = data.doc.metrics[m][c]
            t.append(f"  {clean(c, oneline=True):<{width}}  ", style="bold")
            t.append(f"mean {fmt(agg.value)} (n={agg.n})  ", style="")
            t.append(
                " · ".join(f"{clean(v.run_id, oneline=True)} {fmt(v.value)}" for v in agg.per_run),
                style="dim",
            )
            t.append("\n")
        diffs = [d for d in data.doc.differences if d.metric == m and d.diff is not None]
        if diffs:
            t.append(
                "\ndifferences (a − b of the means; 95% bootstrap interval resampling runs)\n",
                style="bold",
            )
            for a, b, label in data.pairs:
                for d in diffs:
                    if (d.a, d.b) != (a, b):
                        continue
                    t.append(f"  {clean(a, oneline=True)} − {clean(b, oneline=True)}", style="bold")
                    t.append(f" ({label})  ", style="dim")
                    t.append(f"{d.diff:+.2f}  ")
                    if d.ci_low is None:  # the note says "no interval: <why>"
                        t.append(clean(d.note or "no interval", oneline=True), style="yellow")
                    else:
                        t.append(fmt_interval(d))
                        if d.note:
                            t.append(f" — {clean(d.note, oneline=True)}", style="yellow")
                    t.append("\n")
        elif len(data.doc.configs) > 1:
            t.append("\nno standard comparison (P2, P3) has both sides present\n", style="dim")
        t.rstrip()
        detail.update(t)

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
        from curiosity_tui.analysis import tables as T

        doc = data.doc
        body = self.query_one("#tables-body", VerticalScroll)
        body.remove_children()
        widgets: list[Widget] = []

        def cell(metric: str, config: str) -> Text:
            agg = doc.metrics.get(metric, {}).get(config)
            return num("—" if agg is None or agg.value is None else fmt(agg.value))

        def section(
            title: str, table_id: str, cols: Sequence[str], rows: Iterable[list[Text]]
        ) -> None:
            widgets.append(Static(Text(title), classes="an-title"))
            t = _table(table_id)
            t.add_column("")
            for c in cols:
                t.add_column(lit(c, "bold"))
            for r in rows:
                t.add_row(*r)
            widgets.append(t)

        def metric_rows(spec: Sequence[tuple[str, str]], cols: Sequence[str]) -> list[list[Text]]:
            return [
                [Text(label.strip() if not label.startswith("  ") else "  " + label.strip())]
                + [cell(metric, c) for c in cols]
                for label, metric in spec
                if metric in doc.metrics
            ]

        cols = [c for c in T.LEDGER_COLUMNS if c in doc.configs]
        if cols:
            rows = metric_rows(T.LEDGER_ROWS, cols)
            pres = []
            for c in cols:
                d = doc.decisions.get(c)
                pres.append(
                    num("—" if d is None or d.decisions == 0 else f"{d.preserve}/{d.decisions}")
                )
            rows.append([Text("PRESERVE decisions / all decisions"), *pres])
            section("The ledger (§8): final snapshots, mean over runs", "table-ledger", cols, rows)
        for title, pair, tid in (
            (
                "P2: same store, with curator (self-ask + store | protocol arm)",
                ("B-armed+cur", "C+cur"),
                "table-p2-with",
            ),
            (
                "P2: same store, without curator (self-ask + store | protocol arm)",
                ("B-armed-cur", "C-cur"),
                "table-p2-without",
            ),
        ):
            if all(c in doc.configs for c in pair):
                section(title, tid, pair, metric_rows(T.P2_ROWS, pair))
        arms = [
            (label, w, wo)
            for label, w, wo in (
                ("self-ask + store: with → without", "B-armed+cur", "B-armed-cur"),
                ("protocol arm: with → without", "C+cur", "C-cur"),
            )
            if w in doc.configs and wo in doc.configs
        ]
        if arms:
            rows = [
                [Text(label)]
                + [num(f"{cell(metric, w).plain} → {cell(metric, wo).plain}") for _, w, wo in arms]
                for label, metric in T.P3_ROWS
                if metric in doc.metrics
            ]
            section("P3: curator removal", "table-p3", [a[0] for a in arms], rows)
        section(
            "Tokens and truncation (completion tokens; curator calls excluded)",
            "table-tokens",
            doc.configs,
            metric_rows(T.TOKEN_ROWS, doc.configs),
        )
        if any(p.questions for p in doc.regen_dup_share_pooled.values()):
            section(
                "regen_dup_share, pooled over questions (per-run-then-mean is in Metrics)",
                "table-regen-pooled",
                ["duplicates / questions", "share", "embedder"],
                (
                    [
                        lit(c, "bold"),
                        num(f"{p.duplicates}/{p.questions}"),
                        num("—" if p.share is None else f"{p.share:.4f}"),
                        lit(p.embedder, "cyan"),
                    ]
                    for c, p in doc.regen_dup_share_pooled.items()
                ),
            )
        section(
            "Pearson r, dependency checks vs voluntary actions (sessions 2.., pooled)",
            "table-pearson",
            ["r", "sessions", "runs", "note"],
            (
                [
                    lit(c, "bold"),
                    num("—" if k.r is None else f"{k.r:+.4f}"),
                    num(str(k.n_sessions)),
                    num(str(k.n_runs)),
                    lit(k.note, "dim"),
                ]
                for c, k in ((c, doc.checks_vs_actions[c]) for c in doc.configs)
            ),
        )
        body.mount_all(widgets)

    # -- 3 verdict ---------------------------------------------------------------------------
    def _fill_verdict(self, data: AnalysisData) -> None:
        body = self.query_one("#verdict-body", VerticalScroll)
        body.remove_children()
        widgets: list[Widget] = []
        rep = data.verdict
        if rep is None:
            head = Text("Verdict: none — ", style="bold yellow", end="")
            head.append(clean(data.verdict_problem, oneline=True), style="yellow")
            widgets.append(Static(head, id="verdict-headline"))
            widgets.append(
                Static(
                    Text(
                        "Every figure in Metrics and Report tables is exploratory: with no "
                        "locked decision rule, none of them can decide anything.",
                        style="dim",
                    ),
                    classes="an-note",
                )
            )
            body.mount_all(widgets)
            return
        widgets += self._verdict_block(
            rep.verdict, "Verdict", "verdict-headline", "verdict-clauses"
        )
        if rep.original is not None:
            widgets += self._verdict_block(
                rep.original,
                "Under the before-runs rule",
                "verdict-original",
                "verdict-original-clauses",
            )
        widgets.append(Static(Text("Chronology (prereg chain)"), classes="an-title"))
        chron = _table("verdict-chronology")
        chron.add_columns("seq", "ts", "stage", "hash", "plan sha256")
        for e in rep.chronology:
            chron.add_row(
                num(str(e.seq)), lit(e.ts), lit(e.stage), lit(e.hash[:12]), lit(e.plan_sha256[:12])
            )
        widgets.append(chron)
        widgets.append(
            Static(lit(rep.exploratory_note), id="verdict-exploratory-note", classes="an-title")
        )
        configs = [
            c for c in data.doc.configs if any(c in row.by_config for row in rep.exploratory)
        ]
        explo = _table("verdict-exploratory")
        explo.add_column("metric", key="metric")
        for c in configs:
            explo.add_column(lit(c, "bold"), key=c)
        pairs = list(dict.fromkeys((d.a, d.b) for row in rep.exploratory for d in row.differences))
        for a, b in pairs:
            explo.add_column(lit(f"{a} − {b} (95% CI)", "bold"), key=f"{a}|{b}")
        undefined: list[str] = []
        for row in rep.exploratory:
            if all(v is None for v in row.by_config.values()):
                undefined.append(row.metric)
                continue
            label = Text(row.metric, end="")
            if row.embedder:
                label.append(f" [{row.embedder}]", style="cyan")
            diffs = {(d.a, d.b): d for d in row.differences}
            explo.add_row(
                label,
                *(num(fmt(row.by_config.get(c))) for c in configs),
                *(_diff_cell(diffs.get(pair)) for pair in pairs),
                key=row.metric,
            )
        widgets.append(explo)
        if undefined:
            widgets.append(
                Static(
                    Text(f"not defined for these runs: {', '.join(undefined)}", style="dim"),
                    classes="an-note",
                )
            )
        widgets.append(
            Static(
                Text(
                    "Intervals: percentile bootstrap of the difference of means, runs resampled "
                    "with replacement within each configuration (10,000 draws, seeded); printed "
                    "beside the figures, never consulted by the rule. None where a side has "
                    "fewer than two runs.",
                    style="dim",
                ),
                classes="an-note",
            )
        )
        body.mount_all(widgets)

    def _verdict_block(self, v: Verdict, title: str, head_id: str, table_id: str) -> list[Widget]:
        word = {
            "met": "MET",
            "not_met": "NOT MET",
            "undecided": "UNDECIDED",
            "incomplete": "INCOMPLETE",
        }[v.outcome]
        style = {"met": "bold green", "not_met": "bold red"}.get(v.outcome, "bold yellow")
        lock = (
            f"seq {v.lock.seq}, stage {v.lock.stage}, {v.lock.hash[:12]}" if v.lock else "unlocked"
        )
        head = Text(f"{title}: ", style="bold", end="")
        head.append(word, style=style)
        head.append(f"   (locked rule: {clean(lock, oneline=True)})", style="dim")
        rule = Text(
            f"rule: {v.rule_kind} over [{', '.join(v.metrics)}], margin {v.margin:g}, "
            f"ties read as {v.ties}, {v.aggregation} over runs",
            end="",
        )
        if v.rule_text:
            rule.append("\nrule text (not interpreted): ", style="dim")
            rule.append(clean(v.rule_text, oneline=True), style="italic")
        out: list[Widget] = [Static(head, id=head_id), Static(rule, classes="an-note")]
        table = _table(table_id)
        table.add_columns(
            "metric",
            "holds",
            "better",
            "treatment",
            "value",
            "",
            "control",
            "value",
            "advantage",
            "outcome",
            "95% CI",
            "per run (treatment)",
            "per run (control)",
            "note",
        )
        sign = {"beats": ">", "tie": "=", "does_not_beat": "≤", "no_data": "?"}
        holds = {
            True: Text("holds", "green"),
            False: Text("fails", "red"),
            None: Text("not settled", "yellow"),
        }
        for mc in v.by_metric:
            for i, c in enumerate(mc.clauses):
                label = Text(mc.metric if i == 0 else "", end="")
                if i == 0 and mc.embedder:
                    label.append(f" [{mc.embedder}]", style="cyan")
                table.add_row(
                    label,
                    holds[mc.holds] if i == 0 else Text(""),
                    Text("higher" if c.higher_is_better else "lower"),
                    lit(c.treatment, "bold"),
                    num(fmt(c.value_treatment)),
                    Text(sign[c.outcome], justify="center"),
                    lit(c.control, "bold"),
                    num(fmt(c.value_control)),
                    num("—" if c.advantage is None else f"{c.advantage:+.2f}"),
                    Text(
                        c.outcome.replace("_", " ")
                        + (f", read as {v.ties}" if c.outcome == "tie" else "")
                    ),
                    Text(fmt_interval(c.interval)),
                    Text(_per_run(c.per_run_treatment)),
                    Text(_per_run(c.per_run_control)),
                    lit(_clause_note(c), "dim"),
                )
        out.append(table)
        for n in v.notes:
            out.append(Static(lit(f"note: {n}", "yellow"), classes="an-note"))
        return out

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
        if len(self.app.screen_stack) > 2 or not isinstance(self.app, AnalysisApp):
            self.dismiss()
        else:
            self.app.exit()


def _per_run(values: Sequence[float | None]) -> str:
    return ", ".join(fmt(v) for v in values) or "none"


def _diff_cell(d: Difference | None) -> Text:
    if d is None or d.diff is None:
        return num("—", "dim")
    return num(f"{d.diff:+.2f} {fmt_interval(d)}")


def _clause_note(c: ClauseResult) -> str:
    return c.interval.note


# ---------------------------------------------------------------------------- standalone


class AnalysisApp(App[None]):
    """The analysis screen on its own: ``AnalysisApp(paths).run()`` (and tests)."""

    TITLE = "curiosity-tui analysis"
    CSS = APP_CSS
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="app.quit", priority=True),
    ]

    def __init__(self, paths: Path | str | Iterable[Path | str], chain: Path | None = None) -> None:
        super().__init__()
        if isinstance(paths, (str, Path)):
            paths = [paths]
        self.paths = [Path(p) for p in paths]
        self.chain = chain

    def on_mount(self) -> None:
        self.push_screen(AnalysisScreen(self.paths, self.chain))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        provider = getattr(screen, "palette_commands", None)
        if provider is not None:
            yield from provider()
        yield from super().get_system_commands(screen)

    def action_help(self) -> None:
        from curiosity_tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        self.push_screen(HelpScreen(self.screen))
