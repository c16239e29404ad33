"""Records of the ledger (S1): what events carry onto nodes, events, session records, run metadata.

Every record that crosses a boundary (disk, LLM, CLI JSON) is a pydantic model. The fold
itself works on plain dicts (``model_dump`` shapes) for speed; a node's shape, and the shapes
of what hangs off it, are the TypedDicts of :mod:`curiosity_tui.ledger.node_record`
(decision 500). The models here that an event carries onto a node (``RequiredFact``,
``EvidenceRecord``, ``MatchCheck``, ``Downgrade``) dump to those shapes
(tests/test_node_record.py holds them to it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from curiosity_tui.contract_switches import canonical_name
from curiosity_tui.errors import InputError
from curiosity_tui.ledger.endpoint_record import EndpointCapabilities, ServerChange
from curiosity_tui.ledger.node_record import NodeStatus as NodeStatus
from curiosity_tui.ledger.node_record import RequirementStatus as RequirementStatus
from curiosity_tui.ledger.sampling_record import CallSampling
from curiosity_tui.ledger.tension_record import CandidateDelta, DecisionBasis
from curiosity_tui.provenance import Provenance


def _contract_name(value: str) -> str:
    """A preset name, or a switch combination in its canonical form (decision 230)."""
    try:
        return canonical_name(value)
    except InputError as err:
        raise ValueError(str(err)) from None


#: ``pilot-01``, ``pilot-02`` or ``evidence=…,closure=…`` (contract_switches.py)
ContractName = Annotated[str, AfterValidator(_contract_name)]
CuratorKind = Literal["model", "human", "none"]
SnapshotStage = Literal["session", "decay", "curator"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RequiredFact(_Record):
    id: str
    text: str
    status: RequirementStatus = "unchecked"
    checked: int | None = None  # session of the last check that set the status


class MatchCheck(_Record):
    offset: int
    method: str
    checked_by: str
    checked_at: str


SupportVerdict = Literal["yes", "no", "partly"]


class SupportJudgement(_Record):
    """Does a verified passage establish its requirement? One judge's answer (decision 520):
    ``by`` is ``human:<name>`` or ``model:<model name>``, never pooled."""

    verdict: SupportVerdict
    grounds: str
    by: str
    session: int
    #: the run's contract let this judge's verdict move the requirement (evidence=supported)
    admitted: bool = False
    ts: str = ""


class EvidenceRecord(_Record):
    id: str
    requirement: str
    session: int
    source_id: str | None = None
    passage: str
    status: Literal["proposed", "verified"] = "proposed"
    match: MatchCheck | None = None
    reason: str = ""  # why it stayed proposed, when it did
    #: support judgements (``support_judged`` events); left out of the dump while empty, so
    #: evidence records (and state hashes) of ledgers without judgements are as they were
    support: list[SupportJudgement] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_no_support(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("support") == []:
            del out["support"]
        return out


class DowngradeDecision(_Record):
    decision: Literal["approve", "reject"]
    by: str
    grounds: str
    ts: str
    session: int
    #: the decider had proposed it (approved under --allow-self-approval, decision 443)
    self_approval: bool = False


class Downgrade(_Record):
    id: str
    requirement: str
    action: Literal["waive", "weaken"]
    new_text: str | None = None
    grounds: str
    proposed_by: str
    session: int
    status: Literal["pending", "approved", "rejected"] = "pending"
    decision: DowngradeDecision | None = None


class RunMeta(_Record):
    """Run metadata, fixed at ledger creation (the ``ledger_created`` event)."""

    name: str
    seed: str
    config: str = "C+cur"
    contract: ContractName = "pilot-02"
    curator: CuratorKind = "none"
    model: str | None = None
    epsilon: float = 0.15
    open_layer: Literal["compulsory", "optional"] = "compulsory"
    no_reselect: bool = False
    session_budget: int = 4000
    curator_budget: int = 4000
    unregistered: bool = False
    created_at: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    #: the latest endpoint probe (``endpoint_probed`` events, not fixed at creation); left out
    #: of the dump while unset, so ``ledger_created`` data is as before it was declared
    endpoint: EndpointCapabilities | None = None
    #: what created the ledger (issue 23.3: tool, git commit, packages, platform); left out of
    #: the dump while unset, so older ``ledger_created`` data is as it was
    provenance: Provenance | None = None
    #: ``server_changed`` events: the server said something else about itself between two
    #: sessions (issue 23.2); left out of the dump while empty
    server_changes: list[ServerChange] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_unset_endpoint(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for name in ("endpoint", "provenance"):
            if out.get(name, 0) is None:
                del out[name]
        if out.get("server_changes") == []:
            del out["server_changes"]
        return out


class Event(BaseModel):
    """One journal line. ``hash`` = sha256(prev + canonical JSON of the event without hash)."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    ts: str
    session: int
    kind: str
    node: str | None
    actor: str
    data: dict[str, Any]
    prev: str
    hash: str


