"""Metrics of a run's tension setting (issue 26 items 4, 5; docs/protocol.md "Tension
settings"): the mean Δ, so the proxies can be read side by side, how often the fallback
fired, and how often a service session answered where the Δ rule said PRESERVE.

Each is undefined (None) for a run that recorded nothing it counts: ``fallback_share`` needs Δ
per candidate, ``service_override_share`` service sessions. A run of the pilot as run has Δ
and so ``delta_mean``, and neither of the others.
"""

from __future__ import annotations

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import RunData


@register(
    "delta_mean",
    definition="mean recorded Δ (the medoid's, by the run's tension measure) over the run's "
    "committed sessions that recorded one",
    unit="Δ",
    denominator="committed sessions with a Δ; mean over runs",
    higher_is_better=None,
    group="tension",
)
def delta_mean(run: RunData) -> float | None:
    ds = [s.delta for s in run.committed_sessions() if s.delta is not None]
    return sum(ds) / len(ds) if ds else None


@register(
    "fallback_share",
    definition="research sessions in which no candidate met the threshold (Δ per candidate, "
    "every Δ < −ε) and the fallback withheld the medoid ÷ research sessions decided with Δ per "
    "candidate",
    unit="share",
    denominator="research sessions with Δ per candidate recorded; mean over runs",
    higher_is_better=None,
    group="tension",
)
def fallback_share(run: RunData) -> float | None:
    per = [
        s.decided
        for s in run.committed_sessions()
        if s.decided and not s.service and s.tension is not None and s.tension.per_candidate
    ]
    return sum(1 for d in per if d is not None and d.fallback) / len(per) if per else None


@register(
    "service_override_share",
    definition="service sessions in which the Δ rule said PRESERVE and the session answered "
    "÷ service sessions",
    unit="share",
    denominator="service sessions of the run (plan service_sessions); mean over runs",
    higher_is_better=None,
    group="tension",
)
def service_override_share(run: RunData) -> float | None:
    service = [s.decided for s in run.committed_sessions() if s.service and s.decided]
    if not service:
        return None
    return sum(1 for d in service if d.by_delta == "PRESERVE") / len(service)
