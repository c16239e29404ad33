"""Benchmark: Fleiss' κ, Krippendorff's α and a 10,000-sample run bootstrap.

1,000 items × 5 raters, 3 categories, 10 % of ratings missing; the bootstrap is timed
with every item its own run and with 500 runs of two items each. Target: < 1 s each on the project's 2-core
machine. Prints one line per figure; exits 0 (figures, not assertions).

    PYTHONPATH=. python benchmarks/bench_agreement.py
"""

from __future__ import annotations

import time

import numpy as np

from curiosity_tui.packs.agreement import (
    bootstrap_by_cluster,
    fleiss_kappa,
    krippendorff_alpha,
    question_agreement,
)


def _best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


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
    for label, clusters in (
        ("1,000 runs (one item each)", None),
        ("500 runs (two items each)", runs),
    ):
        t = _best(
            lambda c=clusters: bootstrap_by_cluster(counts, c, n_boot=10_000, seed=1), repeat=2
        )
        iv = bootstrap_by_cluster(counts, clusters, n_boot=10_000, seed=1)
        print(
            f"bootstrap 10,000 samples (raw, Fleiss, alpha), {label}: {t * 1000:8.2f} ms  "
            f"(Fleiss 95% [{iv['fleiss_kappa'].low:.4f}, {iv['fleiss_kappa'].high:.4f}])"
        )
    items = [f"i{i}" for i in range(n_items)]
    ratings = {
        f"r{r}": {items[i]: str(labels[r, i]) for i in range(n_items) if not missing[r, i]}
        for r in range(n_raters)
    }
    clusters = {items[i]: f"run{runs[i]}" for i in range(n_items)}
    t = _best(
        lambda: question_agreement("q", ["0", "1", "2"], ratings, items, clusters, n_boot=10_000),
        repeat=1,
    )
    print(f"question_agreement (all figures, 10 pairs, 10,000 samples each): {t * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
