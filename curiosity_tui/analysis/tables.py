"""Per-configuration metric tables for ``curiosity-tui metrics`` (text and JSON).

First the report's own tables (§8 ledger; §4 P2, P3, tokens) for the configurations
present; then every registry metric grouped by ``group``;
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
    splits_contracts,
)
from curiosity_tui.analysis.completeness import Completeness, completeness
from curiosity_tui.analysis.correlation import Correlation, checks_vs_actions
from curiosity_tui.analysis.correlation import pooled as pooled_correlation
from curiosity_tui.analysis.practice import banner as practice_banner
from curiosity_tui.analysis.practice import replies_fields, replies_row, scripted_run_ids
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.rundata import CELL_SEP, RunData
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


#: §8 "The Ledger": row title (the report's wording) -> metric
LEDGER_ROWS: tuple[tuple[str, str], ...] = (
    ("live nodes after the last session", "live_nodes"),
    ("distinct nodes worked", "nodes_worked"),
    ("  of those, by voluntary actions", "nodes_worked_voluntary"),
    ("  by the forced focus alone", "nodes_worked_forced_only"),
    ("closed nodes", "closed_nodes"),
    ("of those, with >=1 entry in facts", "closed_with_facts"),
    ("maximum depth", "max_depth"),
)
LEDGER_COLUMNS = ("B-armed+cur", "C+cur", "B-armed-cur", "C-cur")

#: §4 P2 table rows
P2_ROWS: tuple[tuple[str, str], ...] = (
    ("voluntary progression, sessions 2-5", "voluntary_progression"),
    ("voluntary progression, raw (forced work included)", "voluntary_progression_raw"),
    ("questions persisting at pulse >= 3", "persistence_pulse3"),
    ("entries in the facts field, total", "facts_total"),
    ("facts entries per 1k tokens, all generation (pre-registered)", "facts_per_1k_all"),
    ("facts entries per 1k tokens of the final call (supplementary)", "facts_per_1k_final"),
    ("cross-domain share of question-to-question edges", "cross_domain_share"),
    ("maximum depth reached", "max_depth"),
    ("closed nodes with >=1 attached factual assertion", "closed_with_facts"),
    ("nodes live after the last session", "live_nodes"),
)

#: §4 P3 table rows (with -> without curator)
P3_ROWS: tuple[tuple[str, str], ...] = (
    ("voluntary progression", "voluntary_progression"),
    ("persistence at pulse >= 3", "persistence_pulse3"),
    ("distinct nodes worked", "nodes_worked"),
    ("similarity of new questions (regen_mean)", "regen_mean"),
    ("near-duplicate share (regen_dup_share)", "regen_dup_share"),
)

#: §4 token and truncation rows
TOKEN_ROWS: tuple[tuple[str, str], ...] = (
    ("internal generation per session (tokens)", "tokens_internal_per_session"),
    ("final deliverable call per session (tokens)", "tokens_final_per_session"),
    ("final calls ended on 'length' (per run)", "final_calls_length"),
    ("internal calls ended on 'length' (per run)", "internal_calls_length"),
)


class DecisionCount(BaseModel):
    preserve: int
    decisions: int


class MetricsDoc(BaseModel):
    configs: list[str]
    runs: dict[str, list[str]]
    metrics: dict[str, dict[str, MetricAggregate]]  # metric -> config -> aggregate
    differences: list[Difference]
    checks_vs_actions: dict[str, Correlation]  # config -> r over sessions 2..
    #: "C+cur,C-cur" -> r over the sessions 2.. of both configurations' runs (--pool)
    checks_vs_actions_pooled: dict[str, Correlation] = Field(default_factory=dict)
    #: regen_dup_share, pooled variant: duplicates over all questions of the configuration
    regen_dup_share_pooled: dict[str, PooledShare] = Field(default_factory=dict)
    #: PRESERVE decisions / all decisions, pooled over the configuration's sessions (§8)
    decisions: dict[str, DecisionCount] = Field(default_factory=dict)
    #: similarity reference points (§4): supplied sets, then each configuration's own
    reference: list[ReferencePoint] = Field(default_factory=list)
    #: runs with fewer committed sessions than planned (those with none are not counted)
    completeness: Completeness = Field(default_factory=Completeness)
    #: whose replies (decision 442): all runs' label, each configuration's, each run's
    replies: str = "model"
    replies_by_config: dict[str, str] = Field(default_factory=dict)
    run_replies: dict[str, str] = Field(default_factory=dict)


def order_configs(configs: Sequence[str]) -> list[str]:
    """The report's configuration order, then the rest by name; ``config@contract`` cells
    sort by their configuration that way, then by contract (presets first)."""

    def key(c: str) -> tuple[int, str, int, str]:
        config, _, contract = c.partition(CELL_SEP)
        rank = CONFIG_ORDER.index(config) if config in CONFIG_ORDER else len(CONFIG_ORDER)
        return (rank, config, 0 if contract.startswith("pilot-") else 1, contract)

    return sorted(configs, key=key)


def comparison_pairs(configs: Sequence[str]) -> list[tuple[str, str, str]]:
    """Every (a, b, label) difference ``metrics`` gives: the report's standard pairs (within
    each contract when the groups are ``config@contract`` cells), then between contracts."""
    out: list[tuple[str, str, str]] = []
    contracts = list(dict.fromkeys(c.partition(CELL_SEP)[2] for c in configs))
    for a, b in STANDARD_PAIRS:
        for k in contracts:
            ca, cb = (f"{a}{CELL_SEP}{k}", f"{b}{CELL_SEP}{k}") if k else (a, b)
            if ca in configs and cb in configs:
                out.append((ca, cb, PAIR_LABELS[(a, b)] + (f"; {k}" if k else "")))
    for a, b in contract_pairs(configs):
        out.append((a, b, "contracts compared under one configuration"))
    return out


def contract_pairs(cells: Sequence[str]) -> list[tuple[str, str]]:
    """Between-contract comparisons: within each configuration, every later contract's cell
    against the first one's (cells in :func:`order_configs` order)."""
    first: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for c in cells:
        config, sep, _ = c.partition(CELL_SEP)
        if not sep:
            continue
        if config in first:
            out.append((c, first[config]))
        else:
            first[config] = c
    return out


