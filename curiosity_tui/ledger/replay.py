"""Replay and verify (S1): fold the committed journal from seq 1, and check that the hash chain
is intact and that the fold reproduces the projection and every stored snapshot."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from curiosity_tui.errors import CorruptLedgerError, NotALedgerError
from curiosity_tui.gcpause import gc_paused
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import (
    EVENT_KINDS,
    FOLD_FIELDS,
    Folder,
    FoldState,
    fold_event,
    validate_data,
)
from curiosity_tui.ledger.fastcheck import Checker, data_checker
from curiosity_tui.ledger.fieldtext import ALL_FIELDS
from curiosity_tui.ledger.hashing import (
    HashIndex,
    NodeEncoder,
    NodeHasher,
    Stale,
    node_hash,
    snapshot_delta,
    snapshot_hashes,
    snapshot_texts,
)
from curiosity_tui.ledger.journal import JOURNAL_FILE
from curiosity_tui.ledger.store import (
    Head,
    LegacyLayout,
    ProjectionDamaged,
    ProjectionStore,
    legacy_tables,
    node_line,
    read_head,
    row_line,
)


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
    note: str = ""

    def summary(self) -> str:
        if self.ok:
            extra = (
                f"; {self.residue_lines} uncommitted line(s) after the last commit ignored"
                if self.residue_lines
                else ""
            )
            extra += f"; {self.note}" if self.note else ""
            return (
                f"ok: {self.events} events, hash chain intact; replay reproduces {self.nodes} nodes, "
                f"{self.sessions} session records and {self.snapshots} snapshots{extra}"
            )
        where = f" at seq {self.first_bad_seq}" if self.first_bad_seq is not None else ""
        return f"FAILED{where}: {self.problem}"


def touched(kind: str, node: str | None, data: dict[str, Any]) -> list[str]:
    """The node ids an event changes (its node, a merge target, the decayed nodes)."""
    ids = [node] if node else []
    if kind == "nodes_merged":
        ids.append(data["into"])
    elif kind == "decay_applied":
        ids.extend(data["nodes"])
    return ids


def mentions(ev: dict[str, Any], node: str) -> bool:
    """Whether a journal event concerns ``node``."""
    if ev["node"] == node:
        return True
    d = ev["data"]
    return d.get("into") == node or (ev["kind"] == "decay_applied" and node in d.get("nodes", []))


@dataclass
class ReplayResult:
    state: FoldState
    events: int
    #: the snapshot rows as the projection stores them (canonical JSON lines), when kept
    snapshot_lines: list[bytes] = field(default_factory=list)
    snapshots: int = 0
    dirty_since_snapshot: set[str] = field(default_factory=set)
    residue_lines: int = 0
    last_hash: str = jr.GENESIS
    committed_bytes: int = 0
    hashes: HashIndex = field(default_factory=HashIndex)

    def snapshot_rows(self) -> list[dict[str, Any]]:
        """The kept snapshot rows as dicts (deltas parsed)."""
        return [json.loads(line) for line in self.snapshot_lines]

    def table_lines(self) -> dict[str, list[bytes]]:
        """Every projection table as the store writes it (for a rebuild)."""
        st = self.state
        nodes = []
        for nid in sorted(st.nodes, key=lambda x: int(x[1:])):
            text = jr.canonical(st.nodes[nid])
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            self.hashes.set(nid, digest)
            nodes.append(node_line(text, digest))
        return {
            "nodes": nodes,
            "sessions": [row_line(st.sessions[k]) for k in sorted(st.sessions)],
            "failed": [row_line(r) for r in st.failed],
            "snapshots": list(self.snapshot_lines),
            "sources": [row_line(r) for r in st.sources.values()],
        }


def snapshot_line(
    session: int, seq: int, stage: str, digest: str, count: int, changed: dict[str, str]
) -> bytes:
    """A snapshot row's canonical JSON composed from its nodes' canonical texts (sorted keys,
    so byte-identical to ``row_line`` of the row a batch stores) without re-encoding them."""
    inner = ",".join(f"{jr.canonical(nid)}:{changed[nid]}" for nid in sorted(changed))
    return (
        f'{{"changed":{{{inner}}},"node_count":{count},"seq":{seq},"session":{session},'
        f'"stage":{jr.canonical(stage)},"state_hash":"{digest}"}}\n'
    ).encode()


def replay(
    path: Path,
    *,
    check_snapshots: bool = True,
    keep_snapshots: bool = False,
    until_seq: int | None = None,
) -> ReplayResult:
    """Fold the committed journal from seq 1, streaming it (one batch in memory at a time).
    Each snapshot's state hash is checked by hashing only the nodes changed since the last
    one. Raises CorruptLedgerError naming the first bad seq. ``keep_snapshots`` keeps the
    snapshot rows (for a rebuild or ``verify``); ``until_seq`` stops after that seq.

    Node texts are re-encoded only in the fields the events since a node's last snapshot may
    change (decision 251); should a snapshot not match that way, the journal is folded again
    re-encoding every changed node whole (the definitional way), which decides."""
    with gc_paused():  # a fold allocates ~10^5 acyclic dicts and lists (decision 250)
        try:
            return _replay(path, check_snapshots, keep_snapshots, until_seq, by_field=True)
        except _FieldTextsMismatch:
            return _replay(path, check_snapshots, keep_snapshots, until_seq, by_field=False)


class _FieldTextsMismatch(Exception):
    """A snapshot's state hash differs from a fold whose node texts were kept by field."""


