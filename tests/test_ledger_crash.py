"""SIGKILL inside a commit, at several points, ≥ 20 times: the ledger reopens for writing,
verify passes, and the interrupted session is entirely absent — or, when its journal write
completed before the kill, entirely present with the projection rebuilt."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from ledger_builders import build

from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.ledger import Ledger, verify

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from curiosity_tui.ledger import journal as jr
    from curiosity_tui.ledger.ledger import Ledger
    from ledger_builders import run_session

    path, mode, frac = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    led = Ledger.open(path, write=True)
    print("open", led.last_session, led.recovered, flush=True)
    if mode == "partial":  # the batch's single write only got part-way
        def partial(p, lines, expect_size=None):
            blob = b"".join(lines)
            fd = os.open(p, os.O_WRONLY | os.O_APPEND)
            os.write(fd, blob[: max(1, int(len(blob) * frac))])
            os.fsync(fd)
            die()
        jr.append_batch = partial
    elif mode == "after_journal":  # journal fsynced, projection not yet written
        led._after_journal_hook = die
    elif mode == "before_replace":  # new projection written to ledger.json.tmp, not renamed
        os.replace = lambda *a, **k: die()
    while True:  # "loop": commit sessions until killed from outside
        t = led.last_session + 1
        run_session(led, t, focus="q1" if t % 2 else None)
        print("committed", t, flush=True)
        if mode != "loop":
            break
    """
)


def _check(path: Path, before: int, mode: str) -> int:
    led = Ledger.open(path, write=True)
    try:
        after = led.last_session
        report = verify(path)
        assert report.ok, f"{mode}: {report.summary()}"
        # whole sessions only: one new node per session, records 1..after, two snapshots each
        assert len(led.raw_nodes()) == 1 + after, mode
        assert [r.session for r in led.session_records()] == list(range(1, after + 1))
        assert report.snapshots == 2 * after
        tail = jr.scan(path / "journal.jsonl")
        assert tail.residue_lines == 0
        assert tail.events[-1]["kind"] in ("session_committed", "batch_committed")
        if mode == "partial":
            assert after == before, "a partly written session must be absent"
            assert "cut off" in (led.recovered or ""), led.recovered
        elif mode in ("after_journal", "before_replace"):
            assert after == before + 1, "a session whose journal write completed is present"
            assert "projection rebuilt" in (led.recovered or ""), led.recovered
        else:
            assert after >= before
        return after
    finally:
        led.close()


def test_sigkill_inside_commit_many_times(
    tmp_path: Path, clock: Any, subprocess_env: dict[str, str]
) -> None:
    path = tmp_path / "l"
    build(path, 2, clock=clock).close()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(subprocess_env)
    env["PYTHONPATH"] = str(Path(__file__).parent) + os.pathsep + env["PYTHONPATH"]
    rng = random.Random(20260101)
    plan = (
        [("partial", f) for f in (0.05, 0.3, 0.5, 0.7, 0.95, 0.999)]
        + [("after_journal", 0.0)] * 4
        + [("before_replace", 0.0)] * 4
        + [("loop", rng.uniform(0.05, 0.6)) for _ in range(8)]
    )
    assert len(plan) >= 20
    done = 2
    for mode, frac in plan:
        before = done
        proc = subprocess.Popen(
            [sys.executable, str(script), str(path), mode, str(frac)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if mode == "loop":
            assert proc.stdout is not None
            first = proc.stdout.readline()  # opened (and recovered) before the timer starts
            assert first.startswith("open"), first + (proc.stderr.read() if proc.stderr else "")
            try:
                proc.wait(timeout=frac)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, f"{mode}: rc {proc.returncode}\n{err}"
        done = _check(path, before, mode)
        assert Ledger.open(path).recovered is None  # recovery was written back
    assert done > 2 + 8  # the after_journal/before_replace kills each left a whole session
    assert Ledger.open(path).verify().ok
