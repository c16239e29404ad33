"""The closed set of journal event kinds: for each, its data schema, what it means, and how it folds.

Folding is mechanical: an event's data says exactly what changes. Deciding *whether* a change
is allowed (contracts, revision rule, decay) happens before an event is emitted, in the
domain code; replay never re-decides anything.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from curiosity_tui.errors import CorruptLedgerError, TransitionError
from curiosity_tui.ledger.event_data import (
    BatchCommitted as BatchCommitted,
)
from curiosity_tui.ledger.event_data import (
    CandidatePreserved as CandidatePreserved,
)
from curiosity_tui.ledger.event_data import (
    ClosureBlocked as ClosureBlocked,
)
from curiosity_tui.ledger.event_data import (
    CuratorPrioritySet as CuratorPrioritySet,
)
from curiosity_tui.ledger.event_data import (
    CuratorReverted as CuratorReverted,
)
from curiosity_tui.ledger.event_data import (
    DecayApplied as DecayApplied,
)
from curiosity_tui.ledger.event_data import (
    DependencyChecked as DependencyChecked,
)
from curiosity_tui.ledger.event_data import (
    DowngradeDecided as DowngradeDecided,
)
from curiosity_tui.ledger.event_data import (
    DowngradeProposed as DowngradeProposed,
)
from curiosity_tui.ledger.event_data import (
    EndpointProbed as EndpointProbed,
)
from curiosity_tui.ledger.event_data import (
    EvidenceAdded as EvidenceAdded,
)
from curiosity_tui.ledger.event_data import (
    EvidenceVerified as EvidenceVerified,
)
from curiosity_tui.ledger.event_data import (
    FactAttached as FactAttached,
)
from curiosity_tui.ledger.event_data import (
    LedgerCreated as LedgerCreated,
)
from curiosity_tui.ledger.event_data import (
    NodeAnswered as NodeAnswered,
)
from curiosity_tui.ledger.event_data import (
    NodeClosed as NodeClosed,
)
from curiosity_tui.ledger.event_data import (
    NodeCreated as NodeCreated,
)
from curiosity_tui.ledger.event_data import (
    NodesMerged as NodesMerged,
)
from curiosity_tui.ledger.event_data import (
    QuestionResurfaced as QuestionResurfaced,
)
from curiosity_tui.ledger.event_data import (
    ReturnConditionRevised as ReturnConditionRevised,
)
from curiosity_tui.ledger.event_data import (
    ReturnConditionSet as ReturnConditionSet,
)
from curiosity_tui.ledger.event_data import (
    ServerChanged as ServerChanged,
)
from curiosity_tui.ledger.event_data import (
    SessionCommitted as SessionCommitted,
)
from curiosity_tui.ledger.event_data import (
    SessionFailed as SessionFailed,
)
from curiosity_tui.ledger.event_data import (
    SessionRecorded as SessionRecorded,
)
from curiosity_tui.ledger.event_data import (
    SessionStarted as SessionStarted,
)
from curiosity_tui.ledger.event_data import (
    SnapshotWritten as SnapshotWritten,
)
from curiosity_tui.ledger.event_data import (
    SourceAdded as SourceAdded,
)
from curiosity_tui.ledger.event_data import (
    StatusChanged as StatusChanged,
)
from curiosity_tui.ledger.event_data import SupportJudged as SupportJudged
from curiosity_tui.ledger.event_data import (  # re-exported: the events' data models
    _Data as _Data,
)
from curiosity_tui.ledger.node_record import (
    DowngradeDecisionEntry,
    DowngradeEntry,
    EvidenceEntry,
    MatchEntry,
    NodeRecord,
    RequirementEntry,
)
from curiosity_tui.ledger.support_fold import fold_support

# --------------------------------------------------------------------------- state


class FoldState:
    """The projection being folded: plain dicts, cheap to copy-on-write."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] | None = None
        self.nodes: dict[str, NodeRecord] = {}
        self.sessions: dict[int, dict[str, Any]] = {}  # committed session records
        self.failed: list[dict[str, Any]] = []  # failed session attempts (reason, session)
        self.sources: dict[str, dict[str, Any]] = {}
        self.node_counter = 0
        self.evidence_counter = 0
        self.downgrade_counter = 0
        self.last_session = 0

    def node(self, node_id: str | None, seq: int) -> NodeRecord:
        found = self.nodes.get(node_id)  # type: ignore[arg-type]  # None is never a key
        if found is None:
            raise CorruptLedgerError(f"event seq {seq} refers to unknown node {node_id!r}", seq=seq)
        return found


