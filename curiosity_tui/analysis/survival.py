"""Kaplan–Meier estimation over discrete session times (issue 26): the survival table, its
median and the per-session hazard. Pure arithmetic, no ledger.

Times are whole sessions; ``event`` False means censored (still at risk at its time). At a
time where both happen, the events count first and the censored leave after, the usual
convention (R's ``survival``, ``lifelines``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

__all__ = ["KMRow", "km_median", "km_table", "pooled_hazard"]


class KMRow(BaseModel):
    """One distinct time: at risk just before it, events and censored at it, S(t) after it,
    and the hazard d/n at it."""

    time: int
    at_risk: int
    events: int
    censored: int
    survival: float
    hazard: float


def km_table(observations: Sequence[tuple[int, bool]]) -> list[KMRow]:
    """The Kaplan–Meier table over ``(time, event)`` pairs, one row per distinct time."""
    times = sorted({t for t, _ in observations})
    at_risk = len(observations)
    surv = 1.0
    rows: list[KMRow] = []
    for t in times:
        d = sum(1 for u, e in observations if u == t and e)
        c = sum(1 for u, e in observations if u == t and not e)
        h = d / at_risk
        surv *= 1.0 - h
        rows.append(KMRow(time=t, at_risk=at_risk, events=d, censored=c, survival=surv, hazard=h))
        at_risk -= d + c
    return rows


def km_median(rows: Sequence[KMRow]) -> float | None:
    """The first time at which S(t) <= 0.5; None when the curve never gets there."""
    for row in rows:
        if row.survival <= 0.5 + 1e-12:
            return float(row.time)
    return None


def pooled_hazard(observations: Sequence[tuple[int, bool]]) -> float | None:
    """Events per subject-session at risk: each subject is at risk in sessions 0 … its time
    (time + 1 sessions). None without subjects."""
    if not observations:
        return None
    exposure = sum(t + 1 for t, _ in observations)
    return sum(1 for _, e in observations if e) / exposure
