"""Pre-registration (S7): the pilot plan, its closed metric set, and the lock chain.

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

import contextlib
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from curiosity_tui.analysis.registry import NAME_RE, Registry, default_registry
from curiosity_tui.atomic import append_line_durable
from curiosity_tui.clock import utc_now_seconds
from curiosity_tui.errors import InputError

CHAIN_FILE = "prereg.jsonl"
GENESIS = "0" * 64
STAGE_RE = re.compile(
    r"^(before-runs|after-shakeout|after-mechanical-results|after-rater-[1-9][0-9]*|after-key)$"
)
STAGES_HELP = "before-runs, after-shakeout, after-mechanical-results, after-rater-N, after-key"
RULE_KINDS = ("any_metric_beats_in_all", "all_metrics_beat_in_all")
#: words that name a category of metrics instead of metrics: they would open the set
OPENING_WORDS = frozenset(
    {"all", "any", "every", "structural", "bookkeeping", "others", "other", "etc", "rest"}
)


class PlanError(InputError):
    """A plan that cannot be locked or used, with the file, key and line."""


class ChainError(InputError):
    """A prereg chain that is broken, or a lock that may not be appended."""


class NotRegisteredError(InputError):
    """A run requested without a lock at stage before-runs."""


# ------------------------------------------------------------------------------- the plan


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_completion_tokens: int = Field(4000, gt=0)
    candidate_completion_tokens: int | None = Field(None, gt=0)
    curator_completion_tokens: int | None = Field(None, gt=0)


class DecisionRule(BaseModel):
    """A mechanical rule over a closed, named metric set.

    ``any_metric_beats_in_all``: met iff at least one listed metric has every pair's
    treatment beating its control (by more than ``margin``, in the metric's direction).
    The same metric must carry every pair ("retains that advantage").
    ``all_metrics_beat_in_all``: every listed metric must do so.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["any_metric_beats_in_all", "all_metrics_beat_in_all"]
    pairs: list[tuple[str, str]] = Field(min_length=1)
    treatment: list[str] | None = None
    control: list[str] | None = None
    metrics: list[str] = Field(min_length=1)
    margin: float = Field(0.0, ge=0.0)
    #: how a difference exactly equal to the margin reads
    ties: Literal["not_met", "met", "undecided"] = "not_met"
    require_structural: bool = False
    exclude_bookkeeping: bool = False
    #: the rule in prose, quoted in the verdict; never interpreted
    text: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> DecisionRule:
        for a, b in self.pairs:
            if a == b:
                raise ValueError(f"pair [{a!r}, {b!r}] compares a configuration with itself")
        if self.treatment is not None and self.treatment != [a for a, _ in self.pairs]:
            raise ValueError("treatment must list the first element of each pair, in order")
        if self.control is not None and self.control != [b for _, b in self.pairs]:
            raise ValueError("control must list the second element of each pair, in order")
        return self


class PilotPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    configurations: list[str] = Field(min_length=1)
    runs: int = Field(gt=0)
    sessions: int = Field(gt=0)
    seed_question: str = Field(min_length=1)
    model: str = Field(min_length=1)
    budgets: Budgets
    epsilon: float = Field(ge=0.0)
    metrics: list[str] = Field(min_length=1)
    aggregation: Literal["mean", "median"] = "mean"
    rule: DecisionRule
    contract: Literal["pilot-01", "pilot-02"] | None = None
    embedder: str | None = None
    notes: str = ""

    @model_validator(mode="after")
    def _pairs_known(self) -> PilotPlan:
        if len(set(self.configurations)) != len(self.configurations):
            raise ValueError("configurations lists a name twice")
        for pair in self.rule.pairs:
            for c in pair:
                if c not in self.configurations:
                    raise ValueError(f"rule.pairs names configuration {c!r}, not in configurations")
        return self


def _line_of(text: str, table: str | None, key: str) -> int | None:
    """1-based line of ``key =`` inside ``[table]`` (or the top level); None if not found."""
    current: str | None = None
    key_re = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if s.startswith("[") and not s.startswith("[["):
            current = s.strip("[]").strip()
            continue
        if current == table and key_re.match(line):
            return i
    if table is not None:  # maybe written inline / dotted: rule.metrics = …
        dotted = re.compile(rf"^\s*{re.escape(table)}\s*\.\s*{re.escape(key)}\s*=")
        for i, line in enumerate(text.splitlines(), start=1):
            if dotted.match(line):
                return i
        for i, line in enumerate(text.splitlines(), start=1):
            if line.strip() == f"[{table}]":
                return i
    return None


def _where(source: str, text: str, dotted: str) -> str:
    parts = dotted.split(".")
    table, key = (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    line = _line_of(text, table, key)
    if line is None and table is None:  # a whole table, e.g. "rule" or "budgets"
        lines = text.splitlines()
        line = lines.index(f"[{key}]") + 1 if f"[{key}]" in lines else None
    return f"{source}:{line}" if line else source


def _check_metric_list(
    value: Any,
    key: str,
    registry: Registry,
    admissible: list[str] | None,
) -> list[str]:
    """Return the list, or raise ValueError naming why the set is not closed."""
    what = "rule" if key.startswith("rule.") else "plan"
    if value is None:
        raise ValueError(
            "is missing: the metric set must be closed — name every metric, "
            'e.g. metrics = ["max_depth", "nodes_worked"]'
        )
    if isinstance(value, str):
        if value in registry:
            raise ValueError(f'must be a list of names: write {key.split(".")[-1]} = ["{value}"]')
        raise ValueError(
            f"is a description, not a list of metric names: {value!r}. A {what} that leaves "
            "its metric set open cannot be locked; list the registry names it admits, e.g. "
            'metrics = ["max_depth", "nodes_worked"]'
        )
    if not isinstance(value, list):
        raise ValueError(f"must be a list of metric names, got {type(value).__name__}")
    if not value:
        raise ValueError("is empty: name at least one metric")
    seen: set[str] = set()
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"contains {item!r}, not a metric name")
        if any(ch in item for ch in "*?[]") or item.lower() in OPENING_WORDS:
            raise ValueError(
                f"contains {item!r}, which names a category or pattern and leaves the set open; "
                "list the metrics by name"
            )
        if not NAME_RE.match(item):
            raise ValueError(
                f"contains {item!r}, which is not a metric name (a description leaves the set "
                "open; list the registry names)"
            )
        if item not in registry:
            raise ValueError(f"contains {registry.unknown_message(item)}")
        if item in seen:
            raise ValueError(f"names {item!r} twice")
        if admissible is not None and item not in admissible:
            raise ValueError(
                f"names {item!r}, which is not in the plan's admissible list "
                f"metrics = {json.dumps(admissible)}"
            )
        seen.add(item)
    return list(value)


def parse_plan(text: str, *, source: str = "<plan>", registry: Registry | None = None) -> PilotPlan:
    """Parse and validate a plan; :class:`PlanError` names the file, key and line."""
    reg = registry or default_registry()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise PlanError(f"{source}: not valid TOML: {err}") from err

    # the closed-set checks come first and carry their own wording
    try:
        admissible = _check_metric_list(data.get("metrics"), "metrics", reg, None)
    except ValueError as err:
        raise PlanError(f"{_where(source, text, 'metrics')}: metrics {err}") from None
    rule = data.get("rule")
    if not isinstance(rule, dict):
        raise PlanError(
            f"{source}: [rule] is missing: a plan must state its decision rule as a table "
            f"(kind = one of {', '.join(RULE_KINDS)})"
        )
    if rule.get("kind") not in RULE_KINDS:
        raise PlanError(
            f"{_where(source, text, 'rule.kind')}: rule.kind {rule.get('kind')!r} is not one of "
            f"{', '.join(RULE_KINDS)}"
        )
    try:
        rule_metrics = _check_metric_list(rule.get("metrics"), "rule.metrics", reg, admissible)
    except ValueError as err:
        raise PlanError(
            f"{_where(source, text, 'rule.metrics')}: rule.metrics {err}; refused"
        ) from None

    try:
        plan = PilotPlan.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"] if not isinstance(p, int))
        msg = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            msg = "unknown key (a typo? unknown keys are refused so nothing is silently ignored)"
        if not loc:  # a whole-plan check: its message starts with the key it is about
            key = re.match(r"^([a-z_]+(?:\.[a-z_]+)?) ", msg)
            raise PlanError(f"{_where(source, text, key.group(1) if key else '')}: {msg}") from None
        raise PlanError(f"{_where(source, text, loc)}: {loc}: {msg}") from None

    where = _where(source, text, "rule.metrics")
    for name in rule_metrics:
        m = reg.get(name)
        if m.higher_is_better is None:
            raise PlanError(
                f"{where}: rule.metrics names {name!r}, which has no direction "
                "(higher_is_better is unset), so nothing can 'beat' on it; refused"
            )
        if plan.rule.require_structural and not m.structural:
            raise PlanError(
                f"{where}: rule.metrics names {name!r}, which is not structural, "
                "but rule.require_structural = true; refused"
            )
        if plan.rule.exclude_bookkeeping and m.bookkeeping:
            raise PlanError(
                f"{where}: rule.metrics names {name!r}, which is return-condition bookkeeping, "
                "but rule.exclude_bookkeeping = true; refused"
            )
    return plan


def load_plan(path: Path, *, registry: Registry | None = None) -> tuple[PilotPlan, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise PlanError(f"{path}: cannot read plan: {err.strerror}") from err
    return parse_plan(text, source=str(path), registry=registry), text


# ------------------------------------------------------------------------------ the chain


class LockEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seq: int
    ts: str
    stage: str
    reason: str
    plan_sha256: str
    plan_text: str
    prev: str
    hash: str

    def short(self) -> str:
        return self.hash[:12]


class ChainReport(BaseModel):
    path: str
    ok: bool
    entries: int
    first_bad_seq: int | None = None
    problem: str = ""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_hash(fields: dict[str, Any]) -> str:
    body = {k: v for k, v in fields.items() if k != "hash"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((body["prev"] + canonical).encode("utf-8")).hexdigest()


def stage_rank(stage: str) -> tuple[int, int]:
    if not STAGE_RE.match(stage):
        raise ChainError(f"unknown stage {stage!r}; stages are {STAGES_HELP}")
    if stage.startswith("after-rater-"):
        return (3, int(stage.rsplit("-", 1)[1]))
    order = {"before-runs": 0, "after-shakeout": 1, "after-mechanical-results": 2, "after-key": 4}
    return (order[stage], 0)


def read_chain(path: Path) -> list[LockEntry]:
    """Parse every line; :class:`ChainError` names the line that is not an entry."""
    path = Path(path)
    if not path.exists():
        return []
    entries: list[LockEntry] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                entries.append(LockEntry.model_validate_json(line))
            except ValidationError as err:
                raise ChainError(
                    f"{path}:{lineno}: not a prereg entry: {err.errors()[0]['msg']}"
                ) from None
    return entries


def check_entries(entries: list[LockEntry]) -> tuple[int | None, str]:
    """(first bad seq, problem) or (None, "")."""
    prev = GENESIS
    last_rank = (-1, 0)
    for i, e in enumerate(entries, start=1):
        if e.seq != i:
            return e.seq, f"seq {e.seq} where {i} was expected (a gap or reordering)"
        if e.prev != prev:
            return e.seq, "prev does not match the previous entry's hash"
        if entry_hash(e.model_dump()) != e.hash:
            return e.seq, "hash does not match the entry's content (edited after it was written)"
        if sha256_text(e.plan_text) != e.plan_sha256:
            return e.seq, "plan_sha256 does not match plan_text"
        try:
            rank = stage_rank(e.stage)
        except ChainError as err:
            return e.seq, str(err)
        if rank < last_rank:
            return e.seq, f"stage {e.stage!r} goes back in time"
        last_rank, prev = rank, e.hash
    return None, ""


def verify_chain(path: Path) -> ChainReport:
    path = Path(path)
    try:
        entries = read_chain(path)
    except ChainError as err:
        return ChainReport(path=str(path), ok=False, entries=0, problem=str(err))
    bad, problem = check_entries(entries)
    return ChainReport(
        path=str(path), ok=bad is None, entries=len(entries), first_bad_seq=bad, problem=problem
    )


def load_verified_chain(path: Path) -> list[LockEntry]:
    entries = read_chain(path)
    bad, problem = check_entries(entries)
    if bad is not None:
        raise ChainError(f"{path}: seq {bad}: {problem}")
    return entries


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX
            pass
        yield
    finally:
        os.close(fd)


def lock(
    plan_path: Path,
    stage: str,
    *,
    chain_path: Path | None = None,
    reason: str = "",
    registry: Registry | None = None,
    ts: str | None = None,
) -> LockEntry:
    """Validate the plan and append it to the chain. Returns the new entry."""
    plan_path = Path(plan_path)
    stage_rank(stage)
    _, text = load_plan(plan_path, registry=registry)  # refuses open rules, unknown names
    chain_path = Path(chain_path) if chain_path else plan_path.parent / CHAIN_FILE
    with _locked(chain_path):
        entries = load_verified_chain(chain_path)
        if entries:
            last = entries[-1]
            if stage_rank(stage) < stage_rank(last.stage):
                raise ChainError(
                    f"{chain_path}: stage {stage!r} would go back in time: seq {last.seq} is "
                    f"already at {last.stage!r}; stages only move forward"
                )
            if not reason.strip():
                raise ChainError(
                    f"{chain_path}: an amendment (seq {last.seq + 1}) needs --reason: "
                    "say what changed and what was known when it changed"
                )
            if last.stage == stage and last.plan_sha256 == sha256_text(text):
                raise ChainError(
                    f"{chain_path}: this plan is already locked at {stage!r} (seq {last.seq})"
                )
        prev = entries[-1].hash if entries else GENESIS
        fields: dict[str, Any] = {
            "seq": len(entries) + 1,
            "ts": ts or utc_now_seconds(),
            "stage": stage,
            "reason": reason.strip(),
            "plan_sha256": sha256_text(text),
            "plan_text": text,
            "prev": prev,
            "hash": "",
        }
        fields["hash"] = entry_hash(fields)
        entry = LockEntry.model_validate(fields)
        line = json.dumps(entry.model_dump(), ensure_ascii=False, sort_keys=True) + "\n"
        append_line_durable(chain_path, line.encode("utf-8"))
    return entry


def find_chain(run_dir: Path) -> Path | None:
    """``prereg.jsonl`` in ``run_dir`` or its parent (a ledger dir inside a pilot dir)."""
    run_dir = Path(run_dir)
    if run_dir.is_file() and run_dir.name == CHAIN_FILE:
        return run_dir
    for d in (run_dir, run_dir.parent):
        if (d / CHAIN_FILE).is_file():
            return d / CHAIN_FILE
    return None


def require_lock(
    run_dir: Path, *, chain_path: Path | None = None, plan_text: str | None = None
) -> LockEntry:
    """The governing (latest) lock entry, provided the chain verifies and holds a lock at
    stage ``before-runs``. ``pilot run`` calls this unless ``--unregistered``.

    With ``plan_text`` (the plan file about to be run), also refuses when that text is not
    the governing plan: running an edited, unlocked plan under an old lock would be a
    silent amendment."""
    path = Path(chain_path) if chain_path else find_chain(Path(run_dir))
    if path is None or not path.is_file():
        raise NotRegisteredError(
            f"{run_dir}: no {CHAIN_FILE} here: lock a plan first "
            f"(`curiosity-tui prereg lock PLAN.toml --stage before-runs --chain "
            f"{Path(run_dir) / CHAIN_FILE}`) or pass --unregistered"
        )
    entries = load_verified_chain(path)
    if not any(e.stage == "before-runs" for e in entries):
        raise NotRegisteredError(
            f"{path}: no lock at stage before-runs (stages present: "
            f"{', '.join(e.stage for e in entries) or 'none'}); pass --unregistered to run anyway"
        )
    latest = entries[-1]
    if plan_text is not None and sha256_text(plan_text) != latest.plan_sha256:
        raise NotRegisteredError(
            f"{path}: the plan to run differs from the locked plan (seq {latest.seq}, stage "
            f"{latest.stage}); lock the change as an amendment with --reason, or restore the "
            "locked text (`curiosity-tui prereg show --plan SEQ`)"
        )
    return latest


def lock_metadata(entry: LockEntry | None) -> dict[str, Any]:
    """What a run records about its registration (for RunMeta.options)."""
    if entry is None:
        return {"prereg": None, "unregistered": True}
    return {
        "prereg": {
            "seq": entry.seq,
            "stage": entry.stage,
            "hash": entry.hash,
            "plan_sha256": entry.plan_sha256,
        },
        "unregistered": False,
    }


def format_chronology(entries: list[LockEntry]) -> str:
    if not entries:
        return "no locks"
    lines = ["seq  ts                    stage                      hash          plan"]
    for e in entries:
        lines.append(
            f"{e.seq:<4} {e.ts:<21} {e.stage:<26} {e.short()}  {e.plan_sha256[:12]}"
            + ("  (plan unchanged)" if e.seq > 1 and _same_plan(entries, e) else "")
        )
        if e.reason:
            lines.append(f"     reason: {e.reason}")
    return "\n".join(lines)


def _same_plan(entries: list[LockEntry], e: LockEntry) -> bool:
    return entries[e.seq - 2].plan_sha256 == e.plan_sha256


def plan_diffs(entries: list[LockEntry]) -> str:
    """Unified diffs of the plan text between consecutive locks where it changed."""
    import difflib

    out: list[str] = []
    for prev, cur in zip(entries, entries[1:], strict=False):
        if prev.plan_sha256 == cur.plan_sha256:
            continue
        out.append(f"seq {prev.seq} ({prev.stage}) → seq {cur.seq} ({cur.stage}): {cur.reason}")
        out.extend(
            line.rstrip("\n")
            for line in difflib.unified_diff(
                prev.plan_text.splitlines(keepends=True),
                cur.plan_text.splitlines(keepends=True),
                fromfile=f"seq {prev.seq}",
                tofile=f"seq {cur.seq}",
            )
        )
        out.append("")
    return "\n".join(out) if out else "the plan text never changed"
