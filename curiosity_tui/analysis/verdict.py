"""The mechanical verdict (S7): the locked rule, on the locked metrics only.

:func:`evaluate_rule` sees only the rule's own metric names; it cannot read any other
metric, so nothing outside the locked set can change the outcome. Every other registry
metric is computed afterwards by :func:`exploratory` and printed under "exploratory".

The governing plan is the lock the runs were created under (they record it in their
journals; see :mod:`curiosity_tui.analysis.chronology`). Every lock after it is an
amendment: evaluated and reported apart, with its stage and reason, never as the verdict.
A chain that does not contain the lock the runs recorded yields no verdict at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from curiosity_tui.analysis.aggregate import (
    Difference,
    MetricAggregate,
    aggregate_metric,
    difference,
    fmt,
    fmt_interval,
    group_by_config,
)
from curiosity_tui.analysis.attraction import with_attraction_params
from curiosity_tui.analysis.chronology import governing_lock
from curiosity_tui.analysis.completeness import Completeness, ShortRun, completeness
from curiosity_tui.analysis.family import adjust
from curiosity_tui.analysis.interval_rule import (
    IntervalReading,
    agree,
    classify,
    combine,
    decides_on_interval,
    read_interval,
    reading_line,
)
from curiosity_tui.analysis.lockchain import LockEntry, find_chain, load_verified_chain
from curiosity_tui.analysis.plan import PilotPlan, parse_plan
from curiosity_tui.analysis.registry import Registry, default_registry
from curiosity_tui.analysis.run_origins import origin_notes
from curiosity_tui.analysis.rundata import RunData, load_runs
from curiosity_tui.analysis.runstamps import stamp_of
from curiosity_tui.errors import InputError

TIE_TOL = 1e-9
Outcome = Literal["met", "not_met", "undecided", "incomplete"]
ClauseOutcome = Literal["beats", "tie", "does_not_beat", "no_data"]


class ClauseResult(BaseModel):
    metric: str
    treatment: str
    control: str
    higher_is_better: bool
    margin: float
    value_treatment: float | None
    value_control: float | None
    advantage: float | None  # treatment − control, signed so that > 0 favours treatment
    outcome: ClauseOutcome
    counts: bool | None  # whether the clause holds under the rule's reading of ties
    n_treatment: int
    n_control: int
    per_run_treatment: list[float | None]
    per_run_control: list[float | None]
    interval: Difference  # printed beside, never consulted
    #: why this clause rests on incomplete data (runs short of sessions, or missing); [] = complete
    incomplete: list[str] = Field(default_factory=list)
    #: the mean rule's reading (``outcome``/``counts`` under a mean rule kind)
    mean_outcome: ClauseOutcome = "no_data"
    mean_counts: bool | None = None
    #: the interval rule's reading (what ``counts`` is under an interval rule kind)
    by_interval: IntervalReading | None = None
    #: whether the two readings agree (None: one has no reading)
    rules_agree: bool | None = None
    #: the p-value adjusted within the plan's family of comparisons (decision 424)
    p_adjusted: float | None = None


class MetricClauses(BaseModel):
    metric: str
    embedder: str | None = None
    holds: bool | None
    clauses: list[ClauseResult]


class LockRef(BaseModel):
    seq: int
    ts: str
    stage: str
    hash: str
    plan_sha256: str


class Verdict(BaseModel):
    outcome: Outcome
    rule_kind: str
    rule_text: str
    metrics: list[str]
    margin: float
    ties: str
    aggregation: str
    lock: LockRef | None
    by_metric: list[MetricClauses]
    notes: list[str] = Field(default_factory=list)
    #: runs of the rule's configurations with fewer committed sessions than the plan registered
    short_runs: list[ShortRun] = Field(default_factory=list)
    alpha: float = 0.05
    interval_method: str = "percentile"
    #: the family correction this verdict was read under ("none" outside a family)
    family: str = "none"
    #: the rule over the family-adjusted clauses (p adjusted < alpha); None outside a family
    adjusted_outcome: Outcome | None = None

    @property
    def incomplete_clauses(self) -> list[str]:
        """``metric: treatment vs control`` of every clause over incomplete data."""
        return [
            f"{mc.metric}: {c.treatment} vs {c.control}"
            for mc in self.by_metric
            for c in mc.clauses
            if c.incomplete
        ]


class ExploratoryRow(BaseModel):
    metric: str
    embedder: str | None = None
    by_config: dict[str, float | None]
    differences: list[Difference]


class Amendment(BaseModel):
    """A lock made after the one the runs were created under: reported, never the verdict."""

    seq: int
    ts: str
    stage: str
    reason: str
    hash: str
    rule_changed: bool
    verdict: Verdict


class ComparisonVerdict(BaseModel):
    """One further comparison of the governing plan (decision 241), under its own rule."""

    name: str
    verdict: Verdict


class VerdictReport(BaseModel):
    #: the rule in force when the runs were created
    verdict: Verdict
    #: the governing plan's further comparisons, each under its own locked rule
    comparisons: list[ComparisonVerdict] = Field(default_factory=list)
    #: how the governing lock was found: "recorded" by the runs, "by time", "first lock"
    governing_basis: str = "recorded"
    #: every later lock, each evaluated under its own rule; none of them is the verdict
    amendments: list[Amendment] = Field(default_factory=list)
    exploratory: list[ExploratoryRow]
    exploratory_note: str = (
        "Exploratory: metrics outside the locked set. Printed for information; they cannot "
        "change the verdict."
    )
    chronology: list[LockRef]
    #: whose replies the runs hold: model, scripted (practice) or mixed (decision 442)
    replies: str = "model"
    scripted_runs: list[str] = Field(default_factory=list)


def _clause(
    runs_t: Sequence[RunData],
    runs_c: Sequence[RunData],
    metric: str,
    treatment: str,
    control: str,
    plan: PilotPlan,
    registry: Registry,
    seed: int,
) -> ClauseResult:
    m = registry.get(metric)
    hib = bool(m.higher_is_better)
    agg_t = aggregate_metric(
        runs_t, metric, treatment, registry=registry, aggregation=plan.aggregation
    )
    agg_c = aggregate_metric(
        runs_c, metric, control, registry=registry, aggregation=plan.aggregation
    )
    diff = difference(agg_t, agg_c, seed=seed, level=1.0 - plan.alpha)
    margin = plan.rule.margin
    adv: float | None = None
    outcome: ClauseOutcome
    counts: bool | None
    if agg_t.value is None or agg_c.value is None:
        outcome, counts = "no_data", None
    else:
        adv = (agg_t.value - agg_c.value) * (1.0 if hib else -1.0)
        outcome, counts = classify(adv, margin, plan.rule.ties)
    by_interval = read_interval(
        agg_t,
        agg_c,
        higher_is_better=hib,
        margin=margin,
        ties=plan.rule.ties,
        alpha=plan.alpha,
        method=plan.interval_method,
        seed=seed,
    )
    mean_outcome, mean_counts = outcome, counts
    if decides_on_interval(plan.rule.kind):
        outcome, counts = by_interval.outcome, by_interval.counts
    return ClauseResult(
        metric=metric,
        treatment=treatment,
        control=control,
        higher_is_better=hib,
        margin=margin,
        value_treatment=agg_t.value,
        value_control=agg_c.value,
        advantage=adv,
        outcome=outcome,
        counts=counts,
        n_treatment=agg_t.n,
        n_control=agg_c.n,
        per_run_treatment=[r.value for r in agg_t.per_run],
        per_run_control=[r.value for r in agg_c.per_run],
        interval=diff,
        mean_outcome=mean_outcome,
        mean_counts=mean_counts,
        by_interval=by_interval,
        rules_agree=agree(mean_counts, by_interval.counts),
    )


def _all(values: Sequence[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    if any(v is None for v in values):
        return None
    return True


def evaluate_rule(
    plan: PilotPlan,
    runs: Sequence[RunData],
    *,
    registry: Registry | None = None,
    lock: LockEntry | None = None,
    seed: int = 20240601,
) -> Verdict:
    """The verdict of ``plan.rule`` over ``runs``, reading only ``plan.rule.metrics``."""
    reg = registry or default_registry()
    split = plan.compares_contracts()
    groups = group_by_config(runs, split=split)
    notes: list[str] = []
    cells = plan.cells()
    for cfg in sorted(groups):
        if cfg not in cells:
            what = "cell" if split else "configuration"
            notes.append(f"runs of {what} {cfg!r} are not in the plan and were ignored")
    needed = sorted({c for pair in plan.rule.pairs for c in pair})
    for cfg in needed:
        n = len(groups.get(cfg, []))
        if n < plan.runs:
            notes.append(f"{cfg}: {n} run(s) present, the plan registered {plan.runs}")
        unreg = sum(1 for r in groups.get(cfg, []) if r.unregistered)
        if unreg:
            notes.append(f"{cfg}: {unreg} run(s) were started --unregistered")
    done = completeness(
        [r for cfg in needed for r in groups.get(cfg, [])], plan.sessions, split=split
    )
    for cfg in needed:
        short = done.of(cfg)
        if short:
            notes.append(
                f"{cfg}: fewer than the registered {plan.sessions} sessions committed in "
                + ", ".join(s.describe() for s in short)
            )

    by_metric: list[MetricClauses] = []
    for metric in plan.rule.metrics:
        clauses = [
            _clause(groups.get(t, []), groups.get(c, []), metric, t, c, plan, reg, seed)
            for t, c in plan.rule.pairs
        ]
        for c in clauses:
            c.incomplete = _incomplete(c, groups, done, plan.runs)
        by_metric.append(
            MetricClauses(
                metric=metric,
                embedder=reg.get(metric).embedder,
                holds=_all([c.counts for c in clauses]),
                clauses=clauses,
            )
        )

    result = combine(plan.rule.kind, [mc.holds for mc in by_metric])
    outcome: Outcome
    if result is True:
        outcome = "met"
    elif result is False:
        outcome = "not_met"
    else:
        no_data = any(c.outcome == "no_data" for mc in by_metric for c in mc.clauses)
        outcome = "incomplete" if no_data else "undecided"
    return Verdict(
        outcome=outcome,
        rule_kind=plan.rule.kind,
        rule_text=plan.rule.text,
        metrics=list(plan.rule.metrics),
        margin=plan.rule.margin,
        ties=plan.rule.ties,
        aggregation=plan.aggregation,
        lock=_ref(lock) if lock else None,
        by_metric=by_metric,
        notes=notes,
        short_runs=done.short,
        alpha=plan.alpha,
        interval_method=plan.interval_method,
    )


def read_as_family(verdicts: Sequence[Verdict], family: str, alpha: float) -> None:
    """Adjust the p-values of every clause of ``verdicts`` together (the plan's
    [[comparisons]]; decision 424) and set each verdict's reading over the adjusted clauses."""
    clauses = [c for v in verdicts for mc in v.by_metric for c in mc.clauses]
    raw = [c.by_interval.p_value if c.by_interval else None for c in clauses]
    for c, p in zip(clauses, adjust(raw, family), strict=True):
        c.p_adjusted = p
    for v in verdicts:
        v.family = family
        holds = [_all([_adjusted_counts(c, alpha) for c in mc.clauses]) for mc in v.by_metric]
        result = combine(v.rule_kind, holds)
        v.adjusted_outcome = (
            "met" if result is True else "not_met" if result is False else "undecided"
        )


