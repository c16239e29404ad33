"""``pilot run`` without ``--workers``: one worker per core, but at most one per
RUNS_PER_WORKER runs; a small pilot runs in the command's own process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main, pilot_cmds
from curiosity_tui.cli.pilot_cmds import RUNS_PER_WORKER, default_workers
from curiosity_tui.runs import workers as workers_mod

PLAN = """\
name = "small"
configurations = ["C+cur", "C-cur"]
runs = 2
sessions = 1
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "C-cur"]]
metrics = ["max_depth"]
"""


@pytest.mark.parametrize(
    ("runs", "cores", "expected"),
    [
        (1, 8, 1),
        (18, 2, 1),
        (RUNS_PER_WORKER - 1, 2, 1),
        (RUNS_PER_WORKER, 2, 1),
        (2 * RUNS_PER_WORKER, 2, 2),
        (108, 2, 2),
        (108, 16, 3),
        (10_000, 16, 16),
        (10_000, 1, 1),
        (0, 4, 1),
    ],
)
def test_default_workers(runs: int, cores: int, expected: int) -> None:
    assert default_workers(runs, cores) == expected


def test_a_small_pilot_runs_in_this_process_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_workers(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a 4-run pilot should not start worker processes")

    monkeypatch.setattr(pilot_cmds, "_cores", lambda: 8)
    monkeypatch.setattr(workers_mod, "run_pilot_workers", no_workers)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "out"
    assert main(["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]) == 0
    manifest = json.loads((out / ".pilot" / "shard-1-of-1.json").read_text())
    assert manifest["workers"] == 1
    assert "4 of 4 runs complete" in capsys.readouterr().out
