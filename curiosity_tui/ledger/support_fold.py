"""How a ``support_judged`` event folds (decision 520), apart from ``events.py`` (at its size
limit): the judgement is appended to its evidence record, and the requirement takes the status
the event says (``result``, decided by the domain from the run's contract)."""

from __future__ import annotations

from typing import Any

from curiosity_tui.errors import CorruptLedgerError
from curiosity_tui.ledger.node_record import NodeRecord, SupportEntry, requirements


def fold_support(n: NodeRecord, d: dict[str, Any], seq: int, session: int) -> None:
    """Apply one support judgement to node ``n`` (checked before anything changes)."""
    req = next((r for r in requirements(n) if r["id"] == d["requirement"]), None)
    if req is None:
        raise CorruptLedgerError(
            f"event seq {seq}: node {n['id']} has no requirement {d['requirement']!r}", seq=seq
        )
    rec = next((e for e in n["evidence"] if e["id"] == d["evidence_id"]), None)
    if rec is None:
        raise CorruptLedgerError(f"event seq {seq}: unknown evidence {d['evidence_id']!r}", seq=seq)
    judgement: SupportEntry = {
        "verdict": d["verdict"],
        "grounds": d["grounds"],
        "by": d["by"],
        "session": session,
        "admitted": d["admitted"],
        "ts": d.get("at", ""),
    }
    rec.setdefault("support", []).append(judgement)
    if d["result"] != req["status"]:
        req["status"] = d["result"]
        req["checked"] = session
