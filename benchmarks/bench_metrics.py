"""Timing of the analysis layer (issue 7 targets: < 2 s each; issue 14: regen < 1.5 s wall).

1. every registry metric over 200 runs x 5 sessions (similarity metrics included);
2. regen similarity (regen_mean + regen_dup_share) over 10,000 questions;
3. aggregation with bootstrap intervals for every metric and the standard pairs;
4. the verdict (locked rule + exploratory) and the ε sweep over the same runs.

Each line prints wall time and CPU time (process_time: what a busy machine does not inflate).

Run: PYTHONPATH=. python benchmarks/bench_metrics.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import time

import numpy as np

from curiosity_tui.analysis import attraction, similarity
from curiosity_tui.analysis.aggregate import _cached_index, boot_centres
from curiosity_tui.analysis.prereg import parse_plan
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import RunData, RunSession
from curiosity_tui.analysis.sweep import sweep_runs
from curiosity_tui.analysis.tables import build
from curiosity_tui.analysis.verdict import evaluate_rule, exploratory
from curiosity_tui.offline.synthetic_rundata import random_run

CONFIGS = ("B-armed+cur", "B-armed-cur", "C+cur", "C-cur")
WORDS = [
    "printing",
    "press",
    "reformation",
    "luther",
    "pamphlet",
    "literacy",
    "vernacular",
    "bible",
    "church",
    "indulgence",
    "printer",
    "guild",
    "censorship",
    "humanism",
    "erasmus",
    "latin",
    "sermon",
    "broadside",
    "merchant",
    "city",
    "university",
    "monastery",
    "heresy",
    "reform",
    "council",
    "peasant",
    "prince",
]

PLAN = """
name = "bench"
configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 50
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "bench"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes"]
[budgets]
session_completion_tokens = 4000
[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = ["max_depth", "nodes_worked"]
"""


def question(rng: np.random.Generator) -> str:
    n = int(rng.integers(6, 14))
    return "Did " + " ".join(rng.choice(WORDS, size=n)) + "?"


def runs_200(rng: np.random.Generator) -> list[RunData]:
    return [random_run(rng, CONFIGS[i % 4], f"r{i}") for i in range(200)]


def question_runs(rng: np.random.Generator, total: int = 10_000) -> list[RunData]:
    """200 runs x 5 sessions x 10 questions = 10,000 questions."""
    per_session = total // (200 * 5)
    return [
        RunData(
            config=CONFIGS[i % 4],
            run_id=f"q{i}",
            sessions=[
                RunSession(session=s, questions=[question(rng) for _ in range(per_session)])
                for s in range(1, 6)
            ],
        )
        for i in range(200)
    ]


def timed(label: str, fn) -> float:  # type: ignore[no-untyped-def]
    boot_centres.cache_clear()  # every block pays for its own work
    attraction._default_groups.cache_clear()
    _cached_index.cache_clear()
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{label:<66} {dt:7.3f} s wall {cpu:7.3f} s CPU")
    return dt


def _import_scipy_sparse() -> None:
    from scipy import sparse  # noqa: F401


def _import_sklearn() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: F401


def main() -> None:
    rng = np.random.default_rng(7)
    reg = default_registry()
    runs = runs_200(rng)
    qruns = question_runs(rng)
    n_q = sum(len(qs) for r in qruns for qs in r.questions_by_session().values())

    def all_metrics() -> None:
        similarity._cached_maxima.cache_clear()
        for m in reg:
            for r in runs:
                m(r)

    def regen() -> None:
        similarity._cached_maxima.cache_clear()
        for r in qruns:
            reg.get("regen_mean")(r)
            reg.get("regen_dup_share")(r)

    plan = parse_plan(PLAN)
    timed("one-off: import scipy.sparse (all the regen path imports)", _import_scipy_sparse)
    timed("one-off: import scikit-learn's TfidfVectorizer (not used by regen)", _import_sklearn)
    print(f"{len(reg)} registry metrics; {len(runs)} runs x 5 sessions; {n_q} questions")
    timed(f"all {len(reg)} metrics over 200 runs x 5 sessions (target < 2 s)", all_metrics)
    timed(f"regen_mean + regen_dup_share over {n_q} questions (target < 1.5 s)", regen)
    timed(
        "tables: aggregates + bootstrap (10k draws) for 4 pairs",
        lambda: (similarity._cached_maxima.cache_clear(), build(runs, reg)),
    )
    timed(
        "verdict (locked rule) + exploratory section",
        lambda: (
            similarity._cached_maxima.cache_clear(),
            evaluate_rule(plan, runs),
            exploratory(plan, runs),
        ),
    )
    timed("ε sweep over the recorded Δ (1000 values, by configuration)", lambda: sweep_runs(runs))


if __name__ == "__main__":
    main()
