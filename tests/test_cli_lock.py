"""A second writer through the CLI fails fast with one line naming the holder; the first writer
is unaffected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from curiosity_tui.contract.sources import add_source
from curiosity_tui.ledger import Ledger, RunMeta, verify

ROOT = Path(__file__).resolve().parents[1]


def test_cli_writer_refused_while_another_process_holds_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "run"
    src = tmp_path / "note.txt"
    src.write_text("A short source text about printing in Wittenberg and Nuremberg.\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with Ledger.create(path, RunMeta(name="run", seed="Seed?", config="C-cur")) as holder:
        proc = subprocess.run(
            [sys.executable, "-m", "curiosity_tui", "sources", "add", str(path), str(src)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert proc.returncode == 3
        lines = proc.stderr.strip().splitlines()
        assert (
            len(lines) == 1
            and "locked for writing" in lines[0]
            and f"pid {os.getpid()}" in lines[0]
        )
        assert "Traceback" not in proc.stderr
        # the holder goes on writing as if nothing happened
        assert add_source(holder, src).added
    assert verify(path).ok
    with Ledger.open(path) as led:
        assert len(led.sources()) == 1
