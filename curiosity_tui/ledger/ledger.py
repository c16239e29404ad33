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

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.errors import CorruptLedgerError, LedgerError, NotALedgerError, TransitionError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.batch import Batch, valid_actor
from curiosity_tui.ledger.events import FoldState, LedgerCreated, fold_event
from curiosity_tui.ledger.hashing import HashIndex, node_hash, state_hash
from curiosity_tui.ledger.journal import JOURNAL_FILE
from curiosity_tui.ledger.models import Event, Node, RunMeta, SessionRecord, Source
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.ledger.replay import ReplayResult, VerifyReport, mentions, replay, verify
from curiosity_tui.ledger.store import ProjectionStore, WriterLock

__all__ = [  # the names callers have imported from here since before the split
    "FORMAT",
    "JOURNAL_FILE",
    "SOURCES_DIR",
    "Batch",
    "Ledger",
    "ReplayResult",
    "VerifyReport",
    "iter_ledgers",
    "node_hash",
    "replay",
    "state_hash",
    "valid_actor",
    "verify",
]

SOURCES_DIR = "sources"
FORMAT = 1


class Ledger:
    def __init__(self, path: Path, *, write: bool, clock: Callable[[], str] | None = None) -> None:
        self.path = Path(path)
        self.write = write
        self.clock: Callable[[], str] = clock or utc_now_micro
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
            if node is None or mentions(ev, node):
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
