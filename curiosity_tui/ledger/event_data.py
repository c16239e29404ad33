"""The data model of each journal event kind: what an event of that kind carries.

Built at the call site and emitted as is (``b.emit(SessionStarted(focus=q, config=c))``);
``ledger/events.py`` pairs each model with its kind name, meaning and fold, and re-exports
these classes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from curiosity_tui.ledger.endpoint_record import EndpointCapabilities, ServerChange
from curiosity_tui.ledger.models import (
    Downgrade,
    EvidenceRecord,
    MatchCheck,
    NodeStatus,
    RequiredFact,
    RequirementStatus,
    RunMeta,
    SessionRecord,
    Source,
    SupportVerdict,
)


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LedgerCreated(RunMeta):
    pass


class SessionStarted(_Data):
    focus: str | None = None
    config: str = ""


class NodeCreated(_Data):
    text: str
    parent: str | None = None
    origin: Literal["seed", "open_layer", "new_question", "self_ask", "curator"] = "new_question"


class QuestionResurfaced(_Data):
    how: Literal["forced_focus", "voluntary"]


class FactAttached(_Data):
    text: str
    source: str | None = None


class ReturnConditionSet(_Data):
    required_facts: list[RequiredFact]
    required_actions: list[str] = Field(default_factory=list)
    closure_test: str = ""


class ReturnConditionRevised(_Data):
    required_facts: list[RequiredFact]
    required_actions: list[str] = Field(default_factory=list)
    closure_test: str = ""
    carried: list[str] = Field(default_factory=list)
    retired: list[str] = Field(default_factory=list)
    added: list[str] = Field(default_factory=list)


class DependencyChecked(_Data):
    requirement: str
    claimed: Literal["satisfied", "not_satisfied"]
    evidence_text: str
    evidence_id: str | None = None
    result: RequirementStatus
    contract: str = ""


class EvidenceAdded(EvidenceRecord):
    pass


class SupportJudged(_Data):
    """A judge said whether verified evidence ``evidence_id`` establishes ``requirement``
    (decision 520); ``result`` is the requirement's status afterwards (the domain decides it
    from the run's contract; the fold only applies it)."""

    evidence_id: str
    requirement: str
    verdict: SupportVerdict
    grounds: str
    #: ``human:<name>`` or ``model:<model name>``
    by: str
    admitted: bool
    result: RequirementStatus
    at: str = ""


class EvidenceVerified(_Data):
    evidence_id: str
    match: MatchCheck


class CandidatePreserved(_Data):
    text: str
    delta: float | None = None
    reason: Literal["preserve", "closure_blocked"] = "preserve"


class NodeAnswered(_Data):
    answer: str
    delta: float | None = None


class NodeClosed(_Data):
    reason: str = ""
    unmet: list[str] = Field(default_factory=list)


class ClosureBlocked(_Data):
    unmet: list[str]
    contract: str = "pilot-02"


class StatusChanged(_Data):
    to: NodeStatus
    reason: str = ""


class NodesMerged(_Data):
    into: str
    reason: str


class CuratorPrioritySet(_Data):
    priority: int | None
    reason: str


class CuratorReverted(_Data):
    """A curator action taken back (decision 444): ``reverts`` is its journal seq; the node's
    fields the action changed get the values they had before it."""

    reverts: int = Field(ge=1)
    action: Literal["priority", "merge", "archive", "revive"]
    reason: str = Field(min_length=1)
    #: the status before the action (None: the action did not change it)
    status: NodeStatus | None = None
    restores_priority: bool = False
    curator_priority: int | None = None


class DowngradeProposed(Downgrade):
    pass


class DowngradeDecided(_Data):
    proposal: str
    decision: Literal["approve", "reject"]
    grounds: str
    at: str = ""
    #: the decider also proposed it, approved under --allow-self-approval (decision 443)
    self_approval: bool = False


class DecayApplied(_Data):
    nodes: list[str]


class SnapshotWritten(_Data):
    stage: Literal["session", "decay", "curator"]
    state_hash: str
    node_count: int


#: The ``session_recorded`` kind carries the session record itself: one class from the model's
#: reply to the metrics (decision 501), not a subclass of it.
SessionRecorded = SessionRecord


class SessionCommitted(_Data):
    pass


class SessionFailed(_Data):
    reason: str
    record: dict[str, Any] | None = None  # the partial session record (calls made, inputs)


class SourceAdded(Source):
    pass


class BatchCommitted(_Data):
    label: str = ""


class EndpointProbed(EndpointCapabilities):
    pass


class ServerChanged(ServerChange):
    pass
