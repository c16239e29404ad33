"""``curiosity-tui report RUN_DIR --out FILE.md``: one Markdown file with the verdict and
its pre-registration chronology, the report-shaped tables, the ε sweep, closure-audit
finding counts per configuration, and the limits the data imposes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import group_by_config
from curiosity_tui.analysis.completeness import completeness
from curiosity_tui.analysis.lockchain import find_chain, format_chronology, load_verified_chain
from curiosity_tui.analysis.registry import Registry, default_registry
from curiosity_tui.analysis.rundata import RunData, load_runs
from curiosity_tui.analysis.sweep import format_sweep, sweep_runs
from curiosity_tui.analysis.tables import format_tables, order_configs
from curiosity_tui.analysis.verdict import format_report, verdict_for
from curiosity_tui.errors import CuriosityError, InputError


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


def build_report(run_dir: Path, *, registry: Registry | None = None) -> str:
    reg = registry or default_registry()
    runs = load_runs([run_dir])
    if not runs:
        raise InputError(f"{run_dir}: no runs found (ledger dirs or *.run.json files)")
    lines = [f"# Pilot report: {run_dir}", ""]

    chain = find_chain(run_dir)
    lines.append("## Verdict")
    if chain is None:
        lines += ["", "No prereg.jsonl: nothing was locked, so there is no verdict.", ""]
    else:
        entries = load_verified_chain(chain)
        rep = verdict_for(entries, runs, registry=reg)
        lines += ["", "```", format_report(rep), "```", ""]
        lines += ["## Pre-registration chronology", "", "```", format_chronology(entries), "```"]
        lines.append("")

    tables = format_tables(runs, reg)
    demoted = "\n".join("##" + ln if ln.startswith("#") else ln for ln in tables.splitlines())
    lines += ["## Tables", "", demoted, ""]

    from curiosity_tui.analysis.relay_tables import format_relay_tables

    relay = format_relay_tables(runs)
    if relay:  # relayed runs only
        lines += ["\n".join("#" + ln if ln.startswith("#") else ln for ln in relay.splitlines())]

    lines += ["## ε sweep", ""]
    sweeps = sweep_runs(runs)
    if sweeps:
        lines += ["\n\n".join(format_sweep(s) for s in sweeps), ""]
    else:
        lines += ["No recorded Δ values (no configuration evaluated tension).", ""]

    lines += ["## Closure audit findings per configuration", ""]
    lines.append("| configuration | runs | audited | findings |")
    lines.append("|---|---|---|---|")
    audits = audit_counts(runs)
    for a in audits:
        found = ", ".join(f"{k} {v}" for k, v in sorted(a.counts.items())) or "none"
        lines.append(f"| {a.config} | {a.ledgers} | {a.audited} | {found} |")
    skipped = [x for a in audits for x in a.not_audited]
    if skipped:
        lines.append("")
        lines.append("Not audited: " + "; ".join(skipped))
    lines.append("")

    lines += ["## Limits the data imposes", ""]
    lines += [f"- {x}" for x in limits(runs)]
    lines.append("")
    return "\n".join(lines)


def write_report(run_dir: Path, out: Path, *, registry: Registry | None = None) -> Path:
    text = build_report(run_dir, registry=registry)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(f"{out}: cannot write report: {err.strerror}") from err
    return out
