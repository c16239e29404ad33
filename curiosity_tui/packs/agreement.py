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
  κ and a confusion matrix per rater pair and the category counts per rater.

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

from curiosity_tui.packs.statistics import (
    AgreementDataError,
    Estimate,
    Interval,
    bootstrap_by_cluster,
    bootstrap_cohen,
    codes_to_counts,
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
    rater_a: str
    rater_b: str
    n_items: int
    raw_agreement: Estimate
    cohen_kappa: Estimate
    confusion: list[list[int]] = Field(
        description="rows: rater_a's category, columns: rater_b's, in the scheme's order"
    )


class QuestionAgreement(BaseModel):
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
    raw, fk, ka, notes = _pooled(cats, raters, codes, counts, item_clusters, len(items), boot)
    pairs = [
        _pair(cats, codes, ia, ra, ib, rb, item_clusters, boot)
        for (ia, ra), (ib, rb) in itertools.combinations(enumerate(raters), 2)
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


def _pooled(
    cats: list[str],
    raters: list[str],
    codes: np.ndarray,
    counts: np.ndarray,
    item_clusters: list[str],
    n_items: int,
    boot: _Boot,
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
    if boot.n_boot > 0:
        boots = bootstrap_by_cluster(
            counts,
            item_clusters,
            **boot._asdict(),
        )
        if raw.defined:
            raw = raw.model_copy(update={"interval": boots["raw_agreement"]})
        if fk.defined:
            fk = fk.model_copy(update={"interval": boots["fleiss_kappa"]})
        if ka.defined:
            ka = ka.model_copy(update={"interval": boots["krippendorff_alpha"]})
    return raw, fk, ka, notes


def _pair(
    cats: list[str],
    codes: np.ndarray,
    ia: int,
    ra: str,
    ib: int,
    rb: str,
    item_clusters: list[str],
    boot: _Boot,
) -> PairAgreement:
    """Cohen's κ (with its interval), raw agreement and the confusion matrix of one pair."""
    a_lab = [cats[c] if c >= 0 else None for c in codes[ia]]
    b_lab = [cats[c] if c >= 0 else None for c in codes[ib]]
    both = (codes[ia] >= 0) & (codes[ib] >= 0)
    n_both = int(both.sum())
    ck = cohen_kappa(a_lab, b_lab, labels=cats)
    if ck.defined and boot.n_boot > 0:
        interval = bootstrap_cohen(
            codes[ia],
            codes[ib],
            len(cats),
            item_clusters,
            **boot._asdict(),
        )
        ck = ck.model_copy(update={"interval": interval})
    pair_counts = np.zeros((n_both, len(cats)))
    if n_both:
        pair_counts[np.arange(n_both), codes[ia][both]] += 1
        pair_counts[np.arange(n_both), codes[ib][both]] += 1
    pr = raw_agreement(pair_counts)
    if not pr.defined:
        pr = pr.model_copy(update={"undefined_reason": "no item was rated by both raters"})
    return PairAgreement(
        rater_a=ra,
        rater_b=rb,
        n_items=n_both,
        raw_agreement=pr,
        cohen_kappa=ck,
        confusion=confusion_matrix(a_lab, b_lab, cats),
    )
