"""Human and model raters as separate groups in agreement (issue 16 item 3; decision 236).

Within each group (``human``, ``model``): raw agreement, Fleiss' κ and α over the group's
raters, Cohen's κ per pair. Across groups (``human-model``): Cohen's κ and raw agreement per
human × model pair only; a coefficient over all raters would pool the groups, so it is
reported undefined with that reason. Pooling happens only when asked (``pooled`` group,
named in every row that shows it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from curiosity_tui.packs.agreement import QuestionAgreement, question_agreement
from curiosity_tui.packs.rating import rater_group
from curiosity_tui.packs.statistics import undefined_estimate

__all__ = ["CROSS", "GROUPS", "POOLED", "grouped_agreement", "groups_of"]

GROUPS = ("human", "model")
CROSS = "human-model"
POOLED = "pooled"
_NOT_ACROSS = "not computed across groups: it would pool human and model raters"


def groups_of(raters: Sequence[str]) -> dict[str, list[str]]:
    """group → its raters (sorted); groups without raters are left out."""
    out = {g: sorted(r for r in raters if rater_group(r) == g) for g in GROUPS}
    return {g: rs for g, rs in out.items() if rs}


def grouped_agreement(
    question: str,
    categories: Sequence[str],
    ratings: Mapping[str, Mapping[str, str]],
    items: Sequence[str],
    clusters: Mapping[str, str] | None = None,
    *,
    n_boot: int,
    seed: int,
    pool: bool = False,
) -> list[QuestionAgreement]:
    """One :class:`QuestionAgreement` per group present, then the cross pairs when both are
    present, then (``pool`` only) every rater together as group ``pooled``."""
    groups = groups_of(list(ratings))

    def over(raters: Sequence[str]) -> QuestionAgreement:
        sub = {r: ratings[r] for r in raters}
        return question_agreement(
            question, categories, sub, items, clusters, n_boot=n_boot, seed=seed
        )

    if not groups:  # no ratings yet: the undefined figures, in no group
        return [over([])]
    out = [_label(over(rs), g) for g, rs in groups.items()]
    if len(groups) == len(GROUPS):
        every = over(sorted(ratings))
        out.append(_cross(every))
        if pool:
            out.append(_label(every, POOLED, note="human and model raters pooled (--pool-groups)"))
    return out


def _label(qa: QuestionAgreement, group: str, note: str | None = None) -> QuestionAgreement:
    pairs = [p.model_copy(update={"group": group}) for p in qa.pairs]
    notes = [note, *qa.notes] if note else qa.notes
    return qa.model_copy(update={"group": group, "pairs": pairs, "notes": notes})


def _cross(every: QuestionAgreement) -> QuestionAgreement:
    pairs = [
        p.model_copy(update={"group": CROSS})
        for p in every.pairs
        if rater_group(p.rater_a) != rater_group(p.rater_b)
    ]
    n = every.n_items
    return every.model_copy(
        update={
            "group": CROSS,
            "pairs": pairs,
            "raw_agreement": undefined_estimate("raw_agreement", _NOT_ACROSS, n),
            "fleiss_kappa": undefined_estimate("fleiss_kappa", _NOT_ACROSS, n),
            "krippendorff_alpha": undefined_estimate("krippendorff_alpha", _NOT_ACROSS, n),
            "notes": ["human × model pairs only; Fleiss' κ and α are reported within groups"],
        }
    )
