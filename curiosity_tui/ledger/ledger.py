"""A ledger: one run on disk (``ledgers/<name>/``): journal, projection, sources.

Use::

    with Ledger.create(path, RunMeta(name="r1", seed="Did the printing press ...")) as led:
        with led.batch(session=1) as b:          # one unit: all or nothing
            q = b.create_node("...", parent=None, origin="seed", actor="system")
            b.emit(QuestionResurfaced(how="forced_focus"), node=q)
            b.snapshot("session")
        # leaving the block appends the batch with one write + fsync, then updates ledger.json

    led = Ledger.open(path)                      # read-only; ``write=True`` takes the lock
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from curiosity_tui.errors import CorruptLedgerError, LedgerError, NotALedgerError, TransitionError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import (
    COMMIT_MARKERS,
    EVENT_KINDS,
    FoldState,
    LedgerCreated,
    NodeCreated,
    SessionRecorded,
    SnapshotWritten,
    fold_event,
    kind_of,
    validate_data,
)
from curiosity_tui.ledger.models import Event, Node, RunMeta, SessionRecord, Source
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.ledger.store import ProjectionStore, WriterLock

JOURNAL_FILE = "journal.jsonl"
SOURCES_DIR = "sources"
FORMAT = 1


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def valid_actor(actor: str) -> bool:
    if actor in ("model", "model-curator", "system"):
        return True
    return actor.startswith("human:") and bool(actor[6:].strip()) and actor[6:] == actor[6:].strip()


def node_hash(node: dict[str, Any]) -> str:
    return hashlib.sha256(jr.canonical(node).encode("utf-8")).hexdigest()


def state_hash(hashes: dict[str, str]) -> str:
    """sha256 over ``"<id>:<node hash>\n"`` for every node in id order (q1, q2, …)."""
    return HashIndex(hashes).digest()


def _num(node_id: str) -> int:
    return int(node_id[1:])


class HashIndex:
    """Per-node hashes kept as their ``state_hash`` lines, in id order, so a snapshot's state
    hash is one join + one sha256 instead of a sort and a hash update per node."""

    __slots__ = ("_lines", "_max", "_ordered")

    def __init__(self, hashes: dict[str, str] | None = None) -> None:
        self._lines: dict[str, str] = {}
        self._max = 0
        self._ordered = True
        for nid in sorted(hashes or {}, key=_num):
            self.set(nid, (hashes or {})[nid])

    def set(self, nid: str, digest: str) -> None:
        if nid not in self._lines:
            n = _num(nid)
            if n < self._max:
                self._ordered = False
            self._max = max(self._max, n)
        self._lines[nid] = f"{nid}:{digest}\n"

    def copy(self) -> HashIndex:
        other = HashIndex()
        other._lines = dict(self._lines)
        other._max = self._max
        other._ordered = self._ordered
        return other

    def digest(self) -> str:
        self.digest_order()
        return hashlib.sha256("".join(self._lines.values()).encode("utf-8")).hexdigest()

    def as_dict(self) -> dict[str, str]:
        return {k: v[len(k) + 1 : -1] for k, v in self._lines.items()}

    def text(self) -> str:
        """The lines the state hash is taken over (stored in the projection's meta)."""
        self.digest_order()
        return "".join(self._lines.values())

    def digest_order(self) -> None:
        if not self._ordered:
            self._lines = {k: self._lines[k] for k in sorted(self._lines, key=_num)}
            self._ordered = True

    @classmethod
    def from_text(cls, text: str) -> HashIndex:
        index = cls()
        for line in text.splitlines():
            nid, _, digest = line.partition(":")
            index.set(nid, digest)
        return index

    def keys(self) -> frozenset[str]:
        return frozenset(self._lines)


class NodeEncoder:
    """Canonical JSON of nodes for a long in-place fold (replay): a node's facts are
    append-only, so the encoded facts of each node are kept and only new ones encoded. The
    output is byte-identical to ``journal.canonical(node)``."""

    def __init__(self) -> None:
        self._facts: dict[str, tuple[list[Any], int, list[str]]] = {}

    def encode(self, node: dict[str, Any]) -> str:
        enc = jr.canonical
        facts = node["facts"]
        hit = self._facts.get(node["id"])
        if hit is not None and hit[0] is facts and len(facts) >= hit[1]:
            parts = hit[2]
            if len(facts) > hit[1]:  # one encode call for all new facts, brackets dropped
                parts.append(enc(facts[hit[1] :])[1:-1])
        else:
            parts = [enc(facts)[1:-1]] if facts else []
        self._facts[node["id"]] = (facts, len(facts), parts)
        # sorted keys: everything before "facts", the facts, everything after
        before = enc({k: v for k, v in node.items() if k < "facts"})[1:-1]
        after = enc({k: v for k, v in node.items() if k > "facts"})[1:-1]
        fields = [f for f in (before, '"facts":[' + ",".join(parts) + "]", after) if f]
        return "{" + ",".join(fields) + "}"


def snapshot_texts(
    nodes: dict[str, dict[str, Any]], dirty: set[str], index: HashIndex, encoder: NodeEncoder
) -> dict[str, str]:
    """Hash the nodes changed since the last snapshot into ``index``; return their canonical
    JSON (parsed only if a caller needs the dicts)."""
    changed: dict[str, str] = {}
    for nid in sorted(dirty, key=_num):
        text = encoder.encode(nodes[nid])
        index.set(nid, hashlib.sha256(text.encode("utf-8")).hexdigest())
        changed[nid] = text
    return changed


def snapshot_delta(
    nodes: dict[str, dict[str, Any]], dirty: set[str], index: HashIndex
) -> dict[str, dict[str, Any]]:
    """Hash the nodes changed since the last snapshot into ``index`` and return independent
    copies of them (canonical JSON once per node: it gives the hash and, parsed, the copy)."""
    changed: dict[str, dict[str, Any]] = {}
    for nid in sorted(dirty, key=_num):
        text = jr.canonical(nodes[nid])
        index.set(nid, hashlib.sha256(text.encode("utf-8")).hexdigest())
        changed[nid] = json.loads(text)
    return changed


@dataclass
class VerifyReport:
    ok: bool
    events: int
    sessions: int
    nodes: int
    snapshots: int
    residue_lines: int
    first_bad_seq: int | None = None
    problem: str = ""

    def summary(self) -> str:
        if self.ok:
            extra = (
                f"; {self.residue_lines} uncommitted line(s) after the last commit ignored"
                if self.residue_lines
                else ""
            )
            return (
                f"ok: {self.events} events, hash chain intact; replay reproduces {self.nodes} nodes, "
                f"{self.sessions} session records and {self.snapshots} snapshots{extra}"
            )
        where = f" at seq {self.first_bad_seq}" if self.first_bad_seq is not None else ""
        return f"FAILED{where}: {self.problem}"


def _touched(kind: str, node: str | None, data: dict[str, Any]) -> list[str]:
    ids = [node] if node else []
    if kind == "nodes_merged":
        ids.append(data["into"])
    elif kind == "decay_applied":
        ids.extend(data["nodes"])
    return ids


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
        import copy

        for nid in ids:
            if nid not in self.copied and nid in self.state.nodes:
                self.state.nodes[nid] = copy.deepcopy(self.state.nodes[nid])
                self.copied.add(nid)


class Batch:
    """A unit of change. Events are validated and folded into a working copy as they are
    emitted, so later logic in the same batch sees them; nothing touches disk until commit."""

    def __init__(self, ledger: Ledger, session: int, marker: str, label: str) -> None:
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

    def node(self, node_id: str) -> dict[str, Any]:
        if node_id not in self.state.nodes:
            raise TransitionError(f"unknown node {node_id!r}")
        return self.state.nodes[node_id]

    def nodes(self) -> dict[str, dict[str, Any]]:
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
        ids = _touched(kind, node, clean)
        self.work.prepare(ids)
        try:
            fold_event(self.state, body)
        except CorruptLedgerError as err:
            raise TransitionError(str(err).replace(f"event seq {body['seq']}: ", "")) from None
        line, digest = jr.encode_event(body)
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
        changed = snapshot_delta(self.state.nodes, self._dirty_since_snapshot, self._hashes)
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
                "changed": changed,
            }
        )
        self._dirty_since_snapshot = set()
        return ev

    def record_session(self, record: SessionRecord | dict[str, Any]) -> None:
        data = record.model_dump(mode="json") if isinstance(record, SessionRecord) else dict(record)
        self.emit(SessionRecorded.model_validate(data))

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
        self.ledger._apply_batch(self)

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