def _adjusted_counts(c: ClauseResult, alpha: float) -> bool | None:
    """A clause in the family: it counts when its adjusted p < alpha (None: no p)."""
    if c.by_interval is None or c.by_interval.p_value is None:
        return None
    return c.p_adjusted is not None and c.p_adjusted < alpha


def _incomplete(
    clause: ClauseResult,
    groups: dict[str, list[RunData]],
    done: Completeness,
    runs_planned: int,
) -> list[str]:
    """Why a clause's two sides rest on incomplete data: runs missing, or short of sessions."""
    out: list[str] = []
    for cfg in (clause.treatment, clause.control):
        present = len(groups.get(cfg, []))
        if present < runs_planned:
            out.append(f"{cfg}: {present} of {runs_planned} registered runs present")
        short = done.of(cfg)
        if short:
            empty = sum(1 for s in short if s.empty)
            text = f"{cfg}: {len(short)} run(s) short of the registered sessions"
            out.append(text + (f", {empty} with none committed (not counted)" if empty else ""))
    return out


def exploratory(
    plan: PilotPlan,
    runs: Sequence[RunData],
    *,
    registry: Registry | None = None,
    seed: int = 20240601,
) -> list[ExploratoryRow]:
    """Every registry metric outside the rule's set, with the rule's pairs' differences."""
    reg = registry or default_registry()
    groups = group_by_config(runs, split=plan.compares_contracts())
    cells = plan.cells()
    rows: list[ExploratoryRow] = []
    for m in reg:
        if m.name in plan.rule.metrics:
            continue
        aggs: dict[str, MetricAggregate] = {
            cfg: aggregate_metric(rs, m.name, cfg, registry=reg, aggregation=plan.aggregation)
            for cfg, rs in groups.items()
            if cfg in cells
        }
        diffs = [
            difference(aggs[t], aggs[c], seed=seed)
            for t, c in plan.rule.pairs
            if t in aggs and c in aggs
        ]
        rows.append(
            ExploratoryRow(
                metric=m.name,
                embedder=m.embedder,
                by_config={k: v.value for k, v in aggs.items()},
                differences=diffs,
            )
        )
    return rows


