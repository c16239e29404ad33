"""The report's open-life section (issue 26, item 1; decision 542): per configuration the
median open life with its bootstrap-by-run interval, the Kaplan–Meier table (at risk,
events, censored, S(t), hazard) and what became of met return conditions, with the step plot
as an SVG figure when the ``plots`` extra is installed.

The figures are :func:`~curiosity_tui.analysis.survival_config.survival_by_config`'s, the
same as ``metrics --survival`` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from curiosity_tui.analysis.markdown import md_cell, md_table
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.survival_config import ConfigSurvival, survival_by_config

__all__ = ["survival_md", "survival_section"]


class FigureSink(Protocol):
    """Where a figure goes (the report's ``Figures``): its file name, or None if not drawn."""

    def draw(self, name: str, draw: Callable[[Path], Path]) -> str | None: ...


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:g}"


def _median(c: ConfigSurvival) -> str:
    if not c.questions:
        return "— (no questions)"
    return "not reached" if c.median is None else _num(c.median)


def _interval(c: ConfigSurvival) -> str:
    """The interval's ends; an end is None when S never fell to 0.5 in those draws."""
    if not c.questions:
        return "—"
    if c.runs < 2:
        return "no interval (one run)"
    if c.ci_low is None and c.ci_high is None:
        return "not reached in most draws"
    high = "unbounded" if c.ci_high is None else _num(c.ci_high)
    return f"{_num(c.ci_low)} – {high}"


def survival_md(found: Sequence[ConfigSurvival]) -> list[str]:
    """The summary table, then one Kaplan–Meier table per configuration."""
    rows = [
        [
            c.config,
            c.runs,
            c.questions,
            c.events,
            c.questions - c.events,
            _median(c),
            _interval(c),
        ]
        for c in found
    ]
    lines = md_table(
        [
            "configuration",
            "runs",
            "questions",
            "ended",
            "censored",
            "median open life (sessions)",
            "95% interval (bootstrap by run)",
        ],
        rows,
    )
    for c in found:
        if not c.table:  # an arm without a store keeps no questions
            continue
        lines += ["", f"### Open life: {md_cell(c.config)}", ""]
        lines += md_table(
            ["t (sessions)", "at risk", "events", "censored", "S(t)", "hazard"],
            [
                [r.time, r.at_risk, r.events, r.censored, f"{r.survival:.3f}", f"{r.hazard:.3f}"]
                for r in c.table
            ],
        )
        n = sum(c.returns.values())
        if n:
            never = c.returns.get("never", 0)
            what = ", ".join(f"{k} {v}" for k, v in c.returns.items() if k != "never" and v)
            lines += [
                "",
                f"Met return conditions: {n}; returned to: {n - never}"
                + (f" ({md_cell(what)})" if what else "")
                + f"; never returned to before the run ended: {never}.",
            ]
    return lines


def survival_section(runs: Sequence[RunData], figs: FigureSink) -> list[str]:
    """``## Open life of questions``: text, tables and (with matplotlib) the step plot."""
    from curiosity_tui.analysis.figures import survival_svg

    lines = ["## Open life of questions (Kaplan–Meier)", ""]
    found = survival_by_config(runs)
    if not found:
        return [*lines, "No run has a per-session history (run files written before it).", ""]
    lines += [
        "A question's open life runs from the session that created it (0 for the seed) to the "
        "first after which it stood closed, archived or merged; a question still open or "
        "dormant after the run's last session is censored there. Questions of a "
        "configuration's runs are pooled; the median's interval resamples runs (10,000 "
        "draws, seeded). At a time with both, events count before the censored leave.",
        "",
        *survival_md(found),
        "",
    ]
    name = figs.draw("survival", lambda p: survival_svg(found, p))
    if name:
        lines += [f"![Open life: Kaplan–Meier curves per configuration]({name})", ""]
    return lines
