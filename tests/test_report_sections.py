"""The report's analysis section and its GRRAS rating section (issue 24, item 7; decision 428)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.analysis.lockchain import lock
from curiosity_tui.analysis.rundata import RunData, RunNode, RunSession, write_run_file
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme

T, C = "C+cur", "B-armed+cur"
PLAN = f"""
name = "sections"
configurations = ["{T}", "{C}"]
runs = 3
sessions = 1
seed_question = "Did the press cause it?"
model = "m"
epsilon = 0.15
contract = "pilot-02"
metrics = ["max_depth", "live_nodes"]
family = "bh"
min_seconds_per_item = 21
[budgets]
[rule]
kind = "any_metric_interval_beats_in_all"
pairs = [["{T}", "{C}"]]
metrics = ["max_depth"]

[[comparisons]]
name = "depth"
metrics = ["max_depth"]
[comparisons.rule]
kind = "any_metric_beats_in_all"
pairs = [["{T}", "{C}"]]
metrics = ["max_depth"]

[[comparisons]]
name = "breadth"
metrics = ["live_nodes"]
[comparisons.rule]
kind = "any_metric_interval_beats_in_all"
pairs = [["{T}", "{C}"]]
metrics = ["live_nodes"]
"""


def _chain(depth: int) -> dict[str, RunNode]:
    return {
        f"q{i}": RunNode(id=f"q{i}", parent=None if i == 1 else f"q{i - 1}")
        for i in range(1, depth + 1)
    }


def _runs(run_dir: Path) -> None:
    for cfg, depths in ((T, [5, 6, 7]), (C, [2, 2, 3])):
        for k, d in enumerate(depths):
            run = RunData(
                config=cfg, run_id=f"{cfg}-{k}", contract="pilot-02", nodes=_chain(d),
                sessions=[RunSession(session=1)],
            )  # fmt: skip
            write_run_file(run, run_dir / f"{cfg}-{k}.run.json")


def test_report_has_the_analysis_section_and_a_grras_rating_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    lock(plan, "before-runs", chain_path=run_dir / "prereg.jsonl", runs_dir=run_dir)
    _runs(run_dir)
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), pack, seed=11, order="per-rater")
    for rater in ("ann", "bob"):
        s = RatingSession(pack, rater)
        for k, item in enumerate(s.order):
            cat = ["none", "some", "many"][k % 3]
            s.save(item, {"q1": {"category": "built", "grounds": "g"},
                          "q2": {"category": cat, "grounds": "g"}},
                   timing=("2026-12-02T06:00:00.000Z", 20.0 + k))  # fmt: skip
    out = tmp_path / "report.md"
    assert main(["report", str(run_dir), "--out", str(out), "--pack", str(pack)]) == 0
    text = out.read_text()
    analysis = text.split("## Analysis", 1)[1].split("\n## ", 1)[0]
    assert "decided by the interval rule: alpha 0.05" in analysis
    assert "Family of comparisons: 2 `[[comparisons]]`, read together with the `bh`" in analysis
    assert "| comparison | rule | raw | adjusted (bh) |" in analysis
    assert "| depth | any_metric_beats_in_all | MET | MET |" in analysis
    assert "| p | p adj. |" in analysis
    assert "## Design analysis (locked with the plan)" in text
    rating = text.split("## Rating study: pack", 1)[1]
    for part in ("**Raters.** 2 (human: ann, bob)", "**Independence**", "**Items.** 6 items",
                 "each rater an order of their own", "**Blinding.**", "the key is still closed",
                 "**Scale and level.**", "| q2 | ordinal | none < some < many |",
                 "**Coefficients with their uncertainty**", "Gwet AC2 (quadratic)",
                 "**Missing ratings and time.**", "| ann | human | 6 | 0 | 0 | 22.500 |",
                 "**Too fast** (under the plan's 21 s per item): ann: 1 ("):  # fmt: skip
        assert part in rating, part