Data = dict[str, Any]
"""An event's data as folded: the ``model_dump(mode="json")`` of its kind's data model."""

Folder = Callable[[FoldState, int, int, str | None, str, Data], None]
"""A fold: (state, seq, session, node, actor, data) -> None, changing ``state`` in place."""


@dataclass(frozen=True)
class EventKind:
    name: str
    schema: type[BaseModel]
    doc: str
    fold: Folder
    needs_node: bool


EVENT_KINDS: dict[str, EventKind] = {}


def _kind(
    name: str, schema: type[BaseModel], doc: str, *, needs_node: bool = True
) -> Callable[[Folder], Folder]:
    """Register kind ``name``: its data model, what it means and its fold (the one table)."""

    def deco(fn: Folder) -> Folder:
        EVENT_KINDS[name] = EventKind(name, schema, doc, fn, needs_node)
        return fn

    return deco


@_kind("ledger_created", LedgerCreated, "Run metadata fixed at creation.", needs_node=False)
def _ledger_created(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    if st.meta is not None:
        raise CorruptLedgerError(f"event seq {seq}: second ledger_created", seq=seq)
    st.meta = dict(d)


@_kind("session_started", SessionStarted, "A session began (its focus, if any).", needs_node=False)
def _session_started(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    return None


@_kind("node_created", NodeCreated, "A question was added (not a resurfacing).")
def _node_created(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    if node is None or node in st.nodes:
        raise CorruptLedgerError(f"event seq {seq}: node {node!r} created twice", seq=seq)
    expected = f"q{st.node_counter + 1}"
    if node != expected:
        raise CorruptLedgerError(
            f"event seq {seq}: node id {node} out of order (expected {expected})", seq=seq
        )
    if d.get("parent") is not None and d["parent"] not in st.nodes:
        raise CorruptLedgerError(f"event seq {seq}: parent {d['parent']!r} is unknown", seq=seq)
    st.node_counter += 1
    st.nodes[node] = {  # checked by mypy against NodeRecord: every field, nothing else
        "id": node,
        "text": d["text"],
        "parent": d.get("parent"),
        "status": "open",
        "created": session,
        "resurfaced": [],
        "voluntary": [],
        "facts": [],
        "return_condition": None,
        "checks": [],
        "evidence": [],
        "preserved": [],
        "downgrades": [],
        "curator_priority": None,
        "merged_into": None,
        "requirement_counter": 0,
    }


@_kind(
    "question_resurfaced",
    QuestionResurfaced,
    "A node was worked in this session (forced focus or voluntary action).",
)
def _resurfaced(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    n = st.node(node, seq)
    if session not in n["resurfaced"]:
        n["resurfaced"] = sorted([*n["resurfaced"], session])
    if d["how"] == "voluntary" and session not in n["voluntary"]:
        n["voluntary"] = sorted([*n["voluntary"], session])


@_kind("fact_attached", FactAttached, "A factual assertion attached to a node.")
def _fact(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.node(node, seq)["facts"].append(
        {"text": d["text"], "session": session, "source": d.get("source")}
    )


def _max_req(ids: list[str]) -> int:
    best = 0
    for i in ids:
        if i.startswith("r") and i[1:].isdigit():
            best = max(best, int(i[1:]))
    return best


@_kind(
    "return_condition_set",
    ReturnConditionSet,
    "A first return condition (required facts, actions, closure test).",
)
def _rc_set(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    n = st.node(node, seq)
    rfs: list[RequirementEntry] = [cast(RequirementEntry, dict(r)) for r in d["required_facts"]]
    n["return_condition"] = {
        "required_facts": rfs,
        "required_actions": list(d.get("required_actions", [])),
        "closure_test": d.get("closure_test", ""),
        "session": session,
        "revision": 0,
    }
    n["requirement_counter"] = max(n["requirement_counter"], _max_req([r["id"] for r in rfs]))


@_kind(
    "return_condition_revised",
    ReturnConditionRevised,
    "A revision under the S3 rule: unsatisfied carried, satisfied not, proposals merged.",
)
def _rc_revised(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    n = st.node(node, seq)
    old = n["return_condition"]
    rfs: list[RequirementEntry] = [cast(RequirementEntry, dict(r)) for r in d["required_facts"]]
    n["return_condition"] = {
        "required_facts": rfs,
        "required_actions": list(d.get("required_actions", [])),
        "closure_test": d.get("closure_test", ""),
        "session": session,
        "revision": (old["revision"] + 1) if old else 0,
    }
    n["requirement_counter"] = max(n["requirement_counter"], _max_req([r["id"] for r in rfs]))


def _requirement(n: NodeRecord, rid: str, seq: int) -> RequirementEntry:
    rc = n["return_condition"]
    for r in rc["required_facts"] if rc else []:
        if r["id"] == rid:
            return r
    raise CorruptLedgerError(f"event seq {seq}: node {n['id']} has no requirement {rid!r}", seq=seq)


@_kind(
    "dependency_checked",
    DependencyChecked,
    "A required fact was checked; `result` is its status afterwards.",
)
def _checked(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    n = st.node(node, seq)
    r = _requirement(n, d["requirement"], seq)
    r["status"] = d["result"]
    if d["result"] == d["claimed"]:  # the claim took effect: the mark records this session
        r["checked"] = session
    n["checks"].append(
        {
            "session": session,
            "requirement": d["requirement"],
            "claimed": d["claimed"],
            "evidence_text": d["evidence_text"],
            "evidence_id": d.get("evidence_id"),
            "result": d["result"],
            "actor": actor,
        }
    )


@_kind("evidence_added", EvidenceAdded, "An evidence record, always stored `proposed` first.")
def _evidence_added(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    n = st.node(node, seq)
    st.evidence_counter += 1
    n["evidence"].append(cast(EvidenceEntry, dict(d)))


@_kind(
    "evidence_verified",
    EvidenceVerified,
    "The evidence passage was found in its source: the record is `verified`.",
)
def _evidence_verified(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    n = st.node(node, seq)
    for e in n["evidence"]:
        if e["id"] == d["evidence_id"]:
            e["status"] = "verified"
            e["match"] = cast(MatchEntry, dict(d["match"]))
            e["reason"] = ""
            return
    raise CorruptLedgerError(f"event seq {seq}: unknown evidence {d['evidence_id']!r}", seq=seq)


@_kind("support_judged", SupportJudged, "A judge said whether verified evidence establishes its requirement (decision 520); `result` is the requirement's status afterwards.")  # fmt: skip
def _support(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    fold_support(st.node(node, seq), d, seq, session)


@_kind(
    "candidate_preserved",
    CandidatePreserved,
    "A candidate answer withheld and kept (PRESERVE, or a blocked closure).",
)
def _preserved(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    st.node(node, seq)["preserved"].append(
        {
            "session": session,
            "text": d["text"],
            "delta": d.get("delta"),
            "reason": d.get("reason", "preserve"),
        }
    )


@_kind(
    "node_answered",
    NodeAnswered,
    "The session ANSWERed this node (closure follows only if the contract allows).",
)
def _answered(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.node(node, seq)


@_kind(
    "node_closed",
    NodeClosed,
    "The node was closed; `unmet` lists requirements not satisfied/waived at that moment.",
)
def _closed(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.node(node, seq)["status"] = "closed"


@_kind(
    "closure_blocked",
    ClosureBlocked,
    "pilot-02: an ANSWER could not close the node; unmet requirement ids.",
)
def _blocked(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.node(node, seq)


@_kind(
    "status_changed",
    StatusChanged,
    "A status change not covered by a more specific kind (revive, archive, reopen).",
)
def _status(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.node(node, seq)["status"] = d["to"]


@_kind(
    "nodes_merged",
    NodesMerged,
    "`node` was merged into `into`; it keeps its facts and becomes `merged`.",
)
def _merged(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    n = st.node(node, seq)
    st.node(d["into"], seq)
    n["status"] = "merged"
    n["merged_into"] = d["into"]


@_kind(
    "curator_priority_set",
    CuratorPrioritySet,
    "A curator set (or cleared) a node's priority; 1 ranks first.",
)
def _priority(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.node(node, seq)["curator_priority"] = d["priority"]


@_kind(
    "curator_reverted",
    CuratorReverted,
    "A curator took back an earlier curator action (`reverts` is its seq): the fields it "
    "changed get their earlier values; the action's own event stays in the journal.",
)
def _reverted(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    n = st.node(node, seq)
    if d.get("status") is not None:
        n["status"] = d["status"]
    if d["action"] == "merge":
        n["merged_into"] = None
    if d.get("restores_priority"):
        n["curator_priority"] = d.get("curator_priority")


@_kind(
    "downgrade_proposed",
    DowngradeProposed,
    "A proposal to waive or weaken one requirement, with grounds.",
)
def _dg_proposed(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    n = st.node(node, seq)
    _requirement(n, d["requirement"], seq)
    st.downgrade_counter += 1
    n["downgrades"].append(cast(DowngradeEntry, dict(d)))


@_kind(
    "downgrade_decided",
    DowngradeDecided,
    "A human curator approved or rejected a downgrade, with grounds.",
)
def _dg_decided(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    n = st.node(node, seq)
    for p in n["downgrades"]:
        if p["id"] == d["proposal"]:
            if p["status"] != "pending":
                raise CorruptLedgerError(
                    f"event seq {seq}: downgrade {p['id']} decided twice", seq=seq
                )
            r = _requirement(n, p["requirement"], seq)  # before any change: folds are atomic
            p["status"] = "approved" if d["decision"] == "approve" else "rejected"
            decision: DowngradeDecisionEntry = {
                "decision": d["decision"],
                "by": actor,
                "grounds": d["grounds"],
                "ts": d.get("at", ""),
                "session": session,
            }
            if d.get("self_approval"):
                decision["self_approval"] = True
            p["decision"] = decision
            if d["decision"] == "approve":
                if p["action"] == "waive":
                    r["status"] = "waived"
                else:
                    r["text"] = p["new_text"] or r["text"]
                    r["status"] = "unchecked"
                    r["checked"] = None
            return
    raise CorruptLedgerError(f"event seq {seq}: unknown downgrade {d['proposal']!r}", seq=seq)


@_kind(
    "decay_applied",
    DecayApplied,
    "Decay after a session: these open nodes became dormant.",
    needs_node=False,
)
def _decay(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    targets = [st.node(nid, seq) for nid in d["nodes"]]  # all known before any changes
    for n in targets:
        n["status"] = "dormant"


@_kind(
    "snapshot_written",
    SnapshotWritten,
    "A snapshot of all nodes; its state hash must match the fold.",
    needs_node=False,
)
def _snapshot(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    return None  # checked by the replayer


@_kind(
    "session_recorded",
    SessionRecorded,
    "The session record: inputs, raw outputs, calls, usage, decisions.",
    needs_node=False,
)
def _session_recorded(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    st.sessions[session] = dict(d)
    st.last_session = max(st.last_session, session)


@_kind(
    "session_committed",
    SessionCommitted,
    "Commit marker closing a session batch.",
    needs_node=False,
)
def _session_committed(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    return None


@_kind(
    "session_failed",
    SessionFailed,
    "A session attempt failed; none of its events were applied.",
    needs_node=False,
)
def _session_failed(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    st.failed.append({"session": session, "reason": d["reason"], "seq": seq})


@_kind(
    "source_added",
    SourceAdded,
    "An evidence source stored under sources/ by sha256.",
    needs_node=False,
)
def _source(st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data) -> None:
    st.sources[d["id"]] = dict(d)


@_kind(
    "batch_committed",
    BatchCommitted,
    "Commit marker closing a non-session batch.",
    needs_node=False,
)
def _batch_committed(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    return None


@_kind(
    "endpoint_probed",
    EndpointProbed,
    "The endpoint's capabilities as probed before a run's sessions; the latest is run metadata.",
    needs_node=False,
)
def _endpoint_probed(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    if st.meta is None:
        raise CorruptLedgerError(f"event seq {seq}: endpoint_probed before ledger_created", seq=seq)
    st.meta = {**st.meta, "endpoint": dict(d)}


@_kind(
    "server_changed",
    ServerChanged,
    "What the server says it is (model, build, template, model file) changed between two "
    "sessions of the run; kept in run metadata.",
    needs_node=False,
)
def _server_changed(
    st: FoldState, seq: int, session: int, node: str | None, actor: str, d: Data
) -> None:
    if st.meta is None:
        raise CorruptLedgerError(f"event seq {seq}: server_changed before ledger_created", seq=seq)
    st.meta = {**st.meta, "server_changes": [*st.meta.get("server_changes", []), dict(d)]}


COMMIT_MARKERS = frozenset({"session_committed", "batch_committed"})

#: the node fields each kind's fold may change, on every node it touches (see
#: ``replay.touched``); a kind not listed (``node_created``) may change any. Replay re-encodes
#: only these at the next snapshot (decision 251); tests/test_replay_equivalence.py checks
#: each fold against its entry.
FOLD_FIELDS: dict[str, frozenset[str]] = {
    "question_resurfaced": frozenset({"resurfaced", "voluntary"}),
    "fact_attached": frozenset({"facts"}),
    "return_condition_set": frozenset({"return_condition", "requirement_counter"}),
    "return_condition_revised": frozenset({"return_condition", "requirement_counter"}),
    "dependency_checked": frozenset({"return_condition", "checks"}),
    "evidence_added": frozenset({"evidence"}),
    "evidence_verified": frozenset({"evidence"}),
    "support_judged": frozenset({"evidence", "return_condition"}),
    "candidate_preserved": frozenset({"preserved"}),
    "node_answered": frozenset(),
    "node_closed": frozenset({"status"}),
    "closure_blocked": frozenset(),
    "status_changed": frozenset({"status"}),
    "nodes_merged": frozenset({"status", "merged_into"}),
    "curator_priority_set": frozenset({"curator_priority"}),
    "curator_reverted": frozenset({"status", "merged_into", "curator_priority"}),
    "downgrade_proposed": frozenset({"downgrades"}),
    "downgrade_decided": frozenset({"downgrades", "return_condition"}),
    "decay_applied": frozenset({"status"}),
}

#: data model class -> kind name, derived from EVENT_KINDS (one source of truth).
KIND_OF: dict[type[BaseModel], str] = {spec.schema: name for name, spec in EVENT_KINDS.items()}
assert len(KIND_OF) == len(EVENT_KINDS), "each kind needs its own data model class"


def kind_of(event: BaseModel) -> str:
    """The kind of a typed event (its data model's class; subclasses are not kinds)."""
    kind = KIND_OF.get(type(event))
    if kind is None:
        raise TransitionError(f"{type(event).__name__} is not an event data model")
    return kind


def event_of(kind: str, data: dict[str, Any]) -> BaseModel:
    """Build the typed event of ``kind`` from a data dict, validating it. For callers holding
    untyped data (tables in tests, tools); package code builds the model directly."""
    spec = EVENT_KINDS.get(kind)
    if spec is None:
        raise TransitionError(f"unknown event kind {kind!r}")
    try:
        return spec.schema.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise TransitionError(f"{kind} data invalid at {loc!r}: {first['msg']}") from None


def validate_data(
    kind: str, data: dict[str, Any], *, seq: int | None = None, dump: bool = True
) -> dict[str, Any]:
    """Validate an event's data against its kind's schema; return the normalised dict
    (``dump=False``: validate only and return ``data`` itself — what replay needs)."""
    spec = EVENT_KINDS.get(kind)
    where = f"seq {seq}: " if seq is not None else ""
    if spec is None:
        raise CorruptLedgerError(f"{where}unknown event kind {kind!r}", seq=seq)
    try:
        model = spec.schema.model_validate(data)
        return model.model_dump(mode="json") if dump else data
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CorruptLedgerError(
            f"{where}{kind} data invalid at {loc!r}: {first['msg']}", seq=seq
        ) from None


def fold_event(st: FoldState, ev: dict[str, Any]) -> None:
    spec = EVENT_KINDS.get(ev["kind"])
    if spec is None:
        raise CorruptLedgerError(
            f"seq {ev['seq']}: unknown event kind {ev['kind']!r}", seq=ev["seq"]
        )
    if spec.needs_node and ev["node"] is None:
        raise CorruptLedgerError(f"seq {ev['seq']}: {ev['kind']} needs a node", seq=ev["seq"])
    spec.fold(st, ev["seq"], ev["session"], ev["node"], ev["actor"], ev["data"])


def clone_state(st: FoldState) -> FoldState:
    return copy.deepcopy(st)
