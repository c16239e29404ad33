"""``curiosity-tui report RUN_DIR --out FILE.md|DIR``: one Markdown file with the verdict and
its pre-registration chronology, the pilot report's tables (§8 ledger; §4 P2, P3, ε sweep,
tokens) as real Markdown tables, per-run values per configuration with intervals, every
registry metric, closure-audit finding counts per configuration, and the limits the data
imposes. With the ``plots`` extra, SVG figures beside the Markdown (decision 209).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import group_by_config
from curiosity_tui.analysis.completeness import completeness
from curiosity_tui.analysis.lockchain import LockEntry, find_chain, load_verified_chain
from curiosity_tui.analysis.markdown import md_cell, md_table
from curiosity_tui.analysis.practice import (
    banner,
    practice_md,
    practice_of,
    scripted_run_ids,
    stamp_svg,
)
from curiosity_tui.analysis.registry import Registry, default_registry
from curiosity_tui.analysis.report_tables import (
    differences_md,
    ledger_md,
    p2_md,
    p3_md,
    registry_md,
    spread,
    spread_md,
    sweep_md,
    tokens_md,
)
from curiosity_tui.analysis.run_conditions import conditions_section
from curiosity_tui.analysis.rundata import RunData, load_runs
from curiosity_tui.analysis.sweep import SweepResult, sweep_runs
from curiosity_tui.analysis.tables import MetricsDoc, build, order_configs
from curiosity_tui.analysis.verdict import VerdictReport, format_report, verdict_for
from curiosity_tui.errors import CuriosityError, InputError
from curiosity_tui.provenance import markdown_footer


class AuditCounts(BaseModel):
    config: str
    ledgers: int
    audited: int
    counts: dict[str, int]
    not_audited: list[str]  # run ids (no ledger behind them, or the audit failed: why)


def audit_counts(runs: Sequence[RunData]) -> list[AuditCounts]:
    from curiosity_tui.contract.audit import audit_path

    out: list[AuditCounts] = []
    groups = group_by_config(runs)
    for cfg in order_configs(list(groups)):
        counts: dict[str, int] = {}
        audited = 0
        missing: list[str] = []
        for r in groups[cfg]:
            path = Path(r.origin) if r.origin else None
            if path is None or not (path / "journal.jsonl").is_file():
                missing.append(f"{r.run_id} (no ledger)")
                continue
            try:
                rep = audit_path(path)
            except CuriosityError as err:
                missing.append(f"{r.run_id} ({err})")
                continue
            audited += 1
            for kind, n in rep.counts().items():
                counts[kind] = counts.get(kind, 0) + n
        out.append(
            AuditCounts(
                config=cfg,
                ledgers=len(groups[cfg]),
                audited=audited,
                counts=counts,
                not_audited=missing,
            )
        )
    return out


def limits(runs: Sequence[RunData]) -> list[str]:
    groups = group_by_config(runs)
    out = [
        "Runs per configuration: "
        + ", ".join(f"{c} {len(groups[c])}" for c in order_configs(list(groups)))
        + ". The run is the unit of observation; sessions and questions are nested in runs.",
    ]
    thin = [c for c in order_configs(list(groups)) if len(groups[c]) < 2]
    if thin:
        out.append(
            "No bootstrap interval for any difference involving "
            + ", ".join(thin)
            + " (fewer than two runs)."
        )
    few = [c for c in order_configs(list(groups)) if 2 <= len(groups[c]) < 5]
    if few:
        out.append(
            "Intervals for " + ", ".join(few) + " rest on fewer than five runs a side and "
            "understate the uncertainty."
        )
    done = completeness(runs)
    if not done.complete:
        out.append(
            "Runs that did not finish (committed sessions only are counted; a run with none is "
            "left out): " + "; ".join(done.lines()) + "."
        )
    unreg = [r.run_id for r in runs if r.unregistered]
    if unreg:
        out.append(f"Started --unregistered: {', '.join(unreg)}.")
    out.append(
        "The ε sweep re-classifies recorded Δ values; it is not a set of runs at those thresholds."
    )
    out.append(
        "Similarity figures depend on the named embedder; closed-with-facts counts entries in "
        "facts and checks neither their source nor their sufficiency."
    )
    return out


#: metrics drawn per run (after the locked rule's own), when they have values
FIGURE_METRICS = (
    "max_depth",
    "nodes_worked",
    "voluntary_progression",
    "persistence_pulse3",
    "closed_with_facts",
    "live_nodes",
)


class Figures:
    """Where the report's SVG figures go (``None``: not drawn) and what was drawn."""

    def __init__(self, out_dir: Path | None, stem: str) -> None:
        from curiosity_tui.analysis import figures

        self.on = out_dir is not None and figures.available()
        self.out_dir = out_dir
        self.stem = stem
        self.written: list[Path] = []
        #: the practice label stamped on every figure (decision 442); "" for a model's runs
        self.label = ""

    def draw(self, name: str, draw: Callable[[Path], Path]) -> str | None:
        """Draw one figure as ``STEM-NAME.svg``; its path relative to the Markdown."""
        if not self.on or self.out_dir is None:
            return None
        path = self.out_dir / f"{self.stem}-{name}.svg"
        try:
            self.written.append(draw(path))
            if self.label:
                stamp_svg(path, self.label)
        except OSError as err:
            raise InputError(f"{path}: cannot write figure: {err.strerror or err}") from err
        return path.name

    def note(self) -> list[str]:
        from curiosity_tui.analysis.figures import INSTALL_HINT, available

        if self.on:
            return []
        if not available():
            return [
                "Figures (the ε sweep curve, per-run values per configuration with intervals) "
                f"are not drawn: matplotlib is not installed. `{INSTALL_HINT}` and write the "
                "report again to get them as SVG files beside this one.",
                "",
            ]
        return ["Figures are drawn when the report is written with `report --out`.", ""]


