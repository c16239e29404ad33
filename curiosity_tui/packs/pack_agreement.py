"""Agreement over a pack's ratings (coordinator's view): one :class:`QuestionAgreement`
per scheme question and rater group (human, model, and human-model cross pairs;
``rater_groups.py``), on categories only, with bootstrap intervals resampling runs.

Uses each rater's latest revision of each item. Reads every rater's file but never the key:
the resampling clusters come from the manifest (one run = one cluster)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from curiosity_tui.packs.adjudication import adjudication_path
from curiosity_tui.packs.agreement import PairAgreement, QuestionAgreement
from curiosity_tui.packs.order_effects import (
    RaterTiming,
    TercileAgreement,
    agreement_by_tercile,
    format_order_effects,
    rater_timing,
)
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.rater_groups import POOLED, grouped_agreement, groups_of
from curiosity_tui.packs.rating import rated_items
from curiosity_tui.packs.scale_agreement import coefficient_line, with_scale
from curiosity_tui.packs.unblind import PackLog, all_ratings
from curiosity_tui.packs.unblind_seal import changes_since, check_log, file_stamp, read_seals

__all__ = ["PackAgreement", "format_agreement", "pack_agreement"]


class PackAgreement(BaseModel):
    pack_id: str
    scheme: str
    n_items: int
    scope: str = "all items (controls, if any, cannot be told apart before unblinding)"
    basis: str = (
        "raw ratings only (each rater's latest revision); adjudicated categories are kept "
        "apart and never counted here"
    )
    raters: list[str]
    groups: dict[str, list[str]] = Field(
        default_factory=dict, description="human / model → raters; never pooled unless 'pooled'"
    )
    pooled: bool = Field(default=False, description="a pooled group was asked for")
    n_boot: int
    seed: int
    questions: list[QuestionAgreement]
    changes_since_opened: list[str] = Field(
        default_factory=list,
        description="ratings and adjudication files changed since the key was last opened",
    )
    #: "scripted" when the pack was built from scripted runs (practice, decision 442)
    replies: str = "model"
    #: per rater: median time per item and the ratings faster than ``min_seconds``
    timing: list[RaterTiming] = Field(default_factory=list)
    #: per question: agreement by position tercile of each rater's order (decision 427)
    by_position: list[TercileAgreement] = Field(default_factory=list)
    min_seconds: float | None = None


def pack_agreement(
    packdir: str | Path,
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    real_only: bool = False,
    key_path: Path | None = None,
    pool_groups: bool = False,
    min_seconds: float | None = None,
) -> PackAgreement:
    """Agreement per question. ``real_only`` leaves out control items; it needs the key and
    is refused until ``unblind`` has logged ``key_opened``, so it cannot open the key early."""
    pack = Pack.open(packdir)
    changes = _changes_now(pack)  # a log cut after unblinding is refused (decision 403)
    records = all_ratings(pack)
    order = pack.order
    scope = PackAgreement.model_fields["scope"].default
    if real_only:
        from curiosity_tui.packs.pack import PackError
        from curiosity_tui.packs.unblind import PackLog, read_key

        if not any(e.kind == "key_opened" for e in PackLog(pack.path).entries()):
            raise PackError(
                f"{pack.path}: the key has not been opened (run `unblind` first); "
                "agreement on real items only needs the key"
            )
        key = read_key(pack, key_path)
        order = [i for i in order if key.items[i].kind == "run"]
        scope = f"real items only ({len(order)} of {len(pack.order)}; controls left out)"
    latest_records = {rater: rated_items(recs) for rater, recs in records.items()}
    questions: list[QuestionAgreement] = []
    for q in pack.scheme.questions:
        per_rater: dict[str, dict[str, str]] = {}
        for rater, latest in latest_records.items():
            per_rater[rater] = {
                item: rec.answers[q.id].category
                for item, rec in latest.items()
                if q.id in rec.answers
            }
        grouped = grouped_agreement(
            q.id,
            q.category_ids,
            per_rater,
            order,
            pack.clusters,
            n_boot=n_boot,
            seed=seed,
            pool=pool_groups,
        )
        questions.extend(
            with_scale(qa, per_rater, order, q.level, pack.clusters, n_boot=n_boot, seed=seed)
            for qa in grouped
        )
    return PackAgreement(
        pack_id=pack.manifest.pack_id,
        scheme=pack.scheme.id,
        n_items=len(order),
        scope=scope,
        raters=sorted(records),
        groups=groups_of(sorted(records)),
        pooled=pool_groups and any(qa.group == POOLED for qa in questions),
        n_boot=n_boot,
        seed=seed,
        questions=questions,
        changes_since_opened=changes,
        replies="scripted" if pack.manifest.scripted else "model",
        timing=rater_timing(latest_records, min_seconds),
        by_position=[
            row
            for q in pack.scheme.questions
            for row in agreement_by_tercile(q.id, latest_records, pack.order)
        ],
        min_seconds=min_seconds,
    )


def _changes_now(pack: Pack) -> list[str]:
    """For readers after unblinding (``agreement``): the log checked against the seals, then
    what changed since the last opening."""
    seals = read_seals(pack)
    check_log(pack, PackLog(pack.path).entries(), seals)
    if not seals:
        return []
    raters = set(seals[-1].files) | {p.stem for p in pack.ratings_dir.glob("*.jsonl")}
    files = {r: file_stamp(pack.ratings_dir / f"{r}.jsonl") for r in sorted(raters)}
    return changes_since(seals, files, file_stamp(adjudication_path(pack.path)))


def format_agreement(rep: PackAgreement) -> str:
    """The report as text; every statistic row starts with its group (human, model,
    human-model, or pooled when asked for)."""
    from curiosity_tui.practice_banner import banner

    groups = "; ".join(f"{g}: {', '.join(rs)}" for g, rs in rep.groups.items())
    label = banner(rep.replies)
    lines = [label] if label else []
    lines += [
        f"pack {rep.pack_id} · scheme {rep.scheme} · {rep.n_items} items · "
        f"raters: {groups or '(none yet)'}",
        f"intervals: 95% percentile bootstrap, {rep.n_boot} samples resampling runs, seed {rep.seed}",
        f"scope: {rep.scope}",
        f"basis: {rep.basis}",
    ]
    lines += [f"CHANGED AFTER UNBLINDING: {c}" for c in rep.changes_since_opened]
    if rep.pooled:
        lines.append("POOLED rows put human and model raters together (--pool-groups)")
    elif len(rep.groups) > 1:
        lines.append("human and model raters are reported separately (never pooled)")
    for qa in rep.questions:
        lines += _question_lines(qa)
    lines += format_order_effects(rep.timing, rep.by_position, rep.min_seconds)
    return "\n".join(lines)


def _question_lines(qa: QuestionAgreement) -> list[str]:
    g = f"[{qa.group}]"
    lines = [
        "",
        f"{qa.question} · group {qa.group} · {qa.level}  ({qa.n_items} items, {qa.n_clusters} "
        "runs with ≥ 2 ratings)",
        f"  {g} raw agreement       {qa.raw_agreement.format()}",
        f"  {g} Fleiss' kappa       {qa.fleiss_kappa.format()}",
        f"  {g} Krippendorff alpha  {qa.krippendorff_alpha.format()}",
    ]
    lines += [coefficient_line(f"  {g} ", name, c) for name, c in qa.coefficients.items()]
    lines += [f"  {g} note: {note}" for note in qa.notes]
    if qa.group != "human-model":  # the cross rows' raters are counted in their own groups
        width = max([len(r) for r in qa.raters] + [5])
        lines.append(f"  {g} category counts:")
        lines.append(
            f"    {g} " + "rater".ljust(width) + "  " + "  ".join(c.rjust(6) for c in qa.categories)
        )
        for r in qa.raters:
            row = qa.category_counts[r]
            lines.append(
                f"    {g} "
                + r.ljust(width)
                + "  "
                + "  ".join(str(row[c]).rjust(6) for c in qa.categories)
            )
    for pair in qa.pairs:
        lines += _pair_lines(qa, pair)
    return lines


def _pair_lines(qa: QuestionAgreement, pair: PairAgreement) -> list[str]:
    g = f"[{pair.group}]"
    cw = max(len(c) for c in qa.categories)
    lines = [
        f"  {g} {pair.rater_a} × {pair.rater_b} ({pair.n_items} items): raw "
        f"{pair.raw_agreement.format()}, Cohen's kappa {pair.cohen_kappa.format()}",
        f"    {g} "
        + " " * cw
        + "  "
        + "  ".join(c.rjust(cw) for c in qa.categories)
        + f"   ← {pair.rater_b}",
    ]
    for cat, crow in zip(qa.categories, pair.confusion, strict=True):
        lines.append(f"    {g} " + cat.rjust(cw) + "  " + "  ".join(str(v).rjust(cw) for v in crow))
    lines.append(f"    {g} ↑ {pair.rater_a}")
    lines += [coefficient_line(f"    {g} ", n, c) for n, c in pair.coefficients.items()]
    return lines
