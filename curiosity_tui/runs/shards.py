"""Sharded pilots: a deterministic share of a plan's runs, and what each share has done.

``--shard I/N`` (1 ≤ I ≤ N) takes the runs at positions I−1, I−1+N, I−1+2N, … of the
plan's run list (configurations in plan order, runs 0… within each). Shares are disjoint,
cover the plan and differ in size by at most one run; every configuration is spread over
the shards. A scheduler array (Slurm ``--array=1-N`` with ``--shard $SLURM_ARRAY_TASK_ID/N``)
can then run a pilot across machines: runs are independent ledgers.

Each ``pilot run`` writes ``OUT/.pilot/shard-I-of-N.json`` (a manifest: the plan's hash,
the share's run names, the sessions per run, where and when it ran, how it ended).
:func:`pilot_status` reads the manifests and the ledgers' committed sessions.
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from curiosity_tui.atomic import append_line_durable, atomic_write_bytes
from curiosity_tui.clock import utc_now_seconds
from curiosity_tui.errors import InputError, NotALedgerError
from curiosity_tui.ledger.ledger import Ledger

__all__ = [
    "ManifestRun",
    "PilotStatus",
    "Shard",
    "ShardManifest",
    "ShardStatus",
    "parse_shard",
    "pilot_status",
    "read_manifests",
    "shard_of",
    "write_manifest",
]

MANIFEST_DIR = ".pilot"
HISTORY_FILE = "history.jsonl"  # every shard record ever written, one a line
T = TypeVar("T")


class Shard(BaseModel):
    index: int  # 1-based
    count: int

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"I/N"`` → Shard; one-line InputError naming the flag otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise InputError(f"--shard {text!r}: expected I/N, for example 2/4")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or not 1 <= index <= count:
        raise InputError(f"--shard {text}: I must be between 1 and N (N ≥ 1)")
    return Shard(index=index, count=count)


def shard_of(items: Sequence[T], shard: Shard) -> list[T]:
    """The shard's share of ``items``: positions I−1, I−1+N, … (round robin)."""
    return list(items[shard.index - 1 :: shard.count])


class ManifestRun(BaseModel):
    name: str
    state: Literal["pending", "done", "failed"] = "pending"
    sessions_done: int = 0
    failure: str | None = None


class ShardManifest(BaseModel):
    plan_sha256: str
    shard: Shard
    plan_runs: int
    sessions: int
    runs: list[ManifestRun]
    host: str
    pid: int
    workers: int = 1
    started_at: str
    finished_at: str | None = None


def manifest_path(out: Path, shard: Shard) -> Path:
    return out / MANIFEST_DIR / f"shard-{shard.index}-of-{shard.count}.json"


def new_manifest(
    plan_sha256: str,
    shard: Shard,
    plan_runs: int,
    sessions: int,
    names: Sequence[str],
    workers: int,
) -> ShardManifest:
    return ShardManifest(
        plan_sha256=plan_sha256,
        shard=shard,
        plan_runs=plan_runs,
        sessions=sessions,
        runs=[ManifestRun(name=n) for n in names],
        host=socket.gethostname(),
        pid=os.getpid(),
        workers=workers,
        started_at=utc_now_seconds(),
    )


def write_manifest(out: Path, manifest: ShardManifest) -> Path:
    """Replace the shard's record, and append it to ``.pilot/history.jsonl`` first: a later
    ``pilot run`` never erases what an earlier one recorded (decision 404)."""
    path = manifest_path(out, manifest.shard)
    path.parent.mkdir(parents=True, exist_ok=True)
    append_line_durable(path.parent / HISTORY_FILE, (manifest.model_dump_json() + "\n").encode())
    atomic_write_bytes(path, (manifest.model_dump_json(indent=1) + "\n").encode("utf-8"))
    return path


def read_manifests(out: Path) -> list[ShardManifest]:
    """Every shard manifest under ``out/.pilot``; a malformed one is named in an InputError."""
    found = []
    for path in sorted((out / MANIFEST_DIR).glob("shard-*-of-*.json")):
        try:
            found.append(ShardManifest.model_validate(json.loads(path.read_text("utf-8"))))
        except (OSError, ValueError, ValidationError) as err:
            first = str(err).splitlines()[0]
            raise InputError(f"{path}: not a shard manifest ({first})") from err
    return found


