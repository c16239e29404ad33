"""The analysis screen's open-life chart (issue 26, item 1): the Kaplan–Meier curve of a
configuration as a text step chart on a fixed 0–1 axis, one column band per session since a
question's creation, ``+`` where questions were censored, the 0.5 line the median reads off,
and S(t) printed under every session so the chart reads without colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from curiosity_tui.widgets.literal import clean

if TYPE_CHECKING:
    from textual.widget import Widget

    from curiosity_tui.analysis.survival import KMRow
    from curiosity_tui.analysis.survival_config import ConfigSurvival

__all__ = ["survival_chart", "survival_steps", "survival_widgets"]

#: rows of the chart (S = 1.0 on the top row, 0.0 on the bottom row)
HEIGHT = 9
#: characters per session
BAND = 6


def survival_steps(table: Sequence[KMRow]) -> list[tuple[float, int]]:
    """(S(t), censored at t) for every session t from 0 to the last time of ``table``: S is
    1 before the first event and holds between the table's times."""
    if not table:
        return []
    by_time = {r.time: r for r in table}
    out: list[tuple[float, int]] = []
    s = 1.0
    for t in range(table[-1].time + 1):
        row = by_time.get(t)
        if row is not None:
            s = row.survival
        out.append((s, row.censored if row is not None else 0))
    return out


def _row_of(s: float, height: int) -> int:
    return round((1.0 - s) * (height - 1))


def _grid(steps: list[tuple[float, int]], height: int) -> list[list[str]]:
    width = len(steps) * BAND
    grid = [[" "] * width for _ in range(height)]
    half = _row_of(0.5, height)
    for x in range(width):
        grid[half][x] = "┈"
    prev: int | None = None
    for t, (s, censored) in enumerate(steps):
        y, x0 = _row_of(s, height), t * BAND
        for x in range(x0, x0 + BAND):
            grid[y][x] = "─"
        if prev is not None and y != prev:  # the drop at the start of session t
            grid[prev][x0] = "┐"
            for yy in range(prev + 1, y):
                grid[yy][x0] = "│"
            grid[y][x0] = "└"
        if censored:
            grid[y][x0 + BAND // 2] = "+"
        prev = y
    return grid


def survival_chart(c: ConfigSurvival, height: int = HEIGHT) -> Text:
    """One configuration's curve: a heading with the median and its interval, the step
    chart, then the session axis and S(t) under each session."""
    out = Text(no_wrap=True, end="")
    out.append(clean(c.config, oneline=True), style="bold")
    median = "not reached" if c.median is None else f"{c.median:g} sessions"
    if c.runs < 2:
        ci = "no interval: one run"
    elif c.ci_low is None:
        ci = "interval: not reached in most draws"
    else:
        high = "unbounded" if c.ci_high is None else f"{c.ci_high:g}"
        ci = f"95% bootstrap by run {c.ci_low:g} – {high}"
    out.append(f"   {c.runs} run(s), {c.questions} questions, {c.events} ended\n", style="dim")
    out.append(f"median open life: {median} ({ci})\n")
    steps = survival_steps(c.table)
    if not steps:
        out.append("  no questions (an arm without a store)", style="dim")
        return out
    grid = _grid(steps, height)
    for y, cells in enumerate(grid):
        label = {0: "1.0", _row_of(0.5, height): "0.5", height - 1: "0.0"}.get(y, "")
        out.append(f"{label:>4} ┤" if label else "     │", style="dim")
        for ch in cells:
            out.append(ch, style="dim" if ch == "┈" else "bold cyan" if ch != " " else "")
        out.append("\n")
    axis = "".join(f"{t:<{BAND}}" for t in range(len(steps)))
    out.append(f"   t  {axis}  sessions since creation (+ censored, ┈ S = 0.5)\n", style="dim")
    values = "".join(f"{s:<{BAND}.2f}" for s, _ in steps)
    out.append(f"S(t)  {values}")
    return out


def survival_widgets(found: Sequence[ConfigSurvival]) -> list[Widget]:
    """The report-tables view's open-life section: a title, one chart per configuration with
    questions, and the note on how the curve is read."""
    from textual.widgets import Static

    out: list[Widget] = [
        Static(Text("Open life of questions (Kaplan–Meier)"), classes="an-title", id="survival")
    ]
    shown = [c for c in found if c.questions]
    if not shown:
        out.append(
            Static(Text("no run with questions and a per-session history"), classes="an-note")
        )
        return out
    for c in shown:
        chart = Static(survival_chart(c), classes="survival-chart")
        chart.styles.margin = (0, 0, 1, 0)
        out.append(chart)
    out.append(
        Static(
            Text(
                "S(t): the share of questions still open t sessions after their creation; a "
                "question still open or dormant at its run's end is censored (+). Pooled over "
                "a configuration's runs; the median's interval resamples runs. "
                "`curiosity-tui metrics --survival` prints the table, `--survival-csv` the data."
            ),
            classes="an-note",
        )
    )
    return out
