"""The shipped metric functions (S6, report §4 and §8), registered on import.

Every function takes one :class:`RunData` and returns the per-run value; aggregation
over runs (mean over runs, per-run values kept) is :mod:`curiosity_tui.analysis.aggregate`.
Similarity metrics (``regen_mean``, ``regen_dup_share``, ``cross_domain_share``) need an
embedder and live with it, not here.
"""

from __future__ import annotations

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import RunData, RunNode
from curiosity_tui.ledger.models import SessionRecord

# --------------------------------------------------------------------------- ledger (§8)


@register(
    "live_nodes",
    definition="live nodes after the last session: status not closed, archived or merged",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="ledger",
)
def live_nodes(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.live)


@register(
    "nodes_worked",
    definition="distinct nodes worked: nodes with a nonempty resurfaced list "
    "(touched at least once, by forced focus or voluntary action; creation is not a touch)",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="ledger",
)
def nodes_worked(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.resurfaced)


@register(
    "nodes_worked_voluntary",
    definition="distinct nodes worked by at least one voluntary action",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="ledger",
)
def nodes_worked_voluntary(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.resurfaced and n.voluntary)


@register(
    "nodes_worked_forced_only",
    definition="distinct nodes worked by the forced focus alone (no voluntary action)",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=None,
    group="ledger",
)
def nodes_worked_forced_only(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.resurfaced and not n.voluntary)


@register(
    "closed_nodes",
    definition="closed nodes after the last session",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="ledger",
)
def closed_nodes(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.status == "closed")


@register(
    "closed_with_facts",
    definition="closed nodes with at least one entry in facts "
    "(counts entries; source, truth and sufficiency are not checked — not 'grounded')",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="ledger",
)
def closed_with_facts(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.status == "closed" and n.facts)


def _depths(nodes: dict[str, RunNode]) -> dict[str, int]:
    depth: dict[str, int] = {}
    for start in nodes:
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = start
        while cur is not None and cur in nodes and cur not in depth and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            cur = nodes[cur].parent
        base = depth.get(cur, 0) if cur is not None else 0
        for nid in reversed(chain):
            base += 1
            depth[nid] = base
    return depth


@register(
    "max_depth",
    definition="maximum depth: the longest parent chain in the final snapshot, a root counts 1",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="ledger",
)
def max_depth(run: RunData) -> float:
    d = _depths(run.nodes)
    return max(d.values()) if d else 0


def _decisions(run: RunData) -> list[str]:
    return [s.decision for s in run.committed_sessions() if s.decision in ("PRESERVE", "ANSWER")]


@register(
    "preserve_share",
    definition="PRESERVE decisions / all decisions (PRESERVE + ANSWER)",
    unit="share",
    denominator="decisions of the run's committed sessions; mean over runs "
    "(the report's 13/15 pools a configuration's fifteen sessions)",
    higher_is_better=None,
    group="ledger",
)
def preserve_share(run: RunData) -> float | None:
    d = _decisions(run)
    return None if not d else sum(1 for x in d if x == "PRESERVE") / len(d)


# ----------------------------------------------------------------------- progression (§4)


#: the sessions progression is measured over (report §4: "sessions 2-5 — the range used
#: throughout for progression, since session 1 has no prior questions to act on")
PROGRESSION_SESSIONS = range(2, 6)


def _forced(s: SessionRecord) -> bool:
    return s.focus is not None or s.counts.forced_focus


def _progression(run: RunData, *, raw: bool) -> float | None:
    shares: list[float] = []
    for s in run.committed_sessions():
        if s.session not in PROGRESSION_SESSIONS:
            continue
        actions = s.counts.voluntary_actions
        if raw:
            actions += int(_forced(s)) + s.counts.dependency_checks
        questions = len(s.questions)
        if actions + questions == 0:
            continue
        shares.append(actions / (actions + questions))
    return sum(shares) / len(shares) if shares else None


@register(
    "voluntary_progression",
    definition="per session, voluntary_actions / (voluntary_actions + new_questions), where "
    "the automatically resurfaced focus and dependency checks are excluded from both terms; "
    "sessions 2-5 (the report's range, also on longer runs); averaged within a run, then "
    "across runs",
    unit="share",
    denominator="sessions 2-5 with a nonzero denominator; mean within run, then over runs",
    structural=False,
    higher_is_better=True,
    group="progression",
)
def voluntary_progression(run: RunData) -> float | None:
    return _progression(run, raw=False)


