"""Rules that use the uncertainty (issue 24, item 1; decision 423).

Every clause of a verdict (one metric, one treatment-control pair) is read two ways:

* the **mean rule** (``any_metric_beats_in_all``, ``all_metrics_beat_in_all``): the advantage
  of the means (treatment - control, signed so that > 0 favours the treatment) exceeds the
  margin;
* the **interval rule** (``any_metric_interval_beats_in_all``,
  ``all_metrics_interval_beat_in_all``): the two-sided (1 - alpha) bootstrap interval of that
  advantage, runs resampled within each side (the same seeded draws as every interval the
  project prints), lies entirely above the margin.

The rule's kind says which reading decides; the other is printed beside it with whether the
two agree. ``alpha`` and the interval ``method`` are plan fields, locked with the plan:

* ``percentile``: the alpha/2 and 1 - alpha/2 quantiles of the bootstrap advantages;
* ``basic`` (reverse percentile): 2 x point - those quantiles, swapped.

The matching **bootstrap p-value** of a clause (H0: advantage <= margin) inverts its interval:
the smallest alpha' at which the (1 - alpha') interval's lower end reaches the margin, i.e.
``2 x #{a* <= margin} / B`` (percentile) or ``2 x #{a* >= 2 x point - margin} / B`` (basic),
capped at 1; so the interval lies above the margin exactly when p < alpha (up to the quantile
interpolation between two bootstrap draws). The family corrections adjust these p-values
(:mod:`curiosity_tui.analysis.family`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SEED,
    MetricAggregate,
    boot_centres,
)
from curiosity_tui.analysis.formatting import fmt

MEAN_KINDS = ("any_metric_beats_in_all", "all_metrics_beat_in_all")
INTERVAL_KINDS = ("any_metric_interval_beats_in_all", "all_metrics_interval_beat_in_all")
IntervalMethod = Literal["percentile", "basic"]
INTERVAL_METHODS: tuple[str, ...] = ("percentile", "basic")
TIE_TOL = 1e-9


def decides_on_interval(kind: str) -> bool:
    return kind in INTERVAL_KINDS


def needs_any(kind: str) -> bool:
    """Whether the rule is met by one metric (``any_…``) or needs every metric (``all_…``)."""
    return kind.startswith("any_")


class IntervalReading(BaseModel):
    """One clause under the interval rule."""

    level: float  # 1 - alpha
    method: str
    point: float | None  # the advantage of the centres (treatment - control, signed)
    low: float | None  # the advantage's interval
    high: float | None
    outcome: Literal["beats", "tie", "does_not_beat", "no_data"]
    counts: bool | None
    p_value: float | None  # one-sided bootstrap p for H0: advantage <= margin
    n_boot: int = 0
    note: str = ""


def _p_value(adv: np.ndarray, point: float, margin: float, method: str) -> float:
    if method == "basic":
        tail = int(np.count_nonzero(adv >= 2.0 * point - margin))
    else:
        tail = int(np.count_nonzero(adv <= margin))
    return min(1.0, 2.0 * tail / adv.size)


def _bounds(adv: np.ndarray, point: float, alpha: float, method: str) -> tuple[float, float]:
    q_lo, q_hi = (float(x) for x in np.quantile(adv, [alpha / 2.0, 1.0 - alpha / 2.0]))
    if method == "basic":
        return 2.0 * point - q_hi, 2.0 * point - q_lo
    return q_lo, q_hi


def read_interval(
    agg_t: MetricAggregate,
    agg_c: MetricAggregate,
    *,
    higher_is_better: bool,
    margin: float,
    ties: str,
    alpha: float,
    method: str,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
) -> IntervalReading:
    """The interval rule's reading of one clause (no_data below two runs a side)."""
    level = 1.0 - alpha
    va, vb = agg_t.values(), agg_c.values()
    if agg_t.value is None or agg_c.value is None or min(len(va), len(vb)) < 2:
        short = [f"{a.config} has n={len(v)}" for a, v in ((agg_t, va), (agg_c, vb)) if len(v) < 2]
        note = "no interval: " + "; ".join(short) + " (a bootstrap over runs needs n >= 2)"
        return IntervalReading(
            level=level,
            method=method,
            point=None,
            low=None,
            high=None,
            outcome="no_data",
            counts=None,
            p_value=None,
            note=note,
        )
    sign = 1.0 if higher_is_better else -1.0
    ca = boot_centres(tuple(va), agg_t.config, n_boot, seed, agg_t.aggregation)
    cb = boot_centres(tuple(vb), agg_c.config, n_boot, seed, agg_c.aggregation)
    adv = sign * (ca - cb)
    point = sign * (agg_t.value - agg_c.value)
    low, high = _bounds(adv, point, alpha, method)
    outcome, counts = classify(low, margin, ties)
    return IntervalReading(
        level=level,
        method=method,
        point=point,
        low=low,
        high=high,
        outcome=outcome,
        counts=counts,
        p_value=_p_value(adv, point, margin, method),
        n_boot=n_boot,
    )


def classify(
    value: float, margin: float, ties: str
) -> tuple[Literal["beats", "tie", "does_not_beat"], bool | None]:
    """``value`` (a mean advantage, or an interval's lower end) against the margin."""
    if abs(value - margin) <= TIE_TOL:
        return "tie", {"met": True, "not_met": False, "undecided": None}[ties]
    if value > margin:
        return "beats", True
    return "does_not_beat", False


def agree(mean_counts: bool | None, interval_counts: bool | None) -> bool | None:
    """Whether the two readings of a clause agree (None when either has no reading)."""
    if mean_counts is None or interval_counts is None:
        return None
    return mean_counts == interval_counts


def combine(kind: str, holds: Sequence[bool | None]) -> bool | None:
    """The rule over its metrics: any one holding (``any_…``) or every one (``all_…``)."""
    if needs_any(kind):
        if any(h is True for h in holds):
            return True
        return None if None in holds else False
    if any(h is False for h in holds):
        return False
    return None if None in holds else True


def format_p(p: float | None) -> str:
    if p is None:
        return "—"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def reading_line(
    r: IntervalReading,
    *,
    decides: bool,
    mean_word: str,
    agrees: bool | None,
    p_adjusted: float | None,
    family: str,
) -> str:
    """The clause's interval reading, printed under its mean reading in the verdict."""
    if r.low is None:
        return f"      interval rule: no reading — {r.note}"
    verb = r.outcome.replace("_", " ")
    agreement = {True: "agrees with", False: "DIFFERS from", None: "beside"}[agrees]
    who = "decides" if decides else "beside"
    adj = "" if family == "none" else f", {family}-adjusted {format_p(p_adjusted)}"
    return (
        f"      interval rule ({who}): advantage {r.point or 0.0:+.2f} [{fmt(r.low)}, {fmt(r.high)}] "
        f"({r.level:.0%} {r.method} bootstrap by run) → {verb}; {agreement} the mean rule "
        f"({mean_word.replace('_', ' ')}); p {format_p(r.p_value)}{adj}"
    )
