"""Contract-governed transitions emitted into a batch: dependency checks with evidence, and
closure attempts. The session code calls these; the rules themselves live in ``rules.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from curiosity_tui.contract.evidence import MATCH_METHOD, match_passage
from curiosity_tui.contract.rules import Contract
from curiosity_tui.contract.sources import read_stored_source
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import (
    CandidatePreserved,
    ClosureBlocked,
    DependencyChecked,
    EvidenceAdded,
    EvidenceVerified,
    NodeAnswered,
    NodeClosed,
)
from curiosity_tui.ledger.ledger import Batch
from curiosity_tui.ledger.models import MatchCheck

Claim = Literal["satisfied", "not_satisfied"]


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
    claimed: Claim = "satisfied" if satisfied else "not_satisfied"
    evidence_id: str | None = None
    verified = False
    # evidence=verified: every satisfied claim (or citation) is stored as evidence and checked;
    # evidence=asserted: a cited passage is stored and checked too (its status never gates
    # the mark there), so verified and asserted marks can be told apart (not under pilot-01)
    cited = contract.records_cited_evidence and bool(source_id and passage)
    if cited or (contract.evidence_required and (satisfied or source_id or passage)):
        evidence_id = f"e{b.state.evidence_counter + 1}"
        verified = _record_evidence(
            b,
            node_id,
            requirement,
            evidence_id,
            EvidenceCited(evidence_text, source_id, passage),
            actor=actor,
            checked_by=checked_by,
        )
    result = contract.check_result(req["status"], claimed, verified)
    checked = DependencyChecked(
        requirement=requirement,
        claimed=claimed,
        evidence_text=evidence_text,
        evidence_id=evidence_id,
        result=result,
        contract=contract.name,
    )
    ev = b.emit(checked, node=node_id, actor=actor)
    return CheckOutcome(requirement, claimed, result, evidence_id, verified, ev["seq"])


@dataclass(frozen=True)
class EvidenceCited:
    """What a check cites: the checker's text, and the source passage if it named one."""

    text: str
    source_id: str | None
    passage: str | None


def _match_reason(b: Batch, cited: EvidenceCited) -> tuple[str, int | None]:
    """Why the cited passage is not verified ('' if it is), and where it was found."""
    sources = b.state.sources
    if not cited.source_id or not cited.passage:
        return "no source passage cited: prose the model composed is never verified", None
    if cited.source_id not in sources:
        return f"cited source {cited.source_id!r} does not exist in this ledger", None
    try:
        text = read_stored_source(b.ledger.path, sources[cited.source_id])
    except TransitionError as err:
        return str(err), None
    outcome = match_passage(cited.passage, text)
    return outcome.reason, outcome.offset


def _record_evidence(
    b: Batch,
    node_id: str,
    requirement: str,
    evidence_id: str,
    cited: EvidenceCited,
    *,
    actor: str,
    checked_by: str,
) -> bool:
    """Store the evidence record (always ``proposed`` first); verify it when its passage is
    found in its source. Returns whether it was verified."""
    reason, offset = _match_reason(b, cited)
    added = EvidenceAdded(
        id=evidence_id,
        requirement=requirement,
        session=b.session,
        source_id=cited.source_id,
        passage=cited.passage if cited.passage else cited.text,
        status="proposed",
        match=None,
        reason=reason,
    )
    b.emit(added, node=node_id, actor=actor)
    if reason or offset is None:
        return False
    match = MatchCheck(
        offset=offset, method=MATCH_METHOD, checked_by=checked_by, checked_at=b.ledger.clock()
    )
    b.emit(EvidenceVerified(evidence_id=evidence_id, match=match), node=node_id)
    return True


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
    b.emit(NodeAnswered(answer=answer, delta=delta), node=node_id, actor=actor)
    decision = contract.on_answer(b.node(node_id))
    if decision.close:
        ev = b.emit(NodeClosed(reason=reason, unmet=decision.unmet), node=node_id, actor=actor)
        return ClosureOutcome(True, decision.unmet, ev["seq"])
    ev = b.emit(ClosureBlocked(unmet=decision.unmet, contract=contract.name), node=node_id)
    kept = CandidatePreserved(text=answer, delta=delta, reason="closure_blocked")
    b.emit(kept, node=node_id)
    return ClosureOutcome(False, decision.unmet, ev["seq"])