def plan_registry(registry: Registry, plan: PilotPlan) -> Registry:
    """The registry a plan is evaluated with: its locked attraction parameters bound."""
    return with_attraction_params(registry, plan.attraction)


def _ref(e: LockEntry) -> LockRef:
    return LockRef(seq=e.seq, ts=e.ts, stage=e.stage, hash=e.hash, plan_sha256=e.plan_sha256)


def verdict_for(
    entries: Sequence[LockEntry],
    runs: Sequence[RunData],
    *,
    registry: Registry | None = None,
    seed: int = 20240601,
    where: str = "prereg chain",
) -> VerdictReport:
    """The verdict under the lock the runs were created under; later locks as amendments.
    :class:`~curiosity_tui.analysis.chronology.ForeignLockError` if a run recorded a lock
    the chain does not contain."""
    if not entries:
        raise InputError(
            "no locked plan: `curiosity-tui prereg lock PLAN.toml --stage before-runs`"
        )
    reg = registry or default_registry()
    gov = governing_lock(entries, [stamp_of(r) for r in runs], where=where)
    lead = gov.lock
    plan = parse_plan(lead.plan_text, source=f"prereg seq {lead.seq}", registry=reg)
    main = evaluate_rule(plan, runs, registry=plan_registry(reg, plan), lock=lead, seed=seed)
    main.notes.extend(gov.notes)
    main.notes.extend(origin_notes(runs, plan.model))  # re-created or foreign runs (404)
    amendments: list[Amendment] = []
    for e in gov.amendments:
        p = parse_plan(e.plan_text, source=f"prereg seq {e.seq}", registry=reg)
        amendments.append(
            Amendment(
                seq=e.seq,
                ts=e.ts,
                stage=e.stage,
                reason=e.reason,
                hash=e.hash,
                rule_changed=p.rule != plan.rule or p.aggregation != plan.aggregation,
                verdict=evaluate_rule(p, runs, registry=plan_registry(reg, p), lock=e, seed=seed),
            )
        )
    if amendments:
        main.notes.append(
            f"{len(amendments)} lock(s) came after the runs' lock (seq {lead.seq}, stage "
            f"{lead.stage}); they are amendments, reported apart, and cannot change this verdict"
        )
    comparisons = [
        ComparisonVerdict(
            name=c.name,
            verdict=evaluate_rule(
                plan.model_copy(update={"metrics": c.metrics, "rule": c.rule}),
                runs,
                registry=plan_registry(reg, plan),
                lock=lead,
                seed=seed,
            ),
        )
        for c in plan.comparisons
    ]
    if comparisons:
        read_as_family([c.verdict for c in comparisons], plan.family or "none", plan.alpha)
        if len(comparisons) >= 2 and plan.family is None:
            main.notes.append(
                "the plan declares no family correction for its comparisons: read as none"
            )
    return VerdictReport(
        verdict=main,
        comparisons=comparisons,
        governing_basis=gov.basis,
        amendments=amendments,
        exploratory=exploratory(plan, runs, registry=plan_registry(reg, plan), seed=seed),
        chronology=[_ref(e) for e in entries],
    )


