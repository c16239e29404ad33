"""End to end over real ledgers: lock → pilot run (built-in scripted server) → verdict,
metrics, sweep. Also: `pilot run` refuses to start without a before-runs lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main

PLAN = """\
name = "e2e"
configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = ["max_depth", "nodes_worked"]
"""


def test_pilot_lock_run_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "runs"
    out.mkdir()
    run = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--concurrency", "4"]
    assert main(run) == 2
    assert "no prereg.jsonl" in capsys.readouterr().err
    chain = out / "prereg.jsonl"
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]) == 0
    assert main(run) == 0
    capsys.readouterr()

    assert main(["verdict", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    v = rep["verdict"]
    assert v["outcome"] in ("met", "not_met", "undecided")
    assert v["lock"]["stage"] == "before-runs"
    assert [mc["metric"] for mc in v["by_metric"]] == ["max_depth", "nodes_worked"]
    clause = v["by_metric"][0]["clauses"][0]
    assert clause["n_treatment"] == 1 and clause["interval"]["ci_low"] is None
    assert "n=1" in clause["interval"]["note"]
    explo = {row["metric"] for row in rep["exploratory"]}
    assert "live_nodes" in explo and "max_depth" not in explo

    assert main(["metrics", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["configs"] == ["B-armed+cur", "C+cur", "B-armed-cur", "C-cur"]
    assert doc["metrics"]["preserve_share"]["B-armed+cur"]["value"] is None  # no decisions
    assert doc["metrics"]["preserve_share"]["C+cur"]["n"] == 1

    assert main(["sweep", str(out), "--json"]) == 0
    sweeps = json.loads(capsys.readouterr().out)
    assert [s["label"] for s in sweeps] == ["C+cur", "C-cur"]  # only C records Δ
    assert all(s["n"] == 2 and s["recorded_epsilons"] == [0.15] for s in sweeps)

    report = tmp_path / "report.md"
    assert main(["report", str(out), "--out", str(report)]) == 0
    md = report.read_text()
    for heading in (
        "## Verdict",
        "## Pre-registration chronology",
        "## The ledger (§8)",
        "### ε sweep",
        "## Closure audit findings per configuration",
        "## Limits the data imposes",
    ):
        assert heading in md
    assert "| C+cur | 1 | 1 |" in md
    assert "No bootstrap interval for any difference involving" in md
