"""``unblind``'s text: the per-arm tables per rater group, the control items, every item's
categories and the adjudicated set after them (moved out of :mod:`curiosity_tui.packs.unblind`;
``format_unblind`` lives here, so the two modules do not import each other)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from curiosity_tui.packs.rating import rater_group

if TYPE_CHECKING:  # the records only: unblind itself never imports this module
    from curiosity_tui.packs.unblind import ConfigTable, ControlResult, UnblindReport

__all__ = ["format_unblind", "unblind_text"]


def unblind_text(rep: UnblindReport) -> str:
    """The report as text. Tables are per rater group (human, model) and every table row
    starts with its group: human and model ratings are never counted together."""
    from curiosity_tui.practice_banner import banner

    comp = rep.completeness
    label = banner(rep.replies)
    lines = [label] if label else []
    lines += [
        f"pack {rep.pack_id} unblinded by {rep.by} at {rep.ts} (pack log seq {rep.log_seq})",
        f"ratings: {comp.reason}" + ("  — FORCED: ratings were incomplete" if rep.forced else ""),
    ]
    lines += [f"CHANGED AFTER UNBLINDING: {c}" for c in rep.changes_since_opened]
    for t in rep.tables:
        lines += _table_lines(t)
    if rep.controls:
        lines.append("")
        lines.append("control items (expected category → what raters chose)")
        for c in rep.controls:
            lines += _control_lines(c, rep.rater_groups)
    lines.append("")
    lines.append("items")
    for it in rep.items:
        cats_text = "; ".join(
            f"{r} ({rep.rater_groups.get(r, rater_group(r))}): "
            + ",".join(f"{q}={c}" for q, c in sorted(a.items()))
            for r, a in sorted(it.categories.items())
        )
        tag = f" control:{it.control}" if it.control else ""
        lines.append(f"  {it.item}  {it.config:<12} {it.run}{tag}  {cats_text}")
    lines.extend(_format_adjudicated(rep))
    return "\n".join(lines)


def _table_lines(t: ConfigTable) -> list[str]:
    cats = t.categories
    width = max([len(c) for c in t.by_rating] + [13])
    g = t.group.ljust(5)
    lines = [
        "",
        f"{t.question} — {t.group} raters: ratings per configuration (every rating counts)",
        f"  {'group'.ljust(5)}  "
        + "configuration".ljust(width)
        + "  "
        + "  ".join(c.rjust(8) for c in cats),
    ]
    for config, row in t.by_rating.items():
        lines.append(
            f"  {g}  " + config.ljust(width) + "  " + "  ".join(str(row[c]).rjust(8) for c in cats)
        )
    lines.append(
        f"{t.question} — {t.group} raters: runs per configuration (raters agreeing; otherwise split)"
    )
    lines.append(
        f"  {'group'.ljust(5)}  "
        + "configuration".ljust(width)
        + "  "
        + "  ".join(c.rjust(8) for c in [*cats, "split"])
        + "      runs"
    )
    for config, row in t.by_run.items():
        lines.append(
            f"  {g}  "
            + config.ljust(width)
            + "  "
            + "  ".join(str(row[c]).rjust(8) for c in [*cats, "split"])
            + f"  {t.runs.get(config, 0):>8}"
        )
    return lines


def _control_lines(c: ControlResult, groups: dict[str, str]) -> list[str]:
    lines = []
    for qid, want in c.expected.items():
        got = {r: a.get(qid, "-") for r, a in c.ratings.items()}
        per_group = []
        for group in ("human", "model"):
            mine = {r: v for r, v in got.items() if groups.get(r, rater_group(r)) == group}
            if mine:
                hits = sum(1 for v in mine.values() if v == want)
                per_group.append(f"{group} {hits}/{len(mine)}")
        lines.append(
            f"  {c.item} {c.kind:<18} {qid}: expected {want}; "
            + (", ".join(f"{r}={v}" for r, v in got.items()) or "no ratings")
            + f"  ({', '.join(per_group) or '0/0'} as expected)"
        )
    return lines


def _format_adjudicated(rep: UnblindReport) -> list[str]:
    """The adjudicated categories, apart from (and after) every raw table."""
    if not rep.adjudicated:
        return []
    lines = [
        "",
        "adjudicated (the coordinator's category where raters split, recorded blind; "
        "every table above counts raw ratings only)",
    ]
    for t in rep.adjudicated_tables:
        cats = [*t.categories, "split"]
        width = max([len(c) for c in t.by_run] + [13])
        lines.append(f"{t.question} — adjudicated set: runs per configuration")
        lines.append(
            "  " + "configuration".ljust(width) + "  " + "  ".join(c.rjust(8) for c in cats)
        )
        for config, row in t.by_run.items():
            lines.append(
                "  " + config.ljust(width) + "  " + "  ".join(str(row[c]).rjust(8) for c in cats)
            )
    for a in rep.adjudicated:
        raw = ", ".join(f"{r}={c}" for r, c in sorted(a.raw.items()))
        again = f", revises record {a.replaces}" if a.replaces else ""
        lines.append(
            f"  {a.item}  {a.config:<12} {a.run}  {a.question}: raw {raw} → adjudicated "
            f"{a.adjudicated} by {a.adjudicator} (record {a.seq}{again})"
        )
    return lines


def format_unblind(rep: UnblindReport) -> str:
    """The report as text: the name ``unblind`` callers print with."""
    return unblind_text(rep)
