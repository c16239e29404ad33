"""`curiosity-tui report` over run files (no ledgers behind them: audit says so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.analysis.prereg import lock
from curiosity_tui.analysis.rundata import write_run_file
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_rundata import structural_run

PLAN = """\
name = "report-test"
configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 2
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "test-model"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = ["max_depth"]
"""


def test_report_without_lock_and_with(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    held = tmp_path / "held"  # the plan is locked before any run exists, kept aside for now
    held.mkdir()
    plan = held / "plan.toml"
    plan.write_text(PLAN)
    lock(plan, "before-runs")
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    for cfg, d in (("C+cur", 3), ("B-armed+cur", 2), ("C-cur", 1), ("B-armed-cur", 2)):
        for i in range(2):
            r = structural_run(cfg, f"{cfg}-r{i}", depth=d, worked=d)
            r.unregistered = i == 1 and cfg == "C-cur"
            write_run_file(r, runs_dir / f"{cfg}-r{i}.run.json")
    out = tmp_path / "report.md"
    assert main(["report", str(runs_dir), "--out", str(out)]) == 0
    md = out.read_text()
    assert "No prereg.jsonl: nothing was locked, so there is no verdict." in md
    assert "Not audited: B-armed+cur-r0 (no ledger); B-armed+cur-r1 (no ledger)" in md
    assert "Started --unregistered: C-cur-r1." in md
    assert "understate the uncertainty" in md

    (held / "prereg.jsonl").rename(runs_dir / "prereg.jsonl")
    assert main(["report", str(runs_dir), "--out", str(out)]) == 0
    md = out.read_text()
    assert "Verdict: NOT MET" in md and "before-runs" in md
    assert main(["report", str(tmp_path / "empty"), "--out", str(out)]) == 2
    assert "no such file or directory" in capsys.readouterr().err
