"""Agreement for the scale a question has (issue 24, item 4; decision 425).

Beside the nominal κ family of :mod:`curiosity_tui.packs.statistics`:

- :func:`weight_matrix` — identity, linear ``1 - |k - l| / (q - 1)`` or quadratic
  ``1 - (k - l)^2 / (q - 1)^2`` agreement weights over the categories in the scheme's order
  (Gwet 2014, ch. 3; the weights statsmodels and irrCAC use);
- :func:`gwet_ac` — Gwet's AC1 (identity weights) and AC2 (weighted) for any number of raters
  with missing ratings, with Gwet's (2014, §5.3) linearisation standard error;
- :func:`brennan_prediger` — Brennan & Prediger (1981), chance agreement ``T_w / q^2``, with the
  same kind of standard error;
- :func:`cohen_weighted` — Cohen's weighted κ of two raters with the Fleiss, Cohen & Everitt
  (1969) large-sample standard error;
- :func:`krippendorff_ordinal` — Krippendorff's α at the ordinal level (Krippendorff 2011);
- :func:`pabak` — prevalence- and bias-adjusted κ ``(q p_o - 1) / (q - 1)`` with, for a
  two-category question, the prevalence index ``|p_11 - p_22|`` and the bias index
  ``|p_12 - p_21|`` (Byrt, Bishop & Carlin 1993).

Analytic intervals are ``estimate ± t(n - 1) x SE`` (AC, BP; Gwet's choice) or ``± z x SE``
(weighted κ), the upper end capped at 1. Inputs are category codes, raters x items, ``-1``
for a missing rating. An undefined coefficient has ``value=None`` and ``undefined_reason``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from curiosity_tui.packs.statistics import Estimate, codes_to_counts

Weights = Literal["identity", "linear", "quadratic"]
WEIGHTINGS: tuple[str, ...] = ("identity", "linear", "quadratic")
_EPS = 1e-12


class Coefficient(Estimate):
    """An :class:`Estimate` with its analytic standard error and interval, where defined."""

    se: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    se_method: str = ""
    #: agreement observed and expected by chance (the coefficient's two parts)
    p_a: float | None = None
    p_e: float | None = None


def weight_matrix(q: int, kind: str = "identity") -> np.ndarray:
    """q x q agreement weights (1 on the diagonal) over categories in their order."""
    if kind == "identity" or q < 2:
        return np.eye(q)
    d = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) / (q - 1)
    if kind == "linear":
        return 1.0 - d
    if kind == "quadratic":
        return 1.0 - d**2
    raise ValueError(f"unknown weights {kind!r}: identity, linear or quadratic")


def _undefined(statistic: str, reason: str, n_items: int, dropped: int = 0) -> Coefficient:
    return Coefficient(
        statistic=statistic, value=None, undefined_reason=reason, n_items=n_items, n_dropped=dropped
    )


def _interval(value: float, se: float, df: int, confidence: float) -> tuple[float, float]:
    t = float(stats.t.ppf(0.5 + confidence / 2.0, df)) if df > 0 else float("nan")
    return value - t * se, min(1.0, value + t * se)


def _multi_rater(
    codes: np.ndarray, q: int, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | str:
    """(counts r_ik of rated items, r_i, per-item p_a with 0 below two ratings, mask r_i >= 2),
    or why nothing can be computed."""
    counts = codes_to_counts(np.asarray(codes), q).astype(float)
    counts = counts[counts.sum(axis=1) > 0]
    ri = counts.sum(axis=1)
    two = ri >= 2
    if not two.any():
        return "no item has two or more ratings"
    weighted = counts @ w.T  # r*_ik = sum_l w_kl r_il
    den = np.where(two, ri * (ri - 1.0), 1.0)
    pa_i = np.where(two, (counts * (weighted - 1.0)).sum(axis=1) / den, 0.0)
    return counts, ri, pa_i, two


def gwet_ac(
    codes: np.ndarray, q: int, weights: str = "identity", *, confidence: float = 0.95
) -> Coefficient:
    """Gwet's AC1 (identity weights) or AC2 (linear / quadratic) over all raters."""
    name = "gwet_ac1" if weights == "identity" else f"gwet_ac2_{weights}"
    w = weight_matrix(q, weights)
    parts = _multi_rater(codes, q, w)
    if isinstance(parts, str):
        return _undefined(name, parts, 0)
    counts, ri, pa_i, two = parts
    n, n2 = counts.shape[0], int(two.sum())
    if q < 2:
        return _undefined(name, "the question has fewer than two categories", n2)
    pi = (counts / ri[:, None]).mean(axis=0)
    scale = w.sum() / (q * (q - 1.0))
    pe = float(scale * (pi * (1.0 - pi)).sum())
    pa = float(pa_i[two].mean())
    if 1.0 - pe <= _EPS:
        return _undefined(name, "chance agreement is 1, so AC is 0/0", n2, n - n2)
    ac = (pa - pe) / (1.0 - pe)
    ac_i = (n / n2) * (pa_i - pe * two) / (1.0 - pe)
    pe_i = scale * (counts @ (1.0 - pi)) / ri
    ac_star = ac_i - 2.0 * (1.0 - ac) * (pe_i - pe) / (1.0 - pe)
    return _with_se(name, ac, pa, pe, ac_star, n, n2, confidence, "Gwet 2014 linearisation")


