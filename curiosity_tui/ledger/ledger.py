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

import copy
import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.errors import CorruptLedgerError, LedgerError, NotALedgerError, TransitionError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.batch import Batch, valid_actor
from curiosity_tui.ledger.events import FoldState, LedgerCreated, fold_event
from curiosity_tui.ledger.hashing import HashIndex, node_hash, state_hash
from curiosity_tui.ledger.head_position import refuse_if_ahead
from curiosity_tui.ledger.identity import created_data, identity_mismatch
from curiosity_tui.ledger.journal import JOURNAL_FILE
from curiosity_tui.ledger.models import Event, RunMeta, SessionRecord, Source
from curiosity_tui.ledger.node_record import NodeRecord
from curiosity_tui.ledger.node_text import NodeTexts
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.ledger.replay import (
    ReplayResult,
    VerifyReport,
    mentions,
    replay,
    snapshot_line,
    verify,
)
from curiosity_tui.ledger.snapshot_tail import parse_snapshot_tail
from curiosity_tui.ledger.store import (
    Head,
    LegacyLayout,
    ProjectionDamaged,
    ProjectionStore,
    WriterLock,
    node_line,
    read_head,
    read_head_quiet,
    row_line,
)
from curiosity_tui.provenance import current as current_provenance

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
FORMAT = 2


