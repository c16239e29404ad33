"""Pre-registration (S7): the pilot plan, its closed metric set, and the lock chain. This
module is the public facade; the code lives in two modules:

- :mod:`curiosity_tui.analysis.plan`: the plan model, TOML loading and validation;
- :mod:`curiosity_tui.analysis.lockchain`: locking, reading and verifying ``prereg.jsonl``.

A plan is a TOML file (this example is parsed by the tests)::

    name = "pilot-02"
    configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
    runs = 3
    sessions = 5
    seed_question = "Did the printing press cause the Reformation?"
    model = "gpt-4o-mini"
    epsilon = 0.15
    metrics = ["max_depth", "nodes_worked", "live_nodes"]   # the CLOSED admissible list
    aggregation = "mean"

    [budgets]
    session_completion_tokens = 4000

    [rule]
    kind = "any_metric_beats_in_all"
    pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
    metrics = ["max_depth"]        # explicit names, a subset of the admissible list
    margin = 0.0
    ties = "not_met"

The decision-rule language cannot express an open metric set: ``rule.metrics`` must be a
non-empty list of registry names drawn from the plan's own ``metrics``. A description
("at least one structural metric beyond return-condition bookkeeping"), a wildcard, a
category word, an unknown name or a name outside the admissible list is refused when the
plan is loaded, so ``prereg lock`` refuses it with the reason. The flags
``require_structural`` and ``exclude_bookkeeping`` only *check* the listed names against
the registry's flags; they never add a metric.

``prereg lock`` appends ``{seq, ts, stage, reason, plan_sha256, plan_text, prev, hash}`` to
an append-only, sha256-chained ``prereg.jsonl``; ``hash`` = sha256(prev + canonical JSON
of the entry without ``hash``). Stages move forward only; amendments append with a
reason and never replace.
"""

from __future__ import annotations

from curiosity_tui.analysis.lockchain import (
    CHAIN_FILE,
    GENESIS,
    STAGE_RE,
    STAGES_HELP,
    ChainError,
    ChainReport,
    LockEntry,
    NotRegisteredError,
    check_entries,
    entry_hash,
    find_chain,
    format_chronology,
    load_verified_chain,
    lock,
    lock_metadata,
    plan_diffs,
    read_chain,
    require_lock,
    sha256_text,
    stage_rank,
    verify_chain,
)
from curiosity_tui.analysis.plan import (
    OPENING_WORDS,
    RULE_KINDS,
    Budgets,
    DecisionRule,
    PilotPlan,
    PlanError,
    load_plan,
    parse_plan,
)

__all__ = [
    "CHAIN_FILE",
    "GENESIS",
    "OPENING_WORDS",
    "RULE_KINDS",
    "STAGES_HELP",
    "STAGE_RE",
    "Budgets",
    "ChainError",
    "ChainReport",
    "DecisionRule",
    "LockEntry",
    "NotRegisteredError",
    "PilotPlan",
    "PlanError",
    "check_entries",
    "entry_hash",
    "find_chain",
    "format_chronology",
    "load_plan",
    "load_verified_chain",
    "lock",
    "lock_metadata",
    "parse_plan",
    "plan_diffs",
    "read_chain",
    "require_lock",
    "sha256_text",
    "stage_rank",
    "verify_chain",
]
