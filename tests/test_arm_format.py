"""The arm cannot be read from a pack's format (issue 25, item 7; decisions 410, 510).

A scripted pilot of the six configurations × 3 runs × 5 sessions (one scripted model for
every arm: the same text bank, the same amount of questions, facts and remarks a session),
packed under the pilot-02 scheme: for C vs B-armed (the store-bearing items), a logistic
regression on the leak check's count and length features, leave-one-out, is strictly
inside the 95% binomial band of chance, and ``pack leakcheck`` does not flag the split.
Before decision 510 the protocol arm raised up to five questions a session against
self-ask's three and wrote an answer paragraph on top of its action notes: 0.750 leave-one-
out on every shuffle seed (the band's edge). Figures for seeds 1-3:
``benchmarks/bench_arm_format.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import LeaveOneOut, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from curiosity_tui.cli import main
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.packs.leakcheck import item_features

CONFIGS = ["A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
PLAN = f"""\
name = "armfmt"
configurations = {json.dumps(CONFIGS)}
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


def _quiet(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(argv)
    return rc, out.getvalue()


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("armfmt")
    (root / "plan.toml").write_text(PLAN)
    runs = root / "runs"
    runs.mkdir()
    chain = str(runs / "prereg.jsonl")
    assert _quiet(["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs",
                   "--chain", chain])[0] == 0  # fmt: skip
    assert _quiet(["pilot", "run", str(root / "plan.toml"), "--out", str(runs),
                   "--scripted"])[0] == 0  # fmt: skip
    return runs


def _c_vs_b_armed(pack: Path, key_path: Path) -> tuple[np.ndarray, np.ndarray]:
    key = json.loads(key_path.read_text())["items"]
    x, y = [], []
    for line in (pack / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        k = key[item["id"]]
        if k["kind"] == "run" and k["config"].startswith(("C", "B-armed")):
            x.append(item_features(item["sections"]))
            y.append(k["config"].startswith("C"))
    return np.array(x), np.array(y)


def test_c_and_b_armed_items_are_not_told_apart_by_format(pilot: Path, tmp_path: Path) -> None:
    pack, key_path = tmp_path / "pack", tmp_path / "pack.key.json"
    rc, _ = _quiet(["pack", "build", str(pilot), "--out", str(pack), "--scheme", "pilot-02",
                    "--seed", "1", "--key-out", str(key_path)])  # fmt: skip
    assert rc == 0
    x, y = _c_vs_b_armed(pack, key_path)
    n = len(y)
    assert n == 12 and int(y.sum()) == 6
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    accuracy = float(cross_val_score(clf, x, y, cv=LeaveOneOut()).mean())
    lo, hi = binom.ppf(0.025, n, 0.5) / n, binom.ppf(0.975, n, 0.5) / n
    assert lo < accuracy < hi, f"leave-one-out {accuracy:.3f} outside ({lo:.2f}, {hi:.2f})"

    rc, out = _quiet(["pack", "leakcheck", str(pack), "--key", str(key_path), "--json"])
    assert rc == 0
    task = next(t for t in json.loads(out)["tasks"] if t["task"] == "C-vs-B-armed")
    assert task["p_value"] > 0.05 and not task["verdict"].startswith("LEAK"), task["verdict"]


def test_every_arm_with_a_store_raises_and_remarks_alike() -> None:
    """The mechanism: over many draws, self-ask and the protocol's deliverable raise the same
    number of questions and write the same number of remarks a session (the protocol's answer
    is one of them), so a count cannot tell the arms apart."""
    responder = ResearchResponder()
    rendering = (
        "QUESTION LEDGER (input to session 2; open questions in queue order: 2)\n\n"
        "[1] q1 | status: open | pulse: 1 | parent: -\n"
        "    question: Did the printing press cause the Reformation?\n\n"
        "[2] q2 | status: open | pulse: 0 | parent: q1\n"
        "    question: How did pamphlets travel from the press to readers in other towns?\n"
    )
    armed = f"The question store as it stands:\n\n{rendering}\n"
    counts: dict[str, list[tuple[int, int]]] = {"self-ask": [], "deliverable": []}
    for k in range(400):
        run = f"r{k}"
        ask = responder("self-ask", 2, _body(armed), run=run)
        counts["self-ask"].append(
            (len(ask["questions"]), sum(a["action"] == "work" for a in ask["actions"]))
        )
        decision = "Decision: <PRESERVE>" if k % 2 else "Decision: ANSWER"
        text = f"{rendering}\nFocus this session: q2: How did pamphlets travel?\n\n{decision}"
        d = responder("deliverable", 2, _body(text), run=run)
        questions = len(d["open_layer"]["living_questions"]) + len(d["new_questions"])
        remarks = sum(a["action"] == "work" for a in d["actions"]) + (d["answer"] is not None)
        counts["deliverable"].append((questions, remarks))
    for kind, rows in counts.items():
        assert {q for q, _ in rows} == {1, 2, 3}, kind
        assert {r for _, r in rows} == {1, 2}, kind
    means = {kind: np.array(rows, dtype=float).mean(axis=0) for kind, rows in counts.items()}
    assert np.all(np.abs(means["self-ask"] - means["deliverable"]) < 0.25), means


def _body(text: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}]}