class Ledger:
    def __init__(self, path: Path, *, write: bool, clock: Callable[[], str] | None = None) -> None:
        self.path = Path(path)
        self.write = write
        self.clock: Callable[[], str] = clock or utc_now
        self._lock = WriterLock(self.path) if write else None
        self._state = FoldState()
        self._last_seq = 0
        self._last_hash = jr.GENESIS
        self._hindex = HashIndex()
        self._dirty_since_snapshot: set[str] = set()
        self._store: ProjectionStore | None = None
        self.recovered: str | None = None  # what open() cut off or rebuilt, if anything
        #: hook for crash tests: called between the journal fsync and the projection write
        self._after_journal_hook: Callable[[], None] | None = None

    # -- construction -------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | Path,
        meta: RunMeta,
        *,
        actor: str = "system",
        clock: Callable[[], str] | None = None,
        exist_ok: bool = False,
    ) -> Ledger:
        p = Path(path)
        if (p / JOURNAL_FILE).exists():
            if exist_ok:
                return cls.open(p, write=True, clock=clock)
            raise LedgerError(f"{p} already holds a ledger")
        if p.exists() and any(p.iterdir()):
            raise LedgerError(f"{p} exists and is not empty; choose a new directory")
        p.mkdir(parents=True, exist_ok=True)
        (p / SOURCES_DIR).mkdir(exist_ok=True)
        led = cls(p, write=True, clock=clock)
        assert led._lock is not None
        led._lock.acquire()
        led._store = ProjectionStore(p, create=True)
        if not meta.created_at:
            meta = meta.model_copy(update={"created_at": led.clock()})
        with led.batch(session=0, marker="batch_committed", label="create") as b:
            b.emit(LedgerCreated.model_validate(meta.model_dump(mode="json")), actor=actor)
            if meta.config not in ("A", "B"):
                b.create_node(meta.seed, parent=None, origin="seed", actor=actor)
        return led

    @classmethod
    def open(
        cls, path: str | Path, *, write: bool = False, clock: Callable[[], str] | None = None
    ) -> Ledger:
        p = Path(path)
        if not p.exists():
            raise NotALedgerError(f"no such ledger: {p}")
        if not p.is_dir() or not (p / JOURNAL_FILE).exists():
            raise NotALedgerError(f"not a ledger (no {JOURNAL_FILE}): {p}")
        led = cls(p, write=write, clock=clock)
        if led._lock is not None:
            led._lock.acquire()
        try:
            led._load()
        except BaseException:
            led.close()
            raise
        return led

    def _load(self) -> None:
        # A reader takes no lock: a writer may commit between our reading the journal and the
        # projection, which then looks *ahead* of the journal. Read both again in that case.
        for attempt in range(5):
            try:
                self._load_once()
                return
            except _ProjectionAhead as ahead:
                if self.write or attempt == 4:
                    raise ahead.error from None
                if self._store is not None:
                    self._store.close()
                    self._store = None

    def _load_once(self) -> None:
        jpath = self.path / JOURNAL_FILE
        # the whole chain is checked on every open (no JSON parsing: ~2 us a line); a damaged
        # line anywhere raises naming the file and seq, before anything is written
        last_seq, last_hash, committed, residue_lines = jr.chain_tail(jpath)
        size = jpath.stat().st_size
        residue_note = None
        if size > committed:
            # what follows the last commit marker is an interrupted batch: never applied
            residue_note = (
                f"cut off {residue_lines} line(s) of an interrupted batch after seq {last_seq}"
                if self.write
                else f"ignoring {residue_lines} uncommitted line(s) after seq {last_seq}"
            )
        self._last_seq, self._last_hash = last_seq, last_hash
        store = ProjectionStore(self.path, create=True)
        self._store = store
        meta = store.meta()
        proj_seq = int(meta.get("last_seq", 0)) if meta else 0
        if meta and proj_seq > last_seq:
            raise _ProjectionAhead(
                CorruptLedgerError(
                    f"{store.path}: projection is at seq {proj_seq} but the journal ends at seq {last_seq}",
                    path=str(store.path),
                    seq=last_seq,
                )
            )
        rebuild = None
        if (
            meta
            and proj_seq == last_seq
            and meta.get("last_hash") == last_hash
            and meta.get("format") == FORMAT
        ):
            self._state = self._state_from_projection(store, meta)
        elif meta and proj_seq == last_seq and meta.get("last_hash") != last_hash:
            replay(self.path)  # a bad event in the journal is the likelier cause: name its seq
            raise CorruptLedgerError(
                f"{store.path}: projection hash does not match journal seq {last_seq}",
                path=str(store.path),
                seq=last_seq,
            )
        else:
            # projection behind the journal (crash between journal fsync and projection
            # write), or missing: the journal is the source of truth, rebuild from it. A bad
            # event raises here naming its seq, before anything is written.
            rebuild = replay(self.path)
            self._state = rebuild.state
            self._hindex = HashIndex({nid: node_hash(n) for nid, n in rebuild.state.nodes.items()})
            self._dirty_since_snapshot = set(rebuild.dirty_since_snapshot)
        notes = []
        if residue_note:
            notes.append(residue_note)
            if self.write:
                jr.truncate_to(jpath, committed)
        if rebuild is not None:
            notes.append(
                f"projection rebuilt from the journal (was at seq {proj_seq}, journal at {last_seq})"
            )
            if self.write:
                store.rewrite(rebuild.tables())
                store.replace_meta(self._projection_meta())
                store.flush()
        self.recovered = "; ".join(notes) or None

    def _state_from_projection(self, store: ProjectionStore, meta: dict[str, Any]) -> FoldState:
        st = FoldState()
        st.meta = meta.get("run")
        st.nodes = {d["id"]: d for d in store.table_rows("nodes")}
        st.sessions = {int(d["session"]): d for d in store.table_rows("sessions")}
        st.failed = store.table_rows("failed")
        st.sources = {d["id"]: d for d in store.table_rows("sources")}
        st.node_counter = int(meta.get("node_counter", 0))
        st.evidence_counter = int(meta.get("evidence_counter", 0))
        st.downgrade_counter = int(meta.get("downgrade_counter", 0))
        st.last_session = int(meta.get("last_session", 0))
        if "node_hash_lines" in meta:
            self._hindex = HashIndex.from_text(str(meta["node_hash_lines"]))
        else:  # projections written before the hash lines were stored as one text
            self._hindex = HashIndex(dict(meta.get("node_hashes", {})))
        if self._hindex.keys() != set(st.nodes):
            self._hindex = HashIndex({nid: node_hash(n) for nid, n in st.nodes.items()})
        self._dirty_since_snapshot = set(meta.get("dirty_since_snapshot", []))
        return st

    def _projection_meta(self) -> dict[str, Any]:
        st = self._state
        return {
            "format": FORMAT,
            "run": st.meta,
            "last_seq": self._last_seq,
            "last_hash": self._last_hash,
            "node_counter": st.node_counter,
            "evidence_counter": st.evidence_counter,
            "downgrade_counter": st.downgrade_counter,
            "last_session": st.last_session,
            "node_hash_lines": self._hindex.text(),
            "dirty_since_snapshot": sorted(self._dirty_since_snapshot),
        }

    # -- lifecycle ----------------------------------------------------------------
    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- batches ------------------------------------------------------------------
    def batch(self, session: int, *, marker: str = "session_committed", label: str = "") -> Batch:
        if not self.write:
            raise LedgerError(f"ledger {self.path} is open read-only")
        return Batch(self, session, marker, label)

    def _apply_batch(self, b: Batch) -> None:
        assert self._store is not None
        jpath = self.path / JOURNAL_FILE
        # the commit point: one write + fsync of the whole batch
        jr.append_batch(jpath, b.lines)
        if self._after_journal_hook is not None:
            self._after_journal_hook()
        self._state = b.state
        self._last_seq = b.seq
        self._last_hash = b.prev
        self._hindex = b._hashes
        for nid in b._dirty_since_snapshot:  # the others were hashed by the batch's snapshot
            self._hindex.set(nid, node_hash(self._state.nodes[nid]))
        self._dirty_since_snapshot = b._dirty_since_snapshot
        store = self._store
        with store.lock:
            store.put_nodes({nid: self._state.nodes[nid] for nid in b.changed})
            store.insert_rows("sessions", b.session_rows)
            store.insert_rows("failed", b.failed_rows)
            store.insert_rows("snapshots", b.snapshots)
            store.insert_rows("sources", b.source_rows)
            store.replace_meta(self._projection_meta())
            store.flush()

    # -- reading ------------------------------------------------------------------
    @property
    def meta(self) -> RunMeta:
        if self._state.meta is None:
            raise CorruptLedgerError(f"{self.path}: ledger has no ledger_created event")
        return RunMeta.model_validate(self._state.meta)

    @property
    def last_seq(self) -> int:
        return self._last_seq

    @property
    def last_session(self) -> int:
        return self._state.last_session

    def raw_nodes(self) -> dict[str, dict[str, Any]]:
        """The projection's node dicts (do not mutate)."""
        return self._state.nodes

    def nodes(self) -> list[Node]:
        return [Node.model_validate(n) for n in self._state.nodes.values()]

    def node(self, node_id: str) -> Node:
        if node_id not in self._state.nodes:
            raise TransitionError(f"unknown node {node_id!r} in {self.path}")
        return Node.model_validate(self._state.nodes[node_id])

    def session_record(self, session: int) -> SessionRecord | None:
        rec = self._state.sessions.get(session)
        return SessionRecord.model_validate(rec) if rec is not None else None

    def session_records(self) -> list[SessionRecord]:
        return [
            SessionRecord.model_validate(self._state.sessions[k])
            for k in sorted(self._state.sessions)
        ]

    def failed_sessions(self) -> list[dict[str, Any]]:
        return list(self._state.failed)

    def sources(self) -> list[Source]:
        return [Source.model_validate(s) for s in self._state.sources.values()]

    def snapshot_index(self) -> list[tuple[int, str, int]]:
        assert self._store is not None
        rows = self._store.table_rows("snapshots")
        return sorted(((r["session"], r["stage"], r["seq"]) for r in rows), key=lambda x: x[2])

    def snapshot(self, session: int, stage: str | None = None) -> dict[str, dict[str, Any]]:
        """Nodes as they stood after ``session`` (its last snapshot, or the given stage)."""
        assert self._store is not None
        rows = sorted(self._store.table_rows("snapshots"), key=lambda r: r["seq"])
        target = None
        for r in rows:
            if r["session"] == session and (stage is None or r["stage"] == stage):
                target = r["seq"]
        if target is None:
            what = f"stage {stage!r} of session {session}" if stage else f"session {session}"
            raise LedgerError(f"no snapshot for {what} in {self.path}")
        nodes: dict[str, dict[str, Any]] = {}
        for r in rows:
            if r["seq"] > target:
                break
            nodes.update(r["changed"])
        return nodes

    def rendering(self, session: int) -> str:
        """The rendering session ``session`` received (its saved input, verbatim) or, for a session
        not yet run, the rendering it would receive from the current state."""
        rec = self._state.sessions.get(session)
        if rec is not None and "rendering" in rec.get("inputs", {}):
            return str(rec["inputs"]["rendering"])
        return render_session_input(self.state_before(session), session)

    def state_before(self, session: int) -> dict[str, dict[str, Any]]:
        """Nodes as they stood when ``session`` began (recomputed from snapshots)."""
        if session > self.last_session:
            return self._state.nodes
        if session <= 1:
            return self._initial_nodes()
        return self.snapshot(session - 1)

    def _initial_nodes(self) -> dict[str, dict[str, Any]]:
        st = FoldState()
        for ev in jr.scan(self.path / JOURNAL_FILE).events:
            if ev["session"] > 0:
                break
            fold_event(st, ev)
        return st.nodes

    def events(self, node: str | None = None) -> list[Event]:
        out = []
        for ev in jr.scan(self.path / JOURNAL_FILE).events:
            if node is None or _mentions(ev, node):
                out.append(Event.model_validate(ev))
        return out

    def verify(self) -> VerifyReport:
        return verify(self.path)

    def source_text(self, source_id: str) -> str:
        src = self._state.sources.get(source_id)
        if src is None:
            raise TransitionError(f"unknown source {source_id!r}")
        return (self.path / src["path"]).read_text(encoding="utf-8")

    def delete(self) -> None:  # pragma: no cover - convenience for scripts
        self.close()
        shutil.rmtree(self.path)