def chronology_md(entries: Sequence[LockEntry]) -> list[str]:
    rows = [[e.seq, e.ts, e.stage, e.short(), e.plan_sha256[:12], e.reason] for e in entries]
    return md_table(["seq", "ts", "stage", "hash", "plan sha256", "reason"], rows)


def _verdict_section(
    run_dir: Path, runs: Sequence[RunData], reg: Registry
) -> tuple[list[str], list[str]]:
    """The verdict and chronology lines, and the locked rule's metrics (none unlocked)."""
    chain = find_chain(run_dir)
    lines = ["## Verdict", ""]
    if chain is None:
        return [*lines, "No prereg.jsonl: nothing was locked, so there is no verdict.", ""], []
    entries = load_verified_chain(chain)
    rep: VerdictReport = verdict_for(entries, runs, registry=reg)
    practice = practice_of(runs)
    rep.replies, rep.scripted_runs = practice.replies, practice.scripted_runs
    lines += ["```text", format_report(rep).replace("```", "ʼʼʼ"), "```", ""]
    lines += ["## Pre-registration chronology", "", *chronology_md(entries), ""]
    lines += analysis_section(rep)
    lines += design_section(entries, rep)
    return lines, [mc.metric for mc in rep.verdict.by_metric]


def analysis_section(rep: VerdictReport) -> list[str]:
    from curiosity_tui.analysis.report_analysis import analysis_section as section

    return section(rep)


def design_section(entries: Sequence[LockEntry], rep: VerdictReport) -> list[str]:
    """The design analysis locked with the governing plan (decision 426), or a line saying
    there is none."""
    from curiosity_tui.analysis.power import DesignAnalysis, format_design

    lines = ["## Design analysis (locked with the plan)", ""]
    seq = rep.verdict.lock.seq if rep.verdict.lock else None
    entry = next((e for e in entries if e.seq == seq), None)
    if entry is None or entry.design is None:
        return [
            *lines,
            "None was locked with the plan (`plan power --out`, `prereg lock "
            "--design`): the runs per arm were not chosen for a stated power.",
            "",
        ]
    text = format_design(DesignAnalysis.model_validate(entry.design)).replace("```", "ʼʼʼ")
    return [*lines, "```text", text, "```", ""]


