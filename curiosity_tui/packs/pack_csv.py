"""CSV rows of the pack commands, in long format (docs/csv.md names every column):

- ``agreement --csv``: one row per question × statistic (× rater pair for the pairwise ones),
  the figures :func:`~curiosity_tui.packs.pack_agreement.format_agreement` prints, with the
  interval as two columns;
- ``unblind --csv``: one row per item × question × rater, with the key's run and
  configuration — the rows behind the printed "items" list and per-configuration tables;
- ``ratings export PACK --csv``: one row per item × question × rater with category, grounds
  and quotes. Built from the manifest and the ratings files only: nothing from the key.

Every rater is listed for every item and question; a rating not (yet) given has empty cells.
"""

from __future__ import annotations

import json

from curiosity_tui.csvfile import Cell
from curiosity_tui.packs.agreement import QuestionAgreement
from curiosity_tui.packs.coefficients import Coefficient
from curiosity_tui.packs.disagreement import AdjudicationState
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.pack_agreement import PackAgreement
from curiosity_tui.packs.rating import latest_by_item
from curiosity_tui.packs.statistics import Estimate
from curiosity_tui.packs.unblind import UnblindReport, all_ratings

__all__ = [
    "ADJUDICATION_COLUMNS",
    "AGREEMENT_COLUMNS",
    "RATINGS_COLUMNS",
    "UNBLIND_COLUMNS",
    "adjudication_rows",
    "agreement_rows",
    "ratings_rows",
    "unblind_rows",
]

AGREEMENT_COLUMNS: tuple[str, ...] = (
    "question",
    "statistic",
    "rater_a",
    "rater_b",
    "value",
    "ci_low",
    "ci_high",
    "confidence",
    "n_boot",
    "n_items",
    "n_dropped",
    "undefined_reason",
    "level",
    "se",
    "analytic_low",
    "analytic_high",
    "se_method",
    "replies",
)

ADJUDICATION_COLUMNS: tuple[str, ...] = (
    "item",
    "question",
    "raw",
    "adjudicated",
    "adjudicator",
    "seq",
    "ts",
    "stale",
    "grounds",
)

UNBLIND_COLUMNS: tuple[str, ...] = (
    "item",
    "kind",
    "control",
    "run",
    "config",
    "question",
    "rater",
    "category",
    "replies",
)

RATINGS_COLUMNS: tuple[str, ...] = (
    "pack_id",
    "item",
    "cluster",
    "question",
    "rater",
    "revision",
    "ts",
    "category",
    "grounds",
    "n_quotes",
    "quotes",
    "position",
    "order_seed",
    "shown_at",
    "seconds_on_item",
)


def _estimate_cells(e: Estimate) -> list[Cell]:
    iv = e.interval
    return [
        e.value,
        iv.low if iv else None,
        iv.high if iv else None,
        iv.confidence if iv else None,
        iv.n_boot if iv else None,
        e.n_items,
        e.n_dropped,
        e.undefined_reason,
    ]


def _analytic_cells(level: str, e: Estimate) -> list[Cell]:
    """The question's level, then the analytic SE and interval of a scale coefficient."""
    if not isinstance(e, Coefficient):
        return [level, None, None, None, None]
    return [level, e.se, e.ci_low, e.ci_high, e.se_method or None]


def _question_rows(qa: QuestionAgreement) -> list[list[Cell]]:
    def row(stat: str, a: str | None, b: str | None, e: Estimate) -> list[Cell]:
        return [qa.question, stat, a, b, *_estimate_cells(e), *_analytic_cells(qa.level, e)]

    rows: list[list[Cell]] = [
        row("raw_agreement", None, None, qa.raw_agreement),
        row("fleiss_kappa", None, None, qa.fleiss_kappa),
        row("krippendorff_alpha", None, None, qa.krippendorff_alpha),
    ]
    rows += [row(name, None, None, c) for name, c in qa.coefficients.items()]
    for p in qa.pairs:
        rows.append(row("raw_agreement", p.rater_a, p.rater_b, p.raw_agreement))
        rows.append(row("cohen_kappa", p.rater_a, p.rater_b, p.cohen_kappa))
        rows += [row(name, p.rater_a, p.rater_b, c) for name, c in p.coefficients.items()]
    return rows


def agreement_rows(rep: PackAgreement) -> list[list[Cell]]:
    """Per question: raw agreement, Fleiss' κ, Krippendorff's α and the scale's coefficients
    over all raters (rater columns empty), then raw agreement, Cohen's κ and the pair's scale
    coefficients for each rater pair; ``replies`` last (decision 442)."""
    return [[*row, rep.replies] for qa in rep.questions for row in _question_rows(qa)]


def unblind_rows(rep: UnblindReport) -> list[list[Cell]]:
    """item (pack order) × question (scheme order) × rater (name order)."""
    questions = [t.question for t in rep.tables]
    raters = rep.completeness.raters
    rows: list[list[Cell]] = []
    for it in rep.items:
        for q in questions:
            for r in raters:
                cat = it.categories.get(r, {}).get(q)
                row = [it.item, it.kind, it.control, it.run, it.config, q, r, cat]
                rows.append([*row, rep.replies])
    return rows


def ratings_rows(pack: Pack) -> list[list[Cell]]:
    """Each rater's latest revision of each item, item (pack order) × question × rater.
    ``quotes`` is a JSON array of strings (decision 207)."""
    latest = {rater: latest_by_item(recs) for rater, recs in all_ratings(pack).items()}
    raters = sorted(set(latest) | set(pack.manifest.expected_raters))
    clusters = pack.clusters
    rows: list[list[Cell]] = []
    for item in pack.order:
        for q in pack.scheme.questions:
            for r in raters:
                rec = latest.get(r, {}).get(item)
                ans = rec.answers.get(q.id) if rec else None
                head: list[Cell] = [pack.manifest.pack_id, item, clusters[item], q.id, r]
                if rec is None or ans is None:
                    rows.append([*head, *([None] * 10)])
                    continue
                quotes = json.dumps(ans.quotes, ensure_ascii=False)
                rows.append(
                    [
                        *head,
                        rec.revision,
                        rec.ts,
                        ans.category,
                        ans.grounds,
                        len(ans.quotes),
                        quotes,
                        rec.position,
                        rec.order_seed,
                        rec.shown_at,
                        rec.seconds_on_item,
                    ]
                )
    return rows


def adjudication_rows(state: AdjudicationState) -> list[list[Cell]]:
    """One row per disagreement (pack order, then question): the raw categories (a JSON object
    rater → category), the adjudicated category in force (empty: not adjudicated) and its
    record; ``stale`` when a rater revised since (issue 28)."""
    rows: list[list[Cell]] = []
    for d in state.disagreements:
        raw = json.dumps(d.raw, ensure_ascii=False, sort_keys=True)
        a = d.adjudication
        if a is None:
            rows.append([d.item, d.question, raw, None, None, None, None, False, None])
            continue
        rows.append(
            [d.item, d.question, raw, a.category, a.adjudicator, a.seq, a.ts, d.stale, a.grounds]
        )
    return rows
