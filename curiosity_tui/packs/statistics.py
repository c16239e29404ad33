"""Agreement statistics on nominal categories: the kernels behind
:mod:`curiosity_tui.packs.agreement` (which re-exports the public names; import from there).

- :func:`cohen_kappa` ``(a, b)`` — two raters' labels, ``None`` for missing.
- :func:`fleiss_kappa` ``(counts)`` — an items × categories table of counts; rows may
  have different totals (missing ratings); rows with fewer than two ratings are dropped
  and the result says how many.
- :func:`krippendorff_alpha` ``(data)`` — raters × items labels, ``None`` (or NaN) for
  missing; nominal level.
- :func:`raw_agreement` ``(counts)`` — mean pairwise agreement per item.
- :func:`bootstrap_by_cluster`, :func:`bootstrap_cohen` — percentile intervals resampling
  clusters (runs), so that several ratings of one run are one observation. Vectorised.
- :func:`bootstrap_question` — all of one question's intervals (pooled and per pair) from
  one set of replicates (:func:`replicate_sums`).

Every statistic is an :class:`Estimate`; an undefined coefficient has ``value=None`` and
``undefined_reason``, never 1.0 and never an exception. Knows nothing of packs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from curiosity_tui.blas import one_blas_thread
from curiosity_tui.errors import InputError

__all__ = [
    "AgreementDataError",
    "Estimate",
    "Interval",
    "bootstrap_by_cluster",
    "bootstrap_cohen",
    "bootstrap_question",
    "codes_to_counts",
    "cohen_from_codes",
    "cohen_kappa",
    "confusion_matrix",
    "fleiss_kappa",
    "krippendorff_alpha",
    "raw_agreement",
    "replicate_sums",
    "undefined_estimate",
]

_EPS = 1e-12


class AgreementDataError(InputError, ValueError):
    """The table or label lists handed to an agreement function are malformed."""


class Interval(BaseModel):
    """A bootstrap percentile interval."""

    low: float | None
    high: float | None
    confidence: float
    n_boot: int
    n_undefined: int = Field(description="replicates on which the statistic was undefined")
    seed: int
    method: str = "percentile; clusters (runs) resampled with replacement"
    undefined_reason: str | None = None


class Estimate(BaseModel):
    """One agreement coefficient: a value, or ``None`` with the reason it is undefined."""

    statistic: str
    value: float | None
    undefined_reason: str | None = None
    n_items: int = Field(description="items that entered the computation")
    n_dropped: int = Field(0, description="items dropped (fewer than two ratings)")
    interval: Interval | None = None

    @property
    def defined(self) -> bool:
        return self.value is not None

    def format(self, digits: int = 3) -> str:
        if self.value is None:
            return f"undefined ({self.undefined_reason})"
        text = f"{self.value:.{digits}f}"
        if self.interval is not None and self.interval.low is not None:
            text += f" [{self.interval.low:.{digits}f}, {self.interval.high:.{digits}f}]"
        return text


def undefined_estimate(statistic: str, reason: str, n_items: int, n_dropped: int = 0) -> Estimate:
    return Estimate(
        statistic=statistic,
        value=None,
        undefined_reason=reason,
        n_items=n_items,
        n_dropped=n_dropped,
    )


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return isinstance(value, float) and math.isnan(value)
    except TypeError:  # pragma: no cover - exotic label types
        return False


# --------------------------------------------------------------------------- counts


def _as_counts(counts: Any) -> np.ndarray:
    arr = np.asarray(counts, dtype=float)
    if arr.ndim != 2:
        raise AgreementDataError(
            f"counts must be a 2-D items × categories table, got an array of shape {arr.shape}"
        )
    if arr.size and (np.any(arr < 0) or np.any(~np.isfinite(arr))):
        raise AgreementDataError("counts must be finite and non-negative")
    if arr.size and np.any(arr != np.round(arr)):
        raise AgreementDataError("counts must be whole numbers of ratings")
    return arr


def _fleiss_from_stats(sum_p: Any, n_items: Any, cat_totals: Any) -> Any:
    """Fleiss' κ from aggregated statistics; works on scalars or on bootstrap arrays."""
    cat_totals = np.asarray(cat_totals, dtype=float)
    total = cat_totals.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_bar = np.asarray(sum_p, dtype=float) / np.asarray(n_items, dtype=float)
        p = cat_totals / total[..., None]
        p_e = (p * p).sum(axis=-1)
        kappa = (p_bar - p_e) / (1.0 - p_e)
    return np.where((1.0 - p_e) > _EPS, kappa, np.nan)


def _item_agreement(arr: np.ndarray) -> np.ndarray:
    """P_i, the proportion of agreeing ordered rater pairs on each item (rows with n_i ≥ 2)."""
    n_i = arr.sum(axis=1)
    return ((arr * arr).sum(axis=1) - n_i) / (n_i * (n_i - 1))


