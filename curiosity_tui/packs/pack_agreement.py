"""Agreement over a pack's ratings (coordinator's view): one :class:`QuestionAgreement`
per scheme question, on categories only, with bootstrap intervals resampling runs.

Uses each rater's latest revision of each item. Reads every rater's file but never the key:
the resampling clusters come from the manifest (one run = one cluster)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from curiosity_tui.packs.agreement import QuestionAgreement, question_agreement
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.rating import latest_by_item
from curiosity_tui.packs.unblind import all_ratings

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
    n_boot: int
    seed: int
    questions: list[QuestionAgreement]


def pack_agreement(
    packdir: str | Path,
    *,
    n_boot: int = 10_000,
    seed: int = 0,
    real_only: bool = False,
    key_path: Path | None = None,
) -> PackAgreement:
    """Agreement per question. ``real_only`` leaves out control items; it needs the key and
    is refused until ``unblind`` has logged ``key_opened``, so it cannot open the key early."""
    pack = Pack.open(packdir)
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
    latest_records = {rater: latest_by_item(recs) for rater, recs in records.items()}
    questions = []
    for q in pack.scheme.questions:
        per_rater: dict[str, dict[str, str]] = {}
        for rater, latest in latest_records.items():
            per_rater[rater] = {
                item: rec.answers[q.id].category
                for item, rec in latest.items()
                if q.id in rec.answers
            }
        questions.append(
            question_agreement(
                q.id,
                q.category_ids,
                per_rater,
                order,
                pack.clusters,
                n_boot=n_boot,
                seed=seed,
            )
        )
    return PackAgreement(
        pack_id=pack.manifest.pack_id,
        scheme=pack.scheme.id,
        n_items=len(order),
        scope=scope,
        raters=sorted(records),
        n_boot=n_boot,
        seed=seed,
        questions=questions,
    )


def format_agreement(rep: PackAgreement) -> str:
    lines = [
        f"pack {rep.pack_id} · scheme {rep.scheme} · {rep.n_items} items · "
        f"raters: {', '.join(rep.raters) or '(none yet)'}",
        f"intervals: 95% percentile bootstrap, {rep.n_boot} samples resampling runs, seed {rep.seed}",
        f"scope: {rep.scope}",
        f"basis: {rep.basis}",
    ]
    for qa in rep.questions:
        lines.append("")
        lines.append(f"{qa.question}  ({qa.n_items} items, {qa.n_clusters} runs with ≥ 2 ratings)")
        lines.append(f"  raw agreement       {qa.raw_agreement.format()}")
        lines.append(f"  Fleiss' kappa       {qa.fleiss_kappa.format()}")
        lines.append(f"  Krippendorff alpha  {qa.krippendorff_alpha.format()}")
        for note in qa.notes:
            lines.append(f"  note: {note}")
        width = max([len(r) for r in qa.raters] + [5])
        lines.append("  category counts:")
        lines.append(
            "    " + "rater".ljust(width) + "  " + "  ".join(c.rjust(6) for c in qa.categories)
        )
        for r in qa.raters:
            row = qa.category_counts[r]
            lines.append(
                "    "
                + r.ljust(width)
                + "  "
                + "  ".join(str(row[c]).rjust(6) for c in qa.categories)
            )
        for pair in qa.pairs:
            lines.append(
                f"  {pair.rater_a} × {pair.rater_b} ({pair.n_items} items): raw "
                f"{pair.raw_agreement.format()}, Cohen's kappa {pair.cohen_kappa.format()}"
            )
            cw = max(len(c) for c in qa.categories)
            lines.append(
                "    "
                + " " * cw
                + "  "
                + "  ".join(c.rjust(cw) for c in qa.categories)
                + f"   ← {pair.rater_b}"
            )
            for cat, crow in zip(qa.categories, pair.confusion, strict=True):
                lines.append(
                    "    " + cat.rjust(cw) + "  " + "  ".join(str(v).rjust(cw) for v in crow)
                )
            lines.append(f"    ↑ {pair.rater_a}")
    return "\n".join(lines)
