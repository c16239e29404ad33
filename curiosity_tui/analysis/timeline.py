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

from pydantic import BaseModel, ConfigDict, TypeAdapter

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


_STATES: TypeAdapter[list[NodeState]] = TypeAdapter(list[NodeState])


def _ends(ledger: Any, committed: list[int]) -> dict[int, int]:
    """seq of the snapshot that ends each committed session: its last one, except that the
    last committed session ends on its last snapshot that is not the curator's."""
    wanted = set(committed)
    last = committed[-1]
    ends: dict[int, int] = {}
    last_any: int | None = None  # a last session with only a curator's snapshot keeps that
    for session, stage, seq in ledger.snapshot_index():
        if session not in wanted:
            continue
        if session == last:
            last_any = seq
            if stage == "curator":
                continue
        ends[session] = seq
    if last not in ends and last_any is not None:
        ends[last] = last_any
    return ends


def ledger_timeline(ledger: Any) -> dict[str, list[NodeState]]:
    """node id -> its state after each committed session it existed in, in session order.

    One pass over the snapshots (``Ledger.fold_snapshots``): reading each session's snapshot
    on its own replayed every earlier row again, quadratic in sessions. A node's status and
    condition are recomputed only when its record changed (a new dict in the fold)."""
    committed = committed_sessions(ledger)  # no record built (and validated) per session
    if not committed:
        return {}
    ends = {seq: session for session, seq in _ends(ledger, committed).items()}
    rows: dict[str, list[dict[str, Any]]] = {}
    seen: dict[str, tuple[dict[str, Any], str, bool | None]] = {}
    for _session, _stage, seq, nodes in ledger.fold_snapshots():
        session = ends.get(seq)
        if session is None:
            continue
        for nid, node in nodes.items():
            known = seen.get(nid)
            if known is None or known[0] is not node:
                known = (node, str(node.get("status", "open")), condition_met(node))
                seen[nid] = known
            rows.setdefault(str(nid), []).append(
                {"session": session, "status": known[1], "met": known[2]}
            )
    # one validation call per node: building each state on its own cost more than the rest
    return {nid: _STATES.validate_python(states) for nid, states in rows.items()}
