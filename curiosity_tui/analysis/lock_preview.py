"""``prereg lock --dry-run`` (decision 441): what a lock would append and every check it
would make, with nothing written. The checks are the lock's own (stage, chain, runs,
amendment, then the plan's pack and metric checks of :mod:`plan_checks`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from curiosity_tui.analysis.lockchain import (
    load_verified_chain,
    refuse_after_runs,
    refuse_amendment,
    sha256_text,
    stage_rank,
)
from curiosity_tui.analysis.plan import Arm, PilotPlan, load_plan
from curiosity_tui.analysis.plan_checks import PlanCheck, plan_checks
from curiosity_tui.analysis.runstamps import scan_stamps
from curiosity_tui.errors import InputError

__all__ = ["LockPreview", "format_preview", "preview_lock"]


class LockPreview(BaseModel):
    plan_path: str
    stage: str
    chain: str
    seq: int
    plan_sha256: str
    summary: list[str]
    checks: list[PlanCheck]

    @property
    def would_lock(self) -> bool:
        return all(c.ok for c in self.checks)


def _check(name: str, fn: Callable[[], str]) -> PlanCheck:
    """Run one of the lock's own refusals; its message is the check's detail."""
    try:
        return PlanCheck(name=name, ok=True, detail=fn())
    except InputError as err:
        return PlanCheck(name=name, ok=False, detail=str(err))


def _curator_note(arm: Arm) -> str:
    """ ", human-curated by ann, ben" for an arm whose curator is a person (decision 560)."""
    if not arm.human_curated():
        return ""
    return ", human-curated" + (f" by {', '.join(arm.curators)}" if arm.curators else "")


def _summary(plan: PilotPlan) -> list[str]:
    arms = [
        f"{name} ({plan.arm(name).config}{_curator_note(plan.arm(name))})"
        if name in (plan.arms or {})
        else name
        for name in plan.configurations
    ]
    lines = [
        f"name {plan.name}; model {plan.model}; contract(s) {', '.join(plan.contract_list())}",
        f"{len(arms)} arm(s): {', '.join(arms)}",
        f"{plan.runs} run(s) per arm × {plan.sessions} session(s)",
        f"metrics (closed): {', '.join(plan.metrics)}",
    ]
    for name, _, rule in plan.rules():
        pairs = "; ".join(f"{a} vs {b}" for a, b in rule.pairs)
        lines.append(
            f"rule{' ' + name if name else ''}: {rule.kind} on {', '.join(rule.metrics)} "
            f"(margin {rule.margin}, ties {rule.ties}); pairs {pairs}"
        )
    if plan.pack is not None:
        lines.append(f"pack: sessions {plan.pack.sessions}, scheme {plan.pack.scheme}")
    return lines


def preview_lock(
    plan_path: Path, stage: str, *, chain_path: Path, reason: str = "", runs_dir: Path | None = None
) -> LockPreview:
    """Every check ``lock`` would make, none of them fatal; the plan must still parse (a plan
    that does not parse is refused as ``lock`` refuses it)."""
    plan, text = load_plan(plan_path)
    digest = sha256_text(text)
    entries = load_verified_chain(chain_path) if chain_path.exists() else []
    runs = runs_dir or chain_path.parent

    def stage_known() -> str:
        stage_rank(stage)
        return f"{stage} is a known stage"

    def chain_state() -> str:
        n = len(entries)
        return f"{chain_path}: {n} entr{'y' if n == 1 else 'ies'}" if n else f"{chain_path}: new"

    def no_later_runs() -> str:
        refuse_after_runs(stage, scan_stamps(runs))
        return f"no run in {runs} predates this stage"

    def amendment() -> str:
        refuse_amendment(entries, stage, reason, digest, chain_path)
        return f"amends seq {entries[-1].seq}: {reason.strip()}" if entries else "first lock"

    checks = [
        _check("stage", stage_known),
        _check("chain", chain_state),
        _check("runs", no_later_runs),
        _check("amendment", amendment),
        *plan_checks(plan, base=plan_path.parent),
    ]
    return LockPreview(
        plan_path=str(plan_path),
        stage=stage,
        chain=str(chain_path),
        seq=len(entries) + 1,
        plan_sha256=digest,
        summary=_summary(plan),
        checks=checks,
    )


def format_preview(p: LockPreview) -> str:
    lines = [
        f"dry run: nothing written. prereg lock {p.plan_path} --stage {p.stage} would append "
        f"seq {p.seq} to {p.chain}",
        f"  plan sha256 {p.plan_sha256}",
        "plan:",
        *(f"  {s}" for s in p.summary),
        "checks:",
        *(f"  {'ok  ' if c.ok else 'FAIL'}  {c.name}: {c.detail}" for c in p.checks),
    ]
    failed = sum(not c.ok for c in p.checks)
    lines.append(
        "result: would lock"
        if not failed
        else f"result: would be refused ({failed} check(s) failed)"
    )
    return "\n".join(lines)
