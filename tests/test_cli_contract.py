"""The contract commands as a user runs them (``python -m curiosity_tui`` in a subprocess):
``sources add|list``, ``downgrades LEDGER --json``, ``downgrades decide``, ``audit`` exit codes;
and the approved waive carrying through to a closure at the next scripted session."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main as cli
from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.offline.research import ResearchResponder

REPO = Path(__file__).resolve().parents[1]
GROUNDS = "The main mechanism is established without the control."


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "curiosity_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


@pytest.fixture
def suppression(tmp_path: Path) -> Path:
    dst = tmp_path / "suppression"
    shutil.copytree(
        REPO / "ledgers" / "episode-suppression-pilot02",
        dst,
        ignore=shutil.ignore_patterns("writer.lock"),
    )
    return dst


def test_sources_add_list_and_bad_file(tmp_path: Path, suppression: Path) -> None:
    text = "Nuremberg's presses issued most Reformation pamphlets between 1518 and 1520.\n"
    good = tmp_path / "nuremberg.txt"
    good.write_text(text, encoding="utf-8")
    binary = tmp_path / "scan.pdf"
    binary.write_bytes(b"%PDF-1.4\n\x00\x01\x02binary")
    added = _run("sources", "add", str(suppression), str(good), "--locator", "archive:7")
    assert added.returncode == 0, added.stderr
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert added.stdout.split()[:2] == [digest[:12], "added"]
    refused = _run("sources", "add", str(suppression), str(binary))
    assert refused.returncode == 2
    assert str(binary) in refused.stderr and "binary" in refused.stderr
    assert "Traceback" not in refused.stderr
    listed = _run("sources", "list", str(suppression), "--json")
    assert listed.returncode == 0
    assert [(s["id"], s["title"], s["locator"]) for s in json.loads(listed.stdout)["sources"]] == [
        (digest, "nuremberg", "archive:7")
    ]
    assert verify(suppression).ok


def test_downgrade_decided_on_the_cli_lets_the_next_answer_close(
    suppression: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = _run("downgrades", str(suppression), "--json")
    assert listed.returncode == 0, listed.stderr
    [d1] = json.loads(listed.stdout)["downgrades"]
    assert (d1["id"], d1["node"], d1["requirement"], d1["status"], d1["proposed_by"]) == (
        "d1",
        "q1",
        "r1",
        "pending",
        "model",
    )
    assert d1["requirement_status"] == "not_satisfied" and len(d1["checks"]) == 4

    # refusals (in-process: the same parser and handler, without a process start each)
    for curator, grounds, message in [
        ("human:", GROUNDS, "curator name"),
        ("model", GROUNDS, "only a human curator"),
        ("ana", "ok", "at least a sentence"),
    ]:
        args = ["downgrades", "decide", str(suppression), "d1", "approve"]
        assert cli([*args, "--grounds", grounds, "--curator", curator]) == 2
        assert message in capsys.readouterr().err
    ok = _run(
        "downgrades", "decide", str(suppression), "d1", "approve",
        "--grounds", GROUNDS, "--curator", "ana",
    )  # fmt: skip
    assert ok.returncode == 0 and ok.stdout.strip() == "d1 approved", ok.stderr
    args = ["downgrades", "decide", str(suppression), "d1", "reject", "--grounds", GROUNDS]
    assert cli([*args, "--curator", "ben"]) == 2
    assert "already approved by human:ana" in capsys.readouterr().err
    assert json.loads(_run("downgrades", str(suppression), "--json").stdout) == {"downgrades": []}

    # before the next session: no findings (the blocked answer was no closure)
    assert cli(["audit", str(suppression)]) == 0
    assert "0 finding(s)" in capsys.readouterr().out
    # session 6 (scripted) closes q1 over the waived requirement. The scripted judge's draws are
    # seeded by the prompt's text, so whether its answer settles much (PRESERVE) is a draw that
    # moves whenever a prompt's wording does: this test pins "the answer settles little".
    init = ResearchResponder.__init__

    def answering(self: ResearchResponder, *args: Any, **kwargs: Any) -> None:
        kwargs["preserve_share"] = 0.0
        init(self, *args, **kwargs)

    monkeypatch.setattr(ResearchResponder, "__init__", answering)
    assert cli(["run", str(suppression), "--sessions", "6", "--scripted"]) == 0
    with Ledger.open(suppression) as led:
        rec = led.session_record(6)
        assert rec is not None and (rec.focus, rec.decision) == ("q1", "ANSWER")
        q1 = led.raw_nodes()["q1"]
        assert q1["status"] == "closed"
        assert q1["return_condition"]["required_facts"][0]["status"] == "waived"
        # (the scripted model may also close another node by a close action: q1 is the point)
        closed = [e for e in led.events() if e.kind == "node_closed" and e.node == "q1"]
        assert [(e.session, e.node, e.data["unmet"]) for e in closed] == [(6, "q1", [])]
    # the closure is audited: facts on file, none verified (S10 d) — exit 1
    audited = _run("audit", str(suppression), "--json")
    assert audited.returncode == 1
    findings = json.loads(audited.stdout)["findings"]
    assert [(f["kind"], f["node"], f["sessions"]) for f in findings] == [
        ("closed_without_verified_evidence", "q1", [6])
    ]
    assert verify(suppression).ok