class ShardStatus(BaseModel):
    shard: str
    out: str
    runs: int
    runs_done: int
    runs_failed: int
    sessions_done: int
    sessions_total: int
    state: str
    failures: list[str] = []


class PilotStatus(BaseModel):
    plan_sha256: str | None
    shard_count: int
    plan_runs: int
    sessions_done: int
    sessions_total: int
    runs_done: int
    runs_failed: int
    shards: list[ShardStatus]
    missing_shards: list[str]


def _committed(out: Path, name: str) -> int:
    """Sessions committed in ``out/name``; 0 when the run has no ledger yet."""
    try:
        with Ledger.open(out / name) as led:
            return led.last_session
    except NotALedgerError:
        return 0


def _shard_status(out: Path, m: ShardManifest) -> ShardStatus:
    done_sessions = 0
    done = failed = 0
    failures = []
    for run in m.runs:
        n = min(_committed(out, run.name), m.sessions)
        done_sessions += n
        if n >= m.sessions:
            done += 1
        elif run.state == "failed":
            failed += 1
            failures.append(f"{run.name}: {run.failure}")
    if m.finished_at:
        state = f"finished {m.finished_at}"
    else:
        state = f"started {m.started_at} by pid {m.pid} on {m.host}, not finished"
    return ShardStatus(
        shard=m.shard.label,
        out=str(out),
        runs=len(m.runs),
        runs_done=done,
        runs_failed=failed,
        sessions_done=done_sessions,
        sessions_total=len(m.runs) * m.sessions,
        state=state,
        failures=failures,
    )


def pilot_status(outs: Sequence[Path]) -> PilotStatus:
    """Progress of a (sharded) pilot from the manifests and ledgers of one or more OUT dirs."""
    pairs = [(out, m) for out in outs for m in read_manifests(out)]
    if not pairs:
        raise InputError(
            f"{', '.join(map(str, outs))}: no pilot manifest (.pilot/shard-*.json); "
            "is this a pilot run's --out?"
        )
    plans = {m.plan_sha256 for _, m in pairs}
    counts = {m.shard.count for _, m in pairs}
    if len(plans) > 1 or len(counts) > 1:
        raise InputError(
            "these directories hold shards of different plans or shard counts: "
            + ", ".join(sorted(f"{m.shard.label} of {m.plan_sha256[:12]}" for _, m in pairs))
        )
    shards = [_shard_status(out, m) for out, m in sorted(pairs, key=lambda p: p[1].shard.index)]
    (count,) = counts
    seen = {m.shard.index for _, m in pairs}
    plan_runs = pairs[0][1].plan_runs
    sessions = pairs[0][1].sessions
    return PilotStatus(
        plan_sha256=pairs[0][1].plan_sha256,
        shard_count=count,
        plan_runs=plan_runs,
        sessions_done=sum(s.sessions_done for s in shards),
        sessions_total=plan_runs * sessions,
        runs_done=sum(s.runs_done for s in shards),
        runs_failed=sum(s.runs_failed for s in shards),
        shards=shards,
        missing_shards=[f"{i}/{count}" for i in range(1, count + 1) if i not in seen],
    )


def format_status(st: PilotStatus) -> str:
    lines = [
        f"pilot {st.plan_sha256[:12] if st.plan_sha256 else '?'}: {st.plan_runs} runs in "
        f"{st.shard_count} shard(s)"
    ]
    for s in st.shards:
        lines.append(
            f"shard {s.shard} ({s.out}): {s.runs_done}/{s.runs} runs done, "
            f"{s.runs_failed} failed, {s.sessions_done}/{s.sessions_total} sessions; {s.state}"
        )
        lines.extend(f"    failed {f}" for f in s.failures)
    for label in st.missing_shards:
        lines.append(f"shard {label}: no manifest in these directories (not started here)")
    pct = 100.0 * st.sessions_done / st.sessions_total if st.sessions_total else 0.0
    lines.append(
        f"total: {st.runs_done}/{st.plan_runs} runs done, {st.runs_failed} failed, "
        f"{st.sessions_done}/{st.sessions_total} sessions ({pct:.0f}%)"
    )
    return "\n".join(lines)
