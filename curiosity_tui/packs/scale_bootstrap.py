"""Bootstrap-by-run intervals for the scale coefficients (issue 24, item 4; decision 425), beside
their analytic ones: Gwet's AC1/AC2, Brennan–Prediger and Krippendorff's α ordinal over a
question's raters, resampling runs (clusters) as every other agreement interval does.

Each coefficient is a function of sums over items that add up over clusters: for AC and
Brennan–Prediger the per-item agreement (items with two or more ratings), the count of those
items, the count of rated items and each item's category shares; for α ordinal each item's
coincidences. So one set of cluster draws (:func:`~curiosity_tui.packs.bootstrap.replicate_sums`)
serves every coefficient, and a replicate is a few array operations.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from curiosity_tui.packs.bootstrap import replicate_sums
from curiosity_tui.packs.coefficients import WEIGHTINGS, weight_matrix
from curiosity_tui.packs.statistics import Interval, codes_to_counts


def _item_columns(counts: np.ndarray, q: int, level: str) -> tuple[np.ndarray, list[str]]:
    """Per rated item: p_a per weighting (0 below two ratings), [two or more], 1, the
    category shares, and (ordinal) the coincidences; with the names of the blocks."""
    ri = counts.sum(axis=1)
    two = (ri >= 2).astype(float)
    den = np.where(ri >= 2, ri * (ri - 1.0), 1.0)
    weightings = WEIGHTINGS if level == "ordinal" else ("identity",)
    cols = []
    for w in weightings:
        wm = weight_matrix(q, w)
        cols.append(two * (counts * (counts @ wm.T - 1.0)).sum(axis=1) / den)
    blocks = [np.column_stack(cols), two[:, None], np.ones((len(ri), 1)), counts / ri[:, None]]
    if level == "ordinal":
        m = np.where(ri >= 2, ri - 1.0, np.inf)
        per = counts / m[:, None]
        o = counts[:, :, None] * per[:, None, :]
        o -= np.einsum("ij,jk->ijk", per, np.eye(q))
        blocks.append(o.reshape(len(ri), q * q))
    return np.column_stack(blocks), list(weightings)


def _alpha_ordinal(o: np.ndarray) -> np.ndarray:
    """α ordinal on each replicate's coincidence matrix (B × q × q)."""
    q = o.shape[1]
    nc = o.sum(axis=2)
    total = nc.sum(axis=1)
    cum = np.cumsum(nc, axis=1)
    lo = np.minimum.outer(np.arange(q), np.arange(q))
    hi = np.maximum.outer(np.arange(q), np.arange(q))
    below = np.where(lo > 0, cum[:, np.maximum(lo - 1, 0)], 0.0)
    delta = (cum[:, hi] - below - (nc[:, :, None] + nc[:, None, :]) / 2.0) ** 2
    delta[:, np.arange(q), np.arange(q)] = 0.0
    expected = (nc[:, :, None] * nc[:, None, :] * delta).sum(axis=(1, 2))
    observed = (o * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (total - 1.0) * observed / expected
    return np.where(expected > 1e-12, alpha, np.nan)


def _replicates(
    agg: np.ndarray, q: int, weightings: list[str], level: str
) -> dict[str, np.ndarray]:
    k = len(weightings)
    s_pa, s_two, s_n = agg[:, :k], agg[:, k], agg[:, k + 1]
    pi = agg[:, k + 2 : k + 2 + q] / s_n[:, None]
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for j, w in enumerate(weightings):
            tw = weight_matrix(q, w).sum()
            pa = s_pa[:, j] / s_two
            pe = tw / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum(axis=1)
            pe_bp = tw / q**2
            ac = np.where(1.0 - pe > 1e-12, (pa - pe) / (1.0 - pe), np.nan)
            suffix = "" if w == "identity" else f"_{w}"
            out["gwet_ac1" if w == "identity" else f"gwet_ac2_{w}"] = ac
            out[f"brennan_prediger{suffix}"] = (pa - pe_bp) / (1.0 - pe_bp)
    if level == "ordinal":
        o = agg[:, k + 2 + q :].reshape(-1, q, q)
        out["krippendorff_alpha_ordinal"] = _alpha_ordinal(o)
    return out


def scale_intervals(
    codes: np.ndarray,
    q: int,
    level: str,
    item_clusters: Sequence[Hashable],
    *,
    n_boot: int,
    seed: int,
    confidence: float = 0.95,
    pairs: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> tuple[dict[str, Interval], list[dict[str, Interval]]]:
    """Percentile intervals, runs resampled, of the pooled scale coefficients over ``codes``
    and of each rater pair's (``pairs``: the two raters' codes), from one set of draws over
    the runs of every rated item."""
    codes = np.asarray(codes)
    counts = codes_to_counts(codes, q).astype(float)
    rated = counts.sum(axis=1) > 0
    any_rated = rated.copy()
    for a, b in pairs:
        any_rated |= (np.asarray(a) >= 0) | (np.asarray(b) >= 0)
    if n_boot <= 0 or not any_rated.any() or q < 2:
        return {}, [{} for _ in pairs]
    names = sorted({c for c, r in zip(item_clusters, any_rated, strict=True) if r}, key=str)
    index = {c: i for i, c in enumerate(names)}
    cols, weightings = _item_columns(counts[rated], q, level)
    at = [index[c] for c, r in zip(item_clusters, rated, strict=True) if r]
    blocks = [_by_cluster(cols, at, len(names))]
    for a, b in pairs:
        a, b = np.asarray(a), np.asarray(b)
        both = (a >= 0) & (b >= 0)
        cells = np.zeros((int(both.sum()), q * q))
        cells[np.arange(cells.shape[0]), a[both] * q + b[both]] = 1.0
        at = [index[c] for c, k in zip(item_clusters, both, strict=True) if k]
        blocks.append(_by_cluster(cells, at, len(names)))
    width = cols.shape[1]
    pooled: dict[str, list[np.ndarray]] = {}
    paired: list[dict[str, list[np.ndarray]]] = [{} for _ in pairs]
    for agg in replicate_sums(np.hstack(blocks), n_boot=n_boot, seed=seed):
        for name, values in _replicates(agg[:, :width], q, weightings, level).items():
            pooled.setdefault(name, []).append(values)
        for j, got in enumerate(paired):
            tables = agg[:, width + j * q * q : width + (j + 1) * q * q].reshape(-1, q, q)
            for name, values in _pair_replicates(tables, q, level).items():
                got.setdefault(name, []).append(values)

    def done(reps: dict[str, list[np.ndarray]]) -> dict[str, Interval]:
        return {
            k: _percentile(np.concatenate(v), confidence, n_boot, seed) for k, v in reps.items()
        }

    return done(pooled), [done(r) for r in paired]


def _by_cluster(rows: np.ndarray, at: Sequence[int], n_clusters: int) -> np.ndarray:
    out = np.zeros((n_clusters, rows.shape[1]))
    np.add.at(out, np.asarray(at, dtype=np.int64), rows)
    return out


def _pair_replicates(tables: np.ndarray, q: int, level: str) -> dict[str, np.ndarray]:
    """PABAK and (ordinal) weighted κ on each replicate's q x q table of counts."""
    n = tables.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = tables / n[:, None, None]
        po = np.trace(p, axis1=1, axis2=2)
        out = {"pabak": np.where(n > 0, (q * po - 1.0) / (q - 1.0), np.nan)}
        if level == "ordinal":
            rows, cols = p.sum(axis=2), p.sum(axis=1)
            for w in ("linear", "quadratic"):
                wm = weight_matrix(q, w)
                pow_ = (p * wm).sum(axis=(1, 2))
                pe = np.einsum("bi,ij,bj->b", rows, wm, cols)
                kappa = (pow_ - pe) / (1.0 - pe)
                out[f"cohen_kappa_{w}"] = np.where((n > 0) & (1.0 - pe > 1e-12), kappa, np.nan)
    return out


def _percentile(r: np.ndarray, confidence: float, n_boot: int, seed: int) -> Interval:
    tail = (1.0 - confidence) / 2.0 * 100.0
    ok = ~np.isnan(r)
    low, high = np.percentile(r[ok], [tail, 100.0 - tail]) if ok.any() else (None, None)
    return Interval(
        low=None if low is None else float(low),
        high=None if high is None else float(high),
        confidence=confidence,
        n_boot=n_boot,
        n_undefined=int((~ok).sum()),
        seed=seed,
        undefined_reason=None if ok.any() else "undefined on every bootstrap replicate",
    )