class _ProjectionAhead(Exception):
    def __init__(self, error: CorruptLedgerError) -> None:
        super().__init__(str(error))
        self.error = error


def _mentions(ev: dict[str, Any], node: str) -> bool:
    if ev["node"] == node:
        return True
    d = ev["data"]
    return d.get("into") == node or (ev["kind"] == "decay_applied" and node in d.get("nodes", []))


@dataclass
class ReplayResult:
    state: FoldState
    events: int
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    dirty_since_snapshot: set[str] = field(default_factory=set)
    residue_lines: int = 0
    last_hash: str = jr.GENESIS

    def snapshot_rows(self) -> list[dict[str, Any]]:
        """The snapshot rows as the projection stores them (deltas parsed into dicts)."""
        rows = []
        for r in self.snapshots:
            row = {k: v for k, v in r.items() if k != "changed_json"}
            row["changed"] = {nid: json.loads(t) for nid, t in r["changed_json"].items()}
            rows.append(row)
        return rows

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        st = self.state
        return {
            "nodes": list(st.nodes.values()),
            "sessions": [st.sessions[k] for k in sorted(st.sessions)],
            "failed": list(st.failed),
            "snapshots": self.snapshot_rows(),
            "sources": list(st.sources.values()),
        }


def replay(path: Path, *, check_snapshots: bool = True) -> ReplayResult:
    """Fold the committed journal from seq 1. Raises CorruptLedgerError naming the first bad seq."""
    scan = jr.scan(path / JOURNAL_FILE)
    st = FoldState()
    index = HashIndex()
    encoder = NodeEncoder()
    dirty: set[str] = set()
    snaps: list[dict[str, Any]] = []
    for ev in scan.events:
        seq = ev["seq"]
        kind = ev["kind"]
        if kind not in EVENT_KINDS:
            raise CorruptLedgerError(
                f"{path / JOURNAL_FILE}: seq {seq}: unknown event kind {kind!r}", seq=seq
            )
        if seq == 1 and kind != "ledger_created":
            raise CorruptLedgerError(
                f"{path / JOURNAL_FILE}: seq 1 is {kind}, not ledger_created", seq=seq
            )
        validate_data(kind, ev["data"], seq=seq, dump=False)
        try:
            fold_event(st, ev)
        except CorruptLedgerError as err:
            raise CorruptLedgerError(f"{path / JOURNAL_FILE}: {err}", seq=seq) from None
        ids = [i for i in _touched(kind, ev["node"], ev["data"]) if i in st.nodes]
        dirty.update(ids)
        if kind == "snapshot_written" and check_snapshots:
            changed = snapshot_texts(st.nodes, dirty, index, encoder)
            digest = index.digest()
            if digest != ev["data"]["state_hash"]:
                raise CorruptLedgerError(
                    f"{path / JOURNAL_FILE}: seq {seq}: snapshot state hash does not match the fold",
                    seq=seq,
                )
            snaps.append(
                {
                    "session": ev["session"],
                    "stage": ev["data"]["stage"],
                    "seq": seq,
                    "state_hash": digest,
                    "node_count": len(st.nodes),
                    "changed_json": changed,  # canonical JSON per node; see snapshot_rows()
                }
            )
            dirty = set()
    return ReplayResult(
        state=st,
        events=len(scan.events),
        snapshots=snaps,
        dirty_since_snapshot=dirty,
        residue_lines=scan.residue_lines,
        last_hash=scan.last_hash,
    )


