"""A control item shares no more lines with its base item than two real items of one
configuration share with each other (issue 25, item 7): lines compared stripped, over all
three sections (labels are fresh per item). Figures: benchmarks/bench_arm_format.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.packs.build import build_pack, material_from_ledger
from curiosity_tui.packs.control_overlap import arm_overlap, item_lines
from curiosity_tui.packs.pack import KeyEntry, Pack, PackItem
from curiosity_tui.packs.schemes import load_scheme

PLAN = """\
name = "overlap"
configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 3
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = ["max_depth", "nodes_worked"]
"""


@pytest.fixture(scope="module")
def scripted_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three scripted runs of each store-bearing configuration (one text bank for all)."""
    root = tmp_path_factory.mktemp("overlap")
    (root / "plan.toml").write_text(PLAN)
    out = root / "runs"
    out.mkdir()
    chain = str(out / "prereg.jsonl")
    assert main(["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs",
                 "--chain", chain]) == 0  # fmt: skip
    assert main(["pilot", "run", str(root / "plan.toml"), "--out", str(out), "--scripted"]) == 0
    return sorted(j.parent for j in out.rglob("journal.jsonl"))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_controls_copy_no_more_of_their_base_than_real_items_share(
    tmp_path: Path, scripted_runs: list[Path], seed: int
) -> None:
    mats = [material_from_ledger(p) for p in scripted_runs]
    res = build_pack(mats, load_scheme("pilot-02"), tmp_path / "p", seed=seed)
    pack = Pack.open(res.packdir)
    key = {
        k: KeyEntry.model_validate(v)
        for k, v in json.loads(res.key_path.read_text())["items"].items()
    }
    staged: list[tuple[PackItem, KeyEntry]] = [(pack.items[i], key[i]) for i in pack.order]
    limit = arm_overlap(staged)
    controls = [(i, e) for i, e in key.items() if e.kind == "control"]
    assert controls, res.notes
    for iid, entry in controls:
        assert entry.base_item is not None
        shared = item_lines(pack.items[iid].sections) & item_lines(
            pack.items[entry.base_item].sections
        )
        assert len(shared) <= limit, (entry.control, len(shared), limit, sorted(shared))
