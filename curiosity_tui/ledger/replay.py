"""Replay and verify (S1): fold the committed journal from seq 1, and check that the hash chain
is intact and that the fold reproduces the projection and every stored snapshot."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curiosity_tui.errors import CorruptLedgerError, NotALedgerError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import EVENT_KINDS, FoldState, fold_event, validate_data
from curiosity_tui.ledger.hashing import HashIndex, NodeEncoder, snapshot_texts
from curiosity_tui.ledger.journal import JOURNAL_FILE
from curiosity_tui.ledger.store import ProjectionStore


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
        ids = [i for i in touched(kind, ev["node"], ev["data"]) if i in st.nodes]
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
    base = VerifyReport(
        True,
        result.events,
        len(st.sessions),
        len(st.nodes),
        len(result.snapshots),
        result.residue_lines,
    )
    if not (p / "ledger.json").exists():
        base.ok, base.problem = False, "ledger.json (projection) is missing"
        return base
    store = ProjectionStore(p, create=False)
    try:
        for check in (_check_tail, _check_nodes, _check_sessions, _check_snapshots):
            found = check(p, store, result)
            if found is not None:
                base.ok = False
                base.first_bad_seq, base.problem = found
                return base
        return base
    finally:
        store.close()


#: a verify step's finding: (first bad seq or None, problem)
_Finding = tuple[int | None, str] | None


def _check_tail(p: Path, store: ProjectionStore, result: ReplayResult) -> _Finding:
    """The projection stands at the journal's last seq and hash."""
    meta = store.meta()
    last_seq = result.events
    if meta.get("last_seq") != last_seq:
        return (
            min(int(meta.get("last_seq", 0)), last_seq) + 1,
            f"projection is at seq {meta.get('last_seq')} but the journal at {last_seq}",
        )
    if meta.get("last_hash") != result.last_hash:
        return last_seq, f"projection's last hash does not match the journal at seq {last_seq}"
    return None


def _check_nodes(p: Path, store: ProjectionStore, result: ReplayResult) -> _Finding:
    st = result.state
    proj_nodes = {d["id"]: d for d in store.table_rows("nodes")}
    if jr.canonical(proj_nodes) == jr.canonical(st.nodes):
        return None
    bad = sorted(
        (set(proj_nodes) ^ set(st.nodes))
        | {
            k
            for k in st.nodes
            if k in proj_nodes and jr.canonical(proj_nodes[k]) != jr.canonical(st.nodes[k])
        },
        key=lambda x: int(x[1:]),
    )
    return (
        _last_event_for(p, bad[0]) if bad else None,
        f"projection differs from the replay at node(s) {', '.join(bad[:5])}",
    )


def _check_sessions(p: Path, store: ProjectionStore, result: ReplayResult) -> _Finding:
    proj_sessions = {int(d["session"]): d for d in store.table_rows("sessions")}
    if jr.canonical({str(k): v for k, v in proj_sessions.items()}) != jr.canonical(
        {str(k): v for k, v in result.state.sessions.items()}
    ):
        return None, "projection session records differ from the replay"
    return None


def _check_snapshots(p: Path, store: ProjectionStore, result: ReplayResult) -> _Finding:
    stored = sorted(store.table_rows("snapshots"), key=lambda r: r["seq"])
    if len(stored) != len(result.snapshots):
        return (
            None,
            f"projection holds {len(stored)} snapshots, the journal {len(result.snapshots)}",
        )
    # equal deltas at every snapshot <=> equal accumulated states at every snapshot
    for s_row, r_row in zip(stored, result.snapshots, strict=True):
        s_changed = s_row["changed"]
        r_changed = r_row["changed_json"]
        if (
            s_row["seq"] != r_row["seq"]
            or set(s_changed) != set(r_changed)
            or any(jr.canonical(s_changed[k]) != t for k, t in r_changed.items())
        ):
            return (
                r_row["seq"],
                f"stored snapshot after session {r_row['session']} ({r_row['stage']}) "
                "differs from the replay",
            )
    return None


def _last_event_for(path: Path, node: str) -> int | None:
    last = None
    for ev in jr.scan(path / JOURNAL_FILE).events:
        if mentions(ev, node):
            last = ev["seq"]
    return last
