"""A projection head ahead of the journal proves committed events are missing from the
journal: every open refuses in one line and changes nothing (issue 25, item 1). A head that
is behind or damaged is still rebuilt from the journal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.errors import CorruptLedgerError
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.ledger.journal import scan

SEED = "Did the printing press cause the Reformation?"


def _ledger(tmp_path: Path, sessions: int = 3) -> Path:
    path = tmp_path / "r1"
    Ledger.create(path, RunMeta(name="r1", seed=SEED, config="B-armed-cur")).close()
    assert main(["run", str(path), "--sessions", str(sessions), "--scripted"]) == 0
    return path


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_journal_without_its_final_newline_refuses_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    file_bytes: Callable[[Path], dict[str, bytes]],
) -> None:
    path = _ledger(tmp_path)
    jpath = path / "journal.jsonl"
    jpath.write_bytes(jpath.read_bytes()[:-1])  # the last commit marker loses its newline
    before = file_bytes(path)
    capsys.readouterr()
    rc = main(["run", str(path), "--sessions", "5", "--scripted"])
    line = _one_line(capsys)
    assert rc == 2, line
    assert "journal.jsonl" in line and "ahead" in line and "nothing was changed" in line
    assert file_bytes(path) == before


def test_emptied_journal_refuses_sources_add_and_keeps_the_projection(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    file_bytes: Callable[[Path], dict[str, bytes]],
) -> None:
    path = _ledger(tmp_path)
    (path / "journal.jsonl").write_bytes(b"")
    note = tmp_path / "note.txt"
    note.write_text("a source\n", encoding="utf-8")
    before = file_bytes(path)
    assert any(k.startswith("projection/") for k in before)
    capsys.readouterr()
    rc = main(["sources", "add", str(path), str(note)])
    line = _one_line(capsys)
    assert rc == 2, line
    assert "journal.jsonl" in line and "seq 0" in line
    assert file_bytes(path) == before


def test_journal_cut_by_a_whole_batch_refuses_readers_and_writers(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    jpath = path / "journal.jsonl"
    events = scan(jpath).events
    last_session_start = next(
        i for i, ev in enumerate(events) if ev["session"] == events[-1]["session"]
    )
    cut = sum(len(line) + 1 for line in jpath.read_bytes().split(b"\n")[:last_session_start])
    jpath.write_bytes(jpath.read_bytes()[:cut])
    for write in (True, False):
        with pytest.raises(CorruptLedgerError, match="ahead of the journal"):
            Ledger.open(path, write=write)
    assert jpath.stat().st_size == cut


def test_damaged_head_claiming_more_than_the_journal_refuses(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    head = json.loads((path / "ledger.json").read_bytes())
    head["live_nodes"] += 1  # the head hash no longer matches: damaged
    (path / "ledger.json").write_text(json.dumps(head), encoding="utf-8")
    jpath = path / "journal.jsonl"
    jpath.write_bytes(jpath.read_bytes()[:-1])
    with pytest.raises(CorruptLedgerError, match="ahead of the journal"):
        Ledger.open(path, write=True)


def test_behind_and_damaged_heads_are_still_rebuilt(tmp_path: Path) -> None:
    path = _ledger(tmp_path, sessions=2)
    old_head = (path / "ledger.json").read_bytes()
    assert main(["run", str(path), "--sessions", "3", "--scripted"]) == 0
    (path / "ledger.json").write_bytes(old_head)  # behind: the journal holds one more session
    with Ledger.open(path, write=True) as led:
        assert led.last_session == 3
        assert "projection rebuilt" in (led.recovered or "")
    (path / "ledger.json").write_text("{", encoding="utf-8")  # damaged, journal intact
    with Ledger.open(path, write=True) as led:
        assert led.last_session == 3
        assert "damaged" in (led.recovered or "")