def _replay(
    path: Path,
    check_snapshots: bool,
    keep_snapshots: bool,
    until_seq: int | None,
    *,
    by_field: bool,
) -> ReplayResult:
    jpath = path / JOURNAL_FILE
    stream = jr.JournalStream(jpath)
    snaps = _Snapshots(jpath, keep_snapshots, by_field)
    st = snaps.state
    nodes = st.nodes
    dirty, stale = snaps.dirty, snaps.stale
    plan = _PLAN
    events = 0
    limit = sys.maxsize if until_seq is None else until_seq
    for batch in stream.batches():
        for ev in batch:
            seq = ev["seq"]
            if seq > limit:
                break
            events += 1
            kind = ev["kind"]
            node = ev["node"]
            data = ev["data"]
            check, schema, fold, needs_node, multi, fields = plan.get(kind, _UNKNOWN)
            if fold is None or seq == 1 or (needs_node and node is None):
                _fold_checked(jpath, st, ev)  # the careful path: names what is wrong
                check, schema, fold, needs_node, multi, fields = plan[kind]
            else:
                if check is None or not check(data):
                    _validate_once(schema, ev, seq)
                try:
                    fold(st, seq, ev["session"], node, ev["actor"], data)
                except CorruptLedgerError as err:
                    raise CorruptLedgerError(f"{jpath}: {err}", seq=seq) from None
            if multi:  # a kind that changes nodes other than its own
                for i in touched(kind, node, data):
                    if i in nodes:
                        dirty.add(i)
                        _mark(stale, i, fields)
            elif node is not None and node in nodes:
                dirty.add(node)
                if fields:
                    _mark(stale, node, fields)
            if kind == "snapshot_written" and check_snapshots:
                snaps.check(ev, seq, data)
                dirty, stale = snaps.dirty, snaps.stale
        else:
            continue
        break
    return snaps.result(stream, events, until_seq)


def _mark(stale: Stale, nid: str, fields: frozenset[str]) -> None:
    got = stale.get(nid)
    if got is None:
        stale[nid] = set(fields)
    else:
        got |= fields


