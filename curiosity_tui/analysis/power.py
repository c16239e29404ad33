"""A design that states its power before the runs (issue 24, item 3; decision 426).

For each clause of a plan's rules (metric x treatment-control pair), by simulation:

* **per-run values** come from a pilot (each arm's runs, centred on the arm's mean and
  resampled with replacement: the pilot's spread, no effect) or from a stated standard
  deviation (normal, the same SD in both arms);
* **one simulated experiment** draws the plan's ``runs`` per arm, and reads it as the interval
  rule does (decision 423): the (1 - alpha) percentile bootstrap interval of the advantage,
  runs resampled within each arm, and a win when its lower end lies above the margin;
* adding a true difference d to the treatment shifts every bootstrap draw by d, so with L the
  lower ends at d = 0 a simulated experiment wins at d exactly when L + d > margin: the
  **power** at d is P(L > margin - d), and the **minimum detectable difference** (MDD) at the
  target power is ``margin - quantile(L, 1 - power)`` — no search over d;
* the **runs per arm needed** for a stated difference is the least n (up to
  :data:`MAX_RUNS`) whose power reaches the target, found by doubling then bisection.

The simulations are seeded; every figure names its source, number of simulations and draws.
The analytic MDD for a normal two-sample comparison, ``(z(1 - alpha/2) + z(power)) x SD x
sqrt(2 / n)``, is printed beside the simulated one as a check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats

from curiosity_tui.analysis.aggregate import aggregate_metric, group_by_config
from curiosity_tui.analysis.plan import PilotPlan
from curiosity_tui.analysis.registry import Registry, default_registry
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.errors import InputError

DEFAULT_SIMS = 1000
DEFAULT_BOOT = 200
DEFAULT_POWER = 0.8
DEFAULT_SEED = 20240601
MAX_RUNS = 200


class ClausePower(BaseModel):
    """The design analysis of one clause."""

    rule: str  # "" for the headline rule, else the comparison's name
    metric: str
    treatment: str
    control: str
    source: str  # "pilot: n_t/n_c runs" or "stated SD"
    sd_treatment: float | None
    sd_control: float | None
    runs_per_arm: int
    margin: float
    mdd: float | None  # in the metric's units, in its better direction
    mdd_analytic: float | None
    difference: float | None = None  # the stated difference asked about
    runs_needed: int | None = None
    power_at_plan: float | None = None  # power at the stated difference with the plan's runs
    note: str = ""


class DesignAnalysis(BaseModel):
    """Every clause's figures, and how they were obtained (recorded in the lock)."""

    plan: str
    alpha: float
    power: float
    sims: int
    n_boot: int
    seed: int
    method: str = (
        "simulation: per-run values resampled from the pilot (centred per arm) or normal with "
        "the stated SD; each experiment read by the interval rule (percentile bootstrap by run, "
        "two-sided 1 - alpha, lower end above the margin)"
    )
    clauses: list[ClausePower] = Field(default_factory=list)


