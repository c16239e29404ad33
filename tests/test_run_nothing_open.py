"""A run whose ledger has nothing open stops at once and says so; it does not tell the person to
run again (on Gemma 3 270M a session ANSWERed the only question and left nothing open, and the
run told the person to "run the same command again to resume", which can never help)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curiosity_tui.cli import main as cli
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.ledger.event_data import NodeClosed
from curiosity_tui.protocol.stop_advice import NO_OPEN_QUESTION, resume_advice


def test_a_run_with_nothing_open_says_so(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "closed"
    led = Ledger.create(path, RunMeta(name="closed", seed="Why did it spread?", config="C-cur"))
    with led.batch(1, marker="batch_committed", label="close") as b:
        b.emit(NodeClosed(reason="ANSWER"), node="q1", actor="human:ana")
    led.close()
    assert cli(["run", str(path), "--sessions", "2", "--scripted"]) == 1
    err = capsys.readouterr().err
    assert f"stopped at session 1: {NO_OPEN_QUESTION}; nothing is left open" in err
    assert "run the same command again" not in err
    with Ledger.open(path) as led:
        assert led.raw_nodes()["q1"]["status"] == "closed"


def test_other_stops_still_advise_resuming() -> None:
    assert resume_advice("session budget exhausted") == "run the same command again to resume"
    assert resume_advice(None) == "run the same command again to resume"
