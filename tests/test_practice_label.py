"""Practice never looks like results (decision 442): every analysis output over scripted runs
carries the label at its top and in a column; verdict refuses a scripted/model mix unless
``--allow-mixed``, and then names the scripted runs."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from curiosity_tui.analysis.practice import SCRIPTED_BANNER, replies_of
from curiosity_tui.analysis.rundata import load_runs, write_run_file
from curiosity_tui.cli import main

PLAN = """\
name = "practice"
configurations = ["C+cur", "C-cur"]
runs = 2
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "C-cur"]]
metrics = ["max_depth"]
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("practice")
    plan = root / "plan.toml"
    plan.write_text(PLAN)
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs"]) == 0
    runs = root / "runs"
    assert (
        main(["pilot", "run", str(plan), "--out", str(runs), "--scripted", "--workers", "1"]) == 0
    )
    return root


def _out(capsys: pytest.CaptureFixture[str], args: list[str], code: int = 0) -> str:
    capsys.readouterr()
    assert main(args) == code
    return capsys.readouterr().out


def test_verdict_over_scripted_runs_says_so(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _out(capsys, ["verdict", str(study / "runs")])
    assert text.startswith(SCRIPTED_BANNER)
    assert "Verdict over SCRIPTED replies:" in text and "\nVerdict:" not in text
    data = json.loads(_out(capsys, ["verdict", str(study / "runs"), "--json"]))
    assert data["replies"] == "scripted" and len(data["scripted_runs"]) == 4


def test_metrics_text_json_and_csv_say_so(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = str(study / "runs")
    text = _out(capsys, ["metrics", runs])
    assert text.startswith(SCRIPTED_BANNER)
    assert "| replies | scripted | scripted |" in text
    data = json.loads(_out(capsys, ["metrics", runs, "--json"]))
    assert data["replies"] == "scripted" and set(data["run_replies"].values()) == {"scripted"}
    per_run, diffs = tmp_path / "m.csv", tmp_path / "d.csv"
    _out(capsys, ["metrics", runs, "--csv", str(per_run), "--csv-differences", str(diffs)])
    for path in (per_run, diffs):
        rows = list(csv.DictReader(io.StringIO(path.read_text())))
        assert rows and {r["replies"] for r in rows} == {"scripted"}, path


def test_sweep_says_so(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _out(capsys, ["sweep", str(study / "runs")])
    assert text.startswith(SCRIPTED_BANNER)
    assert "ε sweep — C+cur — SCRIPTED replies" in text
    data = json.loads(_out(capsys, ["sweep", str(study / "runs"), "--json"]))
    assert data and {r["replies"] for r in data} == {"scripted"}


def test_report_and_its_figures_say_so(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _out(capsys, ["report", str(study / "runs"), "--out", str(tmp_path / "rep")])
    md = (tmp_path / "rep" / "report.md").read_text()
    head = md.splitlines()[:4]
    assert f"> **{SCRIPTED_BANNER}**" in head
    assert "Verdict over SCRIPTED replies" in md and "| replies | scripted | scripted |" in md
    figures = sorted((tmp_path / "rep").glob("report-*.svg"))
    assert figures, "the plots extra is in the test extra: figures are drawn"
    for fig in figures:
        assert f"<title>{SCRIPTED_BANNER}</title>" in fig.read_text(), fig.name


def _mixed(study: Path, tmp_path: Path) -> Path:
    """The scripted runs plus one run file whose metadata says a model replied."""
    mixed = tmp_path / "mixed"
    shutil.copytree(study / "runs", mixed / "runs")
    shutil.copy(study / "prereg.jsonl", mixed / "prereg.jsonl")
    run = load_runs([study / "runs"])[0]
    run.run_id = "real-run"
    run.meta["name"] = "real-run"
    run.meta["options"] = {k: v for k, v in run.meta["options"].items() if k != "scripted"}
    write_run_file(run, mixed / "runs" / "real-run.run.json")
    return mixed / "runs"


def test_verdict_refuses_a_mix_unless_allowed_and_names_it(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _mixed(study, tmp_path)
    capsys.readouterr()
    assert main(["verdict", str(runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "4 scripted run(s)" in err and "beside 1 model run(s)" in err and "--allow-mixed" in err
    text = _out(capsys, ["verdict", str(runs), "--allow-mixed"])
    assert text.startswith("MIXED: 4 run(s) had scripted replies")
    assert "Verdict over MIXED replies" in text


def test_model_runs_carry_no_banner(study: Path, tmp_path: Path) -> None:
    from curiosity_tui.analysis.practice import banner, practice_of

    runs = load_runs([study / "runs"])
    for r in runs:
        r.meta["options"].pop("scripted", None)
    assert practice_of(runs).replies == "model" and banner("model") == ""
    assert replies_of(["model", "mixed"]) == "mixed" and replies_of([]) == "model"