def build(
    runs: Sequence[RunData],
    registry: Registry,
    references: Sequence[tuple[str, ReferenceSet]] = (),
    pools: Sequence[Sequence[str]] = (),
) -> MetricsDoc:
    names = registry.names()
    split = splits_contracts(runs)  # runs under several contracts: config × contract cells
    table = aggregate(runs, names, registry=registry)
    configs = order_configs(list(table))
    by_metric: dict[str, dict[str, MetricAggregate]] = {
        m: {c: table[c][m] for c in configs} for m in names
    }
    diffs: list[Difference] = []
    for a, b, _ in comparison_pairs(configs):
        for m in names:
            diffs.append(difference(table[a][m], table[b][m]))
    run_ids: dict[str, list[str]] = {c: [] for c in configs}
    for r in runs:
        run_ids[r.cell(split)].append(r.run_id)
    by_config: dict[str, list[RunData]] = {c: [] for c in configs}
    for r in runs:
        by_config[r.cell(split)].append(r)
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
    decisions = {}
    for c, rs in by_config.items():
        ds = [s.decision for r in rs for s in r.committed_sessions() if s.decision]
        decisions[c] = DecisionCount(
            preserve=sum(1 for d in ds if d == "PRESERVE"),
            decisions=sum(1 for d in ds if d in ("PRESERVE", "ANSWER")),
        )
    return MetricsDoc(
        completeness=completeness(runs, split=split),
        decisions=decisions,
        regen_dup_share_pooled=pooled,
        reference=points,
        configs=configs,
        runs=run_ids,
        metrics=by_metric,
        differences=diffs,
        checks_vs_actions=corr,
        checks_vs_actions_pooled={",".join(p): pooled_correlation(runs, p) for p in pools},
        **replies_fields(runs, split=split),
    )


def metrics_json(
    runs: Sequence[RunData],
    registry: Registry,
    references: Sequence[tuple[str, ReferenceSet]] = (),
    pools: Sequence[Sequence[str]] = (),
) -> str:
    doc = build(runs, registry, references, pools)
    return json.dumps(doc.model_dump(mode="json"), indent=1)


def _cell(doc: MetricsDoc, metric: str, config: str) -> str:
    agg = doc.metrics.get(metric, {}).get(config)
    return "—" if agg is None or agg.value is None else fmt(agg.value)


