"""Contract-governed transitions emitted into a batch: dependency checks with evidence, and
closure attempts. The session code calls these; the rules themselves live in ``rules.py``."""

from __future__ import annotations

from dataclasses import dataclass

from curiosity_tui.contract.evidence import MATCH_METHOD, match_passage
from curiosity_tui.contract.rules import Contract
from curiosity_tui.contract.sources import read_stored_source
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.ledger import Batch


@dataclass
class CheckOutcome:
    requirement: str
    claimed: str
    result: str
    evidence_id: str | None
    verified: bool
    seq: int


# One function on purpose (~85 lines): proposing the evidence record, verifying it against the
# stored source and recording the check are one S4 step, emitted in this order in one batch.
def record_check(
    b: Batch,
    contract: Contract,
    node_id: str,
    requirement: str,
    *,
    satisfied: bool,
    evidence_text: str,
    source_id: str | None = None,
    passage: str | None = None,
    actor: str = "model",
    checked_by: str = "system:match-check",
) -> CheckOutcome:
    node = b.node(node_id)
    rc = node.get("return_condition")
    req = next((r for r in (rc["required_facts"] if rc else []) if r["id"] == requirement), None)
    if req is None:
        raise TransitionError(f"{node_id} has no required fact {requirement!r}")
    claimed = "satisfied" if satisfied else "not_satisfied"
    evidence_id: str | None = None
    verified = False
    if contract.evidence_required and (satisfied or source_id or passage):
        evidence_id = f"e{b.state.evidence_counter + 1}"
        sources = b.state.sources
        reason = ""
        offset: int | None = None
        if not source_id or not passage:
            reason = "no source passage cited: prose the model composed is never verified"
        elif source_id not in sources:
            reason = f"cited source {source_id!r} does not exist in this ledger"
        else:
            try:
                text = read_stored_source(b.ledger.path, sources[source_id])
            except TransitionError as err:
                reason = str(err)
            else:
                outcome = match_passage(passage, text)
                reason, offset = outcome.reason, outcome.offset
        b.emit(
            "evidence_added",
            node_id,
            actor,
            {
                "id": evidence_id,
                "requirement": requirement,
                "session": b.session,
                "source_id": source_id,
                "passage": passage if passage else evidence_text,
                "status": "proposed",
                "match": None,
                "reason": reason,
            },
        )
        if not reason and offset is not None:
            b.emit(
                "evidence_verified",
                node_id,
                "system",
                {
                    "evidence_id": evidence_id,
                    "match": {
                        "offset": offset,
                        "method": MATCH_METHOD,
                        "checked_by": checked_by,
                        "checked_at": b.ledger.clock(),
                    },
                },
            )
            verified = True
    result = contract.check_result(req["status"], claimed, verified)
    ev = b.emit(
        "dependency_checked",
        node_id,
        actor,
        {
            "requirement": requirement,
            "claimed": claimed,
            "evidence_text": evidence_text,
            "evidence_id": evidence_id,
            "result": result,
            "contract": contract.name,
        },
    )
    return CheckOutcome(requirement, claimed, result, evidence_id, verified, ev["seq"])


@dataclass
class ClosureOutcome:
    closed: bool
    unmet: list[str]
    seq: int


def attempt_closure(
    b: Batch,
    contract: Contract,
    node_id: str,
    *,
    answer: str,
    delta: float | None,
    actor: str = "model",
    reason: str = "ANSWER",
) -> ClosureOutcome:
    node = b.node(node_id)
    if node["status"] not in ("open", "dormant"):
        raise TransitionError(f"{node_id} is {node['status']} and cannot be closed")
    b.emit("node_answered", node_id, actor, {"answer": answer, "delta": delta})
    decision = contract.on_answer(b.node(node_id))
    if decision.close:
        ev = b.emit("node_closed", node_id, actor, {"reason": reason, "unmet": decision.unmet})
        return ClosureOutcome(True, decision.unmet, ev["seq"])
    ev = b.emit(
        "closure_blocked", node_id, "system", {"unmet": decision.unmet, "contract": contract.name}
    )
    b.emit(
        "candidate_preserved",
        node_id,
        "system",
        {"text": answer, "delta": delta, "reason": "closure_blocked"},
    )
    return ClosureOutcome(False, decision.unmet, ev["seq"])
