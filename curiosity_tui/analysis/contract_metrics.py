"""Contract-comparison metrics (S13, issue 16; report §6 "Requirements binding on closure",
"Verified grounds for satisfied"), registered on import.

Counts of closure attempts read :attr:`RunData.closures` (every attempt, replayed from the
journal: ``contract/closures.py``) and are undefined (None) for a run file without it. Marks
and downgrades read the final snapshot: a node's ``checks`` (every check ever made, with the
evidence record it cited) and ``downgrades`` (every proposal, with its decision).

All are return-condition bookkeeping (``bookkeeping=True``): a plan that excludes bookkeeping
cannot name them in its rule, and they are reported beside, not instead of, the structural
metrics. A blocked closure or a downgrade has no direction: the report warns that keeping a
question open is not itself the criterion for comparing designs.
"""

from __future__ import annotations

from typing import Any

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import ClosureAttempt, RunData

GROUP = "contract"


def _closures(run: RunData) -> list[ClosureAttempt] | None:
    """Every committed closure attempt (a failed session's batch never reached the journal)."""
    return run.closures


@register(
    "closed_over_unmet",
    definition="closures over unmet requirements without an authorised revision: closures at "
    "which at least one of the node's required facts stood neither satisfied nor waived "
    "(a waiver counts only when an approved downgrade made it)",
    unit="closures",
    denominator="per run, every closure in the journal; mean over runs",
    bookkeeping=True,
    higher_is_better=False,
    group=GROUP,
)
def closed_over_unmet(run: RunData) -> float | None:
    cs = _closures(run)
    return None if cs is None else sum(1 for c in cs if c.closed and c.unmet)


@register(
    "closures_blocked",
    definition="blocked closures: ANSWERs or close actions refused because required facts "
    "stood unmet (closure_blocked events)",
    unit="attempts",
    denominator="per run; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def closures_blocked(run: RunData) -> float | None:
    cs = _closures(run)
    return None if cs is None else sum(1 for c in cs if not c.closed)


@register(
    "closures_allowed_by_downgrade",
    definition="closures that an approved downgrade allowed: closures with every required "
    "fact met, at least one of them met only through an approved downgrade (waived, or "
    "weakened and then satisfied)",
    unit="closures",
    denominator="per run; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def closures_allowed_by_downgrade(run: RunData) -> float | None:
    cs = _closures(run)
    return None if cs is None else sum(1 for c in cs if c.closed and not c.unmet and c.downgraded)


def _downgrades(run: RunData, status: str | None) -> float:
    return sum(
        1
        for n in run.nodes.values()
        for p in _entries(n.downgrades)
        if status is None or p.get("status") == status
    )


def _entries(value: list[Any]) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)]


@register(
    "downgrades_proposed",
    definition="downgrades proposed: proposals to waive or weaken a requirement, by anyone, "
    "whatever their decision",
    unit="proposals",
    denominator="per run, final snapshot; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def downgrades_proposed(run: RunData) -> float:
    return _downgrades(run, None)


@register(
    "downgrades_approved",
    definition="downgrades approved by a human curator, with stated grounds",
    unit="proposals",
    denominator="per run, final snapshot; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def downgrades_approved(run: RunData) -> float:
    return _downgrades(run, "approved")


@register(
    "downgrades_rejected",
    definition="downgrades rejected by a human curator, with stated grounds",
    unit="proposals",
    denominator="per run, final snapshot; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def downgrades_rejected(run: RunData) -> float:
    return _downgrades(run, "rejected")


def _marks(run: RunData) -> tuple[int, int]:
    """(verified, asserted) satisfied marks: checks whose result was satisfied, split by
    whether the evidence record the check cited was verified."""
    verified = asserted = 0
    for n in run.nodes.values():
        ok = {
            (e.get("id"), e.get("requirement"))
            for e in _entries(n.evidence)
            if e.get("status") == "verified"
        }
        for c in n.checks:
            if not isinstance(c, dict) or c.get("result") != "satisfied":
                continue
            if (c.get("evidence_id"), c.get("requirement")) in ok:
                verified += 1
            else:
                asserted += 1
    return verified, asserted


def _per_session(run: RunData, value: float) -> float | None:
    n = len(run.committed_sessions())
    return value / n if n else None


@register(
    "satisfied_verified_per_session",
    definition="satisfied marks on verified evidence per session: checks that set a required "
    "fact satisfied citing an evidence record whose match check passed, over committed sessions",
    unit="marks per session",
    denominator="per run: marks / committed sessions; mean over runs",
    bookkeeping=True,
    higher_is_better=True,
    group=GROUP,
)
def satisfied_verified_per_session(run: RunData) -> float | None:
    return _per_session(run, _marks(run)[0])


@register(
    "satisfied_asserted_per_session",
    definition="satisfied marks on the checker's own statement per session: checks that set a "
    "required fact satisfied without a verified evidence record, over committed sessions",
    unit="marks per session",
    denominator="per run: marks / committed sessions; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def satisfied_asserted_per_session(run: RunData) -> float | None:
    return _per_session(run, _marks(run)[1])


@register(
    "dependency_checks_per_session",
    definition="throughput: dependency checks recorded per committed session",
    unit="checks per session",
    denominator="per run: checks / committed sessions; mean over runs",
    bookkeeping=True,
    higher_is_better=None,
    group=GROUP,
)
def dependency_checks_per_session(run: RunData) -> float | None:
    done = run.committed_sessions()
    return _per_session(run, sum(s.counts.dependency_checks for s in done))


@register(
    "tokens_per_requirement_satisfied",
    definition="cost: completion tokens of every call in the committed sessions' records "
    "(internal, final and carried curator calls) per distinct required fact marked satisfied "
    "at least once (verified or asserted); undefined when none was",
    unit="tokens per requirement",
    denominator="per run: tokens / satisfied requirements; mean over runs",
    bookkeeping=True,
    higher_is_better=False,
    group=GROUP,
)
def tokens_per_requirement_satisfied(run: RunData) -> float | None:
    satisfied = {
        (nid, c.get("requirement"))
        for nid, n in run.nodes.items()
        for c in n.checks
        if isinstance(c, dict) and c.get("result") == "satisfied"
    }
    if not satisfied:
        return None
    tokens = sum(c.completion_tokens for s in run.committed_sessions() for c in s.calls)
    return tokens / len(satisfied)
