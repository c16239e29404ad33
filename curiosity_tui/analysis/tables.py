"""Per-configuration metric tables for ``curiosity-tui metrics`` (text and JSON).

Grouped by the registry's ``group`` (ledger, progression, facts, bookkeeping, tokens);
one column per configuration present, each cell the mean over runs with n; per-run
values listed under the table; between-configuration differences for the report's
standard comparisons (P2, P3) when both sides are present, with bootstrap intervals.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from curiosity_tui.analysis.aggregate import (
    Difference,
    MetricAggregate,
    aggregate,
    difference,
    fmt,
    fmt_interval,
)
from curiosity_tui.analysis.correlation import Correlation, checks_vs_actions
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.similarity import (
    PooledShare,
    ReferencePoint,
    ReferenceSet,
    format_reference_table,
    measured_point,
    pooled_dup_share,
    reference_point,
)

#: The report's comparisons: P2 (package within curator condition), P3 (curator removal).
STANDARD_PAIRS: tuple[tuple[str, str], ...] = (
    ("C+cur", "B-armed+cur"),
    ("C-cur", "B-armed-cur"),
    ("B-armed-cur", "B-armed+cur"),
    ("C-cur", "C+cur"),
)
PAIR_LABELS: dict[tuple[str, str], str] = {
    ("C+cur", "B-armed+cur"): "P2: package, with curator",
    ("C-cur", "B-armed-cur"): "P2: package, without curator",
    ("B-armed-cur", "B-armed+cur"): "P3: curator removed, self-ask + store",
    ("C-cur", "C+cur"): "P3: curator removed, protocol arm",
}
CONFIG_ORDER = ("A", "B", "B-armed+cur", "C+cur", "B-armed-cur", "C-cur")


class MetricsDoc(BaseModel):
    configs: list[str]
    runs: dict[str, list[str]]
    metrics: dict[str, dict[str, MetricAggregate]]  # metric -> config -> aggregate
    differences: list[Difference]
    checks_vs_actions: dict[str, Correlation]  # config -> r over sessions 2..
    #: regen_dup_share, pooled variant: duplicates over all questions of the configuration
    regen_dup_share_pooled: dict[str, PooledShare] = Field(default_factory=dict)
    #: similarity reference points (§4): supplied sets, then each configuration's own
    reference: list[ReferencePoint] = Field(default_factory=list)


def _order(configs: Sequence[str]) -> list[str]:
    known = [c for c in CONFIG_ORDER if c in configs]
    return known + sorted(c for c in configs if c not in CONFIG_ORDER)


def build(
    runs: Sequence[RunData],
    registry: Registry,
    references: Sequence[tuple[str, ReferenceSet]] = (),
) -> MetricsDoc:
    names = registry.names()
    table = aggregate(runs, names, registry=registry)
    configs = _order(list(table))
    by_metric: dict[str, dict[str, MetricAggregate]] = {
        m: {c: table[c][m] for c in configs} for m in names
    }
    diffs: list[Difference] = []
    for a, b in STANDARD_PAIRS:
        if a in table and b in table:
            for m in names:
                diffs.append(difference(table[a][m], table[b][m]))
    run_ids: dict[str, list[str]] = {c: [] for c in configs}
    for r in runs:
        run_ids[r.config].append(r.run_id)
    by_config: dict[str, list[RunData]] = {c: [] for c in configs}
    for r in runs:
        by_config[r.config].append(r)
    corr = {c: checks_vs_actions(rs) for c, rs in by_config.items()}
    points: list[ReferencePoint] = []
    if references:
        points = [reference_point(ref, source=src) for src, ref in references]
        points += [measured_point(rs, name=f"measured: {c}") for c, rs in by_config.items()]
    pooled = (
        {c: pooled_dup_share(rs) for c, rs in by_config.items()}
        if "regen_dup_share" in names
        else {}
    )
    return MetricsDoc(
        regen_dup_share_pooled=pooled,
        reference=points,
        configs=configs,
        runs=run_ids,
        metrics=by_metric,
        differences=diffs,
        checks_vs_actions=corr,
    )


def metrics_json(
    runs: Sequence[RunData],
    registry: Registry,
    references: Sequence[tuple[str, ReferenceSet]] = (),
) -> str:
    return json.dumps(build(runs, registry, references).model_dump(mode="json"), indent=1)


def format_tables(
    runs: Sequence[RunData],
    registry: Registry,
    references: Sequence[tuple[str, ReferenceSet]] = (),
) -> str:
    doc = build(runs, registry, references)
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    for m in registry:
        groups.setdefault(m.group, []).append(m.name)
    for group, names in groups.items():
        out.append(f"## {group}")
        out.append("| metric | " + " | ".join(doc.configs) + " |")
        out.append("|---|" + "---|" * len(doc.configs))
        for name in names:
            cells = []
            for c in doc.configs:
                agg = doc.metrics[name][c]
                cells.append(f"{fmt(agg.value)} (n={agg.n})" if agg.value is not None else "—")
            emb = registry.get(name).embedder
            label = f"{name} [{emb}]" if emb else name
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
        for name in names:
            if all(doc.metrics[name][c].value is None for c in doc.configs):
                continue
            per = "; ".join(
                f"{c}: " + ", ".join(fmt(v.value) for v in doc.metrics[name][c].per_run)
                for c in doc.configs
            )
            out.append(f"  {name} per run — {per}")
        out.append("")
    if doc.differences:
        out.append("## differences (a − b of the means; 95% bootstrap interval resampling runs)")
        for a, b in STANDARD_PAIRS:
            rows = [d for d in doc.differences if (d.a, d.b) == (a, b) and d.diff is not None]
            if not rows:
                continue
            out.append(f"### {a} − {b} ({PAIR_LABELS[(a, b)]})")
            for d in rows:
                note = f" — {d.note}" if d.note and d.ci_low is None else ""
                out.append(f"  {d.metric:<28} {d.diff:+9.2f}  {fmt_interval(d)}{note}")
    if any(p.questions for p in doc.regen_dup_share_pooled.values()):
        out.append("## regen_dup_share, pooled over questions (per-run-then-mean is above)")
        for c, p in doc.regen_dup_share_pooled.items():
            share = "—" if p.share is None else f"{p.share:.4f}"
            out.append(f"  {c:<14} {p.duplicates}/{p.questions} = {share}  [{p.embedder}]")
        out.append("")
    if doc.reference:
        out.append("")
        out.append("## similarity reference points (max cosine per question)")
        out.append(format_reference_table(doc.reference))
    out.append("")
    out.append("## Pearson r, dependency checks vs voluntary actions (sessions 2.., pooled)")
    for c in doc.configs:
        k = doc.checks_vs_actions[c]
        r = "—" if k.r is None else f"{k.r:+.4f}"
        note = f" — {k.note}" if k.note else ""
        out.append(f"  {c:<14} r = {r} over {k.n_sessions} sessions, {k.n_runs} runs{note}")
    out.append("")
    out.append("Denominators: " + "; ".join(f"{m.name}: {m.denominator}" for m in registry))
    return "\n".join(out)
