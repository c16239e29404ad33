"""Where the raters disagree, and the coordinator's adjudication of it — still blind.

Coordinator's view (it reads every rater's file, never the key). A *disagreement* is an item
and a question of the scheme on which the raters' latest categories differ. They are listed
only once the ratings are complete by the rule ``unblind`` uses (decision 066), and
:func:`adjudicate` records a category only then, only for a disagreement, and only while the
pack log holds no ``key_opened`` entry (decision 200). Raw ratings are never written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from curiosity_tui.clock import utc_now_milli
from curiosity_tui.packs.adjudication import (
    AdjudicationError,
    AdjudicationRecord,
    append_adjudication,
    current_adjudications,
    read_adjudications,
)
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.rating import latest_by_item
from curiosity_tui.packs.unblind import PackLog, all_ratings, completeness
from curiosity_tui.packs.unblind_seal import check_log, read_seals

__all__ = [
    "AdjudicationState",
    "Disagreement",
    "RaterView",
    "adjudicate",
    "adjudication_state",
    "format_state",
    "key_opened_seq",
]


class RaterView(BaseModel):
    """One rater's latest answer to one question of one item."""

    rater: str
    category: str
    grounds: str
    quotes: list[str] = Field(default_factory=list)
    revision: int


class Disagreement(BaseModel):
    item: str
    question: str
    raters: list[RaterView]
    adjudication: AdjudicationRecord | None = None

    @property
    def raw(self) -> dict[str, str]:
        return {v.rater: v.category for v in self.raters}

    @property
    def stale(self) -> bool:
        """Adjudicated against raw categories that a rater has revised since."""
        return self.adjudication is not None and self.adjudication.raw != self.raw


class AdjudicationState(BaseModel):
    pack_id: str
    scheme: str
    complete: bool
    reason: str = Field(description="why ratings are (in)complete, in unblind's words")
    key_opened: int | None = Field(description="pack log seq of the first key_opened, if any")
    raters: list[str]
    disagreements: list[Disagreement]
    records: list[AdjudicationRecord] = Field(description="every adjudication record, in order")


def key_opened_seq(pack: Pack) -> int | None:
    """Seq of the first ``key_opened`` entry in the pack log; None while the key is closed.
    A log cut or rewritten after unblinding (its seal, unblind_seal.py) is refused."""
    entries = PackLog(pack.path).entries()
    seals = read_seals(pack)
    check_log(pack, entries, seals)
    return next((e.seq for e in entries if e.kind == "key_opened"), None)


def _disagreements(pack: Pack) -> tuple[list[str], list[Disagreement]]:
    latest = {r: latest_by_item(recs) for r, recs in sorted(all_ratings(pack).items())}
    out: list[Disagreement] = []
    for item in pack.order:
        for q in pack.scheme.questions:
            views = [
                RaterView(
                    rater=r,
                    category=rec.answers[q.id].category,
                    grounds=rec.answers[q.id].grounds,
                    quotes=list(rec.answers[q.id].quotes),
                    revision=rec.revision,
                )
                for r, by_item in latest.items()
                if (rec := by_item.get(item)) is not None and q.id in rec.answers
            ]
            if len({v.category for v in views}) > 1:
                out.append(Disagreement(item=item, question=q.id, raters=views))
    return list(latest), out


def adjudication_state(packdir: str | Path | Pack) -> AdjudicationState:
    """Completeness, the disagreements (none listed while ratings are incomplete) with the
    adjudication in force on each, and every record."""
    pack = packdir if isinstance(packdir, Pack) else Pack.open(packdir)
    comp = completeness(pack)
    records = read_adjudications(pack)
    raters, found = _disagreements(pack) if comp.complete else (comp.raters, [])
    in_force = current_adjudications(records)
    for d in found:
        d.adjudication = in_force.get((d.item, d.question))
    return AdjudicationState(
        pack_id=pack.manifest.pack_id,
        scheme=pack.scheme.id,
        complete=comp.complete,
        reason=comp.reason,
        key_opened=key_opened_seq(pack),
        raters=raters,
        disagreements=found,
        records=records,
    )


def adjudicate(
    packdir: str | Path,
    item: str,
    question: str,
    category: str,
    grounds: str,
    *,
    by: str,
    replaces: int | None = None,
    clock: Callable[[], str] = utc_now_milli,
) -> AdjudicationRecord:
    """Record the coordinator's category for a disagreement. Refused while ratings are
    incomplete, once the key has been opened, and where the raters agree."""
    pack = Pack.open(packdir)
    state = adjudication_state(pack)
    if state.key_opened is not None:
        raise AdjudicationError(
            f"{pack.path}: the key was opened (pack log seq {state.key_opened}); "
            "adjudication is closed once a pack is unblinded"
        )
    if not state.complete:
        raise AdjudicationError(
            f"{pack.path}: ratings are incomplete ({state.reason}); adjudicate once every "
            "rater has rated every item"
        )
    found = next((d for d in state.disagreements if (d.item, d.question) == (item, question)), None)
    if found is None:
        pack.item(item)  # an unknown item is named as such
        raise AdjudicationError(
            f"{pack.path}: item {item}, {question}: the raters do not disagree there; "
            "only disagreements are adjudicated"
        )
    return append_adjudication(
        pack,
        item=item,
        question=question,
        category=category,
        grounds=grounds,
        adjudicator=by,
        raw=found.raw,
        replaces=replaces,
        clock=clock,
    )


def format_state(state: AdjudicationState) -> str:
    """``adjudication list``: one line per disagreement, with the adjudication in force."""
    done = sum(1 for d in state.disagreements if d.adjudication is not None)
    key = (
        "closed (adjudication open)"
        if state.key_opened is None
        else f"opened at pack log seq {state.key_opened} (adjudication closed)"
    )
    lines = [
        f"pack {state.pack_id} · scheme {state.scheme} · raters: "
        f"{', '.join(state.raters) or '(none yet)'}",
        f"ratings: {state.reason}",
        f"key: {key}",
    ]
    if not state.complete:
        lines.append("disagreements are listed once the ratings are complete")
        return "\n".join(lines)
    lines.append(
        f"{len(state.disagreements)} disagreement(s), {done} adjudicated; "
        f"{len(state.records)} adjudication record(s)"
    )
    for d in state.disagreements:
        raw = "  ".join(f"{r}={c}" for r, c in d.raw.items())
        a = d.adjudication
        what = (
            "not adjudicated"
            if a is None
            else f"adjudicated {a.category} by {a.adjudicator} (record {a.seq})"
            + (" — raw ratings revised since" if d.stale else "")
        )
        lines.append(f"  {d.item}  {d.question}  {raw}  → {what}")
    return "\n".join(lines)
