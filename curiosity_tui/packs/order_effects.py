"""Order and time in a pack's ratings (issue 24, item 5; decision 427): agreement by the
position tercile an item had in each rater's presentation order, the median time per item of
each rater, and the ratings saved faster than a set minimum.

A rating's **position** is the one it records (1-based, in the rater's order); a record
saved before positions were recorded takes the item's place in the pack's order. Its
**tercile** is 1 + floor(3 (position - 1) / n) for n items. **Agreement by tercile**, per
question: over every rating r of an item in that tercile of its rater's order and every other
rater's rating of the same item, the share that agree (each pair of raters counts once from
each side, at each side's own position).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from pydantic import BaseModel

from curiosity_tui.packs.rating import RatingRecord


class RaterTiming(BaseModel):
    rater: str
    rated: int
    timed: int  # ratings that carry a time on item (saved through the app)
    median_seconds: float | None
    too_fast: list[str] = []  # items saved faster than the minimum asked for


class TercileAgreement(BaseModel):
    question: str
    tercile: int
    pairs: int
    agreement: float | None


def tercile(position: int, n: int) -> int:
    return 1 + (3 * (position - 1)) // max(1, n)


def _position(rec: RatingRecord, fallback: Mapping[str, int]) -> int:
    return rec.position if rec.position is not None else fallback.get(rec.item, 1)


def rater_timing(
    latest: Mapping[str, Mapping[str, RatingRecord]], min_seconds: float | None = None
) -> list[RaterTiming]:
    """Per rater: how many latest ratings carry a time, their median, the too-fast items."""
    out: list[RaterTiming] = []
    for rater in sorted(latest):
        recs = list(latest[rater].values())
        secs = [r.seconds_on_item for r in recs if r.seconds_on_item is not None]
        fast = sorted(
            r.item
            for r in recs
            if min_seconds is not None
            and r.seconds_on_item is not None
            and r.seconds_on_item < min_seconds
        )
        out.append(
            RaterTiming(
                rater=rater,
                rated=len(recs),
                timed=len(secs),
                median_seconds=float(np.median(secs)) if secs else None,
                too_fast=fast,
            )
        )
    return out


def agreement_by_tercile(
    question: str,
    latest: Mapping[str, Mapping[str, RatingRecord]],
    pack_order: list[str],
) -> list[TercileAgreement]:
    n = len(pack_order)
    fallback = {item: i + 1 for i, item in enumerate(pack_order)}
    hits = {1: [0, 0], 2: [0, 0], 3: [0, 0]}  # tercile -> [agree, pairs]
    for rater, recs in latest.items():
        for item, rec in recs.items():
            mine = rec.answers.get(question)
            if mine is None:
                continue
            t = tercile(_position(rec, fallback), n)
            for other, theirs in latest.items():
                o = theirs.get(item)
                if other == rater or o is None or question not in o.answers:
                    continue
                hits[t][1] += 1
                hits[t][0] += int(o.answers[question].category == mine.category)
    return [
        TercileAgreement(question=question, tercile=t, pairs=p, agreement=(a / p if p else None))
        for t, (a, p) in hits.items()
    ]


def format_order_effects(
    timing: list[RaterTiming], by_position: list[TercileAgreement], min_seconds: float | None
) -> list[str]:
    lines = ["", "order and time (each rater's presentation order; decision 427)"]
    for t in timing:
        med = "—" if t.median_seconds is None else f"{t.median_seconds:.1f} s"
        lines.append(f"  {t.rater}: median time per item {med} ({t.timed} of {t.rated} timed)")
        if t.too_fast:
            lines.append(
                f"    {len(t.too_fast)} rating(s) saved in under {min_seconds:g} s: "
                + ", ".join(t.too_fast)
            )
    for x in by_position:
        share = "—" if x.agreement is None else f"{x.agreement:.3f}"
        lines.append(
            f"  {x.question} agreement at position tercile {x.tercile}: {share} ({x.pairs} pairs)"
        )
    return lines