class CachedFrom(_Record):
    """The call a cached reply came from (issue 23.5): its request digest and its times."""

    request_sha256: str
    started_at: str | None = None
    ended_at: str | None = None


class CallRecord(_Record):
    """One model call (one logical attempt; HTTP retries are counted inside it), from the
    client (``ModelClient.calls``) to the session record in the journal: one class throughout.

    The defaults let the runner record a call-less note (``curator-note``) and keep old
    journals readable; the client always fills ``model``, ``session``, ``internal`` and
    ``request_text``.
    """

    kind: str
    model: str = ""
    session: int = 0
    internal: bool = True
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    latency_s: float = 0.0
    retries: int = 0
    waited_s: float = Field(
        default=0.0, description="Seconds slept between retries (Retry-After or backoff)."
    )
    error: str | None = None
    request_text: str = Field(
        default="", description="The exact input the call received (render_messages)."
    )
    response_text: str = ""
    response_format: str | None = Field(
        default=None,
        description="'json_schema', 'json_object', 'prompt' (schema in the prompt only), "
        "'embeddings', or null for free text.",
    )
    repair: bool = Field(
        default=False, description="True for the repair retry of a structured call."
    )
    refusal: bool = Field(
        default=False, description="The endpoint returned a refusal (its text is response_text)."
    )
    replaced_chars: int = Field(
        default=0,
        description="Characters of the reply that cannot be stored (lone surrogates) and were "
        "replaced by U+FFFD before anything was recorded.",
    )
    max_tokens: int | None = Field(
        default=None, description="The completion-token cap this call was sent with."
    )
    schema_dialect: str | None = Field(
        default=None,
        description="Structured calls: the per-call schema's dialect ('strict' or 'full'), if one was sent.",
    )
    sampling: CallSampling | None = Field(
        default=None,
        description="Chat calls of a run: the temperature, top_p, seed and stop it was sent "
        "with ('server-default': not sent; refused: rejected by the server). Null on calls "
        "recorded before sampling was (issue 23).",
    )
    response_model: str | None = Field(
        default=None, description="The model the reply says produced it (its 'model' field)."
    )
    system_fingerprint: str | None = Field(
        default=None, description="The reply's system_fingerprint, where the server sends one."
    )
    request_sha256: str | None = Field(
        default=None,
        description="sha256 of the request body as canonical JSON: equal digests, equal "
        "requests (issue 23.5: the reply cache and --replay-from match on it).",
    )
    cached: bool = Field(
        default=False,
        description="Answered from a recorded reply (a resumed session, or a replay), not sent.",
    )
    cached_from: CachedFrom | None = None
    started_at: str | None = Field(
        default=None, description="When the call began (UTC, microseconds; issue 23.4)."
    )
    ended_at: str | None = Field(
        default=None, description="When its last reply or failure came back (UTC, microseconds)."
    )
    earlier: list[CallRecord] = Field(
        default_factory=list,
        exclude=True,
        description="On a repaired structured call: the rejected attempt(s) before it (not serialised).",
    )

    @model_serializer(mode="wrap")
    def _omit_unset_limits(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # written only when set: older records dump as before.
        out: dict[str, Any] = handler(self)
        for name in (
            "max_tokens",
            "schema_dialect",
            "sampling",
            "response_model",
            "system_fingerprint",
            "request_sha256",
            "cached_from",
            "started_at",
            "ended_at",
        ):
            if name in out and out[name] is None:
                del out[name]
        if out.get("cached") is False:
            del out["cached"]
        return out


class SessionCounts(_Record):
    voluntary_actions: int = 0
    new_questions: int = 0
    open_layer: int = 0
    dependency_checks: int = 0
    facts: int = 0
    forced_focus: bool = False


class TensionTerms(_Record):
    """The terms of a protocol session's tension (S5 step 2), stored with its record."""

    D: float  # candidate disagreement (1 - mean pairwise cosine)
    F_before: int
    U_before: int
    F_after: int
    U_after: int
    candidates: list[str]
    similarities: list[list[float]]
    embedder: str
    # Issue 26 (a non-default tension setting only; left out of the dump while unset, so a
    # record of the pilot as run serialises as before): the measure, its after-side terms.
    measure: str | None = None
    D_after: float | None = None  # pre-amendment: over follow-ups; four-component: standing
    follow_ups: list[str] | None = None  # pre-amendment: the re-listing judge's questions
    H_before: float | None = None  # four-component: entropy over semantic clusters
    H_after: float | None = None
    clusters: list[int] | None = None  # four-component: each candidate's cluster label
    cluster_similarity: float | None = None
    weights: dict[str, float] | None = None  # four-component: w_D, w_H, w_F, w_U
    per_candidate: list[CandidateDelta] | None = None  # Δ per candidate (decision 533)

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for name in _TENSION_OPTIONAL:
            if out.get(name, 0) is None:
                del out[name]
        return out


_TENSION_OPTIONAL = (
    "measure",
    "D_after",
    "follow_ups",
    "H_before",
    "H_after",
    "clusters",
    "cluster_similarity",
    "weights",
    "per_candidate",
)


class SessionClosure(_Record):
    """What an ANSWER's closure attempt did under the run's contract."""

    closed: bool
    unmet: list[str] = Field(default_factory=list)


# Written only when set, so records without them serialise as before these were declared.
class Mind(_Record):
    """Who took a session (issue 15, the relay): a model at an endpoint, or a person.

    ``endpoint`` is the base URL's scheme, host and port only (never a key, a path's query or
    user info); ``None`` for a person."""

    kind: Literal["model", "human"]
    name: str  # the model's name as sent, or the person's name (actor ``human:<name>``)
    endpoint: str | None = None


_OMIT_WHEN_UNSET: dict[str, Any] = {
    "rejected": [],
    "budget_used": None,
    "tension": None,
    "closure": None,
    "mind": None,
    "provenance": None,
    "decided": None,
}


class SessionRecord(_Record):
    """What one session received, returned and decided. Stored whole in the journal.

    ``rejected``, ``budget_used``, ``tension`` and ``closure`` are left out of the dump while
    unset (see ``_OMIT_WHEN_UNSET``): the journal holds them only for sessions that have them.
    """

    session: int
    status: Literal["committed", "failed"] = "committed"
    config: str = ""
    contract: str = ""
    focus: str | None = None
    decision: Literal["ANSWER", "PRESERVE"] | None = None
    tension_before: float | None = None
    tension_after: float | None = None
    delta: float | None = None
    epsilon: float | None = None
    embedder: str | None = None
    medoid: int | None = None
    inputs: dict[str, str] = Field(default_factory=dict)  # call kind -> exact input text
    outputs: dict[str, str] = Field(default_factory=dict)  # call kind -> raw response
    calls: list[CallRecord] = Field(default_factory=list)
    counts: SessionCounts = Field(default_factory=SessionCounts)
    questions: list[str] = Field(default_factory=list)  # questions raised this session
    output_text: str = ""  # plain text of what the session delivered
    error: str | None = None
    started: str = ""
    finished: str = ""
    rejected: list[str] = Field(default_factory=list)  # model proposals the session refused
    budget_used: int | None = None  # completion tokens spent against the session budget
    tension: TensionTerms | None = None  # protocol sessions only
    closure: SessionClosure | None = None  # ANSWER decisions only
    mind: Mind | None = None  # who took the session (relay runs; unset before issue 15)
    #: what ran the session, when it differs from what created the ledger (issue 23.3)
    provenance: Provenance | None = None
    #: how the decision was reached under a non-default tension setting (issue 26: measure,
    #: session kind, the Δ rule's own verdict, the fallback); unset for the pilot as run
    decided: DecisionBasis | None = None

    @property
    def service(self) -> bool:
        """A service session (PRESERVE may not fire in it; decision 534)."""
        return self.decided is not None and self.decided.kind == "service"

    def decision_delta(self) -> float | None:
        """The Δ the PRESERVE test was applied to: the medoid's, or with Δ per candidate the
        greatest candidate's (PRESERVE iff no candidate meets ε, decision 533)."""
        per = self.tension.per_candidate if self.tension is not None else None
        return max(c.delta for c in per) if per else self.delta

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for name, unset in _OMIT_WHEN_UNSET.items():
            if name in out and out[name] == unset:
                del out[name]
        return out

    @field_validator("inputs", "outputs")
    @classmethod
    def _str_values(cls, v: dict[str, str]) -> dict[str, str]:
        return {str(k): str(val) for k, val in v.items()}

    @property
    def rendering(self) -> str:
        return self.inputs.get("rendering", "")

    def tokens(self, *, internal: bool | None = None, curator: bool | None = None) -> int:
        total = 0
        for c in self.calls:
            is_cur = c.kind == "curator"
            if curator is not None and is_cur != curator:
                continue
            if internal is not None and c.internal != internal:
                continue
            total += c.completion_tokens
        return total


class Source(_Record):
    id: str  # sha256 of the content
    title: str
    locator: str
    size: int
    added_by: str
    added_at: str
    path: str  # relative to the ledger dir, e.g. sources/<sha256>.txt


class Snapshot(_Record):
    """A snapshot as stored: the nodes changed since the previous snapshot, plus a state hash."""

    session: int
    stage: SnapshotStage
    seq: int
    state_hash: str
    node_count: int
    changed: dict[str, dict[str, Any]] = Field(default_factory=dict)
