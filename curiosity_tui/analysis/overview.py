"""Everything the analysis screen shows, as one plain value: :func:`compute_analysis`.

Loads the runs and computes the metric tables, the ε sweeps and (if a plan is locked) the
verdict, exactly as the ``metrics``, ``sweep`` and ``verdict`` commands do. Slow (the
bootstrap; numpy and scikit-learn): the screen calls it in a thread worker. Every import of
the heavy analysis modules is inside the function, so importing this module loads no numpy.
Domain code: never imports textual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curiosity_tui.analysis.registry import MetricInfo, Registry
    from curiosity_tui.analysis.rundata import RunData
    from curiosity_tui.analysis.sweep import SweepResult
    from curiosity_tui.analysis.tables import MetricsDoc
    from curiosity_tui.analysis.verdict import VerdictReport

__all__ = ["NO_LOCK", "AnalysisData", "compute_analysis", "find_chain_for"]

NO_LOCK = "no locked plan"


@dataclass
class AnalysisData:
    """Everything the screen shows, computed off the event loop by :func:`compute_analysis`."""

    paths: list[Path]
    runs: list[tuple[str, str]]  # (config, run_id), in load order
    doc: MetricsDoc
    infos: dict[str, MetricInfo]  # registry order
    pairs: list[tuple[str, str, str]]  # standard comparisons present: (a, b, label)
    sweeps: list[SweepResult]
    chain: Path | None
    verdict: VerdictReport | None
    #: why there is no verdict (starts with NO_LOCK when nothing was locked)
    verdict_problem: str = ""
    #: relay tables (analysis/relay_tables.py): rows of relayed runs, rows per transition kind
    relay_rows: list[Any] = field(default_factory=list)
    relay_transitions: list[Any] = field(default_factory=list)
    #: open life per configuration (analysis/survival_config.py: ``ConfigSurvival``)
    survival: list[Any] = field(default_factory=list)


def find_chain_for(paths: Sequence[Path], chain: Path | None) -> Path | None:
    """The prereg chain file: ``chain`` (a file, or a directory holding one), else the first
    one found beside any of ``paths``."""
    from curiosity_tui.analysis.prereg import CHAIN_FILE, find_chain

    if chain is not None:
        chain = Path(chain)
        return chain / CHAIN_FILE if chain.is_dir() else chain
    for p in paths:
        found = find_chain(Path(p))
        if found is not None:
            return found
    return None


def _verdict(
    found: Path | None, paths: Sequence[Path], runs: list[RunData], reg: Registry
) -> tuple[VerdictReport | None, str]:
    """The verdict under the locked plan of ``found``, or None and why there is none."""
    from curiosity_tui.analysis.prereg import load_verified_chain
    from curiosity_tui.analysis.verdict import verdict_for
    from curiosity_tui.errors import CuriosityError

    if found is None or not found.is_file():
        where = str(found) if found is not None else " or ".join(str(p) for p in paths)
        return None, (
            f"{NO_LOCK}: no prereg.jsonl in {where} (or the parent directory), so there is no "
            "decision rule to evaluate. Lock one with `curiosity-tui prereg lock PLAN.toml "
            "--stage before-runs`; the metric tables are exploratory until then."
        )
    try:
        entries = load_verified_chain(found)
        if not entries:
            return None, f"{NO_LOCK}: {found} holds no lock"
        rep = verdict_for(entries, runs, registry=reg)
        from curiosity_tui.analysis.practice import practice_of

        practice = practice_of(runs)
        rep.replies, rep.scripted_runs = practice.replies, practice.scripted_runs
        return rep, ""
    except CuriosityError as err:
        return None, f"no verdict: the prereg chain cannot be used: {err}"


def compute_analysis(paths: Sequence[Path], chain: Path | None = None) -> AnalysisData:
    """Load the runs and compute the metric tables, ε sweeps and (if a plan is locked) the
    verdict, exactly as the ``metrics``, ``sweep`` and ``verdict`` commands do. Slow (the
    bootstrap; numpy and scikit-learn): call it in a worker."""
    from curiosity_tui.analysis.registry import default_registry
    from curiosity_tui.analysis.rundata import load_runs
    from curiosity_tui.analysis.sweep import sweep_runs
    from curiosity_tui.analysis.tables import build, comparison_pairs
    from curiosity_tui.errors import InputError

    paths = [Path(p) for p in paths]
    reg = default_registry()
    runs = load_runs(paths)
    if not runs:
        where = ", ".join(str(p) for p in paths) or "(no paths)"
        raise InputError(f"{where}: no runs found (ledger dirs or *.run.json files)")
    doc = build(runs, reg)
    pairs = comparison_pairs(doc.configs)
    sweeps = sweep_runs(runs)
    found = find_chain_for(paths, chain)
    verdict, problem = _verdict(found, paths, runs, reg)
    from curiosity_tui.analysis.survival_config import survival_by_config

    return AnalysisData(
        paths=paths,
        runs=[(r.config, r.run_id) for r in runs],
        doc=doc,
        infos={m.name: m.info() for m in reg},
        pairs=pairs,
        sweeps=sweeps,
        chain=found if found is not None and found.is_file() else None,
        verdict=verdict,
        verdict_problem=problem,
        survival=survival_by_config(runs),
        **_relay(runs),
    )


def _relay(runs: Sequence[Any]) -> dict[str, list[Any]]:
    from curiosity_tui.analysis.relay_tables import is_relay, relay_rows, transition_rows

    relayed = [r for r in runs if is_relay(r)]
    if not relayed:
        return {}
    return {
        "relay_rows": [row for r in relayed for row in relay_rows(r)],
        "relay_transitions": transition_rows(relayed),
    }