def brennan_prediger(
    codes: np.ndarray, q: int, weights: str = "identity", *, confidence: float = 0.95
) -> Coefficient:
    """Brennan–Prediger: chance agreement T_w / q^2 (1/q unweighted)."""
    name = "brennan_prediger" if weights == "identity" else f"brennan_prediger_{weights}"
    w = weight_matrix(q, weights)
    parts = _multi_rater(codes, q, w)
    if isinstance(parts, str):
        return _undefined(name, parts, 0)
    counts, _, pa_i, two = parts
    n, n2 = counts.shape[0], int(two.sum())
    if q < 2:
        return _undefined(name, "the question has fewer than two categories", n2)
    pe = float(w.sum() / q**2)
    pa = float(pa_i[two].mean())
    bp = (pa - pe) / (1.0 - pe)
    bp_i = (n / n2) * (pa_i - pe * two) / (1.0 - pe)
    return _with_se(name, bp, pa, pe, bp_i, n, n2, confidence, "Gwet 2014 linearisation")


def _with_se(
    name: str,
    value: float,
    pa: float,
    pe: float,
    per_item: np.ndarray,
    n: int,
    n2: int,
    confidence: float,
    method: str,
) -> Coefficient:
    out = Coefficient(
        statistic=name, value=float(value), n_items=n2, n_dropped=n - n2, p_a=pa, p_e=pe
    )
    if n < 2:
        out.undefined_reason = None
        out.se_method = "no standard error: one item"
        return out
    se = float(np.sqrt(((per_item - value) ** 2).sum() / (n * (n - 1.0))))
    lo, hi = _interval(float(value), se, n - 1, confidence)
    return out.model_copy(
        update={"se": se, "ci_low": lo, "ci_high": hi, "se_method": f"{method}; t({n - 1})"}
    )


def _pair_table(a: np.ndarray, b: np.ndarray, q: int) -> tuple[np.ndarray, int, int]:
    """Proportions table of the items both raters rated, its n, and the items dropped."""
    a, b = np.asarray(a), np.asarray(b)
    both = (a >= 0) & (b >= 0)
    n = int(both.sum())
    table = np.bincount(a[both] * q + b[both], minlength=q * q).reshape(q, q).astype(float)
    return (table / n if n else table), n, int(len(a) - n)