class _Snapshots:
    """The node hashes of a fold and the check of each snapshot against them."""

    def __init__(self, jpath: Path, keep: bool, by_field: bool) -> None:
        self.jpath, self.keep, self.by_field = jpath, keep, by_field
        self.state = FoldState()
        self.index = HashIndex()
        self.encoder = NodeEncoder()
        self.hasher = NodeHasher()
        self.dirty: set[str] = set()
        self.stale: Stale = {}  # per dirty node, the fields its events may have changed
        self.kept: list[bytes] = []
        self.count = 0

    def check(self, ev: dict[str, Any], seq: int, data: dict[str, Any]) -> None:
        nodes, dirty, index = self.state.nodes, self.dirty, self.index
        if not self.by_field:  # each changed node encoded whole, as a batch's snapshot does
            changed = snapshot_delta(nodes, dirty, index)
        elif self.keep:
            changed = snapshot_texts(nodes, dirty, index, self.encoder, self.stale)
        else:
            snapshot_hashes(nodes, dirty, index, self.hasher, self.stale)
        digest = index.digest()
        if digest != data["state_hash"]:
            if self.by_field:
                raise _FieldTextsMismatch
            raise CorruptLedgerError(
                f"{self.jpath}: seq {seq}: snapshot state hash does not match the fold", seq=seq
            )
        self.count += 1
        if self.keep:
            self.kept.append(
                snapshot_line(ev["session"], seq, data["stage"], digest, len(nodes), changed)
            )
        self.dirty, self.stale = set(), {}

    def result(self, stream: jr.JournalStream, events: int, until_seq: int | None) -> ReplayResult:
        st, index = self.state, self.index
        for nid in self.dirty:  # nodes changed after the last snapshot: hashed whole
            index.set(nid, node_hash(st.nodes[nid]))
        for nid in st.nodes.keys() - index.keys():  # snapshots not checked: hash the rest
            index.set(nid, node_hash(st.nodes[nid]))
        done = until_seq is None or until_seq >= stream.last_seq
        return ReplayResult(
            state=st,
            events=events,
            snapshot_lines=self.kept,
            snapshots=self.count,
            dirty_since_snapshot=self.dirty,
            residue_lines=stream.residue_lines if done else 0,
            last_hash=stream.last_hash if done else "",
            committed_bytes=stream.committed_bytes if done else 0,
            hashes=index,
        )


def _validate_once(schema: type[BaseModel], ev: dict[str, Any], seq: int) -> None:
    """Validate an event's data against its kind's model (the one validation replay does:
    the fold trusts it); a failure is reported by ``validate_data``, naming the field."""
    try:
        schema.__pydantic_validator__.validate_python(ev["data"])
    except ValidationError:
        validate_data(ev["kind"], ev["data"], seq=seq, dump=False)
        raise  # pragma: no cover - validate_data raised already


#: the pure-Python pre-check of each plain kind's data (the others: pydantic every time)
_CHECKERS: dict[str, Checker] = {
    name: check
    for name, spec in EVENT_KINDS.items()
    if (check := data_checker(spec.schema)) is not None
}

#: kinds that change nodes other than their own (see ``touched``)
_MULTI = frozenset({"nodes_merged", "decay_applied"})

#: per kind, what the fast loop needs, looked up once an event (decision 250):
#: (pre-check or None, data model, fold, needs a node, changes other nodes, the node fields
#: it may change besides facts, which are hashed incrementally)
_Step = tuple[Checker | None, type[BaseModel], Folder, bool, bool, frozenset[str]]
_PLAN: dict[str, _Step] = {
    name: (
        _CHECKERS.get(name),
        spec.schema,
        spec.fold,
        spec.needs_node,
        name in _MULTI,
        FOLD_FIELDS.get(name, ALL_FIELDS) - {"facts"},
    )
    for name, spec in EVENT_KINDS.items()
}
#: what ``_PLAN`` gives a kind it does not know: a None fold sends it to the careful path
_UNKNOWN = cast(_Step, (None, None, None, False, False, frozenset()))


