"""Bootstrap intervals for agreement statistics: percentile intervals resampling clusters
(runs), so that several ratings of one run are one observation. Vectorised; one set of
replicates serves all of one question's intervals (:func:`bootstrap_question`).

The kernels they resample are in :mod:`curiosity_tui.packs.statistics`; both are re-exported
by :mod:`curiosity_tui.packs.agreement` (import from there).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

from curiosity_tui.blas import one_blas_thread
from curiosity_tui.packs.statistics import (
    AgreementDataError,
    Interval,
    _alpha_from_stats,
    _alpha_item_disagreement,
    _as_counts,
    _cohen_from_margins,
    _fleiss_from_stats,
    _item_agreement,
    codes_to_counts,
)

__all__ = [
    "bootstrap_by_cluster",
    "bootstrap_cohen",
    "bootstrap_question",
    "replicate_sums",
]


POOLED = ("raw_agreement", "fleiss_kappa", "krippendorff_alpha")


def _cluster_weights(rng: np.random.Generator, n_clusters: int, size: int) -> np.ndarray:
    """``size`` × ``n_clusters`` draw counts: how often each cluster appears in a replicate."""
    dtype: type[np.signedinteger] = np.int32 if size * n_clusters < 2**31 else np.int64
    idx = rng.integers(0, n_clusters, size=(size, n_clusters), dtype=dtype)
    np.add(idx, (np.arange(size, dtype=dtype) * n_clusters)[:, None], out=idx)
    return (
        np.bincount(idx.ravel(), minlength=size * n_clusters)
        .reshape(size, n_clusters)
        .astype(float)
    )


def _cluster_sum(values: np.ndarray, cluster_index: np.ndarray, n_clusters: int) -> np.ndarray:
    """Sum per-item rows (1-D or 2-D) into per-cluster rows."""
    if values.ndim == 1:
        return np.bincount(cluster_index, weights=values, minlength=n_clusters)
    out = np.zeros((n_clusters, values.shape[1]))
    np.add.at(out, cluster_index, values)
    return out


def _cluster_index(kept: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    """Item → cluster position (clusters sorted by name) and the number of clusters."""
    names = sorted(set(kept), key=str)
    pos = {c: i for i, c in enumerate(names)}
    return np.array([pos[c] for c in kept], dtype=np.int64), len(names)


def replicate_sums(
    cluster_stats: np.ndarray, *, n_boot: int, seed: int, chunk: int = 1_000
) -> Iterator[np.ndarray]:
    """Chunks of bootstrap replicates of the column sums of ``cluster_stats`` (clusters ×
    statistics): each replicate draws as many clusters as there are, with replacement.

    One draw-count matrix per chunk serves every column, so any number of statistics
    resampled together costs one set of draws; BLAS runs on one thread.
    """
    rng = np.random.default_rng(seed)
    n_c = cluster_stats.shape[0]
    done = 0
    with one_blas_thread():
        while done < n_boot:
            size = min(chunk, n_boot - done)
            yield _cluster_weights(rng, n_c, size) @ cluster_stats
            done += size


def _unresampled(
    statistic_count: int, n_boot: int, seed: int, confidence: float, why: str
) -> list[Interval]:
    return [
        Interval(
            low=None,
            high=None,
            confidence=confidence,
            n_boot=n_boot,
            n_undefined=n_boot,
            seed=seed,
            undefined_reason=why,
        )
        for _ in range(statistic_count)
    ]


def _interval(reps: np.ndarray, confidence: float, n_boot: int, seed: int) -> Interval:
    ok = ~np.isnan(reps)
    n_undef = int((~ok).sum())
    if not ok.any():
        return Interval(
            low=None,
            high=None,
            confidence=confidence,
            n_boot=n_boot,
            n_undefined=n_undef,
            seed=seed,
            undefined_reason="the statistic is undefined on every bootstrap replicate",
        )
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(reps[ok], [tail, 100.0 - tail])
    return Interval(
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_boot=n_boot,
        n_undefined=n_undef,
        seed=seed,
    )


def _pooled_stats(arr: np.ndarray, cidx: np.ndarray, n_c: int) -> np.ndarray:
    """Per-cluster Σ P_i, item count, Σ α disagreement and category totals (3 + k columns)."""
    return np.column_stack(
        [
            _cluster_sum(_item_agreement(arr), cidx, n_c),
            _cluster_sum(np.ones(arr.shape[0]), cidx, n_c),
            _cluster_sum(_alpha_item_disagreement(arr), cidx, n_c),
            _cluster_sum(arr, cidx, n_c),
        ]
    )


def _pooled_reps(agg: np.ndarray, statistic: str, width: int | None = None) -> np.ndarray:
    """One pooled statistic on each replicate; its columns are ``agg[:, :width]``."""
    s_p, s_n, s_d, cat = agg[:, 0], agg[:, 1], agg[:, 2], agg[:, 3:width]
    if statistic == "raw_agreement":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(s_p / s_n)
    if statistic == "fleiss_kappa":
        return np.asarray(_fleiss_from_stats(s_p, s_n, cat))
    return np.asarray(_alpha_from_stats(s_d, cat))


def _pair_stats(a: np.ndarray, b: np.ndarray, k: int, cidx: np.ndarray, n_c: int) -> np.ndarray:
    """Per-cluster pair count, agreeing count and both raters' category totals (2 + 2k)."""
    both = (a >= 0) & (b >= 0)
    ones = both.astype(float)
    rows = np.zeros((len(a), k))
    cols = np.zeros((len(a), k))
    rows[np.flatnonzero(both), a[both]] = 1.0
    cols[np.flatnonzero(both), b[both]] = 1.0
    per_item = np.column_stack([ones, ones * (a == b), rows, cols])
    return _cluster_sum(per_item, cidx, n_c)