def _results_section(doc: MetricsDoc, sweeps: Sequence[SweepResult], figs: Figures) -> list[str]:
    lines = ["## The ledger (§8)", ""]
    ledger = ledger_md(doc)
    lines += [
        *(ledger or ["No configuration of the §8 layout is present."]),
        "",
        "Final snapshots, mean over runs; the PRESERVE share pools the configuration's sessions."
        " Closed with facts counts entries in facts and checks neither source nor sufficiency.",
        "",
        "## Results (§4)",
        "",
    ]
    for title, pair in (
        ("P2: same store, with curator", ("B-armed+cur", "C+cur")),
        ("P2: same store, without curator", ("B-armed-cur", "C-cur")),
    ):
        table = p2_md(doc, pair)
        if table:
            lines += [f"### {title}", "", *table, ""]
    p3 = p3_md(doc)
    if p3:
        lines += ["### P3: curator removal", "", *p3, ""]
    lines += _sweep_section(sweeps, figs)
    lines += ["### Tokens and truncation", "", *tokens_md(doc), ""]
    lines.append("Completion tokens; curator calls excluded.")
    return [*lines, ""]


def _sweep_section(sweeps: Sequence[SweepResult], figs: Figures) -> list[str]:
    from curiosity_tui.analysis.figures import sweep_svg

    lines = ["### ε sweep", ""]
    if not sweeps:
        return [*lines, "No recorded Δ values (no configuration evaluated tension).", ""]
    for s in sweeps:
        lines += [f"{md_cell(s.label)}:", "", *sweep_md(s), "", s.caveat, ""]
    name = figs.draw("sweep", lambda p: sweep_svg(sweeps, p))
    if name:
        lines += [f"![ε sweep: preservation rate against ε]({name})", ""]
    return lines


def _spread_section(doc: MetricsDoc, metrics: Sequence[str], figs: Figures) -> list[str]:
    from curiosity_tui.analysis.figures import per_run_svg

    lines = ["## Per-run values per configuration", ""]
    lines.append(
        "Each run's value, the mean over runs and a 95% percentile bootstrap interval of the "
        "mean (runs resampled; none below two runs)."
    )
    lines.append("")
    for m in metrics:
        spreads = [spread(doc.metrics[m][c]) for c in doc.configs]
        lines += [f"### {m}", "", *spread_md(spreads), ""]
        name = figs.draw(f"per-run-{m}", partial(per_run_svg, m, spreads))
        if name:
            lines += [f"![{m}: per-run values, mean and interval]({name})", ""]
    return lines


def _figure_metrics(doc: MetricsDoc, first: Sequence[str]) -> list[str]:
    wanted = list(dict.fromkeys([*first, *FIGURE_METRICS]))
    return [
        m
        for m in wanted
        if m in doc.metrics and any(a.value is not None for a in doc.metrics[m].values())
    ]


def _audit_section(runs: Sequence[RunData]) -> list[str]:
    lines = ["## Closure audit findings per configuration", ""]
    audits = audit_counts(runs)
    rows = [
        [
            a.config,
            a.ledgers,
            a.audited,
            ", ".join(f"{k} {v}" for k, v in sorted(a.counts.items())) or "none",
        ]
        for a in audits
    ]
    lines += md_table(["configuration", "runs", "audited", "findings"], rows)
    skipped = [x for a in audits for x in a.not_audited]
    if skipped:
        lines += ["", "Not audited: " + md_cell("; ".join(skipped))]
    return [*lines, ""]