def _fold_checked(jpath: Path, st: FoldState, ev: dict[str, Any]) -> None:
    seq, kind = ev["seq"], ev["kind"]
    if kind not in EVENT_KINDS:
        raise CorruptLedgerError(f"{jpath}: seq {seq}: unknown event kind {kind!r}", seq=seq)
    if seq == 1 and kind != "ledger_created":
        raise CorruptLedgerError(f"{jpath}: seq 1 is {kind}, not ledger_created", seq=seq)
    validate_data(kind, ev["data"], seq=seq, dump=False)
    try:
        fold_event(st, ev)
    except CorruptLedgerError as err:
        raise CorruptLedgerError(f"{jpath}: {err}", seq=seq) from None


def verify(path: str | Path) -> VerifyReport:
    """Check the whole hash chain and that folding the journal reproduces every stored snapshot
    and the projection exactly. A projection that is only behind the journal (or missing)
    passes with a note: the next writer rebuilds it; a damaged one fails."""
    p = Path(path)
    if not (p / JOURNAL_FILE).exists():
        raise NotALedgerError(f"not a ledger (no {JOURNAL_FILE}): {p}")
    try:
        result = replay(p, keep_snapshots=True)
    except CorruptLedgerError as err:
        return VerifyReport(False, 0, 0, 0, 0, 0, first_bad_seq=err.seq, problem=str(err))
    st = result.state
    base = VerifyReport(
        True, result.events, len(st.sessions), len(st.nodes), result.snapshots, result.residue_lines
    )
    found_source = _check_sources(p, st.sources)
    if found_source is not None:
        return _failed(base, *found_source)
    try:
        head = read_head(p)
    except ProjectionDamaged as err:
        return _failed(base, None, f"projection damaged ({err}); the next write rebuilds it")
    except LegacyLayout as legacy:
        found = _check_legacy(p, legacy.data, result)
        if found is not None:
            return _failed(base, *found)
        base.note = "projection in the format-1 layout, converted on the next write"
        return base
    if head is None:
        base.note = "projection missing, rebuilt on the next write"
        return base
    if head.last_seq < result.events and jr.checkpoint_holds(
        p / JOURNAL_FILE, head.last_seq, head.last_hash, head.journal_offset
    ):
        base.note = (
            f"projection behind (at seq {head.last_seq}, journal at {result.events}), "
            "rebuilt on the next write"
        )
        return base
    found = _check_head(p, head, result)
    if found is None:
        try:
            found = _check_tables(ProjectionStore(p, head), result)
        except ProjectionDamaged as err:
            found = (None, f"projection damaged ({err}); the next write rebuilds it")
        except (KeyError, TypeError) as err:
            found = (None, f"projection damaged (malformed row: {err}); the next write rebuilds it")
    return _failed(base, *found) if found is not None else base


def _check_sources(p: Path, sources: dict[str, dict[str, Any]]) -> _Finding:
    """Every stored source is where the journal put it, with the sha256 it is named by
    (issue 25, item 9: an altered or deleted source passed ``verify``)."""
    for sid, src in sources.items():
        rel = str(src.get("path", ""))
        target = (p / rel).resolve()
        if not target.is_relative_to(p.resolve()):
            return None, f"source {sid[:12]}: its path {rel!r} is outside the ledger"
        try:
            data = target.read_bytes()
        except OSError as err:
            return None, f"{p / rel}: stored source {sid[:12]} cannot be read ({err.strerror})"
        if hashlib.sha256(data).hexdigest() != sid:
            return None, f"{p / rel}: stored source {sid[:12]} was altered (its sha256 differs)"
    return None


def _failed(base: VerifyReport, seq: int | None, problem: str) -> VerifyReport:
    base.ok, base.first_bad_seq, base.problem = False, seq, problem
    return base


#: a verify step's finding: (first bad seq or None, problem)
_Finding = tuple[int | None, str] | None


