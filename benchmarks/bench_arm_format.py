"""Measurement: can the arm be read from a pack's format? (issue 25, item 7; decision 410)

Builds a scripted pilot of the six configurations × 3 runs × 5 sessions (the same text
bank for every arm), packs it (pilot-02 scheme), and prints for C vs B-armed (store-bearing
items only): leave-one-out accuracy of a logistic regression on the leak check's 43 count
and length features, the binomial 95% band of chance for that many items, the project's own
leak check (ridge, stratified k-fold, 99 permutations), how often protocol status phrases
("stays open", "is answered") appear in the pack, and the lines each control item shares
with its base item against the most two real items of one configuration share. Figures,
not assertions; exits 0. Needs scikit-learn (a test dependency).

    PYTHONPATH=. python benchmarks/bench_arm_format.py
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import tempfile
from pathlib import Path

import numpy as np
from scipy.stats import binom
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import LeaveOneOut, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from curiosity_tui.cli import main
from curiosity_tui.packs.leakcheck import item_features, leakcheck

PLAN = """\
name = "armfmt"
configurations = ["A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
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
STATUS = re.compile(r"stays open|remains open|is answered|is narrowed", re.IGNORECASE)


def _quiet(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def _lines(item: dict) -> set[str]:  # type: ignore[type-arg]
    return {ln.strip() for s in item["sections"] for ln in s.split("\n") if ln.strip()}


def main_bench() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "plan.toml").write_text(PLAN)
        runs = root / "runs"
        runs.mkdir()
        chain = str(runs / "prereg.jsonl")
        assert _quiet(["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs",
                       "--chain", chain]) == 0  # fmt: skip
        assert _quiet(["pilot", "run", str(root / "plan.toml"), "--out", str(runs),
                       "--scripted"]) == 0  # fmt: skip
        for seed in (1, 2, 3):  # the shuffle and the controls' draws differ; the runs do not
            pack = root / f"pack{seed}"
            assert _quiet(["pack", "build", str(runs), "--out", str(pack), "--scheme", "pilot-02",
                           "--seed", str(seed)]) == 0  # fmt: skip
            print(f"pack seed {seed}:")
            _measure(pack, root / f"pack{seed}.key.json")


def _measure(pack: Path, key_path: Path) -> None:
    key = json.loads(key_path.read_text())["items"]
    items = [json.loads(ln) for ln in (pack / "items.jsonl").read_text().splitlines()]
    x, y = [], []
    for it in items:
        k = key[it["id"]]
        store_bearing = k["config"].startswith(("C", "B-armed"))
        if k["kind"] == "run" and store_bearing:
            x.append(item_features(it["sections"]))
            y.append(k["config"].startswith("C"))
    xa, ya = np.array(x), np.array(y)
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    acc = cross_val_score(clf, xa, ya, cv=LeaveOneOut()).mean()
    n = len(ya)
    lo, hi = binom.ppf(0.025, n, 0.5) / n, binom.ppf(0.975, n, 0.5) / n
    print(f"C vs B-armed: {n} items, logistic regression LOO accuracy {acc:.3f}; "
          f"95% band of chance [{lo:.2f}, {hi:.2f}]: {'inside' if acc <= hi else 'OUTSIDE'}")  # fmt: skip
    rep = leakcheck(pack, key_path=key_path, permutations=99)
    task = next(t for t in rep.tasks if t.task == "C-vs-B-armed")
    print(f"pack leakcheck C-vs-B-armed: accuracy {task.accuracy:.2f}, p = {task.p_value:.3f}:"
          f" {task.verdict.split(':')[0]}")  # fmt: skip
    text = (pack / "items.jsonl").read_text()
    print(f"protocol status phrases in the pack: {len(STATUS.findall(text))}")
    by_id = {it["id"]: it for it in items}
    for cid, k in key.items():
        if k["kind"] == "control" and k.get("base_item") in by_id:
            shared = len(_lines(by_id[cid]) & _lines(by_id[k["base_item"]]))
            print(f"control {k['control']}: shares {shared} of {len(_lines(by_id[cid]))} "
                  "lines with its base item")  # fmt: skip
    by_cfg: dict[str, list[str]] = {}
    for iid, k in key.items():
        if k["kind"] == "run":
            by_cfg.setdefault(k["config"], []).append(iid)
    most = max(
        len(_lines(by_id[a]) & _lines(by_id[b]))
        for ids in by_cfg.values()
        for a, b in itertools.combinations(ids, 2)
    )
    print(f"most lines two real items of one configuration share: {most}")


if __name__ == "__main__":
    main_bench()