def build_report(
    run_dir: Path,
    *,
    registry: Registry | None = None,
    out_dir: Path | None = None,
    stem: str = "report",
    packs: Sequence[Path] = (),
    keys: Sequence[Path] = (),
) -> str:
    """The report's Markdown; with ``out_dir`` (and matplotlib) its figures are written
    there as ``STEM-*.svg`` and referenced by name."""
    reg = registry or default_registry()
    runs = load_runs([run_dir])
    if not runs:
        raise InputError(f"{run_dir}: no runs found (ledger dirs or *.run.json files)")
    figs = Figures(out_dir, stem)
    doc = build(runs, reg)
    figs.label = banner(doc.replies, scripted_runs=scripted_run_ids(doc))
    lines = [f"# Pilot report: {md_cell(run_dir)}", "", *practice_md(figs.label), *figs.note()]
    verdict, first = _verdict_section(run_dir, runs, reg)
    lines += verdict
    done = completeness(runs)
    if not done.complete:
        lines += ["## Runs that did not finish", "", *(f"- {md_cell(x)}" for x in done.lines())]
        lines += ["", "Metrics count committed sessions only.", ""]
    lines += _results_section(doc, sweep_runs(runs), figs)
    from curiosity_tui.analysis.relay_tables import format_relay_tables

    relay = format_relay_tables(runs)
    if relay:  # relayed runs only (Markdown already: its headings one level down)
        lines += ["#" + ln if ln.startswith("#") else ln for ln in relay.splitlines()] + [""]
    lines += _spread_section(doc, _figure_metrics(doc, first), figs)
    from curiosity_tui.analysis.survival_report import survival_section

    lines += survival_section(runs, figs)  # open life (issue 26, item 1)
    lines += ["## All registry metrics (mean over runs, n = runs with a value)", ""]
    lines += registry_md(doc, reg)
    diffs = differences_md(doc)
    if diffs:
        lines += ["### Differences (a − b of the means; 95% bootstrap interval, runs resampled)"]
        lines += ["", *diffs, ""]
    lines += _audit_section(runs)
    lines += conditions_section(runs)  # sampling, server, tool (issue 23)
    lines += rating_sections(packs, run_dir, reg, figs, keys)
    lines += ["## Limits the data imposes", ""]
    lines += [f"- {x}" for x in limits(runs)]
    lines.append("")
    return "\n".join(lines)


def rating_sections(
    packs: Sequence[Path],
    run_dir: Path,
    reg: Registry,
    figs: Figures | None = None,
    keys: Sequence[Path] = (),
) -> list[str]:
    """Per pack given with ``report --pack``: the GRRAS rating section (decision 428),
    flagging ratings faster than the locked plan's ``min_seconds_per_item``, then the rating
    results (decision 561): pack scheme, adjudication counts, and once unblinded the tables per
    arm (raw and adjudicated apart), the control items and a figure per question."""
    if not packs:
        return []
    from curiosity_tui.analysis.report_analysis import locked_plan
    from curiosity_tui.packs.grras import rating_section
    from curiosity_tui.packs.rating_results import rating_results

    plan = locked_plan(run_dir, reg)
    least = plan.min_seconds_per_item if plan is not None else None
    lines: list[str] = []
    for p in packs:
        lines += rating_section(p, min_seconds=least)
        res = rating_results(p, keys=keys)
        practice = " — PRACTICE: the pack was built from scripted runs" if res.scripted else ""
        lines += [f"### Rating results{practice}", "", *res.lines]
        lines += _rating_figures(res, figs)
    return lines


def _rating_figures(res: Any, figs: Figures | None) -> list[str]:
    from curiosity_tui.analysis.figures import rating_svg

    out: list[str] = []
    for question, sets in res.figures:
        stem = f"rating-{question}"
        name = figs.draw(stem, partial(rating_svg, question, sets)) if figs else None
        if name:
            out += [f"![{question}: runs per arm, raw and adjudicated]({name})", ""]
    return out


def report_paths(out: Path) -> tuple[Path, Path]:
    """``--out FILE.md``: that file, figures beside it; ``--out DIR``: DIR/report.md."""
    if out.suffix.lower() == ".md" and not out.is_dir():
        return out, out.parent
    return out / "report.md", out


def write_report(
    run_dir: Path,
    out: Path,
    *,
    registry: Registry | None = None,
    packs: Sequence[Path] = (),
    keys: Sequence[Path] = (),
) -> Path:
    md, out_dir = report_paths(out)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"{out_dir}: cannot create: {err.strerror or err}") from err
    text = build_report(
        run_dir, registry=registry, out_dir=out_dir, stem=md.stem, packs=packs, keys=keys
    )
    text = text.rstrip("\n") + "\n\n" + markdown_footer()  # what produced it (issue 23.3)
    try:
        md.write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(f"{md}: cannot write report: {err.strerror}") from err
    return md
