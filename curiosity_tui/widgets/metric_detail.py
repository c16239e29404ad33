"""The analysis screen's metric pane: the highlighted metric's definition, unit, denominator,
per-run values by configuration, and the standard comparisons' differences with intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from curiosity_tui.analysis.formatting import fmt, fmt_interval
from curiosity_tui.widgets.literal import clean

if TYPE_CHECKING:
    from curiosity_tui.analysis.overview import AnalysisData
    from curiosity_tui.analysis.registry import MetricInfo

__all__ = ["direction_words", "metric_detail"]


def direction_words(info: MetricInfo) -> str:
    return {True: "higher is better", False: "lower is better", None: "no direction"}[
        info.higher_is_better
    ]


def metric_detail(data: AnalysisData, m: str) -> Text:
    """The detail text of metric ``m``: its head, its runs, its differences."""
    t = Text(end="")
    _head(t, data.infos[m], m)
    _per_run(t, data, m)
    _differences(t, data, m)
    t.rstrip()
    return t


def _head(t: Text, info: MetricInfo, m: str) -> None:
    t.append(m, style="bold")
    if info.embedder:
        t.append(f" [{info.embedder}]", style="cyan")
    t.append(f" — {clean(info.definition, oneline=True)}\n")
    flags = [
        f for f, on_ in (("structural", info.structural), ("bookkeeping", info.bookkeeping)) if on_
    ]
    t.append(
        f"unit: {info.unit} · denominator: {clean(info.denominator, oneline=True)} · "
        f"{direction_words(info)}{' · ' + ', '.join(flags) if flags else ''}\n",
        style="dim",
    )


def _per_run(t: Text, data: AnalysisData, m: str) -> None:
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


def _differences(t: Text, data: AnalysisData, m: str) -> None:
    diffs = [d for d in data.doc.differences if d.metric == m and d.diff is not None]
    if not diffs:
        if len(data.doc.configs) > 1:
            t.append("\nno standard comparison (P2, P3) has both sides present\n", style="dim")
        return
    t.append(
        "\ndifferences (a − b of the means; 95% bootstrap interval resampling runs)\n",
        style="bold",
    )
    for a, b, label in data.pairs:
        for d in diffs:
            if (d.a, d.b) != (a, b) or d.diff is None:
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
