"""A batch: one unit of change to a ledger (a session, a curation, a decay, ...). Events are
validated and folded into a copy-on-write working state as they are emitted; nothing touches
disk until :meth:`Batch.commit` hands the batch to its :class:`~curiosity_tui.ledger.ledger.Ledger`."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, cast

from pydantic import BaseModel, ValidationError

from curiosity_tui.errors import CorruptLedgerError, InputError, LedgerError, TransitionError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.commit_errors import batch_name, commit_failure
from curiosity_tui.ledger.events import (
    COMMIT_MARKERS,
    EVENT_KINDS,
    FoldState,
    NodeCreated,
    SessionRecorded,
    SnapshotWritten,
    fold_event,
    kind_of,
    validate_data,
)
from curiosity_tui.ledger.hashing import HashIndex, snapshot_delta
from curiosity_tui.ledger.models import SessionRecord
from curiosity_tui.ledger.node_record import NodeRecord
from curiosity_tui.ledger.node_text import GROWING, NodeTexts
from curiosity_tui.ledger.replay import touched


class LedgerHost(Protocol):
    """What a batch needs from its ledger (:class:`~curiosity_tui.ledger.ledger.Ledger` is
    the one implementation). Declared here so that ``batch`` never imports ``ledger``, not
    even for typing: the ledger hands itself in and is called back once, at commit."""

    path: Path
    clock: Callable[[], str]
    _state: FoldState
    _last_seq: int
    _last_hash: str
    _hindex: HashIndex
    _dirty_since_snapshot: set[str]
    _node_texts: NodeTexts

    def _apply_batch(self, b: Batch) -> None:
        """Append the batch to the journal (the commit point), set ``_last_seq`` to its last
        seq, then write the projection. Batch.commit relies on that order to tell a failure
        before the commit point from one after it (ledger/commit_errors.py)."""
        ...


def valid_actor(actor: str) -> bool:
    if actor in ("model", "model-curator", "system"):
        return True
    return actor.startswith("human:") and bool(actor[6:].strip()) and actor[6:] == actor[6:].strip()


def _copy_node(node: NodeRecord) -> NodeRecord:
    """A node copy for copy-on-write: independent everywhere a fold changes it in place. The
    items of the append-only lists (facts, checks, preserved) are never changed once appended,
    so those lists are copied and their items shared: a node's history is not copied again."""
    out = {
        k: v if type(v) in _SCALARS else _copy_json(v) for k, v in node.items() if k not in GROWING
    }
    for k in GROWING:
        if k in node:
            out[k] = list(node[k])  # type: ignore[literal-required]  # one of GROWING's keys
    return cast(NodeRecord, out)


def _copy_json(x: Any) -> Any:
    """An independent copy of JSON data (dicts, lists, scalars): ~3x faster than deepcopy."""
    if type(x) is dict:
        return {k: v if type(v) in _SCALARS else _copy_json(v) for k, v in x.items()}
    if type(x) is list:  # scalars are shared, not copied: a call per item was most of the cost
        return [v if type(v) in _SCALARS else _copy_json(v) for v in x]
    return copy.deepcopy(x) if type(x) not in _SCALARS else x


_SCALARS = (str, int, float, bool, type(None))


class _Working:
    """Copy-on-write view of the fold state used while a batch is open."""

    def __init__(self, base: FoldState) -> None:
        st = FoldState()
        st.meta = dict(base.meta) if base.meta is not None else None
        st.nodes = dict(base.nodes)
        st.sessions = dict(base.sessions)
        st.failed = list(base.failed)
        st.sources = dict(base.sources)
        st.node_counter = base.node_counter
        st.evidence_counter = base.evidence_counter
        st.downgrade_counter = base.downgrade_counter
        st.last_session = base.last_session
        self.state = st
        self.copied: set[str] = set()

    def prepare(self, ids: list[str]) -> None:
        for nid in ids:
            if nid not in self.copied and nid in self.state.nodes:
                self.state.nodes[nid] = _copy_node(self.state.nodes[nid])
                self.copied.add(nid)