def _pairable(
    counts: Any, statistic: str, none_reason: str, one_category_reason: str
) -> Estimate | tuple[Any, int, Any]:
    """Drop items with fewer than two ratings; the undefined Estimate when nothing is left to
    compare or every rating is in one category, else (kept counts, dropped, category totals)."""
    per_item = counts.sum(axis=1) if counts.size else np.zeros(counts.shape[0])
    keep = per_item >= 2
    dropped = int((~keep).sum())
    kept = counts[keep]
    if kept.shape[0] == 0:
        return undefined_estimate(statistic, none_reason, 0, dropped)
    totals = kept.sum(axis=0)
    if np.count_nonzero(totals) <= 1:
        return undefined_estimate(statistic, one_category_reason, kept.shape[0], dropped)
    return kept, dropped, totals


def fleiss_kappa(counts: Any) -> Estimate:
    """Fleiss' κ for an items × categories table of rating counts.

    Rows may have different totals (missing ratings); the observed agreement is the mean
    of the per-item pairwise agreement and chance agreement uses the pooled category
    shares, which reduces to Fleiss (1971) when every item has the same number of ratings.
    Items with fewer than two ratings cannot show agreement and are dropped
    (``n_dropped``). Undefined, with a reason, when no item has two ratings or when all
    ratings fall in one category (chance agreement 1, κ = 0/0).
    """
    pairable = _pairable(
        _as_counts(counts),
        "fleiss_kappa",
        "no item has two or more ratings",
        "every rating is in one category: chance agreement is 1, so κ is 0/0",
    )
    if isinstance(pairable, Estimate):
        return pairable
    arr, dropped, totals = pairable
    value = float(_fleiss_from_stats(_item_agreement(arr).sum(), arr.shape[0], totals))
    return Estimate(statistic="fleiss_kappa", value=value, n_items=arr.shape[0], n_dropped=dropped)


def raw_agreement(counts: Any) -> Estimate:
    """Mean over items of the share of agreeing rater pairs (items with ≥ 2 ratings).

    For two raters this is the proportion of items on which they chose the same category.
    """
    arr = _as_counts(counts)
    n_i = arr.sum(axis=1) if arr.size else np.zeros(arr.shape[0])
    keep = n_i >= 2
    dropped = int((~keep).sum())
    arr = arr[keep]
    if arr.shape[0] == 0:
        return undefined_estimate("raw_agreement", "no item has two or more ratings", 0, dropped)
    value = float(_item_agreement(arr).mean())
    return Estimate(statistic="raw_agreement", value=value, n_items=arr.shape[0], n_dropped=dropped)


# --------------------------------------------------------------------------- Krippendorff


def _alpha_from_stats(sum_d: Any, cat_totals: Any) -> Any:
    """Nominal α from Σ_u d_u and pairable category totals n_c (scalars or arrays)."""
    cat_totals = np.asarray(cat_totals, dtype=float)
    n = cat_totals.sum(axis=-1)
    de_num = n * n - (cat_totals * cat_totals).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * np.asarray(sum_d, dtype=float) / de_num
    return np.where(de_num > _EPS, alpha, np.nan)


def _alpha_item_disagreement(arr: np.ndarray) -> np.ndarray:
    """d_u = Σ_{c≠k} n_uc n_uk / (m_u − 1), for rows with m_u ≥ 2."""
    m = arr.sum(axis=1)
    return (m * m - (arr * arr).sum(axis=1)) / (m - 1.0)


def _encode(data: Any) -> tuple[np.ndarray, list[Hashable]]:
    """Raters × items labels → integer codes (−1 for missing) and the sorted label list."""
    rows = [list(row) for row in data]
    if not rows:
        return np.zeros((0, 0), dtype=int), []
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise AgreementDataError("every rater's row must have one entry per item")
    labels: dict[Hashable, int] = {}
    seen = sorted(
        {v for r in rows for v in r if not _is_missing(v)}, key=lambda v: (str(type(v)), v)
    )
    for v in seen:
        labels[v] = len(labels)
    codes = np.array([[-1 if _is_missing(v) else labels[v] for v in r] for r in rows], dtype=int)
    return codes, seen


def codes_to_counts(codes: np.ndarray, k: int) -> np.ndarray:
    """Raters × items codes → items × k counts."""
    n_items = codes.shape[1] if codes.ndim == 2 else 0
    counts = np.zeros((n_items, k), dtype=float)
    for row in codes:
        ok = row >= 0
        np.add.at(counts, (np.nonzero(ok)[0], row[ok]), 1.0)
    return counts


