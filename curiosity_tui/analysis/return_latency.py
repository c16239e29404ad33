"""Return latency: does a preserved question come back when its condition is met? (issue 26,
item 2; decision 461)

For every question whose return condition has at least one required fact: the first
committed session ``m`` after which all of them stood ``satisfied`` or ``waived`` (the
statuses the run's own contract gave them) while the question was still live (open or
dormant). Its return is the first session ``r > m`` that resurfaced it (forced or
voluntary); the latency is ``r - m``. A met condition with no such session is censored at
the run's last session (``last - m``). A question closed in the session that met its
condition never waited for a return and is not counted.

What happened at the return: ``closed`` (it stood closed, archived or merged after ``r``),
``preserved`` (a candidate was preserved on it in ``r``), ``answered`` (``r`` focused on it
and decided ANSWER), or ``worked`` (resurfaced with none of these).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from curiosity_tui.analysis.registry import Metric, Registry, register
from curiosity_tui.analysis.run_cache import per_run
from curiosity_tui.analysis.rundata import RunData, RunNode
from curiosity_tui.analysis.survival import km_median, km_table
from curiosity_tui.analysis.timeline import NodeState
from curiosity_tui.ledger.models import SessionRecord
from curiosity_tui.ledger.node_record import NOT_LIVE

__all__ = [
    "DEFAULT_RETURN_K",
    "ConditionReturn",
    "condition_returns",
    "return_within_metric",
    "with_return_k",
]

#: k of ``return_within_k_share`` when none is given (``metrics --return-within K``)
DEFAULT_RETURN_K = 2


class ConditionReturn(BaseModel):
    """One met return condition and what followed it."""

    node: str
    met: int
    returned: int | None
    #: r - m when it returned, else last - m (censored)
    latency: int
    event: bool
    outcome: str | None


def _preserved_in(node: RunNode, session: int) -> bool:
    extra: Any = getattr(node, "preserved", None) or []
    return any(isinstance(p, dict) and p.get("session") == session for p in extra)


def _outcome(node: RunNode, state: NodeState | None, rec: SessionRecord | None) -> str:
    if state is not None and state.status in NOT_LIVE:
        return "closed"
    if _preserved_in(node, state.session if state else -1):
        return "preserved"
    if rec is not None and rec.focus == node.id and rec.decision == "ANSWER":
        return "answered"
    return "worked"


def _one(run: RunData, node: RunNode, states: list[NodeState], last: int) -> ConditionReturn | None:
    met = next((s for s in states if s.met), None)
    if met is None or met.status in NOT_LIVE:
        return None
    back = min((r for r in node.resurfaced if r > met.session), default=None)
    if back is None:
        return ConditionReturn(
            node=node.id,
            met=met.session,
            returned=None,
            latency=last - met.session,
            event=False,
            outcome=None,
        )
    state = next((s for s in states if s.session == back), None)
    rec = next((s for s in run.committed_sessions() if s.session == back), None)
    return ConditionReturn(
        node=node.id,
        met=met.session,
        returned=back,
        latency=back - met.session,
        event=True,
        outcome=_outcome(node, state, rec),
    )


def condition_returns(run: RunData) -> list[ConditionReturn] | None:
    """Every met condition of the run and its return, in node-id order; None without a
    per-session history. Computed once per run (:mod:`~curiosity_tui.analysis.run_cache`):
    do not mutate it."""
    return per_run(run, "condition_returns", _condition_returns)


def _condition_returns(run: RunData) -> list[ConditionReturn] | None:
    if run.timeline is None:
        return None
    committed = run.committed_sessions()
    if not committed:
        return []
    last = committed[-1].session
    out = []
    for nid, states in sorted(run.timeline.items()):
        node = run.nodes.get(nid)
        found = _one(run, node, states, last) if node is not None and states else None
        if found is not None:
            out.append(found)
    return out


def _within(run: RunData, k: int) -> float | None:
    """Returned within k sessions ÷ met conditions that could be judged: those that returned
    within k, or were followed for at least k sessions."""
    judged = [c for c in condition_returns(run) or [] if c.latency >= k or c.event]
    if not judged:
        return None
    return sum(1 for c in judged if c.event and c.latency <= k) / len(judged)


def return_within_metric(k: int) -> Metric:
    """``return_within_k_share`` for a given k (the registry holds k = DEFAULT_RETURN_K)."""
    return Metric(
        name="return_within_k_share",
        definition=f"Share of met return conditions (all required facts satisfied or waived "
        f"after session m, question still live) whose question was resurfaced within k = {k} "
        f"sessions after m; a met condition followed for fewer than k sessions without a "
        f"return is left out (it cannot be judged).",
        unit="share",
        denominator="per run (met conditions followed for k sessions or returned within k)",
        fn=lambda run: _within(run, k),
        bookkeeping=True,
        higher_is_better=True,
        group="lifecycle",
    )


def with_return_k(registry: Registry, k: int | None) -> Registry:
    """``registry`` with ``return_within_k_share`` at k (a plan's ``return_within`` or
    ``metrics --return-within``); unchanged for None, the default k, or without the metric."""
    if k is None or k == DEFAULT_RETURN_K or "return_within_k_share" not in registry:
        return registry
    out = registry.copy()
    out.remove("return_within_k_share")
    out.add(return_within_metric(k))
    return out


@register(
    "return_within_k_share",
    definition=return_within_metric(DEFAULT_RETURN_K).definition,
    unit="share",
    denominator="per run (met conditions followed for k sessions or returned within k)",
    bookkeeping=True,
    higher_is_better=True,
    group="lifecycle",
)
def return_within_k_share(run: RunData) -> float | None:
    return _within(run, DEFAULT_RETURN_K)


@register(
    "return_latency_median",
    definition="Kaplan–Meier median of the return latency: sessions from the one after which "
    "a live question's return condition was met (all required facts satisfied or waived) to "
    "the first later session that resurfaced it; a met condition never returned to is "
    "censored at the run's last session. Undefined when S never falls to 0.5.",
    unit="sessions",
    denominator="per run (met conditions)",
    bookkeeping=True,
    group="lifecycle",
)
def return_latency_median(run: RunData) -> float | None:
    found = condition_returns(run)
    if not found:
        return None
    return km_median(km_table([(c.latency, c.event) for c in found]))


@register(
    "return_never_share",
    definition="Share of met return conditions (question still live when met) whose "
    "question was never resurfaced before the run ended (censored).",
    unit="share",
    denominator="per run (met conditions)",
    bookkeeping=True,
    higher_is_better=False,
    group="lifecycle",
)
def return_never_share(run: RunData) -> float | None:
    found = condition_returns(run)
    if not found:
        return None
    return sum(1 for c in found if not c.event) / len(found)