class Batch:
    """A unit of change. Events are validated and folded into a working copy as they are
    emitted, so later logic in the same batch sees them; nothing touches disk until commit."""

    def __init__(self, ledger: LedgerHost, session: int, marker: str, label: str) -> None:
        if marker not in COMMIT_MARKERS:
            raise ValueError(f"unknown commit marker {marker!r}")
        self.ledger = ledger
        self.session = session
        self.marker = marker
        self.label = label
        self.work = _Working(ledger._state)
        self.events: list[dict[str, Any]] = []
        self.lines: list[bytes] = []
        self.prev = ledger._last_hash
        self.seq = ledger._last_seq
        self.changed: set[str] = set()
        self.snapshots: list[dict[str, Any]] = []
        self.session_rows: list[dict[str, Any]] = []
        self.failed_rows: list[dict[str, Any]] = []
        self.source_rows: list[dict[str, Any]] = []
        self._hashes: HashIndex = ledger._hindex.copy()
        self._dirty_since_snapshot = set(ledger._dirty_since_snapshot)
        self.closed = False

    # -- reading the working state --------------------------------------------
    @property
    def state(self) -> FoldState:
        return self.work.state

    def node(self, node_id: str) -> NodeRecord:
        if node_id not in self.state.nodes:
            raise TransitionError(f"unknown node {node_id!r}")
        return self.state.nodes[node_id]

    def raw_nodes(self) -> dict[str, NodeRecord]:
        """The working state's node dicts (do not mutate); cf. ``Ledger.raw_nodes()``."""
        return self.state.nodes

    # -- writing ---------------------------------------------------------------
    def emit(
        self, event: BaseModel, *, node: str | None = None, actor: str = "system"
    ) -> dict[str, Any]:
        """Append a typed event (a data model of ``events.py``; its class names the kind) about
        ``node`` by ``actor``, fold it into the working state and return the journal body."""
        if self.closed:
            raise LedgerError("batch already committed or aborted")
        kind = kind_of(event)
        if kind in COMMIT_MARKERS:
            raise TransitionError("commit markers are written by commit()")
        if not valid_actor(actor):
            raise TransitionError(
                f"invalid actor {actor!r}: use model, model-curator, system or human:<name>"
            )
        spec = EVENT_KINDS[kind]
        if spec.needs_node and node is None:
            raise TransitionError(f"{kind} needs a node")
        if node is not None and kind != "node_created" and node not in self.state.nodes:
            raise TransitionError(f"{kind}: unknown node {node!r}")
        try:  # re-validated: a model changed after construction must not reach the journal
            clean = validate_data(kind, event.model_dump(mode="json"), dump=False)
        except CorruptLedgerError as err:
            raise TransitionError(str(err)) from None
        return self._append(kind, clean, node, actor)

    def _append(
        self, kind: str, clean: dict[str, Any], node: str | None, actor: str
    ) -> dict[str, Any]:
        """Append event data already validated against its kind's schema (``clean``, the
        schema model's JSON dump): encode, fold into the working state, return the body."""
        body = {
            "seq": self.seq + 1,
            "ts": self.ledger.clock(),
            "session": self.session,
            "kind": kind,
            "node": node,
            "actor": actor,
            "data": clean,
            "prev": self.prev,
        }
        try:  # before the fold, so a refused event leaves the working state untouched
            line, digest = jr.encode_event(body)
        except UnicodeEncodeError as err:  # e.g. a lone surrogate from a non-UTF-8 argv
            where = f" on {node}" if node else ""
            raise InputError(
                f"{kind}{where}: text holds {err.object[err.start : err.end]!r}, which is not "
                "valid UTF-8 and cannot be stored; nothing was written"
            ) from None
        ids = touched(kind, node, clean)
        self.work.prepare(ids)
        try:
            fold_event(self.state, body)
        except CorruptLedgerError as err:
            raise TransitionError(str(err).replace(f"event seq {body['seq']}: ", "")) from None
        body["hash"] = digest
        self.seq += 1
        self.prev = digest
        self.lines.append(line)
        self.events.append(body)
        self.changed.update(i for i in ids if i in self.state.nodes)
        self._dirty_since_snapshot.update(i for i in ids if i in self.state.nodes)
        if kind == "session_recorded":
            self.session_rows.append(clean)
        elif kind == "session_failed":
            self.failed_rows.append(
                {"session": self.session, "reason": clean["reason"], "seq": body["seq"]}
            )
        elif kind == "source_added":
            self.source_rows.append(clean)
        return body

    def create_node(self, text: str, *, parent: str | None, origin: str, actor: str) -> str:
        nid = f"q{self.state.node_counter + 1}"
        data = {"text": text, "parent": parent, "origin": origin}  # origin: checked by the model
        self.emit(NodeCreated.model_validate(data), node=nid, actor=actor)
        return nid

    def snapshot(self, stage: str) -> dict[str, Any]:
        changed = snapshot_delta(
            self.state.nodes, self._dirty_since_snapshot, self._hashes, self.ledger._node_texts.text
        )
        digest = self._hashes.digest()
        data = {"stage": stage, "state_hash": digest, "node_count": len(self.state.nodes)}
        ev = self.emit(SnapshotWritten.model_validate(data))  # stage: checked by the model
        self.snapshots.append(
            {
                "session": self.session,
                "stage": stage,
                "seq": ev["seq"],
                "state_hash": digest,
                "node_count": len(self.state.nodes),
                "changed_texts": changed,  # canonical JSON per node (hashing.snapshot_delta)
            }
        )
        self._dirty_since_snapshot = set()
        return ev

    def record_session(self, record: SessionRecord | dict[str, Any]) -> None:
        """Store the session's record, complete: validated here once (the protocol assembles it
        from already-validated parts without re-validating) and not again by ``emit``."""
        if self.closed:
            raise LedgerError("batch already committed or aborted")
        data = record.model_dump(mode="json") if isinstance(record, SessionRecord) else dict(record)
        try:
            clean = SessionRecorded.model_validate(data).model_dump(mode="json")
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise TransitionError(
                f"session {self.session}: session_recorded data invalid at {loc!r}: {first['msg']}"
            ) from None
        self._append("session_recorded", clean, None, "system")

    def commit(self) -> None:
        if self.closed:
            return
        data = {} if self.marker == "session_committed" else {"label": self.label}
        body = {
            "seq": self.seq + 1,
            "ts": self.ledger.clock(),
            "session": self.session,
            "kind": self.marker,
            "node": None,
            "actor": "system",
            "data": data,
            "prev": self.prev,
        }
        line, digest = jr.encode_event(body)
        body["hash"] = digest
        self.lines.append(line)
        self.events.append(body)
        self.seq += 1
        self.prev = digest
        self.closed = True
        try:
            self.ledger._apply_batch(self)
        except OSError as err:  # disk full, read-only: say whether the batch reached the journal
            raise commit_failure(
                err,
                ledger=self.ledger.path,
                what=batch_name(self.session, self.marker, self.label),
                session=self.session,
                seq=self.seq,
                reached=self.ledger._last_seq == self.seq,
            ) from err

    def abort(self) -> None:
        self.closed = True

    def __enter__(self) -> Batch:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if et is None:
            self.commit()
        else:
            self.abort()