def verify(path: str | Path) -> VerifyReport:
    """Check the hash chain and that folding the journal reproduces the projection and every
    stored snapshot exactly."""
    p = Path(path)
    if not (p / JOURNAL_FILE).exists():
        raise NotALedgerError(f"not a ledger (no {JOURNAL_FILE}): {p}")
    try:
        result = replay(p)
    except CorruptLedgerError as err:
        return VerifyReport(False, 0, 0, 0, 0, 0, first_bad_seq=err.seq, problem=str(err))
    st = result.state
    store = ProjectionStore(p, create=False) if (p / "ledger.json").exists() else None
    base = VerifyReport(
        True,
        result.events,
        len(st.sessions),
        len(st.nodes),
        len(result.snapshots),
        result.residue_lines,
    )
    if store is None:
        base.ok, base.problem = False, "ledger.json (projection) is missing"
        return base
    try:
        meta = store.meta()
        last_seq = result.events
        if meta.get("last_seq") != last_seq:
            base.ok = False
            base.first_bad_seq = min(int(meta.get("last_seq", 0)), last_seq) + 1
            base.problem = (
                f"projection is at seq {meta.get('last_seq')} but the journal at {last_seq}"
            )
            return base
        if meta.get("last_hash") != result.last_hash:
            base.ok = False
            base.first_bad_seq = last_seq
            base.problem = f"projection's last hash does not match the journal at seq {last_seq}"
            return base
        proj_nodes = {d["id"]: d for d in store.table_rows("nodes")}
        if jr.canonical(proj_nodes) != jr.canonical(st.nodes):
            bad = sorted(
                (set(proj_nodes) ^ set(st.nodes))
                | {
                    k
                    for k in st.nodes
                    if k in proj_nodes and jr.canonical(proj_nodes[k]) != jr.canonical(st.nodes[k])
                },
                key=lambda x: int(x[1:]),
            )
            base.ok = False
            base.first_bad_seq = _last_event_for(p, bad[0]) if bad else None
            base.problem = f"projection differs from the replay at node(s) {', '.join(bad[:5])}"
            return base
        proj_sessions = {int(d["session"]): d for d in store.table_rows("sessions")}
        if jr.canonical({str(k): v for k, v in proj_sessions.items()}) != jr.canonical(
            {str(k): v for k, v in st.sessions.items()}
        ):
            base.ok, base.problem = False, "projection session records differ from the replay"
            return base
        stored = sorted(store.table_rows("snapshots"), key=lambda r: r["seq"])
        if len(stored) != len(result.snapshots):
            base.ok = False
            base.problem = (
                f"projection holds {len(stored)} snapshots, the journal {len(result.snapshots)}"
            )
            return base
        # equal deltas at every snapshot <=> equal accumulated states at every snapshot
        for s_row, r_row in zip(stored, result.snapshots, strict=True):
            s_changed = s_row["changed"]
            r_changed = r_row["changed_json"]
            if (
                s_row["seq"] != r_row["seq"]
                or set(s_changed) != set(r_changed)
                or any(jr.canonical(s_changed[k]) != t for k, t in r_changed.items())
            ):
                base.ok = False
                base.first_bad_seq = r_row["seq"]
                base.problem = f"stored snapshot after session {r_row['session']} ({r_row['stage']}) differs from the replay"
                return base
        return base
    finally:
        store.close()


def _last_event_for(path: Path, node: str) -> int | None:
    last = None
    for ev in jr.scan(path / JOURNAL_FILE).events:
        if _mentions(ev, node):
            last = ev["seq"]
    return last


def iter_ledgers(root: str | Path) -> Iterator[Path]:
    """Ledger directories directly under ``root`` (or ``root`` itself if it is one)."""
    r = Path(root)
    if (r / JOURNAL_FILE).exists():
        yield r
        return
    if r.is_dir():
        for child in sorted(r.iterdir()):
            if (child / JOURNAL_FILE).exists():
                yield child
