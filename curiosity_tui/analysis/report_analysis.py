"""The report's analysis section (issue 24, item 7; decision 428): how the verdict decides (mean
or interval rule, alpha, interval method) and the family of comparisons with its correction,
raw and adjusted side by side. The design analysis locked with the plan follows it
(:func:`curiosity_tui.analysis.report.design_section`)."""

from __future__ import annotations

from pathlib import Path

from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.analysis.interval_rule import decides_on_interval, format_p
from curiosity_tui.analysis.lockchain import find_chain, load_verified_chain
from curiosity_tui.analysis.markdown import md_table
from curiosity_tui.analysis.plan import PilotPlan, parse_plan
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.verdict import Verdict, VerdictReport


def locked_plan(run_dir: Path, reg: Registry) -> PilotPlan | None:
    """The latest plan locked in the chain beside ``run_dir`` (None: nothing locked)."""
    chain = find_chain(run_dir)
    if chain is None:
        return None
    entries = load_verified_chain(chain)
    if not entries:
        return None
    return parse_plan(entries[-1].plan_text, source=f"prereg seq {entries[-1].seq}", registry=reg)


_WORD = {"met": "MET", "not_met": "NOT MET", "undecided": "UNDECIDED", "incomplete": "INCOMPLETE"}


def _reading(v: Verdict) -> str:
    how = "the interval rule" if decides_on_interval(v.rule_kind) else "the mean rule"
    return (
        f"`{v.rule_kind}`, decided by {how}: alpha {v.alpha:g}, two-sided {1 - v.alpha:.0%} "
        f"{v.interval_method} bootstrap intervals by run; margin {v.margin:g}"
    )


def _clause_rows(name: str, v: Verdict) -> list[list[object]]:
    rows: list[list[object]] = []
    for mc in v.by_metric:
        for c in mc.clauses:
            r = c.by_interval
            span = "—" if r is None or r.low is None else f"[{fmt(r.low)}, {fmt(r.high)}]"
            agree = {True: "agree", False: "differ", None: "—"}[c.rules_agree]
            rows.append(
                [
                    name,
                    c.metric,
                    f"{c.treatment} − {c.control}",
                    "—" if c.advantage is None else f"{c.advantage:+.3f}",
                    span,
                    agree,
                    format_p(r.p_value if r else None),
                    format_p(c.p_adjusted),
                ]
            )
    return rows


def analysis_section(rep: VerdictReport) -> list[str]:
    v = rep.verdict
    lines = ["## Analysis", "", f"Headline rule: {_reading(v)}.", ""]
    rows = _clause_rows("headline", v)
    if rep.comparisons:
        family = rep.comparisons[0].verdict.family
        lines += [
            f"Family of comparisons: {len(rep.comparisons)} `[[comparisons]]`, read together "
            f"with the `{family}` correction of their clauses' bootstrap p-values (decision 424; "
            "the headline is read alone). Raw: each rule as written; adjusted: a clause counts "
            f"when its adjusted p < {v.alpha:g}.",
            "",
        ]
        table = [
            [c.name, c.verdict.rule_kind, _WORD[c.verdict.outcome],
             _WORD[c.verdict.adjusted_outcome] if c.verdict.adjusted_outcome else "—"]
            for c in rep.comparisons
        ]  # fmt: skip
        lines += md_table(["comparison", "rule", "raw", f"adjusted ({family})"], table) + [""]
        for c in rep.comparisons:
            rows += _clause_rows(c.name, c.verdict)
    head = ["rule", "metric", "pair", "advantage", "interval", "mean vs interval", "p", "p adj."]
    lines += [
        "Every clause, read both ways (advantage signed so that > 0 favours the treatment):",
        "",
        *md_table(head, rows),
        "",
    ]
    return lines
