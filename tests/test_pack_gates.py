"""The blinding gate can shut, and a fabricated rater cannot move agreement (issue 25, items
5 and 6): too few permutations for α are refused before anything is built; a rater the pack
never expected is refused unless added on the record; a copy of a rater's file with shifted
timestamps is recognised by its content."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials, make_run_dir
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme

GROUNDS = "the later session builds on the first one's account of the Wittenberg presses"


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_strict_build_with_too_few_permutations_is_refused_before_building(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = make_run_dir(tmp_path / "runs", runs_per_config=2)
    out = tmp_path / "pack"
    argv = ["pack", "build", str(runs), "--out", str(out), "--strict", "--leak-permutations"]
    assert main([*argv, "19"]) == 2
    line = _one_line(capsys)
    assert "--leak-permutations 19" in line and "1/20" in line and "at least 20" in line
    assert not out.exists() and not (tmp_path / "pack.key.json").exists()
    plain = ["pack", "build", str(runs), "--out", str(out), "--leak-permutations", "20"]
    assert main(plain) == 0  # the fewest that can reach α = 0.05


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--permutations", "0"), ("--permutations", "-1"), ("--permutations", "5"),
     ("--permutations", "10000000000"), ("--seed", "-1")],
)  # fmt: skip
def test_leakcheck_numbers_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    runs = make_run_dir(tmp_path / "runs", runs_per_config=2)
    pack = tmp_path / "pack"
    assert main(["pack", "build", str(runs), "--out", str(pack), "--leak-permutations", "20"]) == 0
    capsys.readouterr()
    assert main(["pack", "leakcheck", str(pack), flag, value]) == 2
    assert f"{flag} {value}" in _one_line(capsys)


def _rate(pack: Path, rater: str, flip: int) -> None:
    s = RatingSession(pack, rater)
    for n, item in enumerate(s.order):
        cat = "built" if (n + flip) % 3 else "fresh"
        s.save(
            item,
            {"q1": {"category": cat, "grounds": f"{rater}: {GROUNDS} ({n})"},
             "q2": {"category": "some", "grounds": GROUNDS}},
        )  # fmt: skip


def _retimed_copy(src: Path, dest: Path, rater: str) -> None:
    out = []
    for line in src.read_text().splitlines():
        rec = json.loads(line)
        ts = datetime.fromisoformat(rec["ts"].replace("Z", "+00:00")) + timedelta(milliseconds=1)
        rec["ts"] = ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"
        rec["rater"] = rater
        out.append(json.dumps(rec))
    dest.write_text("\n".join(out) + "\n")


def test_a_fabricated_rater_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), pack, seed=3,
               expected_raters=["r1", "r2"])  # fmt: skip
    _rate(pack, "r1", 0)
    _rate(pack, "r2", 1)
    assert main(["agreement", str(pack), "--boot", "20"]) == 0
    capsys.readouterr()
    fake = tmp_path / "r3.jsonl"
    _retimed_copy(pack / "ratings" / "r1.jsonl", fake, "r3")
    assert main(["ratings", "import", str(pack), str(fake)]) == 2
    assert "not among the pack's expected raters" in _one_line(capsys)
    (pack / "ratings" / "r3.jsonl").write_bytes(fake.read_bytes())  # dropped in by hand
    for argv in (["agreement", str(pack), "--boot", "20"], ["unblind", str(pack), "--by", "c"]):
        assert main(argv) == 2
        assert "rater 'r3' is not among the pack's expected raters (r1, r2)" in _one_line(capsys)
    assert main(["pack", "add-rater", str(pack), "r3", "--by", "coord"]) == 0
    capsys.readouterr()
    assert main(["agreement", str(pack), "--boot", "20"]) == 2
    line = _one_line(capsys)
    assert "r3.jsonl" in line and "with other timestamps" in line and "r1" in line
    (pack / "ratings" / "r3.jsonl").unlink()
    _rate(pack, "r3", 2)  # an honest third rater, added on the record
    assert main(["unblind", str(pack), "--by", "coord", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["completeness"]["expected_raters"] == ["r1", "r2", "r3"]
    assert main(["pack", "add-rater", str(pack), "r3", "--by", "coord"]) == 2
    assert "already expected" in _one_line(capsys)
