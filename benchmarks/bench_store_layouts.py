"""Projection layouts compared (issue 14.1): the cost of one commit at 10k nodes.

Run: ``PYTHONPATH=. python benchmarks/bench_store_layouts.py [--nodes N] [--commits K]``

A commit here is what a 50-event session changes: 12 node documents (~1 KB each), one
session record (~4 KB) and two snapshot rows (the 12 changed nodes), plus the projection's
small head (seq, hash, counters). Three layouts:

- rewrite: one JSON file holding everything, replaced whole (temp + fsync + rename);
- append: append-only files (nodes as versions, sessions, snapshots), no fsync (the journal
  is the durable copy), then a small head file replaced atomically (temp + fsync + rename);
- sqlite-wal: one SQLite database in WAL mode (synchronous=NORMAL), rows updated in place.

It prints min / median wall time per commit and bytes written per commit.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from curiosity_tui.atomic import atomic_write_bytes

dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _node(i: int, v: int) -> dict:
    return {
        "id": f"q{i}",
        "text": f"node text {i} " + "z" * 60,
        "status": "open",
        "facts": [{"text": f"fact {i}.{k} " + "f" * 60, "session": k} for k in range(v % 6 + 4)],
        "parent": "q1",
        "v": v,
    }


def _changes(k: int, n: int) -> tuple[dict[str, dict], dict, list[dict]]:
    ids = [1 + (k * 37 + j * 101) % n for j in range(12)]
    nodes = {f"q{i}": _node(i, k) for i in ids}
    session = {"session": k, "inputs": {"rendering": "r" * 2000}, "outputs": {"x": "o" * 2000}}
    snaps = [
        {"session": k, "stage": s, "seq": k * 50 + j, "changed": nodes}
        for j, s in enumerate(("session", "decay"))
    ]
    return nodes, session, snaps


def bench_rewrite(root: Path, n: int, commits: int) -> tuple[list[float], int]:
    nodes = {f"q{i}": _node(i, 0) for i in range(1, n + 1)}
    sessions: list[dict] = []
    snaps: list[dict] = []
    path = root / "rewrite.json"
    times, size = [], 0
    for k in range(commits):
        ch, sess, sn = _changes(k, n)
        t0 = time.perf_counter()
        nodes.update(ch)
        sessions.append(sess)
        snaps.extend(sn)
        blob = dumps({"meta": {"seq": k}, "nodes": nodes, "sessions": sessions, "snaps": snaps})
        atomic_write_bytes(path, blob.encode())
        times.append(time.perf_counter() - t0)
        size = len(blob)
    return times, size


def bench_append(root: Path, n: int, commits: int, fsync_head: bool) -> tuple[list[float], int]:
    d = root / "append"
    d.mkdir()
    with open(d / "nodes.jsonl", "wb") as fh:
        for i in range(1, n + 1):
            fh.write(dumps(_node(i, 0)).encode() + b"\n")
    times, written = [], 0
    for k in range(commits):
        ch, sess, sn = _changes(k, n)
        t0 = time.perf_counter()
        total = 0
        for name, rows in (("nodes", list(ch.values())), ("sessions", [sess]), ("snaps", sn)):
            blob = b"".join(dumps(r).encode() + b"\n" for r in rows)
            with open(d / f"{name}.jsonl", "ab") as fh:
                fh.write(blob)
            total += len(blob)
        head = dumps({"seq": k, "hash": "0" * 64, "sizes": [1, 2, 3]}).encode()
        if fsync_head:
            atomic_write_bytes(d / "head.json", head)
        else:  # rename only: survives SIGKILL; a power cut is caught by the projection check
            (d / "head.tmp").write_bytes(head)
            os.replace(d / "head.tmp", d / "head.json")
        times.append(time.perf_counter() - t0)
        written = total + len(head)
    return times, written


def bench_sqlite(root: Path, n: int, commits: int, sync: str) -> tuple[list[float], int]:
    db = sqlite3.connect(root / "p.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={sync}")
    db.execute("PRAGMA wal_autocheckpoint=0")  # so the WAL's growth is the bytes written
    db.execute("CREATE TABLE nodes (id TEXT PRIMARY KEY, doc TEXT)")
    db.execute("CREATE TABLE sessions (session INTEGER PRIMARY KEY, doc TEXT)")
    db.execute("CREATE TABLE snaps (seq INTEGER PRIMARY KEY, doc TEXT)")
    db.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT)")
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO nodes VALUES (?, ?)", ((f"q{i}", dumps(_node(i, 0))) for i in range(1, n + 1))
    )
    db.execute("COMMIT")
    wal = root / "p.sqlite-wal"
    times, written = [], 0
    for k in range(commits):
        ch, sess, sn = _changes(k, n)
        before = wal.stat().st_size if wal.exists() else 0
        t0 = time.perf_counter()
        db.execute("BEGIN")
        db.executemany(
            "INSERT OR REPLACE INTO nodes VALUES (?, ?)", ((i, dumps(v)) for i, v in ch.items())
        )
        db.execute("INSERT INTO sessions VALUES (?, ?)", (k, dumps(sess)))
        db.executemany("INSERT INTO snaps VALUES (?, ?)", ((r["seq"], dumps(r)) for r in sn))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (str(k),))
        db.execute("COMMIT")
        times.append(time.perf_counter() - t0)
        after = wal.stat().st_size if wal.exists() else 0
        written = max(written, after - before)
    db.close()
    return times, written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=21)
    args = ap.parse_args()
    print(
        f"one commit at {args.nodes} nodes, {args.commits} commits each (shared machine: "
        f"load {os.getloadavg()[0]:.1f})"
    )
    layouts = {
        "rewrite": bench_rewrite,
        "append+fsync": lambda r, n, c: bench_append(r, n, c, True),
        "append": lambda r, n, c: bench_append(r, n, c, False),
        "sqlite-wal-normal": lambda r, n, c: bench_sqlite(r, n, c, "NORMAL"),
        "sqlite-wal-full": lambda r, n, c: bench_sqlite(r, n, c, "FULL"),
    }
    for name, fn in layouts.items():
        with tempfile.TemporaryDirectory() as tmp:
            times, size = fn(Path(tmp), args.nodes, args.commits)
        print(
            f"  {name:<18} min {min(times) * 1000:6.1f} ms  median "
            f"{statistics.median(times) * 1000:6.1f} ms  bytes/commit {size:>10,}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