@register(
    "voluntary_progression_raw",
    definition="as voluntary_progression, counted raw: the forced focus and dependency "
    "checks included in both terms; sessions 2-5",
    unit="share",
    denominator="sessions 2-5 with a nonzero denominator; mean within run, then over runs",
    structural=False,
    higher_is_better=True,
    group="progression",
)
def voluntary_progression_raw(run: RunData) -> float | None:
    return _progression(run, raw=True)


@register(
    "persistence_pulse3",
    definition="questions persisting at pulse >= 3 (len(resurfaced) >= 3)",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    structural=True,
    higher_is_better=True,
    group="progression",
)
def persistence_pulse3(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.pulse >= 3)


# ---------------------------------------------------------------------------- facts (§4)


@register(
    "facts_total",
    definition="entries in the facts field, total",
    unit="entries",
    denominator="per run, final snapshot; mean over runs",
    higher_is_better=True,
    group="facts",
)
def facts_total(run: RunData) -> float:
    return _facts(run)


def _facts(run: RunData) -> int:
    return sum(len(n.facts) for n in run.nodes.values())


def _tokens(run: RunData, *, final_only: bool) -> int:
    total = 0
    for s in run.committed_sessions():
        for c in s.calls:
            if c.kind == "curator" or (final_only and c.internal):
                continue
            total += c.completion_tokens
    return total


@register(
    "facts_per_1k_all",
    definition="facts entries per 1k completion tokens, all generation (pre-registered)",
    unit="entries / 1k tokens",
    denominator="completion tokens of every session call (curator calls excluded); per run",
    higher_is_better=True,
    group="facts",
)
def facts_per_1k_all(run: RunData) -> float | None:
    t = _tokens(run, final_only=False)
    return None if t == 0 else _facts(run) * 1000.0 / t


@register(
    "facts_per_1k_final",
    definition="facts entries per 1k tokens of the final call (supplementary)",
    unit="entries / 1k tokens",
    denominator="completion tokens of the final (non-internal) calls; per run",
    higher_is_better=True,
    group="facts",
)
def facts_per_1k_final(run: RunData) -> float | None:
    t = _tokens(run, final_only=True)
    return None if t == 0 else _facts(run) * 1000.0 / t


# ------------------------------------------------------- return-condition bookkeeping


@register(
    "return_conditions_set",
    definition="nodes carrying a return condition after the last session",
    unit="nodes",
    denominator="per run, final snapshot; mean over runs",
    bookkeeping=True,
    higher_is_better=True,
    group="bookkeeping",
)
def return_conditions_set(run: RunData) -> float:
    return sum(1 for n in run.nodes.values() if n.return_condition)


@register(
    "dependency_checks_total",
    definition="dependency checks run, summed over sessions (check events, not retained checks)",
    unit="checks",
    denominator="per run, committed sessions; mean over runs",
    bookkeeping=True,
    higher_is_better=True,
    group="bookkeeping",
)
def dependency_checks_total(run: RunData) -> float:
    return sum(s.counts.dependency_checks for s in run.committed_sessions())


# ------------------------------------------------------------------------ tokens (§4)


def _per_session_tokens(run: RunData, *, internal: bool) -> float | None:
    sessions = run.committed_sessions()
    if not sessions:
        return None
    total = sum(
        c.completion_tokens
        for s in sessions
        for c in s.calls
        if c.kind != "curator" and c.internal == internal
    )
    return total / len(sessions)


@register(
    "tokens_internal_per_session",
    definition="completion tokens of internal calls (candidates, judges, checks) per session",
    unit="tokens",
    denominator="committed sessions of the run; mean over runs",
    group="tokens",
)
def tokens_internal_per_session(run: RunData) -> float | None:
    return _per_session_tokens(run, internal=True)


@register(
    "tokens_final_per_session",
    definition="completion tokens of the final deliverable call per session",
    unit="tokens",
    denominator="committed sessions of the run; mean over runs",
    group="tokens",
)
def tokens_final_per_session(run: RunData) -> float | None:
    return _per_session_tokens(run, internal=False)


@register(
    "final_calls_length",
    definition="final deliverable calls that ended on finish_reason 'length'",
    unit="calls",
    denominator="per run; mean over runs",
    group="tokens",
)
def final_calls_length(run: RunData) -> float:
    return sum(
        1
        for s in run.committed_sessions()
        for c in s.calls
        if not c.internal and c.kind != "curator" and c.finish_reason == "length"
    )


@register(
    "internal_calls_length",
    definition="internal calls (candidates, judges, checks) that ended on finish_reason 'length'",
    unit="calls",
    denominator="per run; mean over runs",
    group="tokens",
)
def internal_calls_length(run: RunData) -> float:
    return sum(
        1
        for s in run.committed_sessions()
        for c in s.calls
        if c.internal and c.kind != "curator" and c.finish_reason == "length"
    )