class Ledger:
    def __init__(self, path: Path, *, write: bool, clock: Callable[[], str] | None = None) -> None:
        self.path = Path(path)
        self.write = write
        self.clock: Callable[[], str] = clock or utc_now_micro
        self._lock = WriterLock(self.path) if write else None
        self._fold = FoldState()
        self._lazy_nodes = False  # a reader's nodes are read from the projection on first use
        self._last_seq = 0
        self._last_hash = jr.GENESIS
        self._hindex = HashIndex()
        self._dirty_since_snapshot: set[str] = set()
        self._node_texts = NodeTexts()  # canonical node texts across batches (decision 245)
        self._store: ProjectionStore | None = None
        self._journal_offset = 0
        self._sessions_complete = True  # False: session records not read from the projection yet
        self._snap_rows: list[dict[str, Any]] | None = None  # snapshot rows once read
        self._projection_stale = False  # a projection write failed: rebuilt on the next open
        self.recovered: str | None = None  # what open() cut off or rebuilt, if anything
        #: the head's run metadata disagreed with the journal's ledger_created (identity.py)
        self.identity_problem: str | None = None
        #: set when a commit reached the journal but its projection write failed
        self.warning: str | None = None
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
        led._store = ProjectionStore(p)
        if not meta.created_at:
            meta = meta.model_copy(update={"created_at": led.clock()})
        if meta.provenance is None:  # what created it (issue 23.3)
            meta = meta.model_copy(update={"provenance": current_provenance()})
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
        # A reader takes no lock: a writer may commit between our reading the head and the
        # journal (the head then looks behind), or compact a file the head names. Read again
        # in that case; only what persists is reported and replayed.
        for attempt in range(6):
            retry = self._load_once(last_try=self.write or attempt == 5)
            if not retry:
                return
            time.sleep(0.005 * (attempt + 1))

    def _load_once(self, *, last_try: bool) -> bool:
        """Open from the projection if it checks out against the journal, else from the
        journal's replay (rebuilding the projection when writing). True: try again."""
        jpath = self.path / JOURNAL_FILE
        store = ProjectionStore(self.path)
        self._store = store
        self.identity_problem = None
        head, problem, legacy = None, "", False
        try:
            head = store.head = read_head(self.path)
        except ProjectionDamaged as err:
            problem = str(err)
        except LegacyLayout:
            legacy = True
        last_seq, last_hash, committed, residue = self._journal_tail(jpath, head)
        refuse_if_ahead(self.path, jpath, head, last_seq)  # before anything is written
        if head is not None and (head.last_seq, head.last_hash) != (last_seq, last_hash):
            if head.last_seq < last_seq and jr.checkpoint_holds(
                jpath, head.last_seq, head.last_hash, head.journal_offset
            ):
                if not last_try:
                    return True  # a writer is between its journal append and its head
                problem = f"behind (at seq {head.last_seq}, journal at {last_seq})"
            else:
                problem = f"{store.path}: does not match the journal at seq {head.last_seq}"
            head = store.head = None
        elif head is not None and self.write and head.journal_offset != committed:
            problem = f"{store.path}: its journal offset does not match the journal"
            head = store.head = None
        self._last_seq, self._last_hash = last_seq, last_hash
        if head is not None:
            try:
                self._state_from_head(store, head)
            except ProjectionDamaged as err:
                if not last_try and read_head_quiet(self.path) != head:
                    return True  # the writer moved on while we read
                problem, head = str(err), None
                store.head = None
        notes = []
        if residue:
            # what follows the last commit marker is an interrupted batch: never applied
            notes.append(
                f"cut off {residue} line(s) of an interrupted batch after seq {last_seq}"
                if self.write
                else f"ignoring {residue} uncommitted line(s) after seq {last_seq}"
            )
            if self.write:
                jr.truncate_to(jpath, committed)
        if head is None:
            note = self._from_replay(store, problem, legacy, committed)
            if note:
                notes.append(note)
        elif self.write:
            store.remove_strays()
        self.recovered = "; ".join(notes) or None
        return False

    def _journal_tail(self, jpath: Path, head: Head | None) -> tuple[int, str, int, int]:
        """The journal's last committed seq, hash, offset and residue. A reader checks the
        chain only after the head's checkpoint when it holds (the whole chain is ``verify``'s
        job); a writer, which will extend the chain, checks all of it."""
        if (
            not self.write
            and head is not None
            and jr.checkpoint_holds(jpath, head.last_seq, head.last_hash, head.journal_offset)
        ):
            return jr.chain_tail(
                jpath,
                start_seq=head.last_seq + 1,
                prev_hash=head.last_hash,
                offset=head.journal_offset,
            )
        return jr.chain_tail(jpath)

    def _from_replay(self, store: ProjectionStore, problem: str, legacy: bool, offset: int) -> str:
        """Fold the journal (the source of truth); a writer rewrites the projection from it.
        A bad event raises here naming its seq, before anything is written."""
        rebuild = replay(self.path, keep_snapshots=True, until_seq=self._last_seq)
        self._lazy_nodes = False
        self._state = rebuild.state
        self._hindex = rebuild.hashes
        self._dirty_since_snapshot = set(rebuild.dirty_since_snapshot)
        self._sessions_complete = True
        self._snap_rows = rebuild.snapshot_rows()
        if self.write:
            store.rewrite(self._head_fields(offset), rebuild.table_lines(), len(self._state.nodes))
            self._journal_offset = offset
        if legacy:
            return "projection converted to the append-only layout" if self.write else ""
        what = problem if problem.startswith("behind") else f"damaged: {problem}"
        if not problem:
            what = "missing"
        if self.write:
            return f"projection rebuilt from the journal (it was {what})"
        return f"projection {what}; read from the journal's replay, rebuilt on the next write"

    def _state_from_head(self, store: ProjectionStore, head: Head) -> None:
        """Counters from the checked head, failed sessions and sources from their tables. A
        writer reads the nodes now and checks every table's chain; a reader checks only that
        the node table is all there and reads it when first asked (``_ensure_nodes``). Session
        records and snapshots are read when first asked for."""
        mismatch = identity_mismatch(head.run, created_data(self.path))
        if mismatch is not None:
            self.identity_problem = f"{store.path}: {mismatch}"
            raise ProjectionDamaged(self.identity_problem)
        st = FoldState()
        st.meta = head.run
        st.node_counter = head.node_counter
        st.evidence_counter = head.evidence_counter
        st.downgrade_counter = head.downgrade_counter
        st.last_session = head.last_session
        try:
            st.failed = store.table_rows("failed")
            st.sources = {d["id"]: d for d in store.table_rows("sources")}
        except (KeyError, TypeError) as err:
            raise ProjectionDamaged(f"{store.rows_dir}: malformed row ({err})") from None
        self._fold = st
        self._dirty_since_snapshot = set(head.dirty_since_snapshot)
        self._journal_offset = head.journal_offset
        self._sessions_complete = False
        self._snap_rows = None
        if self.write:
            self._read_nodes(store, head)
            store.check_chains(skip=("nodes", "failed", "sources"))
        else:
            store.check_size("nodes")
            self._lazy_nodes = True

    def _read_nodes(self, store: ProjectionStore, head: Head) -> None:
        nodes: dict[str, NodeRecord] = {}  # as the fold wrote them (their hashes are checked)
        hashes: dict[str, str] = {}
        try:
            for r in store.table_rows("nodes"):
                node, digest = r["n"], r["h"]
                if type(digest) is not str or len(digest) != 64:
                    raise TypeError("node hash")
                nodes[node["id"]] = node
                hashes[node["id"]] = digest
        except (KeyError, TypeError) as err:
            raise ProjectionDamaged(f"{store.rows_dir}: malformed node row ({err})") from None
        if len(nodes) != head.live_nodes:
            raise ProjectionDamaged(
                f"{store.rows_dir}: {len(nodes)} nodes, the head records {head.live_nodes}"
            )
        self._fold.nodes = nodes
        if self.write:  # only a batch needs the hash index (a reader never opens one)
            self._hindex = HashIndex(hashes)

    def _ensure_nodes(self) -> None:
        """A reader's nodes, read on first use. If the node table turns out damaged (or a
        writer rebuilt the projection since we opened), the journal is folded instead."""
        if not self._lazy_nodes:
            return
        self._lazy_nodes = False
        store = self._store
        head = store.head if store is not None else None
        try:
            if store is None or head is None:
                raise ProjectionDamaged("closed")
            self._read_nodes(store, head)
        except ProjectionDamaged as err:
            moved = read_head_quiet(self.path) != head
            result = replay(self.path, until_seq=self._last_seq)
            self._fold.nodes = result.state.nodes
            self._hindex = result.hashes
            if not moved:
                note = f"projection damaged ({err}); read from the journal's replay"
                self.recovered = f"{self.recovered}; {note}" if self.recovered else note

    @property
    def _state(self) -> FoldState:
        self._ensure_nodes()
        return self._fold

    @_state.setter
    def _state(self, st: FoldState) -> None:
        self._fold = st

    def _head_fields(self, journal_offset: int) -> dict[str, Any]:
        st = self._state
        return {
            "run": st.meta,
            "last_seq": self._last_seq,
            "last_hash": self._last_hash,
            "journal_offset": journal_offset,
            "node_counter": st.node_counter,
            "evidence_counter": st.evidence_counter,
            "downgrade_counter": st.downgrade_counter,
            "last_session": st.last_session,
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
        offset = jr.append_batch(jpath, b.lines, expect_size=self._journal_offset)
        if self._after_journal_hook is not None:
            self._after_journal_hook()
        self._state = b.state
        self._last_seq = b.seq
        self._last_hash = b.prev
        self._journal_offset = offset
        self._hindex = b._hashes
        texts: dict[str, str] = {}  # each node's text at the batch's last snapshot of it
        snap_lines = []
        for r in b.snapshots:
            texts.update(r["changed_texts"])
            snap_lines.append(
                snapshot_line(
                    r["session"], r["seq"], r["stage"], r["state_hash"], r["node_count"],
                    r["changed_texts"],
                )
            )  # fmt: skip
        node_lines = []
        for nid in sorted(b.changed, key=lambda x: int(x[1:])):
            text = texts.get(nid) if nid not in b._dirty_since_snapshot else None
            digest = self._hindex.get(nid) if text is not None else None
            if text is None or digest is None:
                text = self._node_texts.text(self._state.nodes[nid])
                digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
                self._hindex.set(nid, digest)
            node_lines.append(node_line(text, digest))
        self._dirty_since_snapshot = b._dirty_since_snapshot
        if self._snap_rows is not None:
            self._snap_rows.extend(json.loads(line) for line in snap_lines)
        if not self._projection_stale:
            self._write_projection(b, node_lines, snap_lines)

    def _write_projection(self, b: Batch, node_lines: list[bytes], snap_lines: list[bytes]) -> None:
        """Append the batch's rows and replace the head. A failure here (disk full) leaves the
        committed batch in the journal and the projection behind (rebuilt by the next writer);
        the OSError goes on to ``Batch.commit``, which reports the batch as committed and the
        projection as behind, in one line (ledger/commit_errors.py): the run stops there."""
        store = self._store
        assert store is not None
        fields = self._head_fields(self._journal_offset)
        live = len(self._state.nodes)
        appends = {
            "nodes": node_lines,
            "sessions": [row_line(r) for r in b.session_rows],
            "failed": [row_line(r) for r in b.failed_rows],
            "snapshots": snap_lines,
            "sources": [row_line(r) for r in b.source_rows],
        }
        try:
            with store.lock:
                if store.head is None:  # a new ledger: its first batch is everything
                    store.rewrite(fields, appends, live)
                else:
                    store.commit(fields, appends, live)
                if store.needs_compaction():
                    store.rewrite(fields, {"nodes": self._all_node_lines()}, live)
        except OSError as err:
            self._projection_stale = True
            self.warning = (
                f"{err.filename or store.path}: projection not updated ({err.strerror or err}); session "
                f"{b.session} is committed to the journal, the projection is rebuilt on next open"
            )
            raise

    def _all_node_lines(self) -> list[bytes]:
        hashes = self._hindex.as_dict()
        nodes = self._state.nodes
        return [
            node_line(self._node_texts.text(nodes[nid]), hashes[nid])
            for nid in sorted(nodes, key=lambda x: int(x[1:]))
        ]

    # -- reading ------------------------------------------------------------------
    @property
    def meta(self) -> RunMeta:
        if self._fold.meta is None:
            raise CorruptLedgerError(f"{self.path}: ledger has no ledger_created event")
        return RunMeta.model_validate(self._fold.meta)

    @property
    def last_seq(self) -> int:
        return self._last_seq

    @property
    def last_session(self) -> int:
        return self._fold.last_session

    def raw_nodes(self) -> dict[str, NodeRecord]:
        """The projection's node dicts (do not mutate)."""
        return self._state.nodes

    def nodes(self) -> list[NodeRecord]:
        """Copies of the nodes (changing one changes nothing stored)."""
        return copy.deepcopy(list(self._state.nodes.values()))

    def node(self, node_id: str) -> NodeRecord:
        """A copy of node ``node_id`` (changing it changes nothing stored)."""
        if node_id not in self._state.nodes:
            raise TransitionError(f"unknown node {node_id!r} in {self.path}")
        return copy.deepcopy(self._state.nodes[node_id])

    def raw_sessions(self) -> dict[int, dict[str, Any]]:
        """Session records as stored, by session (read on first use; do not mutate)."""
        if not self._sessions_complete:
            self._fold.sessions = self._read_sessions()
            self._sessions_complete = True
        return self._fold.sessions

    def _read_sessions(self) -> dict[int, dict[str, Any]]:
        store = self._store
        if store is not None and store.head is not None and not self._projection_stale:
            try:
                return {int(r["session"]): r for r in store.table_rows("sessions")}
            except (ProjectionDamaged, KeyError, TypeError, ValueError):
                pass  # the writer rebuilt it since we opened, or it is damaged: the journal
        out: dict[int, dict[str, Any]] = {}
        for ev in jr.JournalStream(self.path / JOURNAL_FILE):
            if ev["seq"] > self._last_seq:
                break
            if ev["kind"] == "session_recorded":
                out[ev["session"]] = dict(ev["data"])
        return out

    def session_record(self, session: int) -> SessionRecord | None:
        rec = self.raw_sessions().get(session)
        return SessionRecord.model_validate(rec) if rec is not None else None

    def session_records(self) -> list[SessionRecord]:
        sessions = self.raw_sessions()
        return [SessionRecord.model_validate(sessions[k]) for k in sorted(sessions)]

    def failed_sessions(self) -> list[dict[str, Any]]:
        return list(self._fold.failed)

    def sources(self) -> list[Source]:
        return [Source.model_validate(s) for s in self._fold.sources.values()]

    def _snapshot_rows(self) -> list[dict[str, Any]]:
        """Snapshot rows in seq order, read on first use (from the journal if the projection's
        copy is damaged or was rebuilt since this ledger was opened)."""
        if self._snap_rows is None:
            rows = None
            store = self._store
            if store is not None and store.head is not None and not self._projection_stale:
                try:
                    rows = store.table_rows("snapshots")
                    rows.sort(key=lambda r: r["seq"])
                except (ProjectionDamaged, KeyError, TypeError):
                    rows = None
            if rows is None:
                rows = replay(
                    self.path, keep_snapshots=True, until_seq=self._last_seq
                ).snapshot_rows()
            self._snap_rows = rows
        return self._snap_rows

    def snapshot_index(self) -> list[tuple[int, str, int]]:
        """(session, stage, seq) of every snapshot, in seq order. Before the rows are read
        this reads only each row's tail (decision 277): the nodes in them are not parsed."""
        if self._snap_rows is None:
            fast = self._snapshot_index_from_tails()
            if fast is not None:
                return fast
        return [(r["session"], r["stage"], r["seq"]) for r in self._snapshot_rows()]

    def _snapshot_index_from_tails(self) -> list[tuple[int, str, int]] | None:
        """The index from the checked snapshot table without parsing the ``changed`` maps; None
        when the projection cannot serve it (then the rows are read, or replayed, as before)."""
        store = self._store
        if store is None or store.head is None or self._projection_stale:
            return None
        try:
            chunks = store.table_bytes("snapshots")
        except ProjectionDamaged:
            return None
        out = []
        body = b"".join(chunks)
        for line in body[:-1].split(b"\n") if body else ():
            tail = parse_snapshot_tail(line)
            if tail is None:
                return None
            out.append(tail)
        if len(out) != store.head.files["snapshots"].rows:
            return None
        out.sort(key=lambda r: r[2])
        return out

    @property
    def dirty_since_snapshot(self) -> frozenset[str]:
        """Ids of the nodes changed since the last snapshot (the head records them)."""
        return frozenset(self._dirty_since_snapshot)

    def snapshot(self, session: int, stage: str | None = None) -> dict[str, NodeRecord]:
        """Nodes as they stood after ``session`` (its last snapshot, or the given stage)."""
        rows = self._snapshot_rows()
        target = None
        for r in rows:
            if r["session"] == session and (stage is None or r["stage"] == stage):
                target = r["seq"]
        if target is None:
            what = f"stage {stage!r} of session {session}" if stage else f"session {session}"
            raise LedgerError(f"no snapshot for {what} in {self.path}")
        nodes: dict[str, NodeRecord] = {}
        for r in rows:
            if r["seq"] > target:
                break
            nodes.update(r["changed"])
        return nodes

    def fold_snapshots(self) -> Iterator[tuple[int, str, int, dict[str, dict[str, Any]]]]:
        """Every snapshot in seq order as ``(session, stage, seq, nodes)``, in one pass: each
        state is the one before with the row's changed nodes (what :meth:`snapshot` rebuilds
        for one). ``nodes`` is one dict updated in place: copy what outlives the step."""
        nodes: dict[str, dict[str, Any]] = {}
        for r in self._snapshot_rows():
            nodes.update(r["changed"])
            yield r["session"], r["stage"], r["seq"], nodes

    def rendering(self, session: int) -> str:
        """The rendering session ``session`` received (its saved input, verbatim) or, for a session
        not yet run, the rendering it would receive from the current state."""
        rec = self.raw_sessions().get(session)
        if rec is not None and "rendering" in rec.get("inputs", {}):
            return str(rec["inputs"]["rendering"])
        return render_session_input(self.state_before(session), session)

    def state_before(self, session: int) -> dict[str, NodeRecord]:
        """Nodes as they stood when ``session`` began (recomputed from snapshots)."""
        if session > self.last_session:
            return self._state.nodes
        if session <= 1:
            return self._initial_nodes()
        return self.snapshot(session - 1)

    def _initial_nodes(self) -> dict[str, NodeRecord]:
        st = FoldState()
        for ev in jr.JournalStream(self.path / JOURNAL_FILE):
            if ev["session"] > 0:
                break
            fold_event(st, ev)
        return st.nodes

    def events(self, node: str | None = None) -> list[Event]:
        out = []
        for ev in jr.JournalStream(self.path / JOURNAL_FILE):
            if ev["seq"] > self._last_seq:
                break
            if node is None or mentions(ev, node):
                out.append(Event.model_validate(ev))
        return out

    def verify(self) -> VerifyReport:
        return verify(self.path)

    def source_text(self, source_id: str) -> str:
        src = self._fold.sources.get(source_id)
        if src is None:
            raise TransitionError(f"unknown source {source_id!r}")
        path: Path = self.path / src["path"]
        return path.read_text(encoding="utf-8")

    def delete(self) -> None:  # pragma: no cover - convenience for scripts
        self.close()
        shutil.rmtree(self.path)


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