def _lower_ends(
    t: np.ndarray, c: np.ndarray, n: int, alpha: float, sims: int, n_boot: int, seed: int
) -> np.ndarray:
    """Lower ends of the (1 - alpha) percentile interval of mean(t*) - mean(c*) over ``sims``
    experiments of ``n`` runs per arm drawn from the centred pools ``t`` and ``c``."""
    rng = np.random.default_rng([seed, n])
    out = np.empty(sims)
    chunk = max(1, 2_000_000 // max(1, n_boot * n))
    for start in range(0, sims, chunk):
        k = min(chunk, sims - start)
        xt = t[rng.integers(0, len(t), (k, n))]
        xc = c[rng.integers(0, len(c), (k, n))]
        bt = np.take_along_axis(xt, rng.integers(0, n, (k, n_boot * n)), axis=1)
        bc = np.take_along_axis(xc, rng.integers(0, n, (k, n_boot * n)), axis=1)
        diff = bt.reshape(k, n_boot, n).mean(axis=2) - bc.reshape(k, n_boot, n).mean(axis=2)
        out[start : start + k] = np.quantile(diff, alpha / 2.0, axis=1)
    return out


def _normal_pool(sd: float, size: int = 4096) -> np.ndarray:
    """A pool whose draws are normal with this SD, exactly (the normal quantiles)."""
    z = stats.norm.ppf((np.arange(size) + 0.5) / size)
    return np.asarray(sd * z / z.std())


def analytic_mdd(sd_t: float, sd_c: float, n: int, alpha: float, power: float) -> float:
    """(z(1 - alpha/2) + z(power)) x sqrt((sd_t^2 + sd_c^2) / n)."""
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    return z * float(np.sqrt((sd_t**2 + sd_c**2) / n))


class _Sim(BaseModel):
    alpha: float
    power: float
    sims: int
    n_boot: int
    seed: int


def _mdd(t: np.ndarray, c: np.ndarray, n: int, margin: float, s: _Sim) -> float:
    low = _lower_ends(t, c, n, s.alpha, s.sims, s.n_boot, s.seed)
    return float(margin - np.quantile(low, 1.0 - s.power))


def _power(t: np.ndarray, c: np.ndarray, n: int, margin: float, d: float, s: _Sim) -> float:
    low = _lower_ends(t, c, n, s.alpha, s.sims, s.n_boot, s.seed)
    return float(np.mean(low + d > margin))


def _runs_needed(t: np.ndarray, c: np.ndarray, margin: float, d: float, s: _Sim) -> int | None:
    """The least runs per arm whose power at ``d`` reaches the target (None: over MAX_RUNS)."""
    n = 2
    if _power(t, c, n, margin, d, s) >= s.power:
        return n
    while True:
        nxt = min(n * 2, MAX_RUNS)
        if _power(t, c, nxt, margin, d, s) >= s.power:
            return _bisect(t, c, n, nxt, margin, d, s)
        if nxt == MAX_RUNS:
            return None
        n = nxt


def _bisect(
    t: np.ndarray, c: np.ndarray, lo: int, hi: int, margin: float, d: float, s: _Sim
) -> int:
    """The least n in (lo, hi] with enough power (power at hi is enough)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _power(t, c, mid, margin, d, s) >= s.power:
            hi = mid
        else:
            lo = mid
    return hi


def plan_runs(runs: Sequence[RunData], plan: PilotPlan) -> list[RunData]:
    """The pilot's runs under the plan's contract(s): runs under another contract are never
    pooled in (decision 234); a run that names no contract is kept."""
    wanted = set(plan.contract_list())
    return [r for r in runs if not r.contract or r.contract in wanted]


def _pilot_pools(
    runs: Sequence[RunData], plan: PilotPlan, metric: str, arm: str, reg: Registry
) -> np.ndarray:
    groups = group_by_config(plan_runs(runs, plan), split=plan.compares_contracts())
    agg = aggregate_metric(groups.get(arm, []), metric, arm, registry=reg)
    values = np.asarray(agg.values(), dtype=float)
    if values.size < 2:
        return values
    sign = 1.0 if reg.get(metric).higher_is_better else -1.0
    centred: np.ndarray = sign * (values - values.mean())
    return centred


def design_analysis(
    plan: PilotPlan,
    *,
    pilot: Sequence[RunData] | None = None,
    sds: Mapping[str, float] | None = None,
    differences: Mapping[str, float] | None = None,
    registry: Registry | None = None,
    power: float = DEFAULT_POWER,
    sims: int = DEFAULT_SIMS,
    n_boot: int = DEFAULT_BOOT,
    seed: int = DEFAULT_SEED,
) -> DesignAnalysis:
    """The design analysis of every clause of the plan's rules (headline, then comparisons)."""
    if pilot is None and not sds:
        raise InputError("plan power: give --pilot DIR or --sd METRIC=VALUE")
    reg = registry or default_registry()
    s = _Sim(alpha=plan.alpha, power=power, sims=sims, n_boot=n_boot, seed=seed)
    out = DesignAnalysis(
        plan=plan.name, alpha=plan.alpha, power=power, sims=sims, n_boot=n_boot, seed=seed
    )
    for name, _, rule in plan.rules():
        for metric in rule.metrics:
            for t, c in rule.pairs:
                out.clauses.append(
                    _clause(plan, name, metric, t, c, rule.margin, pilot, sds, differences, reg, s)
                )
    return out


def _clause(
    plan: PilotPlan,
    rule: str,
    metric: str,
    t: str,
    c: str,
    margin: float,
    pilot: Sequence[RunData] | None,
    sds: Mapping[str, float] | None,
    differences: Mapping[str, float] | None,
    reg: Registry,
    s: _Sim,
) -> ClausePower:
    n = plan.runs
    base = ClausePower(
        rule=rule, metric=metric, treatment=t, control=c, source="", sd_treatment=None,
        sd_control=None, runs_per_arm=n, margin=margin, mdd=None, mdd_analytic=None,
    )  # fmt: skip
    pt: np.ndarray | None
    pc: np.ndarray | None
    if sds and metric in sds:
        pt = pc = _normal_pool(sds[metric])
        base.source = f"stated SD {sds[metric]:g}"
    elif pilot is not None:
        pt = _pilot_pools(pilot, plan, metric, t, reg)
        pc = _pilot_pools(pilot, plan, metric, c, reg)
        if pt.size < 2 or pc.size < 2:
            base.note = (
                f"the pilot has {pt.size} run(s) of {t} and {pc.size} of {c} with a value under "
                f"the plan's contract; two a side are needed"
            )
            return base
        base.source = f"pilot: {len(pt)}/{len(pc)} runs"
    else:
        base.note = f"no SD stated for {metric} (--sd {metric}=VALUE) and no pilot"
        return base
    base.sd_treatment, base.sd_control = float(np.std(pt, ddof=1)), float(np.std(pc, ddof=1))
    base.mdd = _mdd(pt, pc, n, margin, s)
    base.mdd_analytic = margin + analytic_mdd(
        base.sd_treatment, base.sd_control, n, s.alpha, s.power
    )
    d = (differences or {}).get(metric)
    if d is not None:
        base.difference = d
        base.power_at_plan = _power(pt, pc, n, margin, d, s)
        base.runs_needed = _runs_needed(pt, pc, margin, d, s)
        if base.runs_needed is None:
            base.note = f"more than {MAX_RUNS} runs per arm would be needed"
    return base


def format_design(da: DesignAnalysis) -> str:
    lines = [
        f"Design analysis of plan {da.plan}: alpha {da.alpha:g}, power {da.power:g}, "
        f"{da.sims} simulated experiments x {da.n_boot} bootstrap draws, seed {da.seed}",
        f"  method: {da.method}",
    ]
    for c in da.clauses:
        head = f"  {c.rule or 'headline'}: {c.metric}, {c.treatment} vs {c.control}"
        if c.mdd is None:
            lines.append(f"{head}: no figure — {c.note}")
            continue
        lines.append(
            f"{head} ({c.source}; SD {c.sd_treatment:.3g}/{c.sd_control:.3g}): minimum "
            f"detectable difference at {c.runs_per_arm} runs per arm {c.mdd:.3g} "
            f"(analytic normal {c.mdd_analytic:.3g}; margin {c.margin:g})"
        )
        if c.difference is not None:
            need = "more than " + str(MAX_RUNS) if c.runs_needed is None else str(c.runs_needed)
            lines.append(
                f"    for a difference of {c.difference:g}: power {c.power_at_plan:.2f} at "
                f"{c.runs_per_arm} runs per arm; {need} runs per arm for power {da.power:g}"
            )
    return "\n".join(lines)
