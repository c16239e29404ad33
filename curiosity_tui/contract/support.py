"""Support judgements (issue 26.3, decision 520): does a *verified* passage establish the
requirement it was cited for? Separate from the match check, which only says the passage
occurs in a stored source.

A judgement is a ``support_judged`` event of its own, by one judge: ``human:<name>`` (the
curator, in the app between sessions, or ``support judge`` on the command line) or
``model:<model name>`` (the labelled model judge, a call kind of its own). They are never
pooled: each judgement keeps its judge, and a judge judges a record once.

Under ``evidence = supported`` a requirement moves to ``satisfied`` only on a ``yes`` by a judge
the run admits: any human, or the model judge the run's plan names (run option
``support_judge = "model:<name>"``). ``partly`` and ``no`` leave the status as it stands: a
passage that establishes only part of a requirement does not establish it. Under the other
evidence rules a judgement is recorded and changes nothing (``admitted`` false).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from curiosity_tui.contract.downgrades import check_grounds, is_human
from curiosity_tui.contract.rules import get_contract
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.event_data import SupportJudged
from curiosity_tui.ledger.ledger import Batch, Ledger
from curiosity_tui.ledger.node_record import NOT_LIVE, NodeRecord, SupportEntry, requirements

Verdict = Literal["yes", "no", "partly"]
VERDICTS: tuple[str, ...] = ("yes", "no", "partly")
#: the run option (from the plan's ``support_judge`` key) naming the admitted model judge
OPTION = "support_judge"


def model_judge_of(meta: dict[str, Any] | None) -> str | None:
    """The model judge a run admits (``model:<name>``), or None: humans only."""
    value = ((meta or {}).get("options") or {}).get(OPTION)
    return value if isinstance(value, str) and value.startswith("model:") else None


def admits(meta: dict[str, Any] | None, by: str) -> bool:
    """Whether a ``yes`` by ``by`` can satisfy a requirement in this run."""
    contract = get_contract(str((meta or {}).get("contract") or "pilot-02"))
    if not contract.support_required:
        return False
    return is_human(by) or (by.startswith("model:") and by == model_judge_of(meta))


def _judge_name(by: str) -> str:
    if is_human(by):
        return by
    if by.startswith("model:") and len(by) > 6 and not any(c.isspace() for c in by):
        return by
    raise TransitionError(f"a support judge is human:<name> or model:<model name>, not {by!r}")


def judge_in_batch(
    b: Batch,
    node_id: str,
    evidence_id: str,
    verdict: str,
    *,
    grounds: str,
    by: str,
) -> SupportJudged:
    """Record ``by``'s verdict on verified evidence ``evidence_id`` of ``node_id``."""
    by = _judge_name(by)
    if verdict not in VERDICTS:
        raise TransitionError(f"verdict must be yes, no or partly, not {verdict!r}")
    node = b.node(node_id)
    rec = next((e for e in node["evidence"] if e["id"] == evidence_id), None)
    if rec is None:
        raise TransitionError(f"{node_id} has no evidence record {evidence_id!r}")
    if rec["status"] != "verified":
        raise TransitionError(
            f"{node_id}/{evidence_id} is {rec['status']}: only a verified passage is judged "
            "for support (the match check comes first)"
        )
    rc = node.get("return_condition")
    req = next(
        (r for r in (rc["required_facts"] if rc else []) if r["id"] == rec["requirement"]), None
    )
    if req is None:
        raise TransitionError(
            f"{node_id}/{rec['requirement']} is no longer in the return condition (retired)"
        )
    if node["status"] in NOT_LIVE:
        raise TransitionError(f"{node_id} is {node['status']}; its requirements no longer bind")
    if any(j["by"] == by for j in rec.get("support", [])):
        raise TransitionError(f"{by} already judged {node_id}/{evidence_id}")
    text = check_grounds(grounds) if is_human(by) else (" ".join(grounds.split()) or "(none)")
    admitted = admits(b.state.meta, by)
    result = req["status"]
    if admitted and verdict == "yes" and req["status"] != "waived":
        result = "satisfied"
    event = SupportJudged(
        evidence_id=evidence_id,
        requirement=rec["requirement"],
        verdict=verdict,  # type: ignore[arg-type]  # checked against VERDICTS above
        grounds=text,
        by=by,
        admitted=admitted,
        result=result,
        at=b.ledger.clock(),
    )
    b.emit(event, node=node_id, actor=by if is_human(by) else "model")
    return event


def judge(
    led: Ledger,
    node_id: str,
    evidence_id: str,
    verdict: str,
    *,
    grounds: str,
    by: str,
) -> SupportJudged:
    """One judgement in a batch of its own (between sessions)."""
    with led.batch(led.last_session, marker="batch_committed", label="support") as b:
        return judge_in_batch(b, node_id, evidence_id, verdict, grounds=grounds, by=by)


@dataclass
class SupportItem:
    """A verified evidence record with its requirement and the judgements it has."""

    node: str
    node_text: str
    evidence_id: str
    requirement: str
    requirement_text: str
    requirement_status: str
    passage: str
    source_id: str | None
    session: int
    judgements: list[SupportEntry] = field(default_factory=list)

    def judged_by(self, by: str) -> bool:
        return any(j["by"] == by for j in self.judgements)

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def verified_items(nodes: Mapping[str, NodeRecord]) -> list[SupportItem]:
    """Every verified evidence record whose requirement is still in its node's return
    condition, in node then evidence order."""
    out: list[SupportItem] = []
    for nid, node in sorted(nodes.items(), key=lambda kv: int(kv[0][1:])):
        reqs = {r["id"]: r for r in requirements(node)}
        for e in node["evidence"]:
            req = reqs.get(e["requirement"])
            if e["status"] != "verified" or req is None:
                continue
            out.append(
                SupportItem(
                    node=nid,
                    node_text=node["text"],
                    evidence_id=e["id"],
                    requirement=e["requirement"],
                    requirement_text=req["text"],
                    requirement_status=req["status"],
                    passage=e["passage"],
                    source_id=e.get("source_id"),
                    session=e["session"],
                    judgements=list(e.get("support", [])),
                )
            )
    return out


def pick_evidence(nodes: Mapping[str, NodeRecord], node_id: str, requirement: str, by: str) -> str:
    """The evidence ``by`` would judge for ``node_id``/``requirement``: its latest verified
    record not yet judged by ``by`` (TransitionError naming what is missing)."""
    if node_id not in nodes:
        raise TransitionError(f"unknown node {node_id!r}")
    items = [i for i in verified_items(nodes) if (i.node, i.requirement) == (node_id, requirement)]
    if not items:
        raise TransitionError(f"{node_id}/{requirement} has no verified evidence to judge")
    open_items = [i for i in items if not i.judged_by(by)]
    if not open_items:
        raise TransitionError(
            f"{by} already judged every verified passage of {node_id}/{requirement}"
        )
    return open_items[-1].evidence_id