def _table(doc: MetricsDoc, rows: Sequence[tuple[str, str]], cols: Sequence[str]) -> list[str]:
    out = ["| | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for label, metric in rows:
        if metric in doc.metrics:
            out.append(f"| {label} | " + " | ".join(_cell(doc, metric, c) for c in cols) + " |")
    return out


def _report_tables(doc: MetricsDoc) -> list[str]:
    """The report's own tables (§8 ledger; §4 P2, P3, tokens) for the configurations present;
    with ``config@contract`` cells, the §8/P2/P3 tables once per contract."""
    out: list[str] = []
    contracts = list(dict.fromkeys(c.partition(CELL_SEP)[2] for c in doc.configs))
    for k in contracts:
        out += _contract_report_tables(doc, k)
    out.append("# Tokens and truncation (completion tokens; curator calls excluded)")
    out += _table(doc, TOKEN_ROWS, doc.configs)
    out.append("")
    return out


def _contract_report_tables(doc: MetricsDoc, contract: str) -> list[str]:
    """§8, P2 and P3 over the cells of one contract (``""``: the groups are configurations)."""

    def cell(config: str) -> str:
        return f"{config}{CELL_SEP}{contract}" if contract else config

    under = f" — contract {contract}" if contract else ""
    out: list[str] = []
    cols = [cell(c) for c in LEDGER_COLUMNS if cell(c) in doc.configs]
    if cols:
        out.append(f"# The ledger (§8): final snapshots, mean over runs{under}")
        out += _table(doc, LEDGER_ROWS, cols)
        pres = []
        for c in cols:
            d = doc.decisions.get(c)
            pres.append("—" if d is None or d.decisions == 0 else f"{d.preserve}/{d.decisions}")
        out.append("| PRESERVE decisions / all decisions | " + " | ".join(pres) + " |")
        out.append("")
    for title, pair in (
        ("P2: same store, with curator", ("B-armed+cur", "C+cur")),
        ("P2: same store, without curator", ("B-armed-cur", "C-cur")),
    ):
        cells = (cell(pair[0]), cell(pair[1]))
        if all(c in doc.configs for c in cells):
            out.append(f"# {title} (self-ask + store | protocol arm){under}")
            out += _table(doc, P2_ROWS, cells)
            out.append("")
    arms = [
        (label, cell(w), cell(wo))
        for label, w, wo in (
            ("self-ask + store: with → without", "B-armed+cur", "B-armed-cur"),
            ("protocol arm: with → without", "C+cur", "C-cur"),
        )
        if cell(w) in doc.configs and cell(wo) in doc.configs
    ]
    if arms:
        out.append(f"# P3: curator removal{under}")
        out.append("| | " + " | ".join(a[0] for a in arms) + " |")
        out.append("|---|" + "---|" * len(arms))
        for label, metric in P3_ROWS:
            if metric in doc.metrics:
                row = [f"{_cell(doc, metric, w)} → {_cell(doc, metric, wo)}" for _, w, wo in arms]
                out.append(f"| {label} | " + " | ".join(row) + " |")
        out.append("")
    return out


def unfinished_section(done: Completeness) -> list[str]:
    """ "Runs that did not finish", per configuration; nothing when every run finished."""
    if done.complete:
        return []
    out = ["# Runs that did not finish (committed sessions / planned)", ""]
    for line in done.lines():  # a configuration of several short runs runs long: wrapped
        out += wrap_line(f"  {line}", indent="      ")
    out += [
        "",
        "Metrics count committed sessions only; a run with none committed is not counted "
        "(its n is left out of the means below).",
        "",
    ]
    return out


def format_tables(
    runs: Sequence[RunData],
    registry: Registry,
    references: Sequence[tuple[str, ReferenceSet]] = (),
    pools: Sequence[Sequence[str]] = (),
) -> str:
    doc = build(runs, registry, references, pools)
    label = practice_banner(doc.replies, scripted_runs=scripted_run_ids(doc))
    out = [label, ""] if label else []
    out += unfinished_section(doc.completeness) + _report_tables(doc)
    out.append("# All registry metrics (mean over runs, n = runs with a value)")
    out.append("")
    groups: dict[str, list[str]] = {}
    for m in registry:
        groups.setdefault(m.group, []).append(m.name)
    for group, names in groups.items():
        out.append(f"## {group}")
        out.append("| metric | " + " | ".join(doc.configs) + " |")
        out.append("|---|" + "---|" * len(doc.configs))
        out.extend(replies_row(doc))
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
            out.extend(wrap_line(f"  {name} per run — {per}", indent="      "))
        out.append("")
    if doc.differences:
        out.append("## differences (a − b of the means; 95% bootstrap interval resampling runs)")
        for a, b, label in comparison_pairs(doc.configs):
            rows = [d for d in doc.differences if (d.a, d.b) == (a, b) and d.diff is not None]
            if not rows:
                continue
            out.append(f"### {a} − {b} ({label})")
            for d in rows:
                note = f" — {d.note}" if d.note and d.ci_low is None else ""
                row = f"  {d.metric:<28} {d.diff:+9.2f}  {fmt_interval(d)}{note}"
                out.extend(wrap_line(row, indent=" " * 43))
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
    for k in doc.checks_vs_actions_pooled.values():
        r = "—" if k.r is None else f"{k.r:+.4f}"
        note = f" — {k.note}" if k.note else ""
        out.append(
            f"  pooled {' + '.join(k.configs)}: r = {r} over {k.n_sessions} sessions, "
            f"{k.n_runs} runs{note}"
        )
    out.append("")
    out.append("Denominators:")
    for m in registry:  # one metric a line, wrapped (it was one 3,000-character line)
        out.extend(wrap_line(f"  {m.name}: {m.denominator}", indent="      "))
    return "\n".join(out)


#: the width the text output wraps its long lines at (tables and the practice banner excepted)
WRAP = 100


def wrap_line(line: str, *, indent: str) -> list[str]:
    """``line`` wrapped at :data:`WRAP` columns, continuation lines indented by ``indent``."""
    import textwrap

    if len(line) <= WRAP:
        return [line]
    lead = line[: len(line) - len(line.lstrip())]
    return textwrap.wrap(
        line.strip(),
        width=WRAP,
        initial_indent=lead,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    )
