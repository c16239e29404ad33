"""The report's rating section, item by item as the GRRAS asks (issue 24, item 7; decision 428).

Kottner et al. (2011), "Guidelines for Reporting Reliability and Agreement Studies (GRRAS)",
J Clin Epidemiol 64:96-106: the raters (who, how many, their independence), the items (how
many, how chosen), blinding, the scale and its level, the coefficients with their uncertainty,
and the missing ratings. Built from the pack alone (manifest, ratings, log): the key is never
read, so a blind pack stays blind. Markdown lines for ``report --pack``.
"""

from __future__ import annotations

from pathlib import Path

from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.pack_agreement import PackAgreement, pack_agreement
from curiosity_tui.packs.rating import rater_group
from curiosity_tui.packs.scale_agreement import LABELS
from curiosity_tui.packs.unblind import PackLog, all_ratings, completeness

GRRAS = "Kottner et al. 2011, Guidelines for Reporting Reliability and Agreement Studies"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def md_table(header: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{round(value, 12) + 0.0:.3f}"


def _raters(pack: Pack, rep: PackAgreement) -> list[str]:
    groups = "; ".join(f"{g}: {', '.join(rs)}" for g, rs in rep.groups.items()) or "none yet"
    return [
        "**Raters.** " + f"{len(rep.raters)} ({groups}); human and model raters are reported "
        "apart, never pooled unless asked. **Independence**: each rater rates from an own file "
        "(an exported copy or the pack folder), never sees another rater's categories, and "
        "copied records are refused on import; adjudicated categories are kept apart and not "
        "counted in agreement.",
    ]


def _items(pack: Pack, rep: PackAgreement) -> list[str]:
    m = pack.manifest
    order = (
        "each rater an order of their own, seeded by the pack and the rater's name "
        "(`order_seed` in every rating)"
        if m.order == "per-rater"
        else "one fixed order for every rater"
    )
    return [
        f"**Items.** {rep.n_items} items, one a run (the resampling unit of every bootstrap), "
        f"shuffled at build; control items, if any, cannot be told apart before unblinding. "
        f"**Presentation**: {order}."
        + (" Practice material: scripted runs." if m.scripted else ""),
    ]


def _blinding(pack: Pack) -> list[str]:
    opened = any(e.kind == "key_opened" for e in PackLog(pack.path).entries())
    state = "the key has been opened (`unblind`)" if opened else "the key is still closed"
    return [
        "**Blinding.** Items carry opaque labels; configuration, run and contract names are in "
        f"a key raters never open; {state}.",
    ]


def _scale(pack: Pack) -> list[str]:
    rows: list[list[object]] = [
        [q.id, q.level, " < ".join(q.category_ids) if q.level == "ordinal" else ", ".join(
            q.category_ids
        ), q.prompt]
        for q in pack.scheme.questions
    ]  # fmt: skip
    return [
        "**Scale and level.**",
        "",
        *md_table(["question", "level", "categories", "asks"], rows),
    ]


def _coefficients(rep: PackAgreement) -> list[str]:
    rows: list[list[object]] = []
    for qa in rep.questions:
        boot = [("Fleiss' kappa", qa.fleiss_kappa), ("Krippendorff alpha", qa.krippendorff_alpha)]
        for name, e in boot:
            iv = e.interval
            span = f"[{_fmt(iv.low)}, {_fmt(iv.high)}] bootstrap by run" if iv and iv.low else "—"
            rows.append(
                [qa.question, qa.group, name, _fmt(e.value), span, e.undefined_reason or ""]
            )
        for key, c in qa.coefficients.items():
            span = (
                f"[{_fmt(c.ci_low)}, {_fmt(c.ci_high)}] analytic, SE {_fmt(c.se)}"
                if c.se is not None
                else "—"
            )
            rows.append([qa.question, qa.group, LABELS.get(key, key), _fmt(c.value), span,
                         c.undefined_reason or ""])  # fmt: skip
    head = ["question", "raters", "coefficient", "value", "95% interval", "undefined because"]
    return [
        "**Coefficients with their uncertainty** (per rater group; each pair's Cohen's kappa, "
        "weighted kappa and PABAK are in `agreement PACK`):",
        "",
        *md_table(head, rows),
    ]


def _too_fast(rep: PackAgreement) -> list[str]:
    if rep.min_seconds is None:
        return ["**Too fast.** The plan sets no minimum time per item."]
    fast = [(t.rater, t.too_fast) for t in rep.timing if t.too_fast]
    head = f"**Too fast** (under the plan's {rep.min_seconds:g} s per item): "
    if not fast:
        return [head + "none of the timed ratings."]
    return [head + "; ".join(f"{r}: {len(items)} ({', '.join(items)})" for r, items in fast)]


def _missing(pack: Pack, rep: PackAgreement) -> list[str]:
    done = completeness(pack)
    records = all_ratings(pack)
    rows = []
    for r in done.raters:
        failed = sum(1 for rec in records.get(r, []) if rec.missing is not None)
        timing = next((t for t in rep.timing if t.rater == r), None)
        median = _fmt(timing.median_seconds) if timing else "—"
        rows.append([r, rater_group(r), done.rated.get(r, 0), len(done.missing.get(r, [])),
                     failed, median])  # fmt: skip
    head = ["rater", "group", "rated", "unrated", "missing records", "median s per item"]
    return ["**Missing ratings and time.**", "", *md_table(head, rows)]


def rating_section(
    packdir: str | Path, *, n_boot: int = 2000, seed: int = 0, min_seconds: float | None = None
) -> list[str]:
    """The report's rating section for one pack, in the GRRAS order; ratings saved faster
    than ``min_seconds`` (the plan's ``min_seconds_per_item``) are flagged."""
    pack = Pack.open(packdir)
    rep = pack_agreement(packdir, n_boot=n_boot, seed=seed, min_seconds=min_seconds)
    lines = [
        f"## Rating study: pack {pack.manifest.pack_id} (scheme {pack.scheme.id})",
        "",
        f"Reported after the GRRAS items ({GRRAS}). Intervals: bootstrap resampling runs "
        f"({n_boot} draws, seed {seed}) for the nominal coefficients; analytic (Gwet 2014; "
        "Fleiss, Cohen & Everitt 1969) for the others (decision 425).",
        "",
    ]
    for part in (
        _raters(pack, rep),
        _items(pack, rep),
        _blinding(pack),
        _scale(pack),
        _coefficients(rep),
        _missing(pack, rep),
        _too_fast(rep),
    ):
        lines += [*part, ""]
    return lines
