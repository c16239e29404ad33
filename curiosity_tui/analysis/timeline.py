"""Each question's state after every committed session (issue 26, items 1-2).

The final snapshot says where a question ended, not when. The open-life and return-latency
metrics need the session in which a question closed, went dormant, came back, or had its
return condition met; :func:`ledger_timeline` reads them from the ledger's own snapshots:
for each committed session, the last snapshot of that session (curator actions after
session t, which prepare session t + 1, count at t), except that after the last committed
session the curator's snapshot is left out, as in the final snapshot.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from curiosity_tui.analysis.signature import committed_sessions
from curiosity_tui.ledger.node_record import NodeRecord

__all__ = ["MET_STATUSES", "NodeState", "condition_met", "ledger_timeline"]

#: A required fact in one of these statuses no longer blocks the return condition.
MET_STATUSES: frozenset[str] = frozenset({"satisfied", "waived"})


class NodeState(BaseModel):
    """One question after one committed session."""

    model_config = ConfigDict(extra="forbid")

    session: int
    status: str
    #: all required facts satisfied or waived; None = no condition with a required fact
    met: bool | None = None


def condition_met(node: NodeRecord) -> bool | None:
    """Whether every required fact of the node's return condition stands satisfied or waived
    (the statuses the run's own contract gave them). None: no condition, or one without a
    required fact (nothing to meet)."""
    cond = node.get("return_condition")
    if not isinstance(cond, dict):
        return None
    facts = cond.get("required_facts") or []
    if not facts:
        return None
    return all(isinstance(f, dict) and f.get("status") in MET_STATUSES for f in facts)


def _stage_for(ledger: Any, session: int, last: int) -> str | None:
    """The snapshot stage that ends ``session`` (None = its last one)."""
    if session != last:
        return None
    stage = None
    for s, st, _ in ledger.snapshot_index():
        if s == session and st != "curator":
            stage = st
    return stage


def ledger_timeline(ledger: Any) -> dict[str, list[NodeState]]:
    """node id -> its state after each committed session it existed in, in session order."""
    committed = committed_sessions(ledger)  # no record built (and validated) per session
    if not committed:
        return {}
    snapped = {s for s, _, _ in ledger.snapshot_index()}
    out: dict[str, list[NodeState]] = {}
    for session in committed:
        if session not in snapped:
            continue
        stage = _stage_for(ledger, session, committed[-1])
        nodes = ledger.snapshot(session, stage)
        for nid, node in nodes.items():
            out.setdefault(str(nid), []).append(
                NodeState(
                    session=session,
                    status=str(node.get("status", "open")),
                    met=condition_met(node),
                )
            )
    return out
