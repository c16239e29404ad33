"""The analysis screen's "Verdict" view: the locked rule evaluated on the locked metrics, each
clause with its figures, per-run values and interval; the prereg chronology; every other
metric under "exploratory". :func:`verdict_widgets` returns the widgets to mount."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable, Static

from curiosity_tui.analysis.formatting import fmt, fmt_interval
from curiosity_tui.widgets.literal import clean, lit, num
from curiosity_tui.widgets.report_tables import row_table

if TYPE_CHECKING:
    from curiosity_tui.analysis.aggregate import Difference
    from curiosity_tui.analysis.overview import AnalysisData
    from curiosity_tui.analysis.verdict import ClauseResult, MetricClauses, Verdict, VerdictReport

__all__ = ["verdict_block", "verdict_widgets"]

OUTCOME_WORD = {
    "met": "MET",
    "not_met": "NOT MET",
    "undecided": "UNDECIDED",
    "incomplete": "INCOMPLETE",
}
CLAUSE_COLUMNS = (
    "metric",
    "holds",
    "better",
    "treatment",
    "value",
    "",
    "control",
    "value",
    "advantage",
    "outcome",
    "95% CI",
    "per run (treatment)",
    "per run (control)",
    "note",
)
SIGN = {"beats": ">", "tie": "=", "does_not_beat": "≤", "no_data": "?"}
NO_RULE_NOTE = (
    "Every figure in Metrics and Report tables is exploratory: with no "
    "locked decision rule, none of them can decide anything."
)
INTERVAL_NOTE = (
    "Intervals: percentile bootstrap of the difference of means, runs resampled "
    "with replacement within each configuration (10,000 draws, seeded); printed "
    "beside the figures, never consulted by the rule. None where a side has "
    "fewer than two runs."
)


def verdict_widgets(data: AnalysisData) -> list[Widget]:
    """The verdict (the rule the runs were created under), each later amendment apart (its
    stage and reason, never the verdict), chronology, exploratory."""
    rep = data.verdict
    if rep is None:
        head = Text("Verdict: none — ", style="bold yellow", end="")
        head.append(clean(data.verdict_problem, oneline=True), style="yellow")
        return [
            Static(head, id="verdict-headline"),
            Static(Text(NO_RULE_NOTE, style="dim"), classes="an-note"),
        ]
    headline = {"scripted": "Verdict over SCRIPTED replies", "mixed": "Verdict over MIXED replies"}
    widgets = verdict_block(
        rep.verdict, headline.get(rep.replies, "Verdict"), "verdict-headline", "verdict-clauses"
    )
    for i, c in enumerate(rep.comparisons):  # each further comparison under its own rule
        widgets += verdict_block(
            c.verdict,
            f"Comparison {c.name}",
            f"verdict-comparison-{i}",
            f"verdict-comparison-{i}-clauses",
        )
    for a in rep.amendments:
        title = f"Amendment seq {a.seq} at stage {a.stage} (not the verdict)"
        reason = f"reason: {a.reason or '(none given)'}"
        if a.rule_changed:
            widgets += verdict_block(
                a.verdict, title, f"verdict-amendment-{a.seq}", f"verdict-amendment-{a.seq}-clauses"
            )
        else:
            widgets.append(Static(lit(f"{title}: rule unchanged"), classes="an-note"))
        widgets.append(Static(lit(reason, "italic"), classes="an-note"))
    widgets.append(Static(Text("Chronology (prereg chain)"), classes="an-title"))
    widgets.append(_chronology(rep))
    widgets.append(
        Static(lit(rep.exploratory_note), id="verdict-exploratory-note", classes="an-title")
    )
    widgets += _exploratory(data, rep)
    widgets.append(Static(Text(INTERVAL_NOTE, style="dim"), classes="an-note"))
    return widgets


def _chronology(rep: VerdictReport) -> DataTable[Text]:
    chron = row_table("verdict-chronology")
    chron.add_columns("seq", "ts", "stage", "hash", "plan sha256")
    for e in rep.chronology:
        chron.add_row(
            num(str(e.seq)), lit(e.ts), lit(e.stage), lit(e.hash[:12]), lit(e.plan_sha256[:12])
        )
    return chron


def _exploratory(data: AnalysisData, rep: VerdictReport) -> list[Widget]:
    """Every metric the rule does not use, with the standard differences: exploratory."""
    configs = [c for c in data.doc.configs if any(c in row.by_config for row in rep.exploratory)]
    explo = row_table("verdict-exploratory")
    explo.add_column("metric", key="metric")
    for c in configs:
        explo.add_column(lit(c, "bold"), key=c)
    pairs = list(dict.fromkeys((d.a, d.b) for row in rep.exploratory for d in row.differences))
    for a, b in pairs:
        explo.add_column(lit(f"{a} − {b} (95% CI)", "bold"), key=f"{a}|{b}")
    undefined: list[str] = []
    for row in rep.exploratory:
        if all(v is None for v in row.by_config.values()):
            undefined.append(row.metric)
            continue
        label = Text(row.metric, end="")
        if row.embedder:
            label.append(f" [{row.embedder}]", style="cyan")
        diffs = {(d.a, d.b): d for d in row.differences}
        explo.add_row(
            label,
            *(num(fmt(row.by_config.get(c))) for c in configs),
            *(_diff_cell(diffs.get(pair)) for pair in pairs),
            key=row.metric,
        )
    out: list[Widget] = [explo]
    if undefined:
        out.append(
            Static(
                Text(f"not defined for these runs: {', '.join(undefined)}", style="dim"),
                classes="an-note",
            )
        )
    return out


def verdict_block(v: Verdict, title: str, head_id: str, table_id: str) -> list[Widget]:
    """One verdict: its headline, the rule, a clause table and its notes."""
    style = {"met": "bold green", "not_met": "bold red"}.get(v.outcome, "bold yellow")
    lock = f"seq {v.lock.seq}, stage {v.lock.stage}, {v.lock.hash[:12]}" if v.lock else "unlocked"
    head = Text(f"{title}: ", style="bold", end="")
    head.append(OUTCOME_WORD[v.outcome], style=style)
    affected = v.incomplete_clauses
    if affected:
        head.append(f" — over incomplete data ({len(affected)} clause(s))", style="bold yellow")
    head.append(f"   (locked rule: {clean(lock, oneline=True)})", style="dim")
    rule = Text(
        f"rule: {v.rule_kind} over [{', '.join(v.metrics)}], margin {v.margin:g}, "
        f"ties read as {v.ties}, {v.aggregation} over runs",
        end="",
    )
    if v.rule_text:
        rule.append("\nrule text (not interpreted): ", style="dim")
        rule.append(clean(v.rule_text, oneline=True), style="italic")
    out: list[Widget] = [Static(head, id=head_id), Static(rule, classes="an-note")]
    table = row_table(table_id)
    table.add_columns(*CLAUSE_COLUMNS)
    for mc in v.by_metric:
        for i, c in enumerate(mc.clauses):
            table.add_row(*_clause_row(v, mc, i, c))
    out.append(table)
    for n in v.notes:
        out.append(Static(lit(f"note: {n}", "yellow"), classes="an-note"))
    if affected:
        text = "over incomplete data, the clauses it affects: " + "; ".join(affected)
        out.append(Static(lit(text, "yellow"), classes="an-note"))
    return out


def _clause_row(v: Verdict, mc: MetricClauses, i: int, c: ClauseResult) -> list[Text]:
    holds = {
        True: Text("holds", "green"),
        False: Text("fails", "red"),
        None: Text("not settled", "yellow"),
    }
    label = Text(mc.metric if i == 0 else "", end="")
    if i == 0 and mc.embedder:
        label.append(f" [{mc.embedder}]", style="cyan")
    return [
        label,
        holds[mc.holds] if i == 0 else Text(""),
        Text("higher" if c.higher_is_better else "lower"),
        lit(c.treatment, "bold"),
        num(fmt(c.value_treatment)),
        Text(SIGN[c.outcome], justify="center"),
        lit(c.control, "bold"),
        num(fmt(c.value_control)),
        num("—" if c.advantage is None else f"{c.advantage:+.2f}"),
        Text(c.outcome.replace("_", " ") + (f", read as {v.ties}" if c.outcome == "tie" else "")),
        Text(fmt_interval(c.interval)),
        Text(_per_run(c.per_run_treatment)),
        Text(_per_run(c.per_run_control)),
        lit(c.interval.note, "dim"),
    ]


def _per_run(values: Sequence[float | None]) -> str:
    return ", ".join(fmt(v) for v in values) or "none"


def _diff_cell(d: Difference | None) -> Text:
    if d is None or d.diff is None:
        return num("—", "dim")
    return num(f"{d.diff:+.2f} {fmt_interval(d)}")
