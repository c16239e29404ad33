"""ε sweep: re-classification of recorded Δ values, strict PRESERVE iff Δ < −ε."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.rundata import RunData, RunSession, write_run_file
from curiosity_tui.analysis.sweep import (
    DEFAULT_EPSILONS,
    format_sweep,
    preserves,
    sweep,
    sweep_runs,
)
from curiosity_tui.cli import main

# Thirty Δ values laid out to give the report's table (§4): 30, 29, 26, 24, 18, 13, 2 of 30.
REPORT_DELTAS: list[float] = (
    [-0.07]  # preserved at 0.05 only
    + [-0.12] * 3  # up to 0.10
    + [-0.17] * 2  # up to 0.15
    + [-0.22] * 6  # up to 0.20
    + [-0.27] * 5  # up to 0.25
    + [-0.35] * 11  # up to 0.30
    + [-0.45] * 2  # at every threshold
)
REPORT_RATES = [1.00, 0.97, 0.87, 0.80, 0.60, 0.43, 0.07]


def test_reproduces_the_report_table_shape() -> None:
    assert len(REPORT_DELTAS) == 30
    res = sweep(REPORT_DELTAS, recorded_epsilons=[0.15])
    assert [r.epsilon for r in res.rows] == list(DEFAULT_EPSILONS)
    assert [round(r.rate or 0, 2) for r in res.rows] == REPORT_RATES
    assert [r.preserved for r in res.rows] == [30, 29, 26, 24, 18, 13, 2]
    rates = [r.rate or 0 for r in res.rows]
    assert all(x >= y for x, y in zip(rates, rates[1:], strict=False))  # monotone non-increasing
    assert res.rows[2].preserved == 26  # 13/15 in each protocol arm, as recorded at 0.15
    assert "re-classification of the 30 Δ values recorded during the runs at ε = 0.15" in res.caveat
    assert "not 7 sets of runs" in res.caveat


def test_threshold_is_strict() -> None:
    assert not preserves(-0.15, 0.15)
    assert preserves(-0.1501, 0.15)
    res = sweep([-0.15, -0.15, 0.3], [0.15])
    assert res.rows[0].preserved == 0


def test_empty_and_formatting() -> None:
    res = sweep([])
    assert res.n == 0 and all(r.rate is None for r in res.rows)
    text = format_sweep(sweep(REPORT_DELTAS))
    assert "| preservation rate | 1.00 | 0.97 | 0.87 | 0.80 | 0.60 | 0.43 | 0.07 |" in text
    assert "not a set of runs" in text or "not 7 sets of runs" in text


def _run(config: str, rid: str, deltas: list[float]) -> RunData:
    return RunData(
        config=config,
        run_id=rid,
        epsilon=0.15,
        sessions=[RunSession(session=i + 1, delta=d) for i, d in enumerate(deltas)],
    )


def test_sweep_runs_groups_by_configuration(tmp_path: Path) -> None:
    runs = [_run("C+cur", f"r{i}", REPORT_DELTAS[i * 5 : i * 5 + 5]) for i in range(3)] + [
        _run("C-cur", f"r{i}", REPORT_DELTAS[15 + i * 5 : 20 + i * 5]) for i in range(3)
    ]
    runs.append(RunData(config="B-armed+cur", run_id="r0"))  # records no Δ: no table
    out = sweep_runs(runs)
    assert [r.label for r in out] == ["C+cur", "C-cur"]
    assert sum(r.n for r in out) == 30
    pooled = sweep_runs(runs, by_config=False)
    assert [round(r.rate or 0, 2) for r in pooled[0].rows] == REPORT_RATES


def test_cli_sweep_deltas_and_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "deltas.txt"
    f.write_text("# recorded at 0.15\n" + "\n".join(str(d) for d in REPORT_DELTAS) + "\n")
    assert main(["sweep", "--deltas", str(f)]) == 0
    out = capsys.readouterr().out
    assert "0.87" in out and "re-classification" in out
    write_run_file(_run("C+cur", "r0", [-0.2, -0.1]), tmp_path / "r0.run.json")
    assert main(["sweep", str(tmp_path), "--json", "--epsilons", "0.05,0.15"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["label"] == "C+cur"
    assert [r["preserved"] for r in data[0]["rows"]] == [2, 1]
    bad = tmp_path / "bad.txt"
    bad.write_text("0.1\nabc\n")
    assert main(["sweep", "--deltas", str(bad)]) == 2
    assert "bad.txt:2: not a number" in capsys.readouterr().err
