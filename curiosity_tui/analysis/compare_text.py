"""``curiosity-tui compare A B`` as text (issue 26, item 6): the two runs, what they differ in,
each session side by side (A then B), and the paired metrics with their difference.

Model text (questions, facts) is printed as stored, control characters made visible and cut
to one line; numbers go through :func:`~curiosity_tui.analysis.formatting.fmt`.
"""

from __future__ import annotations

from curiosity_tui.analysis.compare import Comparison, RunSide, SideSession
from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.practice_banner import banner, replies_of
from curiosity_tui.textsafe import terminal_safe

__all__ = [
    "favours",
    "curator_line",
    "format_comparison",
    "one_line",
    "side_heading",
    "side_lines",
    "signed",
]

#: characters of model text printed per item
TEXT_WIDTH = 60


def one_line(text: str, width: int = TEXT_WIDTH) -> str:
    """Model text on one line: control characters shown visibly, whitespace folded, cut."""
    flat = " ".join(terminal_safe(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def side_heading(side: RunSide) -> str:
    parts = [side.config, side.contract, f"curator {side.curator}", f"{side.sessions} sessions"]
    if side.scripted:
        parts.append("scripted replies")
    elif side.model:
        parts.append(f"model {side.model}")
    if len(side.minds) > 1:
        parts.append("relay: " + ", ".join(side.minds))
    return f"{side.name} — " + " · ".join(parts)


def _ids(items: list[str], limit: int = 8) -> str:
    shown = " ".join(items[:limit])
    return shown + (f" (+{len(items) - limit})" if len(items) > limit else "")


def side_lines(s: SideSession, *, trees: bool = False) -> list[str]:
    """What one run did in one session, a few lines (no label, no indent)."""
    if s.state == "absent":
        return ["no session (the run ended before it)"]
    if s.state == "failed":
        return [f"failed: {one_line(s.reason) or 'no reason recorded'} (nothing applied)"]
    head = []
    if s.focus:
        head.append(f'focus {s.focus} "{one_line(s.focus_text, 48)}"')
    else:
        head.append("no forced focus")
    if s.decision:
        delta = f" Δ {fmt(s.delta)}" if s.delta is not None else ""
        head.append(f"{s.decision}{delta}")
    if s.mind:
        head.append(f"by {s.mind}")
    lines = [" · ".join(head)]
    total = sum(s.statuses.values())
    statuses = ", ".join(f"{v} {k}" for k, v in s.statuses.items())
    new = [m.node for m in s.marks if m.mark == "new"]
    chg = [m.node for m in s.marks if m.mark == "changed"]
    lines.append(
        f"tree: {total} nodes ({statuses or 'none'}) · NEW {_ids(new) or '—'} · "
        f"CHG {_ids(chg) or '—'} · raised {s.questions}"
    )
    lines.append(
        f"facts +{len(s.facts)} · checks +{len(s.checks)} · closed "
        f"{_ids([c.node for c in s.closed]) or '—'} · blocked "
        + (", ".join(f"{c.node} (unmet {' '.join(c.unmet) or '—'})" for c in s.blocked) or "—")
    )
    if s.curator:
        lines.append(curator_line(s))
    lines += [f'  fact {f.node}: "{one_line(f.text)}"' for f in s.facts]
    lines += [f"  check {c.node} {c.requirement}: {c.result}" for c in s.checks]
    if trees:
        lines += [
            f"  {'NEW' if m.mark == 'new' else 'CHG'} {m.node} {m.status:<8} {one_line(m.text)}"
            for m in s.marks
        ]
    return lines


def favours(higher_is_better: bool | None, difference: float | None) -> str:
    """Which side the difference favours under the metric's direction: "A", "B", or "—"
    (no direction, no difference, or equal)."""
    if higher_is_better is None or difference is None or difference == 0:
        return "—"
    return "B" if (difference > 0) == higher_is_better else "A"


def signed(value: float | None) -> str:
    """A difference with its sign; no sign on zero."""
    if value is None:
        return "—"
    return "0.00" if round(value, 2) == 0 else f"{value:+.2f}"


def curator_line(s: SideSession) -> str:
    """``curator model-curator: q3 priority 1, q2 → archived`` (actors in first-seen order)."""
    actors = list(dict.fromkeys(a.actor for a in s.curator))
    acts = ", ".join(f"{a.node} {a.what}" for a in s.curator)
    return f"curator {', '.join(actors)}: {one_line(acts, 100)}"


def _metric_rows(comp: Comparison) -> list[str]:
    rows = [
        (
            m.name,
            fmt(m.a),
            fmt(m.b),
            signed(m.difference),
            favours(m.higher_is_better, m.difference),
        )
        for m in comp.metrics
    ]
    if not rows:
        return []
    head = ("metric", "A", "B", "B − A", "favours")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(r: tuple[str, ...]) -> str:
        cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, len(r))]
        return "  ".join(cells).rstrip()

    out = [
        "paired metrics (each run's own value, B − A; favours: the side the metric's direction "
        "prefers; — = undefined or no direction)",
        line(head),
    ]
    return out + [line(r) for r in rows]


def format_comparison(comp: Comparison, *, trees: bool = False) -> str:
    """The whole comparison as text; ``trees`` lists every NEW / CHG node per session."""
    replies = ["scripted" if s.scripted else "model" for s in (comp.a, comp.b)]
    label = banner(replies_of(replies))
    out = [label, ""] if label else []
    out += [f"A  {side_heading(comp.a)}", f"B  {side_heading(comp.b)}"]
    out.append("differ in: " + (", ".join(comp.differ) or "nothing recorded (same setup)"))
    for aligned in comp.sessions:
        out += ["", f"session {aligned.session}"]
        for tag, side in (("A", aligned.a), ("B", aligned.b)):
            lines = side_lines(side, trees=trees)
            out.append(f"  {tag}  {lines[0]}")
            out += [f"     {x}" for x in lines[1:]]
    metrics = _metric_rows(comp)
    if metrics:
        out += ["", *metrics]
    return "\n".join(out)