def _check_head(p: Path, head: Head, result: ReplayResult) -> _Finding:
    """The projection stands at the journal's last seq, hash and offset, with its counters."""
    if head.last_seq != result.events or head.last_hash != result.last_hash:
        return (
            min(head.last_seq, result.events) + 1,
            f"projection is at seq {head.last_seq} but the journal at {result.events}",
        )
    if head.journal_offset != result.committed_bytes:
        return None, "projection's journal checkpoint offset does not match the journal"
    st = result.state
    counters = (st.node_counter, st.evidence_counter, st.downgrade_counter, st.last_session)
    if (
        head.node_counter,
        head.evidence_counter,
        head.downgrade_counter,
        head.last_session,
    ) != counters or jr.canonical(head.run) != jr.canonical(st.meta):
        return None, "projection's counters or run metadata differ from the replay"
    if set(head.dirty_since_snapshot) != result.dirty_since_snapshot:
        return None, "projection's nodes changed since the last snapshot differ from the replay"
    return None


def _check_tables(store: ProjectionStore, result: ReplayResult) -> _Finding:
    st = result.state
    proj_nodes: dict[str, Any] = {}
    stored_hash: dict[str, str] = {}
    for r in store.table_rows("nodes"):
        proj_nodes[r["n"]["id"]] = r["n"]
        stored_hash[r["n"]["id"]] = r["h"]
    found = _compare_nodes(store.directory, proj_nodes, st.nodes)
    if found is not None:
        return found
    if stored_hash != result.hashes.as_dict():
        return None, "projection's node hashes differ from the replay"
    for table, ours in (
        ("sessions", [st.sessions[k] for k in sorted(st.sessions)]),
        ("failed", list(st.failed)),
        ("sources", list(st.sources.values())),
    ):
        if jr.canonical(store.table_rows(table)) != jr.canonical(ours):
            return None, f"projection {table} rows differ from the replay"
    stored = [
        line + b"\n" for chunk in store.table_bytes("snapshots") for line in chunk.split(b"\n")[:-1]
    ]
    return _compare_snapshot_lines(stored, result.snapshot_lines)


def _compare_nodes(p: Path, proj: dict[str, Any], ours: dict[str, Any]) -> _Finding:
    if jr.canonical(proj) == jr.canonical(ours):
        return None
    bad = sorted(
        (set(proj) ^ set(ours))
        | {k for k in ours if k in proj and jr.canonical(proj[k]) != jr.canonical(ours[k])},
        key=lambda x: int(x[1:]) if x[1:].isdigit() else 0,
    )
    return (
        _last_event_for(p, bad[0]) if bad else None,
        f"projection differs from the replay at node(s) {', '.join(bad[:5])}",
    )


def _compare_snapshot_lines(stored: list[bytes], ours: list[bytes]) -> _Finding:
    if len(stored) != len(ours):
        return None, f"projection holds {len(stored)} snapshots, the journal {len(ours)}"
    for s_line, r_line in zip(stored, ours, strict=True):
        if s_line != r_line:
            row = json.loads(r_line)
            return (
                row["seq"],
                f"stored snapshot after session {row['session']} ({row['stage']}) "
                "differs from the replay",
            )
    return None


def _check_legacy(p: Path, data: dict[str, Any], result: ReplayResult) -> _Finding:
    """A format-1 (TinyDB) projection: same comparisons as before the layout changed."""
    tables = legacy_tables(data)
    meta = tables["meta"][0] if tables["meta"] else {}
    if meta.get("last_seq") != result.events or meta.get("last_hash") != result.last_hash:
        return (
            None,
            f"projection is at seq {meta.get('last_seq')} but the journal at {result.events}",
        )
    st = result.state
    found = _compare_nodes(p, {str(d.get("id")): d for d in tables["nodes"]}, st.nodes)
    if found is not None:
        return found
    sessions = {str(d.get("session")): d for d in tables["sessions"]}
    if jr.canonical(sessions) != jr.canonical({str(k): v for k, v in st.sessions.items()}):
        return None, "projection session records differ from the replay"
    stored = sorted(tables["snapshots"], key=lambda r: r.get("seq", 0))
    return _compare_snapshot_lines([row_line(r) for r in stored], result.snapshot_lines)


def _last_event_for(path: Path, node: str) -> int | None:
    last = None
    for ev in jr.JournalStream(path / JOURNAL_FILE):
        if mentions(ev, node):
            last = ev["seq"]
    return last
