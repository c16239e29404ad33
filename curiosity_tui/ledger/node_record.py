"""A node as the fold holds it, and the quantities derived from it, each defined once (S1, S6).

:class:`NodeRecord` is THE shape of a node (decision 500): the fold
(:mod:`curiosity_tui.ledger.events`) builds it, and every reader (render, queue, metrics,
audit, widgets, screens) types against it, so mypy checks every field read and write. At run
time a node stays a plain dict (a TypedDict costs nothing); stored bytes are the dict's JSON,
as before. What hangs off a node (facts, the return condition, checks, evidence, withheld
candidates, downgrades) is typed here too, in the shapes the fold stores (the ``model_dump``
of the event data that made them).

What is derived from a node is defined here and nowhere else:

- live: the status is not one of :data:`NOT_LIVE` (S6);
- pulse = ``len(resurfaced)``; creating a node is not a resurfacing;
- last touch = the latest of ``created`` and the sessions in ``resurfaced``.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

NodeStatus = Literal["open", "dormant", "closed", "archived", "merged"]
RequirementStatus = Literal["unchecked", "satisfied", "not_satisfied", "waived"]


class FactEntry(TypedDict):
    """A factual assertion attached to a node (``fact_attached``). Facts never decay."""

    text: str
    session: int
    source: str | None


class RequirementEntry(TypedDict):
    """A required fact of a return condition (``models.RequiredFact`` as stored)."""

    id: str
    text: str
    status: RequirementStatus
    checked: int | None  # session of the last check that set the status


class ReturnConditionEntry(TypedDict):
    required_facts: list[RequirementEntry]
    required_actions: list[str]
    closure_test: str
    session: int  # session in which this version was set or revised
    revision: int  # 0 = first set, 1.. = revisions


class CheckEntry(TypedDict):
    """A dependency check of one required fact (``dependency_checked``)."""

    session: int
    requirement: str
    claimed: Literal["satisfied", "not_satisfied"]
    evidence_text: str
    evidence_id: str | None
    result: RequirementStatus  # the requirement's status after the check
    actor: str


class MatchEntry(TypedDict):
    """Where a verified passage was found (``models.MatchCheck`` as stored)."""

    offset: int
    method: str
    checked_by: str
    checked_at: str


class SupportEntry(TypedDict):
    """A judge's verdict on a verified passage (``support_judged``, decision 520)."""

    verdict: str  # yes, no or partly
    grounds: str
    by: str  # human:<name> or model:<model name>
    session: int
    admitted: bool
    ts: str


class EvidenceEntry(TypedDict):
    """An evidence record (``evidence_added``; ``evidence_verified`` marks it verified)."""

    id: str
    requirement: str
    session: int
    source_id: str | None
    passage: str
    status: Literal["proposed", "verified"]
    match: MatchEntry | None
    reason: str  # why it stayed proposed, when it did
    #: support judgements, in order; the key is written by the first (decision 520)
    support: NotRequired[list[SupportEntry]]


class PreservedEntry(TypedDict):
    """A withheld candidate answer (``candidate_preserved``)."""

    session: int
    text: str
    delta: float | None
    reason: Literal["preserve", "closure_blocked"]


class DowngradeDecisionEntry(TypedDict):
    decision: Literal["approve", "reject"]
    by: str
    grounds: str
    ts: str
    session: int
    #: written only when the decider had proposed it (decision 443)
    self_approval: NotRequired[bool]


class DowngradeEntry(TypedDict):
    """A proposal to waive or weaken one requirement (``downgrade_proposed``/``_decided``)."""

    id: str
    requirement: str
    action: Literal["waive", "weaken"]
    new_text: str | None
    grounds: str
    proposed_by: str
    session: int
    status: Literal["pending", "approved", "rejected"]
    decision: DowngradeDecisionEntry | None


class NodeRecord(TypedDict):
    """A node: the fold's dict (``events._node_created`` builds it whole), the snapshot rows,
    and what every reader takes."""

    id: str
    text: str
    parent: str | None
    status: NodeStatus
    created: int  # the session that created it (0: the seed)
    resurfaced: list[int]  # sessions that worked it, sorted
    voluntary: list[int]  # sessions worked by a voluntary action (subset of ``resurfaced``)
    facts: list[FactEntry]
    return_condition: ReturnConditionEntry | None
    checks: list[CheckEntry]
    evidence: list[EvidenceEntry]
    preserved: list[PreservedEntry]
    downgrades: list[DowngradeEntry]
    curator_priority: int | None
    merged_into: str | None
    requirement_counter: int


#: Statuses that make a node not live (S6: live = status not in this set).
NOT_LIVE: frozenset[str] = frozenset({"closed", "archived", "merged"})


def is_live(node: NodeRecord) -> bool:
    return node["status"] not in NOT_LIVE


def pulse(node: NodeRecord) -> int:
    return len(node["resurfaced"])


def last_touch(node: NodeRecord) -> int:
    res = node["resurfaced"]
    created = node["created"]
    return max(created, res[-1]) if res else created


def requirements(node: NodeRecord) -> list[RequirementEntry]:
    """The required facts of the node's return condition (none without one)."""
    rc = node.get("return_condition")
    return rc["required_facts"] if rc else []


__all__ = [
    "NOT_LIVE",
    "CheckEntry",
    "DowngradeDecisionEntry",
    "DowngradeEntry",
    "EvidenceEntry",
    "FactEntry",
    "MatchEntry",
    "NodeRecord",
    "NodeStatus",
    "PreservedEntry",
    "RequirementEntry",
    "RequirementStatus",
    "ReturnConditionEntry",
    "SupportEntry",
    "is_live",
    "last_touch",
    "pulse",
    "requirements",
]
