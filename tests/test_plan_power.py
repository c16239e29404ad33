"""`plan power` (issue 24, item 3; decision 426): the simulated minimum detectable difference
recovers the analytic one on a synthetic pilot with known variance, and the runs needed for
a stated difference come back near the plan's runs when that difference is the MDD."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from curiosity_tui.analysis.plan import parse_plan
from curiosity_tui.analysis.power import analytic_mdd, design_analysis
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.rundata import RunData, RunSession

T, C = "C+cur", "B-armed+cur"


def _registry() -> Registry:
    reg = Registry()
    reg.register(
        "score", definition="a fixture score", unit="points", denominator="per run",
        higher_is_better=True,
    )(lambda run: run.meta.get("score"))  # fmt: skip
    return reg


PLAN = f"""
name = "powered"
configurations = ["{T}", "{C}"]
runs = 20
sessions = 1
seed_question = "Did the press cause it?"
model = "m"
epsilon = 0.15
metrics = ["score"]
alpha = 0.05
[budgets]
[rule]
kind = "any_metric_interval_beats_in_all"
pairs = [["{T}", "{C}"]]
metrics = ["score"]
"""


def _pilot(sd: float, n: int = 60) -> list[RunData]:
    """Each arm: n per-run values with mean 10 (5) and standard deviation exactly ``sd``."""
    z = stats.norm.ppf((np.arange(n) + 0.5) / n)
    z = z / z.std(ddof=1)
    return [
        RunData(
            config=cfg,
            run_id=f"{cfg}-{i}",
            meta={"score": float(mu + sd * v)},
            sessions=[RunSession(session=1)],
        )  # fmt: skip
        for cfg, mu in ((T, 10.0), (C, 5.0))
        for i, v in enumerate(z)
    ]


def test_synthetic_pilot_recovers_the_analytic_mdd_within_ten_percent() -> None:
    reg = _registry()
    plan = parse_plan(PLAN, registry=reg)
    da = design_analysis(plan, pilot=_pilot(2.0), registry=reg, sims=1000, n_boot=200)
    (c,) = da.clauses
    want = analytic_mdd(2.0, 2.0, 20, 0.05, 0.8)  # (1.96 + 0.8416) * 2 * sqrt(2/20) = 1.772
    assert want == pytest.approx(1.772, abs=1e-3)
    assert c.sd_treatment == pytest.approx(2.0) and c.sd_control == pytest.approx(2.0)
    assert c.mdd is not None and abs(c.mdd - want) / want < 0.10, (c.mdd, want)
    # stated SDs give the same figure by the same simulation
    by_sd = design_analysis(plan, sds={"score": 2.0}, registry=reg, sims=1000, n_boot=200)
    assert abs((by_sd.clauses[0].mdd or 0) - want) / want < 0.10


def test_runs_needed_for_a_stated_difference() -> None:
    reg = _registry()
    plan = parse_plan(PLAN, registry=reg)
    d = analytic_mdd(1.0, 1.0, 20, 0.05, 0.8)
    da = design_analysis(
        plan, sds={"score": 1.0}, differences={"score": d}, registry=reg, sims=600, n_boot=150
    )
    c = da.clauses[0]
    assert c.power_at_plan is not None and 0.7 < c.power_at_plan < 0.95
    assert c.runs_needed is not None and 16 <= c.runs_needed <= 24
    tiny = design_analysis(
        plan, sds={"score": 1.0}, differences={"score": 0.01}, registry=reg, sims=200, n_boot=100
    )
    assert tiny.clauses[0].runs_needed is None and "more than 200" in tiny.clauses[0].note


def test_cli_plan_power(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from curiosity_tui.cli import main

    plan = Path(__file__).resolve().parents[1] / "docs" / "pilot-02.toml"
    assert main(["plan", "power", str(plan), "--sd", "max_depth=1.5", "--sims", "200",
                 "--boot", "100", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    headline = [c for c in out["clauses"] if c["rule"] == "" and c["metric"] == "max_depth"]
    assert headline and headline[0]["mdd"] > 0 and headline[0]["runs_per_arm"] == 3
    # a clause with no SD says so instead of a figure
    assert any("no SD stated" in c["note"] for c in out["clauses"])
    assert main(["plan", "power", str(plan)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--pilot DIR or --sd" in err
    assert main(["plan", "power", str(plan), "--sd", "max_depth"]) != 0
    assert "METRIC=VALUE" in capsys.readouterr().err


def test_prereg_lock_records_the_design_and_the_report_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.analysis.lockchain import load_verified_chain
    from curiosity_tui.analysis.report import build_report
    from curiosity_tui.cli import main

    src = Path(__file__).resolve().parents[1] / "docs" / "pilot-02.toml"
    plan = tmp_path / "pilot-02.toml"
    plan.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    design = tmp_path / "design.json"
    assert main(["plan", "power", str(plan), "--sd", "max_depth=1.5", "--sims", "100",
                 "--boot", "50", "--out", str(design)]) == 0  # fmt: skip
    capsys.readouterr()
    runs = tmp_path / "runs"
    chain = runs / "prereg.jsonl"
    argv = ["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]
    assert main([*argv, "--design", str(design)]) == 0
    (entry,) = load_verified_chain(chain)  # the hash covers the design
    assert entry.design is not None and entry.design["plan"] == "pilot-02"
    wrong = tmp_path / "wrong.json"
    wrong.write_text(design.read_text().replace('"plan": "pilot-02"', '"plan": "other"'))
    assert main([*argv[:-1], str(tmp_path / "c2" / "prereg.jsonl"), "--design", str(wrong)]) != 0
    assert "not 'pilot-02'" in capsys.readouterr().err
    run = RunData(config=T, run_id="r0", contract="pilot-02", sessions=[RunSession(session=1)])
    from curiosity_tui.analysis.rundata import write_run_file

    write_run_file(run, runs / "r0.run.json")
    text = build_report(runs)
    assert "## Design analysis (locked with the plan)" in text
    assert "minimum detectable difference at 3 runs per arm" in text


def test_a_pilot_under_another_contract_is_never_pooled_in() -> None:
    reg = _registry()
    plan = parse_plan(PLAN, registry=reg)  # contract: pilot-02 (the default)
    pilot = _pilot(2.0)
    other = [
        r.model_copy(
            update={
                "contract": "pilot-01",
                "run_id": r.run_id + "-p1",
                "meta": {"score": r.meta["score"] * 50},
            }
        )  # fmt: skip
        for r in pilot
    ]
    alone = design_analysis(plan, pilot=pilot, registry=reg, sims=200, n_boot=50)
    mixed = design_analysis(plan, pilot=pilot + other, registry=reg, sims=200, n_boot=50)
    assert mixed.clauses[0].mdd == alone.clauses[0].mdd
    assert mixed.clauses[0].source == "pilot: 60/60 runs"
    only_other = design_analysis(plan, pilot=other, registry=reg, sims=50, n_boot=20)
    assert only_other.clauses[0].mdd is None
    assert "0 run(s) of C+cur and 0 of B-armed+cur" in only_other.clauses[0].note