def verdict_for_dir(
    run_dir: Path, *, registry: Registry | None = None, allow_mixed: bool = False
) -> VerdictReport:
    from curiosity_tui.analysis.practice import practice_of, refuse_mixed

    chain = find_chain(run_dir)
    if chain is None:
        raise InputError(f"{run_dir}: no prereg.jsonl here or in its parent: nothing was locked")
    entries = load_verified_chain(chain)
    runs = load_runs([run_dir])
    if not runs:
        raise InputError(f"{run_dir}: no runs found (ledger dirs or *.run.json files)")
    practice = practice_of(runs)
    refuse_mixed(practice, str(run_dir), allow_mixed=allow_mixed)
    rep = verdict_for(entries, runs, registry=registry, where=str(chain))
    rep.replies, rep.scripted_runs = practice.replies, practice.scripted_runs
    return rep


# ------------------------------------------------------------------------------- printing

_WORD = {"met": "MET", "not_met": "NOT MET", "undecided": "UNDECIDED", "incomplete": "INCOMPLETE"}
_SIGN = {"beats": ">", "tie": "=", "does_not_beat": "≤", "no_data": "?"}


def _per_run(vals: Sequence[float | None]) -> str:
    return ", ".join(fmt(v) for v in vals) or "none"


def format_verdict(v: Verdict, *, title: str = "Verdict") -> list[str]:
    lock = f"seq {v.lock.seq}, stage {v.lock.stage}, {v.lock.hash[:12]}" if v.lock else "unlocked"
    affected = v.incomplete_clauses
    over = f" — over incomplete data ({len(affected)} clause(s) affected)" if affected else ""
    lines = [
        f"{title}: {_WORD[v.outcome]}{over}   (locked rule: {lock})",
        f"  rule: {v.rule_kind} over [{', '.join(v.metrics)}], margin {v.margin:g}, "
        f"ties read as {v.ties}, {v.aggregation} over runs, alpha {v.alpha:g} "
        f"({1 - v.alpha:.0%} {v.interval_method} intervals)",
    ]
    if v.adjusted_outcome is not None and v.family != "none":
        lines.append(
            f"  read in the plan's family of comparisons ({v.family}, p adjusted < "
            f"{v.alpha:g}): {_WORD[v.adjusted_outcome]}"
        )
    if v.rule_text:
        lines.append(f"  rule text (not interpreted): {v.rule_text}")
    for mc in v.by_metric:
        state = {True: "holds in every pair", False: "fails", None: "not settled"}[mc.holds]
        emb = f" [{mc.embedder}]" if mc.embedder else ""
        lines.append(f"  {mc.metric}{emb}: {state}")
        for c in mc.clauses:
            direction = "higher" if c.higher_is_better else "lower"
            adv = "—" if c.advantage is None else f"{c.advantage:+.2f}"
            lines.append(
                f"    {c.treatment} {fmt(c.value_treatment)} {_SIGN[c.outcome]} "
                f"{c.control} {fmt(c.value_control)}  advantage {adv} ({direction} is better; "
                f"margin {c.margin:g}) → {c.outcome.replace('_', ' ')}"
                f"{'' if c.outcome != 'tie' else f', read as {v.ties}'}"
            )
            no_ci = f" — {c.interval.note}" if c.interval.ci_low is None else ""
            lines.append(
                f"      per run: {c.treatment} [{_per_run(c.per_run_treatment)}]  "
                f"{c.control} [{_per_run(c.per_run_control)}]  "
                f"{c.interval.level:.0%} CI {fmt_interval(c.interval)}{no_ci}"
            )
            if c.by_interval is not None:
                lines.append(
                    reading_line(
                        c.by_interval,
                        decides=decides_on_interval(v.rule_kind),
                        mean_word=c.mean_outcome,
                        agrees=c.rules_agree,
                        p_adjusted=c.p_adjusted,
                        family=v.family,
                    )
                )
            if c.incomplete:
                lines.append("      incomplete data: " + "; ".join(c.incomplete))
    for n in v.notes:
        lines.append(f"  note: {n}")
    if affected:
        lines.append(
            "  This verdict is over incomplete data; the clauses it affects: " + "; ".join(affected)
        )
    return lines


