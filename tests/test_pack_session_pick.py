"""Which sessions a pack item shows (decision 440): first and last by default, or
``--sessions``; a 3-session pilot packs sessions 1 and 3 instead of dead-ending on 5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.errors import InputError
from curiosity_tui.packs.session_pick import DEFAULT_PICK, SessionPick, parse_session_pick

PLAN = """\
name = "short"
configurations = ["C+cur", "B-armed+cur"]
runs = 1
sessions = 3
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth"]
"""


@pytest.fixture(scope="module")
def short_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("short")
    plan = root / "plan.toml"
    plan.write_text(PLAN)
    out = root / "runs"
    args = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]
    assert main([*args, "--workers", "1"]) == 0
    return out


def test_a_three_session_pilot_packs_sessions_1_and_3_by_default(
    short_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    out = tmp_path / "pack"
    args = ["pack", "build", str(short_runs), "--out", str(out), "--seed", "3"]
    assert main([*args, "--leak-permutations", "20"]) == 0
    printed = capsys.readouterr().out
    assert "sessions shown (1,last): 1 and 3 in 2 run(s)" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"] == "1,last"
    key = json.loads((tmp_path / "pack.key.json").read_text())
    runs = [e for e in key["items"].values() if e["kind"] == "run"]
    assert len(runs) == 2 and all(e["sessions"] == [1, 3] for e in runs)


def test_sessions_by_number_and_a_session_past_the_run_named(
    short_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    ok = ["pack", "build", str(short_runs), "--out", str(tmp_path / "a"), "--sessions", "1,2"]
    assert main([*ok, "--leak-permutations", "20"]) == 0
    key = json.loads((tmp_path / "a.key.json").read_text())
    assert {tuple(e["sessions"]) for e in key["items"].values() if e["kind"] == "run"} == {(1, 2)}
    capsys.readouterr()
    bad = ["pack", "build", str(short_runs), "--out", str(tmp_path / "b"), "--sessions", "1,5"]
    assert main(bad) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "session 5 is past the run's 3 session(s)" in err and "Traceback" not in err
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1,last", (1, 5)), ("first,last", (1, 5)), ("2,4", (2, 4)), (" 1 , LAST ", (1, 5))],
)
def test_parse_and_resolve(text: str, expected: tuple[int, int]) -> None:
    assert parse_session_pick(text).resolve(5) == expected


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("1", "is not two sessions"),
        ("1,2,3", "is not two sessions"),
        ("3,2", "must come after the first"),
        ("last,2", "cannot be 'last'"),
        ("0,2", "sessions count from 1"),
        ("one,two", "'one' is not a session number"),
    ],
)
def test_bad_picks_named(text: str, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        parse_session_pick(text)


def test_a_one_session_run_has_nothing_after_the_first() -> None:
    with pytest.raises(ValueError, match="no session after session 1"):
        DEFAULT_PICK.resolve(1)
    assert SessionPick(first=2, later="last").resolve(3) == (2, 3)


def test_pack_build_in_a_study_follows_the_plans_pack_table(
    short_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A study's plan says which scheme and sessions its pack has; ``pack build`` without
    ``--scheme``/``--sessions`` follows it (it built pilot-01 before) and says so; runs
    outside a study keep pilot-01 and 1,last."""
    import shutil

    study = tmp_path / "study"
    shutil.copytree(short_runs, study / "runs")
    (study / "plan.toml").write_text(PLAN + '\n[pack]\nscheme = "pilot-02"\nsessions = "1,2"\n')
    capsys.readouterr()
    out = tmp_path / "packs" / "p"
    args = ["pack", "build", str(study / "runs"), "--out", str(out), "--seed", "3"]
    assert main([*args, "--leak-permutations", "20"]) == 0
    printed = capsys.readouterr().out
    assert f"scheme pilot-02 and sessions 1,2 from {study / 'plan.toml'} [pack]" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scheme"]["id"] == "pilot-02" and manifest["sessions"] == "1,2"
    # outside a study folder: the CLI's own defaults
    loose = tmp_path / "loose"
    shutil.copytree(short_runs, loose)
    out2 = tmp_path / "p2"
    args = ["pack", "build", str(loose), "--out", str(out2), "--seed", "3"]
    assert main([*args, "--leak-permutations", "20"]) == 0
    manifest = json.loads((out2 / "manifest.json").read_text())
    assert manifest["scheme"]["id"] == "pilot-01" and manifest["sessions"] == "1,last"
    # a plan that does not load is named in one line, nothing built
    (study / "plan.toml").write_text("name = [\n")
    out3 = tmp_path / "p3"
    args = ["pack", "build", str(study / "runs"), "--out", str(out3), "--seed", "3"]
    assert main([*args, "--leak-permutations", "20"]) != 0
    assert "pack build reads the study plan's [pack]" in capsys.readouterr().err
    assert not out3.exists()
