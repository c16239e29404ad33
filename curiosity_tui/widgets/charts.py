"""The analysis screen's text charts: bars to an eighth of a cell, drawn so they read without
colour (every value is printed beside its bar or column).

- :func:`run_bars` — one bar per run for a metric, grouped by configuration, with the mean;
- :func:`epsilon_curve` — preservation rate against ε, columns on a fixed 0–1 axis;
- :class:`RunBars` — the per-run chart as a widget, redrawn to its width.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.widgets.literal import clean, short

if TYPE_CHECKING:
    from curiosity_tui.analysis.registry import MetricInfo
    from curiosity_tui.analysis.sweep import SweepResult
    from curiosity_tui.analysis.tables import MetricsDoc

__all__ = ["RunBars", "epsilon_curve", "hbar", "run_bars"]

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
