"""Downgrades (S3; pilot-02 and every closure=binding+downgrade contract): a proposal to waive or weaken one requirement, with grounds,
decided — approved or rejected, with stated grounds — by a human curator only.

The model (actor ``model``) and the model curator may propose, never decide. Every proposal
and decision is a journal event with actor and grounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from curiosity_tui.contract.rules import get_contract
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import DowngradeDecided, DowngradeProposed
from curiosity_tui.ledger.ledger import Batch, Ledger
from curiosity_tui.ledger.node_record import (
    NOT_LIVE,
    CheckEntry,
    DowngradeDecisionEntry,
    DowngradeEntry,
    EvidenceEntry,
    requirements,
)

MIN_GROUNDS_WORDS = 4
MIN_GROUNDS_CHARS = 20


def check_grounds(grounds: str | None, what: str = "grounds") -> str:
    """Grounds must be at least a sentence: ≥ 4 words and ≥ 20 characters."""
    text = (grounds or "").strip()
    if not text:
        raise TransitionError(f"{what} are required")
    if len(text.split()) < MIN_GROUNDS_WORDS or len(text) < MIN_GROUNDS_CHARS:
        raise TransitionError(
            f"{what} must be at least a sentence (≥ {MIN_GROUNDS_WORDS} words, ≥ {MIN_GROUNDS_CHARS} characters); got {text!r}"
        )
    return text


RESERVED_NAMES = frozenset({"model", "model-curator", "system"})


def is_human(actor: str) -> bool:
    """``human:<name>``: one non-empty word, not a reserved actor name (``human:model`` would read
    as the model deciding)."""
    if not actor.startswith("human:"):
        return False
    name = actor[6:]
    return (
        bool(name) and not any(c.isspace() for c in name) and name.casefold() not in RESERVED_NAMES
    )


def _require_downgrades(meta: dict[str, Any] | None) -> None:
    name = (meta or {}).get("contract", "pilot-02")
    if not get_contract(name).downgrades_allowed:
        why = "(as run)" if name == "pilot-01" else "(closure is not binding+downgrade)"
        raise TransitionError(
            f"this run's contract is {name}, which has no downgrade route {why}; "
            "downgrades exist under pilot-02 and closure=binding+downgrade"
        )


@dataclass
class PendingDowngrade:
    id: str
    node: str
    node_text: str
    requirement: str
    requirement_text: str
    requirement_status: str
    action: str
    new_text: str | None
    grounds: str
    proposed_by: str
    session: int
    status: str
    decision: DowngradeDecisionEntry | None
    checks: list[CheckEntry]
    evidence: list[EvidenceEntry]

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def propose_in_batch(
    b: Batch,
    node_id: str,
    requirement: str,
    action: Literal["waive", "weaken"],
    *,
    grounds: str,
    actor: str,
    new_text: str | None = None,
) -> str:
    _require_downgrades(b.state.meta)
    node = b.node(node_id)
    req = next((r for r in requirements(node) if r["id"] == requirement), None)
    if req is None:
        raise TransitionError(f"{node_id} has no required fact {requirement!r}")
    if node["status"] in NOT_LIVE:
        raise TransitionError(f"{node_id} is {node['status']}; its requirements no longer bind")
    if req["status"] in ("satisfied", "waived"):
        raise TransitionError(f"{node_id}/{requirement} is already {req['status']}")
    if action not in ("waive", "weaken"):
        raise TransitionError(f"downgrade action must be waive or weaken, not {action!r}")
    if action == "weaken" and not (new_text or "").strip():
        raise TransitionError("a weaken proposal needs the new, weaker requirement text")
    text = check_grounds(grounds)
    clean_new = new_text.strip() if action == "weaken" and new_text else None
    for p in node["downgrades"]:
        if (
            p["status"] == "pending"
            and p["requirement"] == requirement
            and (p["action"], p.get("new_text")) == (action, clean_new)
        ):
            raise TransitionError(
                f"{p['id']} already proposes to {action} {node_id}/{requirement} and awaits a decision"
            )
    pid = f"d{b.state.downgrade_counter + 1}"
    proposal = DowngradeProposed(
        id=pid,
        requirement=requirement,
        action=action,
        new_text=clean_new,
        grounds=text,
        proposed_by=actor,
        session=b.session,
        status="pending",
        decision=None,
    )
    b.emit(proposal, node=node_id, actor=actor)
    return pid


def propose(
    led: Ledger,
    node_id: str,
    requirement: str,
    action: Literal["waive", "weaken"],
    *,
    grounds: str,
    actor: str,
    new_text: str | None = None,
) -> str:
    with led.batch(led.last_session, marker="batch_committed", label="downgrade") as b:
        return propose_in_batch(
            b, node_id, requirement, action, grounds=grounds, actor=actor, new_text=new_text
        )


def _find(led: Ledger, proposal_id: str) -> tuple[str, DowngradeEntry]:
    for nid, node in led.raw_nodes().items():
        for p in node["downgrades"]:
            if p["id"] == proposal_id:
                return nid, p
    raise TransitionError(f"unknown downgrade proposal {proposal_id!r}")


def decide(
    led: Ledger,
    proposal_id: str,
    decision: Literal["approve", "reject"],
    *,
    grounds: str,
    actor: str,
    allow_self_approval: bool = False,
) -> None:
    """Record a human curator's decision. Approving one's own proposal is refused unless
    ``allow_self_approval`` (then recorded in the event, decision 443)."""
    if not is_human(actor):
        raise TransitionError(
            f"only a human curator (human:<name>) may decide a downgrade; {actor!r} may not"
        )
    if decision not in ("approve", "reject"):
        raise TransitionError(f"decision must be approve or reject, not {decision!r}")
    text = check_grounds(grounds, "decision grounds")
    _require_downgrades(led._state.meta)
    nid, p = _find(led, proposal_id)
    if p["status"] != "pending":
        by = dec["by"] if (dec := p.get("decision")) else "?"
        raise TransitionError(f"downgrade {proposal_id} was already {p['status']} by {by}")
    self_approval = decision == "approve" and p.get("proposed_by") == actor
    if self_approval and not allow_self_approval:
        raise TransitionError(
            f"downgrade {proposal_id} was proposed by {actor}: the same person may not approve "
            "it; a second person decides (--allow-self-approval to override, recorded in the "
            "decision)"
        )
    if decision == "approve":
        req = next(
            (r for r in requirements(led.raw_nodes()[nid]) if r["id"] == p["requirement"]), None
        )
        if req is None:
            raise TransitionError(
                f"downgrade {proposal_id}: {nid}/{p['requirement']} is no longer in {nid}'s return "
                "condition (retired at a revision); it can only be rejected"
            )
        if req["status"] in ("satisfied", "waived"):
            raise TransitionError(
                f"downgrade {proposal_id}: {nid}/{p['requirement']} is already {req['status']}; "
                "it can only be rejected"
            )
    with led.batch(led.last_session, marker="batch_committed", label="downgrade") as b:
        decided = DowngradeDecided(
            proposal=proposal_id,
            decision=decision,
            grounds=text,
            at=led.clock(),
            self_approval=self_approval,
        )
        b.emit(decided, node=nid, actor=actor)


def list_downgrades(led: Ledger, *, pending_only: bool = False) -> list[PendingDowngrade]:
    out: list[PendingDowngrade] = []
    for nid, node in sorted(led.raw_nodes().items(), key=lambda kv: int(kv[0][1:])):
        reqs = {r["id"]: r for r in requirements(node)}
        for p in node["downgrades"]:
            if pending_only and p["status"] != "pending":
                continue
            req = reqs.get(p["requirement"])
            out.append(
                PendingDowngrade(
                    id=p["id"],
                    node=nid,
                    node_text=node["text"],
                    requirement=p["requirement"],
                    requirement_text=req["text"] if req else "(retired)",
                    requirement_status=req["status"] if req else "retired",
                    action=p["action"],
                    new_text=p.get("new_text"),
                    grounds=p["grounds"],
                    proposed_by=p["proposed_by"],
                    session=p["session"],
                    status=p["status"],
                    decision=p.get("decision"),
                    checks=[c for c in node["checks"] if c["requirement"] == p["requirement"]],
                    evidence=[e for e in node["evidence"] if e["requirement"] == p["requirement"]],
                )
            )
    return sorted(out, key=lambda d: int(d.id[1:]))
