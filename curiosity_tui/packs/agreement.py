"""Agreement statistics on nominal categories.

Public API (documented, stable):

- :func:`cohen_kappa` ``(a, b)`` — two raters' labels, ``None`` for missing.
- :func:`fleiss_kappa` ``(counts)`` — an items × categories table of counts; rows may
  have different totals (missing ratings); rows with fewer than two ratings are dropped
  and the result says how many.
- :func:`krippendorff_alpha` ``(data)`` — raters × items labels, ``None`` (or NaN) for
  missing; nominal level.
- :func:`raw_agreement` ``(counts)`` — mean pairwise agreement per item.
- :func:`bootstrap_by_cluster` — percentile intervals resampling clusters (runs), so that
  several ratings of one run are one observation. Vectorised with numpy.
- :func:`question_agreement` — everything above for one question of a pack, plus Cohen's
  κ and a confusion matrix per rater pair and the category counts per rater. All of its
  intervals come from one set of bootstrap replicates (``bootstrap_question``).

Every statistic is an :class:`Estimate`. Where a coefficient is undefined (for instance
every rating in one category, so chance agreement is 1 and κ is 0/0) the estimate has
``value=None`` and ``undefined_reason`` says why. It is never reported as 1.0 and it never
raises.

The statistics themselves live in :mod:`curiosity_tui.packs.statistics`; this module holds
the per-question assembly and is the import path to use.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from curiosity_tui.packs.bootstrap import bootstrap_by_cluster, bootstrap_cohen, bootstrap_question
from curiosity_tui.packs.coefficients import Coefficient
from curiosity_tui.packs.statistics import (
    AgreementDataError,
    Estimate,
    Interval,
    codes_to_counts,
    cohen_from_codes,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    krippendorff_alpha,
    raw_agreement,
    undefined_estimate,
)

__all__ = [
    "AgreementDataError",
    "Estimate",
    "Interval",
    "PairAgreement",
    "QuestionAgreement",
    "bootstrap_by_cluster",
    "bootstrap_cohen",
    "cohen_kappa",
    "confusion_matrix",
    "fleiss_kappa",
    "krippendorff_alpha",
    "question_agreement",
    "raw_agreement",
]


class PairAgreement(BaseModel):
    group: str = Field(
        default="all", description="human, model or human-model (a cross pair); all = ungrouped"
    )
    rater_a: str
    rater_b: str
    n_items: int
    raw_agreement: Estimate
    cohen_kappa: Estimate
    confusion: list[list[int]] = Field(
        description="rows: rater_a's category, columns: rater_b's, in the scheme's order"
    )
    #: PABAK with the prevalence and bias indices, and (ordinal) weighted κ (decision 425)
    coefficients: dict[str, Coefficient] = Field(default_factory=dict)


class QuestionAgreement(BaseModel):
    group: str = Field(
        default="all",
        description="whose ratings: human, model, human-model (cross pairs only) or pooled",
    )
    question: str
    categories: list[str]
    raters: list[str]
    n_items: int
    n_clusters: int
    raw_agreement: Estimate
    fleiss_kappa: Estimate
    krippendorff_alpha: Estimate
    pairs: list[PairAgreement]
    category_counts: dict[str, dict[str, int]]
    notes: list[str] = []
    #: the question's scale in its scheme (decision 425)
    level: str = "nominal"
    #: Gwet's AC1, Brennan–Prediger and (ordinal) AC2 and α ordinal, each with its analytic
    #: standard error and interval (packs/scale_agreement.py)
    coefficients: dict[str, Coefficient] = Field(default_factory=dict)


class _Boot(NamedTuple):
    """The bootstrap settings handed down to every interval of one question."""

    n_boot: int
    seed: int
    confidence: float


def question_agreement(
    question: str,
    categories: Sequence[str],
    ratings: Mapping[str, Mapping[str, str]],
    items: Sequence[str],
    clusters: Mapping[str, str] | None = None,
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> QuestionAgreement:
    """All agreement figures for one question.

    ``ratings`` maps rater → item → category; ``items`` fixes the item order;
    ``clusters`` maps item → run (cluster) for the bootstrap (default: item = cluster).
    """
    cats = list(categories)
    raters = sorted(ratings)
    codes = _encode_ratings(cats, raters, ratings, items)
    counts = codes_to_counts(codes, len(cats))
    item_clusters = [clusters.get(it, it) if clusters else it for it in items]
    boot = _Boot(n_boot, seed, confidence)
    pair_index = list(itertools.combinations(range(len(raters)), 2))
    pooled_iv, pair_iv = _intervals(codes, len(cats), item_clusters, pair_index, boot)
    raw, fk, ka, notes = _pooled(cats, raters, codes, counts, len(items), pooled_iv)
    pairs = [
        _pair(cats, codes, ia, raters[ia], ib, raters[ib], iv)
        for (ia, ib), iv in zip(pair_index, pair_iv, strict=True)
    ]
    category_counts = {
        rater: {c: int((codes[r] == i).sum()) for i, c in enumerate(cats)}
        for r, rater in enumerate(raters)
    }
    kept_clusters = {c for c, n in zip(item_clusters, counts.sum(axis=1), strict=True) if n >= 2}
    return QuestionAgreement(
        question=question,
        categories=cats,
        raters=raters,
        n_items=len(items),
        n_clusters=len(kept_clusters),
        raw_agreement=raw,
        fleiss_kappa=fk,
        krippendorff_alpha=ka,
        pairs=pairs,
        category_counts=category_counts,
        notes=notes,
    )


def _encode_ratings(
    cats: list[str],
    raters: list[str],
    ratings: Mapping[str, Mapping[str, str]],
    items: Sequence[str],
) -> np.ndarray:
    """raters × items category codes, -1 where a rater gave no rating."""
    cindex = {c: i for i, c in enumerate(cats)}
    codes = np.full((len(raters), len(items)), -1, dtype=np.int64)
    for r, rater in enumerate(raters):
        for i, item in enumerate(items):
            label = ratings[rater].get(item)
            if label is None:
                continue
            if label not in cindex:
                raise AgreementDataError(
                    f"rater {rater!r} gave item {item!r} the category {label!r}, "
                    f"which is not one of {cats}"
                )
            codes[r, i] = cindex[label]
    return codes


def _intervals(
    codes: np.ndarray,
    k: int,
    item_clusters: list[str],
    pair_index: list[tuple[int, int]],
    boot: _Boot,
) -> tuple[dict[str, Interval], list[Interval | None]]:
    """Every interval of the question from one set of bootstrap replicates (decision 180)."""
    if boot.n_boot <= 0:
        return {}, [None] * len(pair_index)
    pooled, pairs = bootstrap_question(codes, k, item_clusters, pair_index, **boot._asdict())
    return pooled, list(pairs)


def _pooled(
    cats: list[str],
    raters: list[str],
    codes: np.ndarray,
    counts: np.ndarray,
    n_items: int,
    intervals: dict[str, Interval],
) -> tuple[Estimate, Estimate, Estimate, list[str]]:
    """Raw agreement, Fleiss' κ and α over all raters, with their cluster-bootstrap intervals."""
    notes: list[str] = []
    raw = raw_agreement(counts)
    fk = fleiss_kappa(counts)
    data = [[cats[c] if c >= 0 else None for c in row] for row in codes]
    ka = (
        krippendorff_alpha(data)
        if raters
        else undefined_estimate("krippendorff_alpha", "no ratings", 0, n_items)
    )
    if fk.n_dropped:
        notes.append(
            f"{fk.n_dropped} of {n_items} items have fewer than two ratings on this "
            "question and are left out of raw agreement, Fleiss' κ, α and their intervals"
        )
    raw, fk, ka = (
        est.model_copy(update={"interval": intervals[est.statistic]})
        if est.defined and est.statistic in intervals
        else est
        for est in (raw, fk, ka)
    )
    return raw, fk, ka, notes


def _pair(
    cats: list[str],
    codes: np.ndarray,
    ia: int,
    ra: str,
    ib: int,
    rb: str,
    interval: Interval | None,
) -> PairAgreement:
    """Cohen's κ (with its interval), raw agreement and the confusion matrix of one pair."""
    k = len(cats)
    both = (codes[ia] >= 0) & (codes[ib] >= 0)
    a, b = codes[ia][both], codes[ib][both]
    n_both = int(both.sum())
    ck = cohen_from_codes(a, b, cats, n_dropped=len(both) - n_both)
    if ck.defined and interval is not None:
        ck = ck.model_copy(update={"interval": interval})
    conf = np.bincount(a * k + b, minlength=k * k).reshape(k, k)
    if n_both:
        pr = Estimate(
            statistic="raw_agreement",
            value=float(np.trace(conf)) / n_both,
            n_items=n_both,
            n_dropped=0,
        )
    else:
        pr = undefined_estimate("raw_agreement", "no item was rated by both raters", 0)
    return PairAgreement(
        rater_a=ra,
        rater_b=rb,
        n_items=n_both,
        raw_agreement=pr,
        cohen_kappa=ck,
        confusion=conf.tolist(),
    )
