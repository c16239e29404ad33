"""Benchmark: Fleiss' κ, Krippendorff's α and a 10,000-sample run bootstrap.

1,000 items × 5 raters, 3 categories, 10 % of ratings missing; the bootstrap is timed
with every item its own run and with 500 runs of two items each. Targets (issue 14.7):
``question_agreement`` (every figure of a question, 10 rater pairs, one set of 10,000
replicates) and the bootstrap < 0.5 s each on the project's 2-core machine. Prints min and
median wall time of several repeats, the CPU time of the fastest, and the load average (the
machine is shared: read the ratios, not the absolute figures); exits 0 (figures, not
assertions).

    PYTHONPATH=. python benchmarks/bench_agreement.py
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from curiosity_tui.packs.agreement import (
    bootstrap_by_cluster,
    fleiss_kappa,
    krippendorff_alpha,
    question_agreement,
)


def _best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    return _timed(fn, repeat)[0]


def _timed(fn, repeat: int = 5) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    """(min wall, median wall, CPU of the fastest) over ``repeat`` calls."""
    runs = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    walls = [w for w, _ in runs]
    return min(walls), statistics.median(walls), min(runs)[1]


def _line(label: str, fn, target: float, repeat: int = 5) -> None:  # type: ignore[no-untyped-def]
    low, med, cpu = _timed(fn, repeat)
    verdict = "ok" if low < target else "over"
    print(
        f"{label:<58} min {low * 1000:7.1f} ms  median {med * 1000:7.1f} ms  "
        f"cpu {cpu * 1000:7.1f} ms  (target < {target * 1000:.0f} ms: {verdict})"
    )


def main() -> None:
    rng = np.random.default_rng(0)
    n_items, n_raters, k = 1000, 5, 3
    truth = rng.integers(0, k, size=n_items)
    labels = np.where(
        rng.random((n_raters, n_items)) < 0.7, truth, rng.integers(0, k, size=(n_raters, n_items))
    )
    missing = rng.random(labels.shape) < 0.1
    data = [
        [None if m else int(v) for v, m in zip(row, mrow, strict=True)]
        for row, mrow in zip(labels, missing, strict=True)
    ]
    counts = np.stack([((labels == c) & ~missing).sum(axis=0) for c in range(k)], axis=1)
    runs = [i // 2 for i in range(n_items)]

    t = _best(lambda: fleiss_kappa(counts))
    print(
        f"fleiss_kappa        1000 items x 5 raters: {t * 1000:8.2f} ms  (kappa={fleiss_kappa(counts).value:.4f})"
    )
    t = _best(lambda: krippendorff_alpha(data))
    print(
        f"krippendorff_alpha  1000 items x 5 raters: {t * 1000:8.2f} ms  (alpha={krippendorff_alpha(data).value:.4f})"
    )
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for label, clusters in (
        ("1,000 runs (one item each)", None),
        ("500 runs (two items each)", runs),
    ):
        iv = bootstrap_by_cluster(counts, clusters, n_boot=10_000, seed=1)
        print(f"Fleiss 95% [{iv['fleiss_kappa'].low:.4f}, {iv['fleiss_kappa'].high:.4f}]")
        _line(
            f"bootstrap 10,000 (raw, Fleiss, alpha), {label}",
            lambda c=clusters: bootstrap_by_cluster(counts, c, n_boot=10_000, seed=1),
            0.5,
        )
    items = [f"i{i}" for i in range(n_items)]
    ratings = {
        f"r{r}": {items[i]: str(labels[r, i]) for i in range(n_items) if not missing[r, i]}
        for r in range(n_raters)
    }
    question_agreement("q", ["0", "1", "2"], ratings, items, n_boot=10)  # warm imports
    for label, clusters in (
        ("1,000 runs", None),
        ("500 runs", {items[i]: f"run{runs[i]}" for i in range(n_items)}),
    ):
        _line(
            f"question_agreement (10 pairs, 10,000 samples), {label}",
            lambda c=clusters: question_agreement(  # type: ignore[misc]
                "q", ["0", "1", "2"], ratings, items, c, n_boot=10_000
            ),
            0.5,
        )
    # the scale coefficients added to a question (issue 24, decision 425): AC1/AC2,
    # Brennan-Prediger, alpha ordinal with their analytic SEs and one 10,000-sample bootstrap,
    # and per pair weighted kappa and PABAK
    from curiosity_tui.packs.scale_agreement import with_scale

    by_run = {items[i]: f"run{runs[i]}" for i in range(n_items)}
    qa = question_agreement("q", ["0", "1", "2"], ratings, items, by_run, n_boot=10)
    _line(
        "scale coefficients, ordinal (10 pairs, 10,000 samples), 500 runs",
        lambda: with_scale(qa, ratings, items, "ordinal", by_run, n_boot=10_000, seed=1),
        0.5,
    )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
