"""Benchmark: ``metrics --survival``'s pooled Kaplan–Meier median with its 10,000-draw
bootstrap by run, for one configuration of 8 runs × 40 questions over 10 sessions (a
pilot-sized arm four times over). Prints min and median wall time of several repeats and the
load average (the machine is shared: read ratios, not absolute figures); exits 0 (figures, not
assertions).

    PYTHONPATH=. python benchmarks/bench_survival.py
"""

from __future__ import annotations

import os
import random
import statistics
import time

from curiosity_tui.analysis.survival_config import _interval


def _arm(runs: int, questions: int, sessions: int) -> list[list[tuple[int, bool]]]:
    rng = random.Random(26)
    out = []
    for _ in range(runs):
        lives = []
        for _ in range(questions):
            created = rng.randint(0, sessions - 1)
            t = rng.randint(0, sessions - created)
            lives.append((t, t < sessions - created and rng.random() < 0.6))
        out.append(lives)
    return out


def main() -> None:
    per_run = _arm(8, 40, 10)
    walls = []
    for seed in range(5):
        t0 = time.perf_counter()
        _interval("C+cur", per_run, 10_000, seed)
        walls.append(time.perf_counter() - t0)
    print(
        f"survival bootstrap (8 runs x 40 questions, 10,000 draws): "
        f"min {min(walls):.3f} s, median {statistics.median(walls):.3f} s; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
