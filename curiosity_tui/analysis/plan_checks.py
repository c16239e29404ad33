"""Lock-time checks of a plan against what it names (decision 441): can the plan's runs
produce the pack and the metrics it names? ``prereg lock`` refuses a plan that fails one
(``--warn-only`` locks it with a warning each); ``prereg lock --dry-run`` prints every check.

The checks are about the plan alone, before any run: a pack whose session pick falls past
the plan's ``sessions``, a scheme that does not load, a metric that needs more sessions than
a run has (a metric over "sessions 2..", attraction's early sessions plus its stretch).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from curiosity_tui.analysis.attraction import DEFAULT_PARAMS
from curiosity_tui.analysis.plan import PilotPlan, PlanError
from curiosity_tui.errors import InputError

__all__ = ["PlanCheck", "plan_checks", "refuse_unproducible", "sessions_needed"]

#: metrics defined over the sessions after the first: a 1-session run has none
_AFTER_FIRST = ("voluntary_progression", "regen_mean", "regen_dup_share")


class PlanCheck(BaseModel):
    """One check: what it is about, whether it passed, and what it found."""

    name: str
    ok: bool
    detail: str


def sessions_needed(metric: str, plan: PilotPlan) -> tuple[int, str] | None:
    """The sessions a run needs before ``metric`` is defined, and why; None = any run."""
    if metric.startswith(_AFTER_FIRST):
        return 2, "it is computed over sessions 2.."
    if metric.startswith("relay_"):
        return 2, "it compares a run's sessions across a handover"
    if metric.startswith("attraction_"):
        p = plan.attraction or DEFAULT_PARAMS
        return (
            p.early_sessions + p.min_sessions,
            f"attraction needs {p.early_sessions} early session(s) and a stretch of "
            f"{p.min_sessions}",
        )
    return None


def _named_metrics(plan: PilotPlan) -> list[str]:
    """Every metric the plan names (admissible list, then each comparison's), once each."""
    out: list[str] = []
    for name in [*plan.metrics, *(m for c in plan.comparisons for m in c.metrics)]:
        if name not in out:
            out.append(name)
    return out


def _pack_checks(plan: PilotPlan, base: Path | None) -> list[PlanCheck]:
    from curiosity_tui.packs.schemes import BUILTIN_SCHEMES, load_scheme
    from curiosity_tui.packs.session_pick import parse_session_pick

    if plan.pack is None:
        return [
            PlanCheck(
                name="pack",
                ok=True,
                detail="no [pack] table: the plan names no pack (pack build's default shows "
                "sessions 1 and last)",
            )
        ]
    pick = parse_session_pick(plan.pack.sessions, where="pack.sessions")
    try:
        first, later = pick.resolve(plan.sessions)
        sessions = PlanCheck(
            name="pack.sessions",
            ok=True,
            detail=f"{pick.spec()}: each item shows sessions {first} and {later} of "
            f"{plan.sessions}",
        )
    except ValueError as err:
        sessions = PlanCheck(
            name="pack.sessions",
            ok=False,
            detail=f"{pick.spec()}: {err} (sessions = {plan.sessions}); no pack could be built",
        )
    name = plan.pack.scheme
    if base is not None and name not in BUILTIN_SCHEMES and not Path(name).is_absolute():
        name = str(base / name)  # a scheme file beside the plan
    try:
        scheme = load_scheme(name)
        scheme_check = PlanCheck(
            name="pack.scheme",
            ok=True,
            detail=f"{plan.pack.scheme}: {len(scheme.questions)} question(s)",
        )
    except InputError as err:
        scheme_check = PlanCheck(name="pack.scheme", ok=False, detail=str(err))
    return [sessions, scheme_check]


def _metric_checks(plan: PilotPlan) -> list[PlanCheck]:
    out: list[PlanCheck] = []
    for name in _named_metrics(plan):
        need = sessions_needed(name, plan)
        if need is None:
            out.append(PlanCheck(name=f"metric {name}", ok=True, detail="defined for any run"))
            continue
        n, why = need
        ok = plan.sessions >= n
        detail = (
            f"needs {n} session(s) ({why}); the plan runs {plan.sessions}"
            if ok
            else f"needs {n} session(s) ({why}) but the plan runs {plan.sessions}: it would "
            "be undefined in every run"
        )
        out.append(PlanCheck(name=f"metric {name}", ok=ok, detail=detail))
    return out


def plan_checks(plan: PilotPlan, *, base: Path | None = None) -> list[PlanCheck]:
    """Every lock-time check of ``plan``, in the order they are printed; ``base`` is the
    plan's folder (a scheme file is named relative to it)."""
    return [*_pack_checks(plan, base), *_metric_checks(plan), *_family_check(plan)]


def _family_check(plan: PilotPlan) -> list[PlanCheck]:
    """Two or more comparisons must say how they are read as a family (``lock`` refuses a
    plan that does not; shown here so the dry run lists it)."""
    if len(plan.comparisons) < 2:
        return []
    if plan.family is None:
        return [
            PlanCheck(
                name="family",
                ok=False,
                detail=f"{len(plan.comparisons)} [[comparisons]] and no family: declare how they "
                'are read as a family (family = "none", "holm", "bonferroni" or "bh")',
            )
        ]
    return [PlanCheck(name="family", ok=True, detail=f"{plan.family} over the comparisons")]


def refuse_unproducible(plan: PilotPlan, source: str, *, base: Path | None = None) -> None:
    """:class:`PlanError` naming the first failed check (and how many more failed)."""
    failed = [c for c in plan_checks(plan, base=base) if not c.ok]
    if not failed:
        return
    more = f"; {len(failed) - 1} more (prereg lock --dry-run lists every check)"
    raise PlanError(
        f"{source}: {failed[0].name}: {failed[0].detail}{more if len(failed) > 1 else ''}; "
        "refused (--warn-only locks it anyway)"
    )
