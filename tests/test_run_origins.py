"""``pilot run`` keeps every shard record it writes; ``verdict`` and ``report`` name a run
deleted and re-created after the pilot finished, or run against another endpoint or model
(issue 25, item 4)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_verdict_pilot import PLAN

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import ScriptedServer


@pytest.fixture
def pilot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "runs"
    out.mkdir()
    chain = out / "prereg.jsonl"
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]) == 0
    run = ["pilot", "run", str(plan), "--out", str(out), "--scripted"]
    assert main(run) == 0
    assert main(run) == 0  # the same pilot again: it resumes, and overwrites nothing it recorded
    capsys.readouterr()
    return out


def test_pilot_run_keeps_a_history_of_its_shard_records(pilot: Path) -> None:
    history = (pilot / ".pilot" / "history.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in history]
    finished = [r for r in records if r["finished_at"]]
    assert len(records) == 4 and len(finished) == 2  # start and finish of each `pilot run`
    latest = json.loads((pilot / ".pilot" / "shard-1-of-1.json").read_text())
    assert latest == records[-1]


def test_verdict_and_report_name_a_run_recreated_later_against_another_model(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verdict", str(pilot)]) == 0
    assert "re-created" not in capsys.readouterr().out
    victim = next(j.parent for j in sorted(pilot.rglob("journal.jsonl")))
    with Ledger.open(victim) as led:
        meta = led.meta
    finished = max(
        json.loads(line)["finished_at"] or ""
        for line in (pilot / ".pilot" / "history.jsonl").read_text().splitlines()
    )
    later = datetime.fromisoformat(finished.replace("Z", "+00:00")) + timedelta(minutes=70)
    shutil.rmtree(victim)
    Ledger.create(
        victim, meta.model_copy(update={"created_at": later.strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
    ).close()
    with ScriptedServer(responder=ResearchResponder(), model="other-model") as srv:
        rc = main(
            ["run", str(victim), "--sessions", "2", "--base-url", srv.base_url, "--api-key", "k",
             "--model", "other-model"]
        )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["verdict", str(pilot)]) == 0
    out = capsys.readouterr().out
    assert f"run {meta.name} was created at" in out and "deleted and re-created" in out
    assert "ran model 'other-model'" in out and "the plan names 'scripted-demo'" in out
    report = tmp_path / "report.md"
    assert main(["report", str(pilot), "--out", str(report)]) == 0
    assert "deleted and re-created" in report.read_text()
    capsys.readouterr()
    main(["prereg", "verify", str(pilot / "prereg.jsonl")])
    assert f"note: run {meta.name} was created at" in capsys.readouterr().out