def _pair_reps(agg: np.ndarray, k: int, lo: int = 0) -> np.ndarray:
    """Cohen's κ on each replicate; the pair's 2 + 2k columns start at ``lo``."""
    mid = lo + 2 + k
    return np.asarray(
        _cohen_from_margins(agg[:, lo], agg[:, lo + 1], agg[:, lo + 2 : mid], agg[:, mid : mid + k])
    )


def _collect(
    chunks: Iterator[np.ndarray], fns: Sequence[Callable[[np.ndarray], np.ndarray]]
) -> list[np.ndarray]:
    """Apply each statistic to every chunk of replicate sums; one array of replicates each."""
    out: list[list[np.ndarray]] = [[] for _ in fns]
    for agg in chunks:
        for got, fn in zip(out, fns, strict=True):
            got.append(fn(agg))
    return [np.concatenate(g) for g in out]


def bootstrap_by_cluster(
    counts: Any,
    clusters: Sequence[Hashable] | None = None,
    *,
    statistics: Sequence[str] = POOLED,
    n_boot: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk: int = 1_000,
) -> dict[str, Interval]:
    """Percentile intervals for raw agreement, Fleiss' κ and nominal α, resampling clusters.

    ``counts`` is items × categories; ``clusters[i]`` names the run item ``i`` came from
    (``None``: every item its own cluster). A replicate draws as many clusters as there
    are, with replacement, and keeps every rating of every item of a drawn cluster
    together — two ratings of one run are one observation. Replicates on which a
    statistic is undefined are counted in ``n_undefined`` and left out of the percentiles.
    """
    arr = _as_counts(counts)
    if n_boot < 1:
        raise AgreementDataError("n_boot must be at least 1")
    if clusters is None:
        clusters = list(range(arr.shape[0]))
    if len(clusters) != arr.shape[0]:
        raise AgreementDataError("clusters must name one cluster per item (row of counts)")
    unknown = set(statistics) - set(POOLED)
    if unknown:
        raise AgreementDataError(f"unknown statistic(s): {sorted(unknown)}")
    keep = arr.sum(axis=1) >= 2 if arr.size else np.zeros(arr.shape[0], dtype=bool)
    cidx, n_c = _cluster_index([c for c, k in zip(clusters, keep, strict=True) if k])
    if n_c == 0:
        why = "no item has two or more ratings"
        return dict(
            zip(
                statistics,
                _unresampled(len(statistics), n_boot, seed, confidence, why),
                strict=True,
            )
        )
    chunks = replicate_sums(
        _pooled_stats(arr[keep], cidx, n_c), n_boot=n_boot, seed=seed, chunk=chunk
    )
    fns = [partial(_pooled_reps, statistic=s) for s in statistics]
    reps = _collect(chunks, fns)
    return {
        s: _interval(r, confidence, n_boot, seed) for s, r in zip(statistics, reps, strict=True)
    }


