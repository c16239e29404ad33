"""Runs that did not finish are visible: over real ledgers where one run committed none of its
sessions and another stopped half-way, metrics, verdict and report count committed sessions
only, list the short runs per configuration, and the verdict says which clauses rest on
incomplete data."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.analysis.completeness import completeness
from curiosity_tui.analysis.rundata import RunData, RunSession, load_runs
from curiosity_tui.cli import main
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.research import ResearchResponder, load_bank
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import plan_runs, run_pilot

PLAN = """\
name = "unfinished"
configurations = ["B-armed+cur", "C+cur"]
runs = 2
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["live_nodes"]
"""
#: run -> the first session whose final call gets a reply no validator accepts (twice)
BREAK = {"C+cur-r1": 1, "B-armed+cur-r0": 2}


class Breaking(ResearchResponder):
    def __call__(self, kind: str, session: int | None, body: dict[str, Any], run: str = "") -> Any:
        at = BREAK.get(run)
        broken = at is not None and session is not None and session >= at
        if broken and kind in ("deliverable", "self-ask"):
            return {"not": "the schema"}
        return super().__call__(kind, session, body, run=run)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("unfinished")
    (root / "plan.toml").write_text(PLAN)
    out = root / "runs"
    out.mkdir()
    chain = out / "prereg.jsonl"
    lock = ["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs", "--chain"]
    assert main([*lock, str(chain)]) == 0
    specs = plan_runs(
        seed=load_bank().seed,
        configurations=["B-armed+cur", "C+cur"],
        runs=2,
        options={"planned_sessions": 2, "scripted": True},
    )

    async def go() -> None:
        with ScriptedServer(responder=Breaking()) as srv:
            client = ModelClient(
                base_url=srv.base_url, api_key="k", model="scripted-demo", retry_backoff_s=0.01
            )
            results = await run_pilot(specs, out, client, sessions=2, concurrency=4)
            await client.aclose()
        done = {r.ledger: r.sessions_done for r in results}
        assert done == {"B-armed+cur-r0": 1, "B-armed+cur-r1": 2, "C+cur-r0": 2, "C+cur-r1": 0}

    asyncio.run(go())
    return out


def test_completeness_lists_the_short_runs_with_the_failure(run_dir: Path) -> None:
    runs = load_runs([run_dir])
    done = completeness(runs)
    assert [(s.run_id, s.committed, s.planned) for s in done.short] == [
        ("B-armed+cur-r0", 1, 2),
        ("C+cur-r1", 0, 2),
    ]
    assert all(s.planned_source == "run metadata" for s in done.short)
    empty = done.of("C+cur")[0]
    assert empty.empty and empty.failed_at == 1 and empty.reason
    assert "session 1 failed" in empty.describe() and "not counted" in empty.describe()
    assert done.of("B-armed+cur")[0].failed_at == 2


def test_metrics_leave_out_a_run_with_no_committed_session(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["metrics", str(run_dir), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    live = doc["metrics"]["live_nodes"]
    assert live["C+cur"]["n"] == 1 and live["C+cur"]["n_missing"] == 1
    assert {r["run_id"]: r["value"] for r in live["C+cur"]["per_run"]}["C+cur-r1"] is None
    assert live["B-armed+cur"]["n"] == 2  # a short run counts with its committed session
    short = {s["run_id"] for s in doc["completeness"]["short"]}
    assert short == {"B-armed+cur-r0", "C+cur-r1"}

    assert main(["metrics", str(run_dir)]) == 0
    text = capsys.readouterr().out
    banner, head = text.split("\n\n")[:2]  # scripted runs: the practice label first (442)
    assert banner.startswith("SCRIPTED PRACTICE")
    assert head.startswith("# Runs that did not finish")
    assert "C+cur: C+cur-r1 (0 of 2; session 1 failed:" in text
    assert "B-armed+cur: B-armed+cur-r0 (1 of 2; session 2 failed:" in text


def test_verdict_over_incomplete_data_says_so_and_names_the_clause(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verdict", str(run_dir), "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["verdict"]
    [clause] = v["by_metric"][0]["clauses"]
    assert clause["n_treatment"] == 1 and clause["n_control"] == 2
    assert any("C+cur: 1 run(s) short" in x and "not counted" in x for x in clause["incomplete"])
    assert any("B-armed+cur: 1 run(s) short" in x for x in clause["incomplete"])
    assert {s["run_id"] for s in v["short_runs"]} == {"B-armed+cur-r0", "C+cur-r1"}

    assert main(["verdict", str(run_dir)]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[2]  # after the practice label (scripted runs, 442)
    assert first.startswith("Verdict over SCRIPTED replies")
    assert "over incomplete data (1 clause(s) affected)" in first
    assert "the clauses it affects: live_nodes: C+cur vs B-armed+cur" in text
    assert "C+cur-r1 (0 of 2; session 1 failed:" in text


def test_report_lists_unfinished_runs(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    assert main(["report", str(run_dir), "--out", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert "over incomplete data" in md
    assert "## Runs that did not finish" in md  # the tables' section, demoted a level
    limits = md.split("## Limits the data imposes", 1)[1]
    assert "Runs that did not finish" in limits and "C+cur-r1 (0 of 2" in limits


def test_a_complete_set_has_no_section_and_bare_snapshots_count() -> None:
    done = RunData(config="C+cur", run_id="a", sessions=[RunSession(session=1)], meta={"x": 1})
    assert completeness([done], planned=1).complete
    assert completeness([done]).complete  # the longest run is the only run
    bare = RunData(config="C+cur", run_id="snap")  # built in code: no session log
    assert bare.counted() and completeness([bare], planned=5).complete
    empty = RunData(config="C+cur", run_id="e", meta={"name": "e"})
    assert not empty.counted()
    [short] = completeness([empty, done]).short
    assert short.planned_source == "longest run" and short.planned == 1


async def test_the_analysis_screen_headline_says_incomplete(run_dir: Path) -> None:
    from textual.widgets import Static

    from curiosity_tui.app import AnalysisApp

    app = AnalysisApp(run_dir)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        head = str(app.screen.query_one("#verdict-headline", Static).render())
    assert "over incomplete data (1 clause(s))" in head
