"""Agreement statistics on nominal categories: the kernels behind
:mod:`curiosity_tui.packs.agreement` (which re-exports the public names; import from there).

- :func:`cohen_kappa` ``(a, b)`` — two raters' labels, ``None`` for missing.
- :func:`fleiss_kappa` ``(counts)`` — an items × categories table of counts; rows may
  have different totals (missing ratings); rows with fewer than two ratings are dropped
  and the result says how many.
- :func:`krippendorff_alpha` ``(data)`` — raters × items labels, ``None`` (or NaN) for
  missing; nominal level.
- :func:`raw_agreement` ``(counts)`` — mean pairwise agreement per item.
- the bootstrap intervals over these kernels are in :mod:`curiosity_tui.packs.bootstrap`.

Every statistic is an :class:`Estimate`; an undefined coefficient has ``value=None`` and
``undefined_reason``, never 1.0 and never an exception. Knows nothing of packs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from curiosity_tui.errors import InputError

__all__ = [
    "AgreementDataError",
    "Estimate",
    "Interval",
    "codes_to_counts",
    "cohen_from_codes",
    "cohen_kappa",
    "confusion_matrix",
    "fleiss_kappa",
    "krippendorff_alpha",
    "raw_agreement",
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
    p_i: np.ndarray = ((arr * arr).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    return p_i


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
    d_u: np.ndarray = (m * m - (arr * arr).sum(axis=1)) / (m - 1.0)
    return d_u


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