def bootstrap_cohen(
    a_codes: Sequence[int],
    b_codes: Sequence[int],
    k: int,
    clusters: Sequence[Hashable] | None = None,
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk: int = 1_000,
) -> Interval:
    """Percentile interval for Cohen's κ of one pair, resampling the clusters (runs) with
    an item rated by both. ``a_codes``/``b_codes`` are category indices (−1 for missing)
    aligned by item."""
    a = np.asarray(a_codes, dtype=np.int64)
    b = np.asarray(b_codes, dtype=np.int64)
    if clusters is None:
        clusters = list(range(len(a)))
    both = (a >= 0) & (b >= 0)
    cidx, n_c = _cluster_index([c for c, ok in zip(clusters, both, strict=True) if ok])
    if n_c == 0:
        return _unresampled(1, n_boot, seed, confidence, "no item was rated by both raters")[0]
    stats = _pair_stats(a[both], b[both], k, cidx, n_c)
    chunks = replicate_sums(stats, n_boot=n_boot, seed=seed, chunk=chunk)
    (reps,) = _collect(chunks, [partial(_pair_reps, k=k)])
    return _interval(reps, confidence, n_boot, seed)


def bootstrap_question(
    codes: np.ndarray,
    k: int,
    clusters: Sequence[Hashable],
    pairs: Sequence[tuple[int, int]],
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk: int = 1_000,
) -> tuple[dict[str, Interval], list[Interval]]:
    """Every interval of one question from one set of replicates: raw agreement, Fleiss'
    κ and α over all raters, and Cohen's κ of each rater pair (rows of ``codes``,
    raters × items, −1 for missing).

    A replicate resamples the question's clusters (those with an item rated at least
    twice) and every figure is computed on that same replicate, so a pair's κ counts the
    drawn clusters in which both of its raters rated an item.
    """
    counts = codes_to_counts(codes, k)
    keep = counts.sum(axis=1) >= 2
    cidx, n_c = _cluster_index([c for c, ok in zip(clusters, keep, strict=True) if ok])
    if n_c == 0:
        why = "no item has two or more ratings"
        nothing = _unresampled(len(POOLED) + len(pairs), n_boot, seed, confidence, why)
        return dict(zip(POOLED, nothing, strict=False)), nothing[len(POOLED) :]
    kept = codes[:, keep]
    width = 3 + k
    blocks = [_pooled_stats(counts[keep], cidx, n_c)]
    blocks += [_pair_stats(kept[i], kept[j], k, cidx, n_c) for i, j in pairs]
    fns: list[Callable[[np.ndarray], np.ndarray]] = [
        partial(_pooled_reps, statistic=s, width=width) for s in POOLED
    ]
    fns += [partial(_pair_reps, k=k, lo=width + p * (2 + 2 * k)) for p in range(len(pairs))]
    chunks = replicate_sums(np.hstack(blocks), n_boot=n_boot, seed=seed, chunk=chunk)
    intervals = [_interval(r, confidence, n_boot, seed) for r in _collect(chunks, fns)]
    return dict(zip(POOLED, intervals, strict=False)), intervals[len(POOLED) :]