def cohen_weighted(
    a: np.ndarray, b: np.ndarray, q: int, weights: str = "linear", *, confidence: float = 0.95
) -> Coefficient:
    """Cohen's weighted κ of two raters (codes, -1 missing) with its FCE (1969) SE."""
    name = f"cohen_kappa_{weights}"
    p, n, dropped = _pair_table(a, b, q)
    if n == 0:
        return _undefined(name, "no item rated by both raters", 0, dropped)
    w = weight_matrix(q, weights)
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po = float((w * p).sum())
    pe = float((w * np.outer(rows, cols)).sum())
    if 1.0 - pe <= _EPS:
        return _undefined(name, "chance agreement is 1, so κ is 0/0", n, dropped)
    kappa = (po - pe) / (1.0 - pe)
    w_row = w @ cols  # sum_l p_.l w_kl
    w_col = rows @ w  # sum_k p_k. w_kl
    term = (p * (w - np.add.outer(w_row, w_col) * (1.0 - kappa)) ** 2).sum()
    var = (term - (kappa - pe * (1.0 - kappa)) ** 2) / ((1.0 - pe) ** 2 * n)
    se = float(np.sqrt(max(var, 0.0)))
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    return Coefficient(
        statistic=name,
        value=float(kappa),
        n_items=n,
        n_dropped=dropped,
        se=se,
        ci_low=kappa - z * se,
        ci_high=min(1.0, kappa + z * se),
        se_method="Fleiss, Cohen & Everitt 1969; normal",
        p_a=po,
        p_e=pe,
    )


def pabak(a: np.ndarray, b: np.ndarray, q: int) -> tuple[Coefficient, Coefficient, Coefficient]:
    """PABAK, the prevalence index and the bias index of two raters (the indices: two
    categories only)."""
    p, n, dropped = _pair_table(a, b, q)
    names = ("pabak", "prevalence_index", "bias_index")
    if n == 0 or q < 2:
        why = "no item rated by both raters" if n == 0 else "fewer than two categories"
        return tuple(_undefined(x, why, n, dropped) for x in names)  # type: ignore[return-value]
    po = float(np.trace(p))
    value = (q * po - 1.0) / (q - 1.0)
    pab = Coefficient(statistic="pabak", value=value, n_items=n, n_dropped=dropped, p_a=po)
    if q != 2:
        why = "the prevalence and bias indices are defined for two categories (Byrt et al. 1993)"
        return pab, _undefined(names[1], why, n, dropped), _undefined(names[2], why, n, dropped)
    pi = Coefficient(
        statistic="prevalence_index", value=abs(p[0, 0] - p[1, 1]), n_items=n, n_dropped=dropped
    )
    bi = Coefficient(
        statistic="bias_index", value=abs(p[0, 1] - p[1, 0]), n_items=n, n_dropped=dropped
    )
    return pab, pi, bi


def krippendorff_ordinal(codes: np.ndarray, q: int) -> Coefficient:
    """Krippendorff's α at the ordinal level (categories in the scheme's order)."""
    name = "krippendorff_alpha_ordinal"
    counts = codes_to_counts(np.asarray(codes), q).astype(float)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, dropped = counts[pairable], int((~pairable & (m > 0)).sum())
    if counts.shape[0] == 0:
        return _undefined(name, "no item has two or more values", 0, dropped)
    # coincidences o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)
    per = counts / (counts.sum(axis=1, keepdims=True) - 1.0)
    o = counts.T @ per - np.diag(per.sum(axis=0))
    nc = o.sum(axis=1)
    total = nc.sum()
    cum = np.cumsum(nc)
    lo = np.minimum.outer(np.arange(q), np.arange(q))
    hi = np.maximum.outer(np.arange(q), np.arange(q))
    between = cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0)  # sum of n_g for g in [lo, hi]
    delta = (between - (nc[:, None] + nc[None, :]) / 2.0) ** 2
    np.fill_diagonal(delta, 0.0)
    expected = (np.outer(nc, nc) * delta).sum()
    if expected <= _EPS:
        why = "every pairable value is in one category: expected disagreement is 0, so α is 0/0"
        return _undefined(name, why, counts.shape[0], dropped)
    alpha = 1.0 - (total - 1.0) * (o * delta).sum() / expected
    return Coefficient(
        statistic=name, value=float(alpha), n_items=counts.shape[0], n_dropped=dropped
    )
