"""The mechanical verdict: issue 7's acceptance test (the report's rule ambiguity), ties,
margins, directions, exploratory metrics that cannot flip it, amendments, the CLI."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from curiosity_tui.analysis.prereg import PlanError, lock, parse_plan, read_chain
from curiosity_tui.analysis.registry import Metric, MetricFn, default_registry
from curiosity_tui.analysis.rundata import RunData, write_run_file
from curiosity_tui.analysis.verdict import (
    evaluate_rule,
    exploratory,
    format_report,
    verdict_for,
)
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_rundata import structural_run

PLAN = """\
name = "pilot-01-as-registered"
configurations = ["A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 3
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "test-model"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes", "closed_nodes", "closed_with_facts"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
treatment = ["C+cur", "C-cur"]
control = ["B-armed+cur", "B-armed-cur"]
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = RULE_METRICS
margin = MARGIN
ties = "TIES"
text = "C+cur beats B-armed+cur on at least one structural metric beyond return-condition bookkeeping and C-cur retains that advantage over B-armed-cur"
"""

OPEN_RULE = '"at least one structural metric beyond return-condition bookkeeping"'

# Per-run figures whose means are the report's §8 table (pilot-01, three runs each):
#   max_depth    C+cur 3.00  B-armed+cur 2.33   C-cur 1.67  B-armed-cur 2.00
#   nodes_worked C+cur 5.33  B-armed+cur 5.00   C-cur 6.00  B-armed-cur 2.67
#   of which voluntary: C+cur 3.00, C-cur 5.00; B-armed: all voluntary
REPORT_RUNS = {
    "C+cur": [
        dict(depth=3, worked=5, voluntary=3),
        dict(depth=3, worked=5, voluntary=3),
        dict(depth=3, worked=6, voluntary=3),
    ],
    "B-armed+cur": [dict(depth=2, worked=5), dict(depth=2, worked=5), dict(depth=3, worked=5)],
    "C-cur": [
        dict(depth=1, worked=6, voluntary=5),
        dict(depth=2, worked=6, voluntary=5),
        dict(depth=2, worked=6, voluntary=5),
    ],
    "B-armed-cur": [dict(depth=2, worked=2), dict(depth=2, worked=3), dict(depth=2, worked=3)],
}


def report_runs() -> list[RunData]:
    return [
        structural_run(cfg, f"{cfg}/r{i}", **kw)  # type: ignore[arg-type]
        for cfg, specs in REPORT_RUNS.items()
        for i, kw in enumerate(specs)
    ]


def plan_text(rule_metrics: str, *, margin: str = "0.0", ties: str = "not_met") -> str:
    return (
        PLAN.replace("RULE_METRICS", rule_metrics).replace("MARGIN", margin).replace("TIES", ties)
    )


def test_fixture_means_are_the_reports() -> None:
    from curiosity_tui.analysis.aggregate import aggregate

    t = aggregate(report_runs(), ["max_depth", "nodes_worked", "nodes_worked_voluntary"])
    got = {(c, m): round(a.value or 0, 2) for c, row in t.items() for m, a in row.items()}
    assert got[("C+cur", "max_depth")] == 3.00 and got[("B-armed+cur", "max_depth")] == 2.33
    assert got[("C-cur", "max_depth")] == 1.67 and got[("B-armed-cur", "max_depth")] == 2.00
    assert got[("C+cur", "nodes_worked")] == 5.33 and got[("B-armed+cur", "nodes_worked")] == 5.00
    assert got[("C-cur", "nodes_worked")] == 6.00 and got[("B-armed-cur", "nodes_worked")] == 2.67
    assert got[("C+cur", "nodes_worked_voluntary")] == 3.00
    assert got[("C-cur", "nodes_worked_voluntary")] == 5.00


def test_acceptance_the_reports_rule_ambiguity(tmp_path: Path) -> None:
    """Issue 7: open rule refused at lock; depth alone → not met; with nodes_worked → met."""
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(OPEN_RULE))
    with pytest.raises(PlanError, match="description, not a list of metric names"):
        lock(plan, "before-runs")
    assert not (tmp_path / "prereg.jsonl").exists()

    runs = report_runs()
    plan.write_text(plan_text('["max_depth"]'))
    lock(plan, "before-runs", ts="2026-01-01T00:00:00Z")
    rep = verdict_for(read_chain(tmp_path / "prereg.jsonl"), runs)
    v = rep.verdict
    assert v.outcome == "not_met"
    (depth,) = v.by_metric
    assert [c.outcome for c in depth.clauses] == ["beats", "does_not_beat"]
    assert depth.clauses[0].value_treatment == pytest.approx(3.0)
    assert depth.clauses[0].value_control == pytest.approx(7 / 3)
    assert depth.clauses[1].value_treatment == pytest.approx(5 / 3)
    assert depth.clauses[1].value_control == pytest.approx(2.0)
    # nodes_worked was admissible but not in the rule: exploratory only
    assert "nodes_worked" in {row.metric for row in rep.exploratory}

    plan2 = tmp_path / "plan2.toml"
    plan2.write_text(plan_text('["max_depth", "nodes_worked"]'))
    (tmp_path / "b").mkdir()
    lock(plan2, "before-runs", chain_path=tmp_path / "b" / "prereg.jsonl")
    v2 = verdict_for(read_chain(tmp_path / "b" / "prereg.jsonl"), runs).verdict
    assert v2.outcome == "met"
    worked = next(mc for mc in v2.by_metric if mc.metric == "nodes_worked")
    assert worked.holds is True
    assert [round(c.advantage or 0, 2) for c in worked.clauses] == [0.33, 3.33]


def test_exploratory_metrics_can_never_flip_the_verdict() -> None:
    runs = report_runs()
    reg = default_registry().copy()
    plan = parse_plan(plan_text('["max_depth"]'), registry=reg)
    before = evaluate_rule(plan, runs, registry=reg)
    assert before.outcome == "not_met"

    # an exploratory metric on which the treatment wins everywhere, by a mile
    reg.add(
        Metric(
            name="treatment_wins",
            definition="rigged",
            unit="x",
            denominator="per run",
            fn=lambda run: 1000.0 if run.config.startswith("C") else 0.0,
            structural=True,
            higher_is_better=True,
        )
    )
    # and alter an existing exploratory metric's values: C wins every live/closed count
    for r in runs:
        if r.config.startswith("C"):
            for n in r.nodes.values():
                n.resurfaced = [1, 2, 3, 4, 5]
            r.nodes["extra"] = r.nodes["q1"].model_copy(update={"id": "extra", "status": "closed"})
    after = evaluate_rule(plan, runs, registry=reg)
    assert after.outcome == "not_met"
    assert after.by_metric == before.by_metric
    rows = {row.metric: row for row in exploratory(plan, runs, registry=reg)}
    assert rows["treatment_wins"].by_config["C+cur"] == 1000.0
    assert "max_depth" not in rows


def test_evaluate_rule_only_reads_the_rule_metrics() -> None:
    runs = report_runs()
    reg = default_registry().copy()
    plan = parse_plan(plan_text('["max_depth"]'), registry=reg)
    calls: list[str] = []

    def spy(m: Metric) -> MetricFn:
        def fn(run: RunData) -> float | None:
            calls.append(m.name)
            return m.fn(run)

        return fn

    for m in list(reg):
        reg.remove(m.name)
        reg.add(dataclasses.replace(m, fn=spy(m)))
    evaluate_rule(plan, runs, registry=reg)
    assert set(calls) == {"max_depth"}


@pytest.mark.parametrize(
    ("ties", "outcome"), [("not_met", "not_met"), ("met", "met"), ("undecided", "undecided")]
)
def test_ties_are_read_as_the_plan_says(ties: str, outcome: str) -> None:
    runs = [
        structural_run(c, f"{c}/r{i}", depth=2, worked=2) for c in REPORT_RUNS for i in range(3)
    ]
    plan = parse_plan(plan_text('["max_depth"]', ties=ties))
    v = evaluate_rule(plan, runs)
    assert v.outcome == outcome
    assert {c.outcome for c in v.by_metric[0].clauses} == {"tie"}


def test_margin_is_strict_and_a_tie_at_the_margin_uses_the_tie_reading() -> None:
    runs = report_runs()
    # nodes_worked advantages are 1/3 and 10/3; a margin of 0.5 kills the first clause
    v = evaluate_rule(parse_plan(plan_text('["nodes_worked"]', margin="0.5")), runs)
    assert v.outcome == "not_met"
    # margin exactly 1/3: reads as a tie at the margin
    runs2 = [
        structural_run(c, f"{c}/r{i}", depth=1, worked=w)
        for c, w in (("C+cur", 4), ("B-armed+cur", 3), ("C-cur", 5), ("B-armed-cur", 2))
        for i in range(2)
    ]
    v = evaluate_rule(parse_plan(plan_text('["nodes_worked"]', margin="1.0", ties="met")), runs2)
    assert [c.outcome for c in v.by_metric[0].clauses] == ["tie", "beats"]
    assert v.outcome == "met"


def test_lower_is_better_metrics_beat_downwards() -> None:
    reg = default_registry().copy()
    reg.add(
        Metric(
            name="regen_like",
            definition="lower is better",
            unit="cosine",
            denominator="per run",
            fn=lambda run: 0.5 if run.config.startswith("C") else 0.7,
            higher_is_better=False,
        )
    )
    text = plan_text('["regen_like"]').replace(
        '"closed_with_facts"]', '"closed_with_facts", "regen_like"]'
    )
    v = evaluate_rule(parse_plan(text, registry=reg), report_runs(), registry=reg)
    assert v.outcome == "met"
    assert all(c.advantage == pytest.approx(0.2) for c in v.by_metric[0].clauses)


def test_missing_configuration_makes_the_verdict_incomplete() -> None:
    runs = [r for r in report_runs() if r.config != "B-armed-cur"]
    v = evaluate_rule(parse_plan(plan_text('["max_depth"]')), runs)
    # the first clause beats, the second has no data: not settled, and said so
    assert v.outcome == "incomplete"
    assert any("B-armed-cur: 0 run(s) present" in n for n in v.notes)
    # no metric holds in every pair while a pair lacks data
    v = evaluate_rule(parse_plan(plan_text('["max_depth", "nodes_worked"]')), runs)
    assert v.outcome == "incomplete"


def test_all_metrics_kind() -> None:
    text = plan_text('["max_depth", "nodes_worked"]').replace(
        'kind = "any_metric_beats_in_all"', 'kind = "all_metrics_beat_in_all"'
    )
    assert evaluate_rule(parse_plan(text), report_runs()).outcome == "not_met"


def test_an_amendment_is_reported_apart_never_as_the_verdict(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text('["max_depth"]'))
    lock(plan, "before-runs")
    plan.write_text(plan_text('["max_depth", "nodes_worked"]'))
    lock(plan, "after-mechanical-results", reason="admit coverage after seeing it")
    rep = verdict_for(read_chain(tmp_path / "prereg.jsonl"), report_runs())
    assert rep.verdict.outcome == "not_met" and rep.verdict.lock and rep.verdict.lock.seq == 1
    (amendment,) = rep.amendments
    assert amendment.seq == 2 and amendment.stage == "after-mechanical-results"
    assert amendment.reason == "admit coverage after seeing it"
    assert amendment.rule_changed and amendment.verdict.outcome == "met"
    text = format_report(rep)
    assert text.startswith("Verdict: NOT MET")
    assert "Amendment seq 2 at stage after-mechanical-results" in text
    assert "not the verdict" in text and "reason: admit coverage after seeing it" in text


def test_cli_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text('["max_depth"]'))
    write_run_file(report_runs()[0], tmp_path / "x.run.json")
    assert main(["verdict", str(tmp_path)]) == 2
    assert "no prereg.jsonl" in capsys.readouterr().err
    (tmp_path / "x.run.json").unlink()
    lock(plan, "before-runs")
    for r in report_runs():
        write_run_file(r, tmp_path / (r.run_id.replace("/", "_") + ".run.json"))
    assert main(["verdict", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Verdict: NOT MET")
    assert "C+cur 3.00 > B-armed+cur 2.33" in out
    assert "C-cur 1.67 ≤ B-armed-cur 2.00" in out
    assert "per run: C+cur [3.00, 3.00, 3.00]" in out
    assert "Exploratory" in out and "cannot change the verdict" in out
    assert main(["verdict", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"]["outcome"] == "not_met"
    assert data["verdict"]["by_metric"][0]["clauses"][0]["interval"]["ci_low"] is not None


def test_runs_recording_a_lock_not_in_the_chain_get_no_verdict(tmp_path: Path) -> None:
    from curiosity_tui.analysis.chronology import ForeignLockError

    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text('["max_depth"]'))
    entry = lock(plan, "before-runs")
    runs = report_runs()
    runs[0].meta = {"options": {"prereg": {"hash": entry.hash}}}
    runs[1].meta = {"options": {"prereg": {"hash": "f" * 64}}}
    with pytest.raises(ForeignLockError, match=f"lock f{{12}}… .*: {re.escape(runs[1].run_id)};"):
        verdict_for(read_chain(tmp_path / "prereg.jsonl"), runs)


def test_short_runs_are_noted() -> None:
    from curiosity_tui.analysis.rundata import RunSession

    runs = report_runs()
    runs[0].sessions = [RunSession(session=1), RunSession(session=2, status="failed")]
    v = evaluate_rule(parse_plan(plan_text('["max_depth"]')), runs)
    assert (
        f"C+cur: fewer than the registered 5 sessions committed in {runs[0].run_id} (1 of 5)"
        in v.notes
    )
    assert [s.run_id for s in v.short_runs] == [runs[0].run_id]
