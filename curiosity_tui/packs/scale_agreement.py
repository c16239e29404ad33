"""The coefficients a question's scale calls for (issue 24, item 4; decision 425), added to
each :class:`~curiosity_tui.packs.agreement.QuestionAgreement` after its nominal figures.

Every question: Gwet's AC1 and Brennan–Prediger over the group's raters; per rater pair, PABAK
with the prevalence and bias indices (two-category questions). An ``ordinal`` question (its
categories listed lowest first in the scheme) adds Gwet's AC2 and Brennan–Prediger with linear
and quadratic weights, Krippendorff's α at the ordinal level, and per pair Cohen's weighted κ
(linear, quadratic). Each carries its analytic standard error and interval
(:mod:`curiosity_tui.packs.coefficients`) beside the bootstrap-by-run intervals of the nominal
figures. The cross rows (``human-model``) get the pair figures only: their raters' pooled
figures are in their own groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from curiosity_tui.packs.agreement import PairAgreement, QuestionAgreement
from curiosity_tui.packs.coefficients import (
    Coefficient,
    brennan_prediger,
    cohen_weighted,
    gwet_ac,
    krippendorff_ordinal,
    pabak,
)
from curiosity_tui.packs.scale_bootstrap import scale_intervals
from curiosity_tui.packs.statistics import Interval

WEIGHTED = ("linear", "quadratic")

#: printed names, in printing order
LABELS = {
    "gwet_ac1": "Gwet AC1",
    "brennan_prediger": "Brennan–Prediger",
    "gwet_ac2_linear": "Gwet AC2 (linear)",
    "gwet_ac2_quadratic": "Gwet AC2 (quadratic)",
    "brennan_prediger_linear": "Brennan–Prediger (linear)",
    "brennan_prediger_quadratic": "Brennan–Prediger (quadratic)",
    "krippendorff_alpha_ordinal": "Krippendorff alpha (ordinal)",
    "cohen_kappa_linear": "Cohen's kappa (linear)",
    "cohen_kappa_quadratic": "Cohen's kappa (quadratic)",
    "pabak": "PABAK",
    "prevalence_index": "prevalence index",
    "bias_index": "bias index",
}


def _codes(
    categories: Sequence[str],
    raters: Sequence[str],
    ratings: Mapping[str, Mapping[str, str]],
    items: Sequence[str],
) -> np.ndarray:
    index = {c: i for i, c in enumerate(categories)}
    codes = np.full((len(raters), len(items)), -1, dtype=np.int64)
    for r, rater in enumerate(raters):
        given = ratings.get(rater, {})
        for i, item in enumerate(items):
            label = given.get(item)
            if label in index:
                codes[r, i] = index[label]
    return codes


def question_coefficients(codes: np.ndarray, q: int, level: str) -> dict[str, Coefficient]:
    """The pooled coefficients of one question over raters x items ``codes``."""
    out = {"gwet_ac1": gwet_ac(codes, q), "brennan_prediger": brennan_prediger(codes, q)}
    if level == "ordinal":
        for w in WEIGHTED:
            out[f"gwet_ac2_{w}"] = gwet_ac(codes, q, w)
            out[f"brennan_prediger_{w}"] = brennan_prediger(codes, q, w)
        out["krippendorff_alpha_ordinal"] = krippendorff_ordinal(codes, q)
    return out


def pair_coefficients(a: np.ndarray, b: np.ndarray, q: int, level: str) -> dict[str, Coefficient]:
    pab, prevalence, bias = pabak(a, b, q)
    out = {"pabak": pab, "prevalence_index": prevalence, "bias_index": bias}
    if level == "ordinal":
        for w in WEIGHTED:
            out[f"cohen_kappa_{w}"] = cohen_weighted(a, b, q, w)
    return out


def with_scale(
    qa: QuestionAgreement,
    ratings: Mapping[str, Mapping[str, str]],
    items: Sequence[str],
    level: str,
    clusters: Mapping[str, str] | None = None,
    *,
    n_boot: int = 0,
    seed: int = 0,
) -> QuestionAgreement:
    """``qa`` with its scale's coefficients added (ratings: rater -> item -> category), the
    pooled ones with bootstrap-by-run intervals when ``n_boot`` > 0."""
    q = len(qa.categories)
    codes = _codes(qa.categories, qa.raters, ratings, items)
    row = {r: i for i, r in enumerate(qa.raters)}
    cl = [clusters.get(i, i) if clusters else i for i in items]
    both = [_pair_codes(qa, p, ratings, items, codes, row) for p in qa.pairs]
    coefs = [pair_coefficients(a, b, q, level) for a, b in both]
    pooled = {} if qa.group == "human-model" else question_coefficients(codes, q, level)
    if n_boot > 0:
        boot, boot_pairs = scale_intervals(
            codes, q, level, cl, n_boot=n_boot, seed=seed, pairs=both
        )
        pooled = _with_intervals(pooled, boot) if pooled else pooled
        coefs = [_with_intervals(c, b) for c, b in zip(coefs, boot_pairs, strict=True)]
    pairs = [p.model_copy(update={"coefficients": c}) for p, c in zip(qa.pairs, coefs, strict=True)]
    return qa.model_copy(update={"level": level, "coefficients": pooled, "pairs": pairs})


def _with_intervals(
    coefs: dict[str, Coefficient], boot: Mapping[str, Interval]
) -> dict[str, Coefficient]:
    return {
        k: c.model_copy(update={"interval": boot[k]}) if c.defined and k in boot else c
        for k, c in coefs.items()
    }


def _pair_codes(
    qa: QuestionAgreement,
    p: PairAgreement,
    ratings: Mapping[str, Mapping[str, str]],
    items: Sequence[str],
    codes: np.ndarray,
    row: dict[str, int],
) -> tuple[np.ndarray, np.ndarray]:
    if p.rater_a in row and p.rater_b in row:
        return codes[row[p.rater_a]], codes[row[p.rater_b]]
    two = _codes(qa.categories, [p.rater_a, p.rater_b], ratings, items)
    return two[0], two[1]


def coefficient_line(prefix: str, name: str, c: Coefficient) -> str:
    """One printed row: value, analytic SE and interval (or why it is undefined)."""
    label = LABELS.get(name, name)
    if c.value is None:
        return f"{prefix}{label:<29} undefined ({c.undefined_reason})"
    text = f"{prefix}{label:<29} {round(c.value, 12) + 0.0:.3f}"
    iv = c.interval
    if iv is not None and iv.low is not None and iv.high is not None:
        text += f" [{iv.low:.3f}, {iv.high:.3f}] by run"
    if c.se is not None and c.ci_low is not None and c.ci_high is not None:
        text += f"  SE {c.se:.3f}, 95% [{c.ci_low:.3f}, {c.ci_high:.3f}] ({c.se_method})"
    return text