def format_amendment(a: Amendment) -> list[str]:
    """An amendment: its stage and reason first, then what its rule would give."""
    head = [
        f"Amendment seq {a.seq} at stage {a.stage} ({a.ts}) — not the verdict",
        f"  reason: {a.reason or '(none given)'}",
    ]
    if not a.rule_changed:
        return [*head, "  the rule and aggregation are unchanged: it would give the same outcome"]
    body = format_verdict(a.verdict, title="  Under the amended rule it would read")
    return head + body


def format_report(rep: VerdictReport) -> str:
    from curiosity_tui.analysis.practice import banner

    label = banner(rep.replies, scripted_runs=rep.scripted_runs)
    lines = [label, ""] if label else []
    lines += format_verdict(rep.verdict, title=_verdict_title(rep.replies))
    for c in rep.comparisons:
        lines.append("")
        lines.extend(format_verdict(c.verdict, title=f"Comparison {c.name}"))
    for a in rep.amendments:
        lines.append("")
        lines.extend(format_amendment(a))
    lines += ["", "Chronology:"]
    for e in rep.chronology:
        lines.append(f"  seq {e.seq}  {e.ts}  {e.stage:<26} {e.hash[:12]}")
    lines += ["", rep.exploratory_note]
    undefined: list[str] = []
    for row in rep.exploratory:
        if all(v is None for v in row.by_config.values()):
            undefined.append(row.metric)
            continue
        vals = "  ".join(f"{k} {fmt(v)}" for k, v in sorted(row.by_config.items()))
        emb = f" [{row.embedder}]" if row.embedder else ""
        lines.append(f"  {row.metric}{emb}: {vals}")
        for d in row.differences:
            lines.append(f"      {d.a} − {d.b}: {fmt(d.diff)}  95% CI {fmt_interval(d)}")
    if undefined:
        lines.append(f"  not defined for these runs: {', '.join(undefined)}")
    small = sorted(
        {
            f"{c.treatment} n={c.n_treatment}, {c.control} n={c.n_control}"
            for mc in rep.verdict.by_metric
            for c in mc.clauses
            if c.interval.ci_low is not None and min(c.n_treatment, c.n_control) < 5
        }
    )
    lines += [
        "",
        "Intervals: percentile bootstrap of the difference of means, runs resampled with "
        "replacement within each configuration (10,000 draws, seeded), two-sided at 1 - alpha; "
        "a mean rule never consults them, an interval rule decides on them (a pair beats only "
        "when the interval of its advantage lies above the margin). None where a side has "
        "fewer than two runs.",
    ]
    if small:
        lines.append(
            "With so few runs (" + "; ".join(small) + ") a bootstrap understates the uncertainty."
        )
    return "\n".join(lines)


def _verdict_title(replies: str) -> str:
    """``Verdict``, or one that says whose replies it is over (decision 442)."""
    return {"scripted": "Verdict over SCRIPTED replies", "mixed": "Verdict over MIXED replies"}.get(
        replies, "Verdict"
    )


def report_json(rep: VerdictReport) -> str:
    return json.dumps(rep.model_dump(mode="json"), indent=1)
