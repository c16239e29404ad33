"""A run's identity comes from its hash-chained journal, not the projection's unkeyed head:
editing ``run.config`` in ``ledger.json`` and recomputing the head hash no longer changes
what any reader sees, and ``verdict``, ``report`` and ``prereg verify`` refuse the run
(issue 25, item 2)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_verdict_pilot import PLAN

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.store import canonical_bytes


def _tamper_head(ledger_dir: Path, **run_fields: object) -> None:
    """What an adversary does: edit the head's run metadata and recompute its hash."""
    path = ledger_dir / "ledger.json"
    head = json.loads(path.read_bytes())
    head["run"].update(run_fields)
    body = canonical_bytes({k: v for k, v in head.items() if k != "head_hash"})
    head["head_hash"] = hashlib.sha256(body).hexdigest()
    path.write_text(json.dumps(head), encoding="utf-8")


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def pilot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "runs"
    out.mkdir()
    chain = out / "prereg.jsonl"
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]) == 0
    assert main(["pilot", "run", str(plan), "--out", str(out), "--scripted"]) == 0
    capsys.readouterr()
    return out


def _ledgers(out: Path) -> dict[str, Path]:
    found = {}
    for j in sorted(out.rglob("journal.jsonl")):
        with Ledger.open(j.parent) as led:
            found[led.meta.config] = j.parent
    return found


def test_edited_head_config_is_refused_by_verdict_report_and_prereg_verify(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledgers = _ledgers(pilot)
    assert set(ledgers) == {"B-armed+cur", "B-armed-cur", "C+cur", "C-cur"}
    assert main(["verdict", str(pilot), "--json"]) == 0
    capsys.readouterr()
    # swap the arms of two runs, as the repro did
    _tamper_head(ledgers["C+cur"], config="B-armed+cur")
    _tamper_head(ledgers["B-armed+cur"], config="C+cur")

    with Ledger.open(ledgers["C+cur"]) as led:  # every reader takes the journal's identity
        assert led.meta.config == "C+cur"
        assert led.identity_problem is not None and "run.config" in led.identity_problem

    assert main(["verdict", str(pilot), "--json"]) == 2
    line = _one_line(capsys)
    assert "ledger.json" in line and "run.config" in line and "refused" in line

    assert main(["report", str(pilot), "--out", str(tmp_path / "report.md")]) == 2
    assert "run.config" in _one_line(capsys)
    assert not (tmp_path / "report.md").exists()

    assert main(["prereg", "verify", str(pilot / "prereg.jsonl")]) == 1
    out = capsys.readouterr()
    assert "run.config" in out.out + out.err


def test_edited_head_options_are_refused_and_a_writer_restores_them(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _ledgers(pilot)["C-cur"]
    with Ledger.open(target) as led:
        options = dict(led.meta.options)
    _tamper_head(target, options={**options, "planned_sessions": 99})
    assert main(["verdict", str(pilot)]) == 2
    assert "run.options" in _one_line(capsys)
    with Ledger.open(target, write=True) as led:  # a writer rebuilds the head from the journal
        assert "run.options" in (led.recovered or "")
        assert led.meta.options == options
    assert main(["verdict", str(pilot), "--json"]) == 0