def krippendorff_alpha(data: Any, level: str = "nominal") -> Estimate:
    """Krippendorff's α (nominal) for raters × items data with ``None``/NaN for missing.

    Labels may be any hashable values (strings, ints). Items with fewer than two values
    are not pairable and are dropped. Undefined, with a reason, when fewer than two
    pairable values exist or all pairable values are in one category (expected
    disagreement 0, α = 0/0).
    """
    if level != "nominal":
        raise AgreementDataError(f"only the nominal level is implemented, not {level!r}")
    codes, labels = _encode(data)
    pairable = _pairable(
        codes_to_counts(codes, len(labels)),
        "krippendorff_alpha",
        "no item has two or more values",
        "every pairable value is in one category: expected disagreement is 0, so α is 0/0",
    )
    if isinstance(pairable, Estimate):
        return pairable
    counts, dropped, totals = pairable
    value = float(_alpha_from_stats(_alpha_item_disagreement(counts).sum(), totals))
    return Estimate(
        statistic="krippendorff_alpha", value=value, n_items=counts.shape[0], n_dropped=dropped
    )


# --------------------------------------------------------------------------- Cohen


def _cohen_from_margins(n: Any, agree: Any, rows: Any, cols: Any) -> Any:
    """Cohen's κ from the pair count, the agreeing count and the two raters' category
    totals; every argument may carry leading bootstrap axes (``rows``/``cols``: ... × k)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = np.asarray(agree, dtype=float) / n
        p_e = (np.asarray(rows, dtype=float) * np.asarray(cols, dtype=float)).sum(axis=-1) / (n * n)
        kappa = (p_o - p_e) / (1.0 - p_e)
    return np.where((n > 0) & ((1.0 - p_e) > _EPS), kappa, np.nan)


def _cohen_from_confusion(conf: Any) -> Any:
    """Cohen's κ from k×k confusion counts; ``conf`` may carry leading bootstrap axes."""
    conf = np.asarray(conf, dtype=float)
    return _cohen_from_margins(
        conf.sum(axis=(-2, -1)),
        np.trace(conf, axis1=-2, axis2=-1),
        conf.sum(axis=-1),
        conf.sum(axis=-2),
    )


def cohen_kappa(
    a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any] | None = None
) -> Estimate:
    """Cohen's κ between two raters (the value of scikit-learn's ``cohen_kappa_score``).

    ``a`` and ``b`` are aligned label sequences; positions where either is ``None``/NaN
    are dropped, and so (as in scikit-learn) are positions whose label is not in
    ``labels`` when it is given. Undefined, with a reason, when no item was rated by both
    or when both raters put every item in the same single category.
    """
    if len(a) != len(b):
        raise AgreementDataError(
            f"the two label sequences differ in length ({len(a)} and {len(b)})"
        )
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not _is_missing(x) and not _is_missing(y)]
    if labels is not None:
        wanted = set(labels)
        pairs = [(x, y) for x, y in pairs if x in wanted and y in wanted]
    used = {v for p in pairs for v in p}
    order = list(labels) if labels is not None else sorted(used, key=lambda v: (str(type(v)), v))
    index = {lab: i for i, lab in enumerate(order)}
    a_codes = np.array([index[x] for x, _ in pairs], dtype=np.int64)
    b_codes = np.array([index[y] for _, y in pairs], dtype=np.int64)
    return cohen_from_codes(a_codes, b_codes, order, n_dropped=len(a) - len(pairs))


def cohen_from_codes(
    a_codes: np.ndarray, b_codes: np.ndarray, labels: Sequence[Any], *, n_dropped: int = 0
) -> Estimate:
    """Cohen's κ of two aligned code arrays (indices into ``labels``, both ≥ 0)."""
    k = len(labels)
    if a_codes.size == 0:
        return undefined_estimate("cohen_kappa", "no item was rated by both raters", 0, n_dropped)
    conf = np.bincount(a_codes * k + b_codes, minlength=k * k).reshape(k, k)
    used = np.flatnonzero(conf.sum(axis=0) + conf.sum(axis=1))
    if used.size == 1:
        return undefined_estimate(
            "cohen_kappa",
            f"both raters put every item in {labels[int(used[0])]!r}: chance agreement is 1, "
            "so κ is 0/0",
            int(a_codes.size),
            n_dropped,
        )
    value = float(_cohen_from_confusion(conf))
    if math.isnan(value):  # pragma: no cover - guarded above; kept as a belt
        return undefined_estimate("cohen_kappa", "chance agreement is 1", a_codes.size, n_dropped)
    return Estimate(
        statistic="cohen_kappa", value=value, n_items=int(a_codes.size), n_dropped=n_dropped
    )


def confusion_matrix(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any]) -> list[list[int]]:
    """Rows: rater a's category; columns: rater b's; items missing either are skipped."""
    index = {lab: i for i, lab in enumerate(labels)}
    conf = [[0] * len(labels) for _ in labels]
    for x, y in zip(a, b, strict=True):
        if _is_missing(x) or _is_missing(y):
            continue
        if x not in index or y not in index:
            raise AgreementDataError(
                f"label {x if x not in index else y!r} is not in {list(labels)}"
            )
        conf[index[x]][index[y]] += 1
    return conf


# --------------------------------------------------------------------------- bootstrap

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
