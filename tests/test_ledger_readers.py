"""Readers never see a half-written state: a reader opening again and again while another
process commits sessions always gets a whole, consistent ledger."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from ledger_builders import build

from curiosity_tui.ledger.ledger import Ledger

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from curiosity_tui.ledger.ledger import Ledger
    from ledger_builders import run_session

    led = Ledger.open(Path(sys.argv[1]), write=True)
    print("ready", flush=True)
    for _ in range(int(sys.argv[2])):
        t = led.last_session + 1
        run_session(led, t, focus="q1" if t % 2 else None)
    led.close()
    """
)


def test_reader_during_commits(tmp_path: Path, clock: Any, subprocess_env: dict[str, str]) -> None:
    path = tmp_path / "l"
    build(path, 1, clock=clock).close()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(subprocess_env)
    env["PYTHONPATH"] = str(Path(__file__).parent) + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.Popen(
        [sys.executable, str(script), str(path), "40"], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    seen = set()
    while proc.poll() is None or not seen:
        led = Ledger.open(path)
        try:
            t = led.last_session
            seen.add(t)
            assert len(led.raw_nodes()) == 1 + t
            assert [r.session for r in led.session_records()] == list(range(1, t + 1))
        finally:
            led.close()
    assert proc.wait(timeout=60) == 0
    final = Ledger.open(path)
    assert final.last_session == 41 and final.verify().ok
