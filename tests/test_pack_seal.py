"""A pack keeps what it saw when its key was opened where cutting ``log.jsonl`` cannot
remove it; every later ``unblind``, ``agreement`` and ``adjudicate`` names each change, and
refuses a log cut, rewritten or deleted after unblinding (issue 25, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.disagreement import AdjudicationError, adjudicate
from curiosity_tui.packs.pack import PackError
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import unblind
from curiosity_tui.packs.unblind_seal import SEAL_FILE


def _rate(pack: Path, rater: str, q1: str) -> None:
    s = RatingSession(pack, rater)
    for n, item in enumerate(s.order):
        cat = q1 if n % 2 else "fresh"
        s.save(
            item,
            {"q1": {"category": cat, "grounds": "g"}, "q2": {"category": "some", "grounds": "g"}},
        )


@pytest.fixture
def opened(tmp_path: Path) -> Path:
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), pack, seed=3)
    _rate(pack, "ann", "built")
    _rate(pack, "bob", "fresh")
    rep = unblind(pack, by="coord")
    assert rep.changes_since_opened == []
    assert (pack / SEAL_FILE).is_file()
    assert (tmp_path / "pack.key.opened.jsonl").is_file()  # beside the key, outside the pack
    return pack


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_ratings_rewritten_after_unblinding_are_named(
    opened: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _rate(opened, "bob", "built")  # bob revises every rating after the key was opened
    rep = unblind(opened, by="coord")
    assert len(rep.changes_since_opened) == 1
    assert rep.changes_since_opened[0].startswith("ratings/bob.jsonl changed since the key")
    capsys.readouterr()
    assert main(["unblind", str(opened), "--by", "coord"]) == 0
    assert (
        "CHANGED AFTER UNBLINDING: ratings/bob.jsonl" not in capsys.readouterr().out
    )  # sealed again
    _rate(opened, "ann", "fresh")
    assert main(["agreement", str(opened), "--boot", "20"]) == 0
    assert "CHANGED AFTER UNBLINDING: ratings/ann.jsonl changed" in capsys.readouterr().out
    assert main(["unblind", str(opened), "--by", "coord"]) == 0
    assert "CHANGED AFTER UNBLINDING: ratings/ann.jsonl changed" in capsys.readouterr().out


@pytest.mark.parametrize("seal_in_pack_too", [True, False])
def test_a_log_cut_after_unblinding_keeps_adjudication_closed(
    opened: Path, capsys: pytest.CaptureFixture[str], seal_in_pack_too: bool
) -> None:
    log = opened / "log.jsonl"
    log.write_bytes(log.read_bytes().split(b"\n")[0] + b"\n")  # truncated to its first line
    if not seal_in_pack_too:
        (opened / SEAL_FILE).unlink()  # the copy beside the key still holds
    with pytest.raises(PackError, match="cut or rewritten after unblinding"):
        adjudicate(opened, "i01", "q1", "built", "g", by="coord")
    for argv in (
        ["unblind", str(opened), "--by", "coord"],
        ["agreement", str(opened), "--boot", "20"],
        ["adjudication", "list", str(opened)],
    ):
        assert main(argv) == 2, argv
        assert "cut or rewritten after unblinding" in _one_line(capsys)


def test_a_deleted_log_is_refused(opened: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (opened / "log.jsonl").unlink()
    assert main(["unblind", str(opened), "--by", "coord"]) == 2
    assert "the pack log is missing" in _one_line(capsys)
    with pytest.raises((PackError, AdjudicationError), match="missing"):
        adjudicate(opened, "i01", "q1", "built", "g", by="coord")
