"""Open life per configuration (issue 26, item 1; decision 460): the questions of a
configuration's runs pooled into one Kaplan–Meier curve, its median with a percentile
bootstrap interval that resamples runs (the project's run draw, ``aggregate.resample_index``),
printed by ``metrics --survival``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import DEFAULT_BOOTSTRAP, DEFAULT_SEED, resample_index
from curiosity_tui.analysis.open_life import open_lives
from curiosity_tui.analysis.return_latency import condition_returns
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.survival import KMRow, km_median, km_table

__all__ = ["ConfigSurvival", "format_survival", "survival_by_config"]


class ConfigSurvival(BaseModel):
    config: str
    runs: int
    questions: int
    events: int
    median: float | None
    #: bootstrap-by-run interval of the median; None ends: undefined (fewer than two runs) or
    #: unbounded (in some draws the curve never fell to 0.5)
    ci_low: float | None
    ci_high: float | None
    table: list[KMRow]
    #: met return conditions of the configuration's runs: returned ones by outcome
    #: (closed, preserved, answered, worked) and "never" for the censored
    returns: dict[str, int] = {}


def _counts(per_run: list[list[tuple[int, bool]]]) -> tuple[np.ndarray, np.ndarray]:
    """(events, subjects) per run × time: the per-run tallies a draw of runs sums."""
    horizon = 1 + max((t for obs in per_run for t, _ in obs), default=0)
    events = np.zeros((len(per_run), horizon))
    subjects = np.zeros((len(per_run), horizon))
    for i, obs in enumerate(per_run):
        for t, e in obs:
            subjects[i, t] += 1
            events[i, t] += e
    return events, subjects


def _draw_medians(per_run: list[list[tuple[int, bool]]], draws: np.ndarray) -> np.ndarray:
    """The Kaplan–Meier median of every draw of runs at once (inf: never fell to 0.5); the
    same arithmetic as :func:`km_table` and :func:`km_median`, vectorised over draws."""
    events, subjects = _counts(per_run)
    d = events[draws].sum(axis=1)  # (n_boot, horizon)
    m = subjects[draws].sum(axis=1)
    at_risk = m.sum(axis=1, keepdims=True) - np.cumsum(m, axis=1) + m
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(at_risk > 0, 1.0 - d / at_risk, 1.0)
    below = np.cumprod(factor, axis=1) <= 0.5 + 1e-12
    first = np.argmax(below, axis=1).astype(float)
    return np.where(below.any(axis=1), first, np.inf)


def _interval(
    config: str, per_run: list[list[tuple[int, bool]]], n_boot: int, seed: int
) -> tuple[float | None, float | None]:
    """95% percentile interval of the pooled median, runs resampled (the project's run draw).
    Ends are order statistics (medians are whole sessions or inf); None: fewer than two runs,
    or an unbounded end."""
    if len(per_run) < 2:
        return None, None
    draws = resample_index(config, len(per_run), n_boot, seed)
    medians = _draw_medians(per_run, draws)
    lo, hi = np.quantile(medians, [0.025, 0.975], method="inverted_cdf")
    return (None if math.isinf(lo) else float(lo)), (None if math.isinf(hi) else float(hi))


def survival_by_config(
    runs: Sequence[RunData], *, n_boot: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED
) -> list[ConfigSurvival]:
    """One pooled curve per configuration (first-seen order) over runs with a history."""
    groups: dict[str, list[list[tuple[int, bool]]]] = {}
    for run in runs:
        lives = open_lives(run)
        if lives is not None and run.committed_sessions():
            groups.setdefault(run.config, []).append([(q.time, q.event) for q in lives])
    out = []
    for config, per_run in groups.items():
        returns = _return_outcomes([r for r in runs if r.config == config])
        pooled = [o for obs in per_run for o in obs]
        table = km_table(pooled)
        lo, hi = _interval(config, per_run, n_boot, seed)
        out.append(
            ConfigSurvival(
                config=config,
                runs=len(per_run),
                questions=len(pooled),
                events=sum(1 for _, e in pooled if e),
                median=km_median(table),
                ci_low=lo,
                ci_high=hi,
                table=table,
                returns=returns,
            )
        )
    return out


def _return_outcomes(runs: Sequence[RunData]) -> dict[str, int]:
    counts = dict.fromkeys(("closed", "preserved", "answered", "worked", "never"), 0)
    for run in runs:
        for c in condition_returns(run) or []:
            counts[c.outcome or "never"] += 1
    return counts


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:g}"


def format_survival(found: Sequence[ConfigSurvival]) -> str:
    """Text: per configuration the median with its interval, then the Kaplan–Meier table."""
    if not found:
        return "open life: no run with a per-session history"
    parts = []
    for c in found:
        if c.runs < 2:
            ci = "no interval: one run"
        else:
            high = "unbounded" if c.ci_high is None else _num(c.ci_high)
            ci = f"95% bootstrap by run: {_num(c.ci_low)} – {high}"
        head = (
            f"open life — {c.config}: {c.runs} runs, {c.questions} questions, {c.events} "
            f"ended; median {_num(c.median)} sessions ({ci})"
        )
        lines = [head, "  t  at_risk  events  censored  S(t)    hazard"]
        lines += [
            f"{r.time:>3}  {r.at_risk:>7}  {r.events:>6}  {r.censored:>8}  "
            f"{r.survival:.4f}  {r.hazard:.4f}"
            for r in c.table
        ]
        n = sum(c.returns.values())
        what = ", ".join(f"{k} {v}" for k, v in c.returns.items() if k != "never")
        lines.append(
            f"  met return conditions: {n}; returned: {n - c.returns.get('never', 0)} "
            f"({what}); never returned: {c.returns.get('never', 0)}"
        )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
