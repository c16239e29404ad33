"""Chronology that binds (S7): which lock governs a set of runs, and what came later.

The headline verdict is the rule in force when the runs were created: the lock each run
recorded in its journal (:mod:`curiosity_tui.analysis.runstamps`). When the runs recorded
more than one lock, the earliest governs (the rule in force when the first of them was
created) and the mix is noted. Every lock after the governing one is an amendment: it is
evaluated and reported with its stage and reason, never as the verdict.

A run that recorded a lock this chain does not contain means the chain was replaced or
rewritten: :func:`governing_lock` refuses, naming the runs and the missing hash. Runs
that recorded nothing (old ledgers, run files without metadata, ``--unregistered``) are
placed by time: the last lock made no later than the first run was created; without
any time, the first ``before-runs`` lock.

:func:`chronology_problems` is what ``prereg verify`` adds to the hash check.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from curiosity_tui.analysis.lockchain import (
    ChainError,
    ChainReport,
    LockEntry,
    read_chain,
    stage_rank,
    verify_chain,
)
from curiosity_tui.analysis.run_origins import late_runs, pilot_records
from curiosity_tui.analysis.runstamps import RunStamp, earliest, parse_ts, scan_stamps
from curiosity_tui.ledger.identity import head_identity_problem


class ForeignLockError(ChainError):
    """Runs recorded a lock the chain does not contain (a replaced or rewritten chain)."""


class Governing(BaseModel):
    lock: LockEntry
    #: how it was chosen: "recorded" (by the runs) or "by time" (runs recorded nothing)
    basis: str
    amendments: list[LockEntry] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _names(stamps: Sequence[RunStamp], limit: int = 6) -> str:
    ids = [s.run_id for s in stamps]
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def foreign_runs(
    entries: Sequence[LockEntry], stamps: Sequence[RunStamp]
) -> dict[str, list[RunStamp]]:
    """Recorded hash -> runs that recorded it, for hashes the chain does not contain."""
    known = {e.hash for e in entries}
    out: dict[str, list[RunStamp]] = {}
    for s in stamps:
        if s.lock is not None and s.lock.hash not in known:
            out.setdefault(s.lock.hash, []).append(s)
    return out


def refuse_foreign(entries: Sequence[LockEntry], stamps: Sequence[RunStamp], where: str) -> None:
    foreign = foreign_runs(entries, stamps)
    if not foreign:
        return
    h, runs = next(iter(foreign.items()))
    more = f" (and {len(foreign) - 1} other missing hash(es))" if len(foreign) > 1 else ""
    raise ForeignLockError(
        f"{where}: {len(runs)} run(s) were created under lock {h[:12]}… which this chain does "
        f"not contain{more}: {_names(runs)}; the chain was replaced or rewritten, so no verdict"
    )


def _by_time(entries: Sequence[LockEntry], stamps: Sequence[RunStamp]) -> tuple[LockEntry, str]:
    first = earliest(list(stamps))
    if first is not None:
        before = [e for e in entries if (t := parse_ts(e.ts)) is not None and t <= first[1]]
        if before:
            return before[-1], "by time"
    lead = next((e for e in entries if e.stage == "before-runs"), entries[0])
    return lead, "first lock"


def governing_lock(
    entries: Sequence[LockEntry], stamps: Sequence[RunStamp], *, where: str = "prereg chain"
) -> Governing:
    """The lock the runs were created under, the amendments after it, and notes."""
    if not entries:
        raise ChainError(f"{where}: holds no lock")
    refuse_foreign(entries, stamps, where)
    by_hash = {e.hash: e for e in entries}
    recorded = sorted({by_hash[s.lock.hash].seq for s in stamps if s.lock is not None})
    notes: list[str] = []
    if recorded:
        lock, basis = entries[recorded[0] - 1], "recorded"
        if len(recorded) > 1:
            groups = "; ".join(
                f"seq {q}: {_names([s for s in stamps if s.lock and by_hash[s.lock.hash].seq == q])}"
                for q in recorded
            )
            notes.append(
                f"the runs were created under {len(recorded)} different locks ({groups}); the "
                f"earliest (seq {lock.seq}) governs, the later ones are amendments"
            )
        silent = [s for s in stamps if s.lock is None]
        if silent:
            notes.append(f"{len(silent)} run(s) recorded no lock: {_names(silent)}")
    else:
        lock, basis = _by_time(entries, stamps)
        if stamps:
            notes.append(
                f"no run recorded the lock it was created under; seq {lock.seq} governs "
                + (
                    "as the last lock made before the first run was created"
                    if basis == "by time"
                    else "as the first before-runs lock (no creation times to place the runs)"
                )
            )
    if lock.stage != "before-runs" and not any(
        e.stage == "before-runs" for e in entries[: lock.seq]
    ):
        notes.append("no lock at stage before-runs precedes the governing lock")
    return Governing(lock=lock, basis=basis, amendments=list(entries[lock.seq :]), notes=notes)


def chronology_problems(entries: Sequence[LockEntry], stamps: Sequence[RunStamp]) -> list[str]:
    """What makes the chain disagree with the runs beside it (empty when they agree)."""
    problems: list[str] = []
    for h, runs in foreign_runs(entries, stamps).items():
        problems.append(
            f"{len(runs)} run(s) record lock {h[:12]}…, which is not in the chain: {_names(runs)}"
        )
    by_hash = {e.hash: e for e in entries}
    for s in stamps:
        e = by_hash.get(s.lock.hash) if s.lock else None
        if e is None or s.lock is None:
            continue
        if (s.lock.seq, s.lock.stage) not in ((e.seq, e.stage), (None, None)):
            problems.append(
                f"run {s.run_id} records seq {s.lock.seq} stage {s.lock.stage} for lock "
                f"{e.short()}, which the chain holds as seq {e.seq} stage {e.stage}"
            )
        created, locked = parse_ts(s.created_at), parse_ts(e.ts)
        if created and locked and created < locked:
            problems.append(
                f"run {s.run_id} was created at {s.created_at}, before the lock it records "
                f"(seq {e.seq}, {e.ts})"
            )
    first = earliest(list(stamps))
    recorded = [by_hash[s.lock.hash] for s in stamps if s.lock and s.lock.hash in by_hash]
    floor = max((stage_rank(e.stage) for e in recorded), default=None)
    last_recorded = max((e.seq for e in recorded), default=0)
    for e in entries:
        t = parse_ts(e.ts)
        if e.stage == "before-runs" and first and t and t > first[1]:
            problems.append(
                f"seq {e.seq} is locked at stage before-runs at {e.ts}, after run "
                f"{first[0].run_id} was created ({first[0].created_at})"
            )
        elif floor is not None and e.seq > last_recorded and stage_rank(e.stage) <= floor:
            problems.append(
                f"seq {e.seq} (stage {e.stage}) was locked after runs created under a lock at "
                "that stage or later; its stage claims it came before them"
            )
    return problems


def verify_chain_and_runs(path: Path, *, runs_dir: Path | None = None) -> ChainReport:
    """``prereg verify``: the hash chain, then the runs in ``runs_dir`` (default: the
    chain's directory) against it."""
    rep = verify_chain(path)
    if not rep.ok:
        return rep
    stamps = scan_stamps(Path(runs_dir) if runs_dir else Path(path).parent)
    problems = [
        f"run {s.run_id}: {bad}; the run's identity is not what its journal recorded"
        for s in stamps
        if Path(s.origin).is_dir() and (bad := head_identity_problem(Path(s.origin)))
    ]
    problems += chronology_problems(read_chain(path), stamps)
    rep.runs_checked = len(stamps)
    created = [(s.run_id, s.created_at, s.origin) for s in stamps]
    rep.run_notes = late_runs(created, pilot_records([s.origin for s in stamps]))  # 404
    if problems:
        rep.ok = False
        rep.problem = f"{len(problems)} chronology problem(s); first: {problems[0]}"
        rep.chronology_problems = problems
    return rep
