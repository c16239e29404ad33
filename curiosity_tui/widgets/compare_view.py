"""Text builders of the comparison screen (issue 26, item 6): the bar naming the session shown
and what the two runs differ in, each side's title, and each side's session summary.

Every string from a ledger (question text, facts, names, minds) is shown literally
(:mod:`curiosity_tui.widgets.literal`): markup in it never styles the screen.
"""

from __future__ import annotations

from rich.text import Text

from curiosity_tui.analysis.compare import Comparison, RunSide, SideSession
from curiosity_tui.analysis.compare_text import curator_line, favours, signed
from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.widgets.literal import lit, num, short
from curiosity_tui.widgets.status import CHANGE_TAG

__all__ = ["compare_bar", "metric_cells", "side_summary", "side_title"]

#: how many facts and checks a summary lists before "+N more"
LISTED = 2


def compare_bar(comp: Comparison, index: int) -> Text:
    """``session ◀ [ s1 ▸s2◂ s3 ] ▶ · differ in: config, curator``."""
    t = Text(no_wrap=True, end="")
    t.append("session ", style="bold")
    t.append("◀ [ " if index > 0 else "  [ ", style="dim")
    for i, aligned in enumerate(comp.sessions):
        name = f"s{aligned.session}"
        if i == index:
            t.append(f"▸{name}◂", style="bold reverse")
        else:
            t.append(f" {name} ", style="dim")
        t.append(" ")
    t.append("] ▶" if index < len(comp.sessions) - 1 else "]  ", style="dim")
    t.append("  differ in: ", style="dim")
    t.append(", ".join(comp.differ) or "nothing recorded", style="bold yellow")
    return t


def side_title(tag: str, side: RunSide) -> Text:
    t = Text(no_wrap=True, end="", overflow="ellipsis")
    t.append(f"{tag} ", style="bold reverse")
    t.append(" ")
    t.append(short(side.name, 40), style="bold")
    parts = [side.config, side.contract, f"curator {side.curator}"]
    if side.scripted:
        parts.append("scripted")
    elif side.model:
        parts.append(f"model {side.model}")
    t.append("  " + short(" · ".join(parts), 60), style="cyan")
    return t


def _head(s: SideSession) -> Text:
    """``s3 PRESERVE Δ -0.43  by model M`` (the decision first: a narrow pane keeps it)."""
    t = Text(end="")
    t.append(f"s{s.session} ", style="bold")
    if s.decision:
        style = "bold magenta" if s.decision == "PRESERVE" else "bold green"
        t.append(s.decision, style=style)
        if s.delta is not None:
            t.append(f" Δ {fmt(s.delta)}")
    else:
        t.append("no decision", style="dim")
    if s.mind:
        t.append("  by ", style="dim")
        t.append_text(lit(s.mind, "cyan"))
    return t


def _focus(s: SideSession) -> Text:
    if not s.focus:
        return Text("no forced focus", style="dim", end="")
    t = Text(end="")
    t.append("focus ")
    t.append(s.focus, style="bold")
    t.append(" ")
    t.append_text(lit(short(s.focus_text, 90), "italic"))
    return t


def _marks(s: SideSession) -> Text:
    t = Text(end="")
    total = sum(s.statuses.values())
    t.append(f"{total} nodes", style="bold")
    if s.statuses:
        t.append(" (" + ", ".join(f"{v} {k}" for k, v in s.statuses.items()) + ")", style="dim")
    for kind, word in (("new", "NEW"), ("changed", "CHG")):
        ids = [m.node for m in s.marks if m.mark == kind]
        t.append(f"  {word} ", style=CHANGE_TAG[kind][1])
        t.append(" ".join(ids[:10]) + (f" +{len(ids) - 10}" if len(ids) > 10 else "") or "—")
    return t


def _closures(s: SideSession) -> Text:
    t = Text(end="")
    t.append(f"facts +{len(s.facts)}  checks +{len(s.checks)}  ")
    t.append("closed ", style="dim")
    t.append(" ".join(c.node for c in s.closed) or "—", style="bold blue" if s.closed else "")
    t.append("  blocked ", style="dim")
    if s.blocked:
        t.append(
            ", ".join(f"{c.node} (unmet {' '.join(c.unmet) or '—'})" for c in s.blocked),
            style="bold red",
        )
    else:
        t.append("—")
    return t


def side_summary(s: SideSession | None) -> Text:
    """What one run did in the session shown: a few lines."""
    if s is None:
        return Text("loading…", style="dim")
    if s.state == "absent":
        return Text(f"s{s.session}: no session (the run ended before it)", style="dim")
    if s.state == "failed":
        return Text.assemble(
            (f"s{s.session} failed", "bold red"),
            ": ",
            lit(short(s.reason or "no reason recorded", 80)),
            " (nothing of it was applied)",
        )
    lines = [_head(s), _focus(s), _marks(s), _closures(s)]
    if s.curator:
        lines.append(Text.assemble(("  ", ""), lit(curator_line(s), "magenta")))
    for f in s.facts[:LISTED]:
        lines.append(
            Text.assemble(("  fact ", "dim"), (f.node, "bold"), " ", lit(short(f.text, 70)))
        )
    for c in s.checks[:LISTED]:
        style = "green" if c.result in ("satisfied", "waived") else "yellow"
        lines.append(
            Text.assemble(
                ("  check ", "dim"), (c.node, "bold"), f" {c.requirement} ", (c.result, style)
            )
        )
    more = max(0, len(s.facts) - LISTED) + max(0, len(s.checks) - LISTED)
    if more:
        lines.append(
            Text(f"  … {more} more (curiosity-tui compare A B lists them all)", style="dim")
        )
    return Text("\n", end="", no_wrap=True, overflow="ellipsis").join(lines)


def metric_cells(
    name: str, a: float | None, b: float | None, d: float | None, hib: bool | None
) -> list[Text]:
    """One row of the paired-metrics table: metric, A, B, B − A, favours."""
    side = favours(hib, d)
    style = {"A": "bold cyan", "B": "bold magenta"}.get(side, "dim")
    return [
        lit(name),
        num(fmt(a)),
        num(fmt(b)),
        num(signed(d), "bold" if d else "dim"),
        Text(side, style=style, justify="center", end=""),
    ]
