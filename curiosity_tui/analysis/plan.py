"""The pilot plan (S7): its model, TOML loading and validation, and its closed metric set.

A documented example plan (parsed by the tests) and the rules of the decision-rule language
are in :mod:`curiosity_tui.analysis.prereg`; in short, ``rule.metrics`` must be a non-empty
list of registry names drawn from the plan's own ``metrics``, and anything that would open
the set (a description, a wildcard, a category word, an unknown name) is refused on load.
The lock chain the plan is appended to lives in :mod:`curiosity_tui.analysis.lockchain`.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from curiosity_tui.analysis.attraction import AttractionParams
from curiosity_tui.analysis.registry import NAME_RE, Registry, default_registry
from curiosity_tui.analysis.rundata import CELL_SEP
from curiosity_tui.errors import InputError
from curiosity_tui.ledger.models import ContractName
from curiosity_tui.ledger.sampling_record import SamplingTable
from curiosity_tui.protocol.tension_options import TensionMeasure, TensionOptions, TensionWeights
from curiosity_tui.runs.relay import RelayPlan

RULE_KINDS = (
    "any_metric_beats_in_all",
    "all_metrics_beat_in_all",
    "any_metric_interval_beats_in_all",
    "all_metrics_interval_beat_in_all",
)
#: words that name a category of metrics instead of metrics: they would open the set
OPENING_WORDS = frozenset(
    {"all", "any", "every", "structural", "bookkeeping", "others", "other", "etc", "rest"}
)


class PlanError(InputError):
    """A plan that cannot be locked or used, with the file, key and line."""


#: Bounds on plan values (decision 171): generous for a pilot, small enough that a typo
#: (``sessions = 1e9``) is refused at lock time instead of starting a run that never ends.
MAX_RUNS = 1000
MAX_SESSIONS = 1000
MAX_TOKENS = 1_000_000
#: a plan name is used in file names and paths: letters, digits, ``. _ + -``, no ``..``
PLAN_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")
#: a human curator's name as the journal's actor ``human:<name>`` carries it
CURATOR_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_completion_tokens: StrictInt = Field(4000, gt=0, le=MAX_TOKENS)
    candidate_completion_tokens: StrictInt | None = Field(None, gt=0, le=MAX_TOKENS)
    curator_completion_tokens: StrictInt | None = Field(None, gt=0, le=MAX_TOKENS)


class DecisionRule(BaseModel):
    """A mechanical rule over a closed, named metric set.

    ``any_metric_beats_in_all``: met iff at least one listed metric has every pair's
    treatment beating its control (by more than ``margin``, in the metric's direction).
    The same metric must carry every pair ("retains that advantage").
    ``all_metrics_beat_in_all``: every listed metric must do so.
    ``any_metric_interval_beats_in_all`` / ``all_metrics_interval_beat_in_all``: the same, but
    a pair beats only when the plan's (1 - alpha) bootstrap interval of its advantage lies
    above the margin (:mod:`curiosity_tui.analysis.interval_rule`, decision 423).
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal[
        "any_metric_beats_in_all",
        "all_metrics_beat_in_all",
        "any_metric_interval_beats_in_all",
        "all_metrics_interval_beat_in_all",
    ]
    pairs: list[tuple[str, str]] = Field(min_length=1)
    treatment: list[str] | None = None
    control: list[str] | None = None
    metrics: list[str] = Field(min_length=1)
    margin: float = Field(0.0, ge=0.0, allow_inf_nan=False)
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


class Arm(BaseModel):
    """A named arm (decision 241): one of the six configurations with run options of its own.
    ``configurations`` and ``rule.pairs`` may name arms wherever they name configurations; the
    arm's name is its group in metrics and the verdict."""

    model_config = ConfigDict(extra="forbid")

    config: str = Field(min_length=1)
    contract: ContractName | None = None  # default: the plan's contract
    open_layer: Literal["compulsory", "optional"] | None = None  # default: compulsory
    no_reselect: bool | None = None  # default: false
    seed_question: str | None = Field(None, min_length=1)  # default: the plan's
    tension: TensionMeasure | None = None  # default: the plan's (issue 26)
    #: who curates between sessions (decision 560): "model" (default for a +cur
    #: configuration) or "human" (``pilot run`` hosts the run in the app's run monitor)
    curator: Literal["model", "human"] | None = None
    #: the people who may curate a human-curated arm (``--curator-name``); none: anyone
    curators: list[str] | None = Field(None, min_length=1)

    @field_validator("curators")
    @classmethod
    def _names(cls, v: list[str] | None) -> list[str] | None:
        for name in v or []:
            if not CURATOR_NAME_RE.fullmatch(name):
                raise ValueError(
                    f"{name!r} is not a curator name (one word: letters, digits, . _ -)"
                )
        if v is not None and len(set(v)) != len(v):
            raise ValueError("names a curator twice")
        return v

    def human_curated(self) -> bool:
        return self.curator == "human"


class PackPlan(BaseModel):
    """The blind pack the plan will build (decision 441): which two sessions each item shows
    (``pack build --sessions``) and the rating scheme. ``prereg lock`` checks both against
    the plan before any run."""

    model_config = ConfigDict(extra="forbid")

    sessions: str = "1,last"
    scheme: str = Field("pilot-02", min_length=1)

    @field_validator("sessions")
    @classmethod
    def _pick(cls, v: str) -> str:
        from curiosity_tui.packs.session_pick import parse_session_pick

        try:
            return parse_session_pick(v, where="pack.sessions").spec()
        except InputError as err:
            raise ValueError(str(err).removeprefix("pack.sessions: ")) from None


class Comparison(BaseModel):
    """A further locked comparison of the plan (decision 241): its own closed metric set and
    decision rule, over the plan's arms; reported beside the headline verdict, never merged
    into it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    metrics: list[str] = Field(min_length=1)
    rule: DecisionRule


class PilotPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    configurations: list[str] = Field(min_length=1)
    runs: StrictInt = Field(gt=0, le=MAX_RUNS)
    sessions: StrictInt = Field(gt=0, le=MAX_SESSIONS)
    seed_question: str = Field(min_length=1)
    model: str = Field(min_length=1)
    budgets: Budgets
    epsilon: float = Field(gt=0.0, lt=1.0, allow_inf_nan=False)
    metrics: list[str] = Field(min_length=1)
    aggregation: Literal["mean", "median"] = "mean"
    rule: DecisionRule
    #: the error rate of the interval rules and of the family (decisions 423, 424): every
    #: interval the verdict prints is two-sided at 1 - alpha
    alpha: float = Field(0.05, gt=0.0, lt=0.5, allow_inf_nan=False)
    #: how the bootstrap-by-run interval is read off the draws
    interval_method: Literal["percentile", "basic"] = "percentile"
    #: how several [[comparisons]] are read as a family; None = not declared (plans locked
    #: before issue 24 read as "none"; `prereg lock` refuses a new plan with two or more
    #: comparisons that does not declare it)
    family: Literal["none", "holm", "bonferroni", "bh"] | None = None
    #: ratings saved in less time on their item than this are flagged in the report's rating
    #: section (decision 427); None = no minimum
    min_seconds_per_item: float | None = Field(None, gt=0.0, allow_inf_nan=False)
    #: one contract for every run (default pilot-02) …
    contract: ContractName | None = None
    #: … or a comparison axis (decision 232): every configuration runs under each, and the
    #: cells are ``config@contract`` (rule.pairs name cells then)
    contracts: list[ContractName] | None = Field(None, min_length=1)
    embedder: str | None = None
    #: attraction's parameters (analysis/attraction.py), locked with the plan; None = defaults
    attraction: AttractionParams | None = None
    #: k of ``return_within_k_share`` (analysis/return_latency.py, DEFAULT_RETURN_K; decision 461)
    return_within: StrictInt = Field(2, gt=0, le=MAX_SESSIONS)
    #: named arms (configuration + run options), usable in configurations and pairs
    arms: dict[str, Arm] | None = None
    #: further comparisons, each with its own metric set and rule (after the headline rule)
    comparisons: list[Comparison] = Field(default_factory=list)
    notes: str = ""
    #: which mind takes each session of every run (runs/relay.py); models only in a pilot
    relay: RelayPlan | None = None
    #: temperature, top_p, seed and stop per call group (issue 23.1); None = the protocol's
    #: defaults (ledger/sampling_record.py, docs/model-io.md)
    sampling: SamplingTable | None = None
    #: the model file the server runs (a path on the machine that runs the pilot): its sha256
    #: goes into every run's endpoint record (issue 23.2); ``--model-file`` wins
    model_file: str | None = Field(None, min_length=1)
    #: the blind pack the plan will build; checked at lock time (decision 441)
    pack: PackPlan | None = None
    #: the tension measure every run uses unless its arm names one (issue 26, decision 530)
    tension: TensionMeasure = "as-run"
    #: four-component's weights; required when a run uses it (the plan states them)
    tension_weights: TensionWeights | None = None
    #: four-component: the cosine at which two candidates are one semantic cluster
    tension_cluster_similarity: float = Field(0.8, gt=0.0, le=1.0, allow_inf_nan=False)
    #: Δ per candidate beside the medoid's, and the fallback when none meets ε (decision 533)
    tension_per_candidate: bool = False
    #: the sessions that are service sessions: PRESERVE may not fire in them (decision 534)
    service_sessions: list[StrictInt] = Field(default_factory=list)
    #: the model judge of support a run under evidence=supported admits besides humans
    #: (``model:<model name>``, decision 520); None = humans only
    support_judge: str | None = Field(None, pattern=r"^model:\S+$")

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not PLAN_NAME_RE.fullmatch(v) or ".." in v:
            raise ValueError(
                f"{v!r} is not safe as a file name: use letters, digits and . _ + - "
                "(no '/', no '..', at most 100 characters)"
            )
        return v

    def contract_list(self) -> list[str]:
        """The contracts the plan runs (canonical names), in the plan's order."""
        if self.contracts is not None:
            return list(self.contracts)
        return [self.contract or "pilot-02"]

    def compares_contracts(self) -> bool:
        return len(self.contract_list()) > 1

    def cells(self) -> list[str]:
        """The groups the rule can name: configurations, or ``config@contract`` cells."""
        if not self.compares_contracts():
            return list(self.configurations)
        return [f"{c}{CELL_SEP}{k}" for c in self.configurations for k in self.contract_list()]

    def arm(self, name: str) -> Arm:
        """The arm ``name`` of ``configurations``: a declared arm, or a plain configuration."""
        declared = (self.arms or {}).get(name)
        return declared if declared is not None else Arm.model_validate({"config": name})

    def tension_for(self, entry: str | None = None) -> TensionOptions:
        """The tension setting of the runs of ``entry`` (an arm or configuration; None: the
        plan's own)."""
        arm = None if entry is None else (self.arms or {}).get(entry)
        measure = (arm.tension if arm is not None else None) or self.tension
        four = measure == "four-component"
        return TensionOptions(
            measure=measure,
            weights=self.tension_weights if four else None,
            cluster_similarity=self.tension_cluster_similarity,
            per_candidate=self.tension_per_candidate,
            service_sessions=tuple(self.service_sessions),
        )

    def rules(self) -> list[tuple[str, list[str], DecisionRule]]:
        """Every locked rule: the headline (name ""), then each comparison, in plan order."""
        return [("", self.metrics, self.rule)] + [
            (c.name, c.metrics, c.rule) for c in self.comparisons
        ]

    @model_validator(mode="after")
    def _arms_known(self) -> PilotPlan:
        from curiosity_tui.protocol.configs import CONFIG_NAMES

        for name, arm in (self.arms or {}).items():
            if not PLAN_NAME_RE.fullmatch(name) or CELL_SEP in name:
                raise ValueError(f"arms.{name} is not a safe arm name (letters, digits, . _ + -)")
            if name in CONFIG_NAMES:
                raise ValueError(f"arms.{name} shadows the configuration {name}: rename the arm")
            if arm.config not in CONFIG_NAMES:
                raise ValueError(
                    f"arms.{name}.config {arm.config!r} is not one of {', '.join(CONFIG_NAMES)}"
                )
            _curator_fits(name, arm, self.relay is not None)
        if self.arms and self.contracts is not None:
            raise ValueError("arms and contracts are both given: give each arm its contract")
        for c in self.comparisons:
            if not PLAN_NAME_RE.fullmatch(c.name):
                raise ValueError(f"comparisons names {c.name!r}, not a safe name")
            for a, b in c.rule.pairs:
                for x in (a, b):
                    if x not in self.cells():
                        raise ValueError(
                            f"comparisons.{c.name}: rule.pairs names {x!r}, not in the plan"
                        )
        if len({c.name for c in self.comparisons}) != len(self.comparisons):
            raise ValueError("comparisons names a comparison twice")
        return self

    @model_validator(mode="after")
    def _support_judge_has_a_use(self) -> PilotPlan:
        from curiosity_tui.contract_switches import switches_of

        names = self.contract_list() + [
            a.contract for a in (self.arms or {}).values() if a.contract
        ]
        if self.support_judge and all(switches_of(n).evidence != "supported" for n in names):
            raise ValueError(
                f"support_judge names {self.support_judge} but no contract of the plan is "
                "evidence=supported, the only rule that reads a support judgement"
            )
        return self

    @model_validator(mode="after")
    def _tension_consistent(self) -> PilotPlan:
        measures = {self.tension} | {a.tension for a in (self.arms or {}).values() if a.tension}
        if "four-component" in measures and self.tension_weights is None:
            raise ValueError(
                "tension 'four-component' needs its weights stated: "
                "tension_weights = { D = …, H = …, F = …, U = … } (summing to 1)"
            )
        if self.tension_weights is not None and "four-component" not in measures:
            raise ValueError("tension_weights is given but no run uses tension 'four-component'")
        service = self.service_sessions
        if len(set(service)) != len(service):
            raise ValueError("service_sessions lists a session twice")
        for t in service:
            if not 1 <= t <= self.sessions:
                raise ValueError(
                    f"service_sessions names session {t}; the plan runs 1-{self.sessions}"
                )
        return self

    @model_validator(mode="after")
    def _pairs_known(self) -> PilotPlan:
        if len(set(self.configurations)) != len(self.configurations):
            raise ValueError("configurations lists a name twice")
        if self.contract is not None and self.contracts is not None:
            raise ValueError("contracts and contract are both given: keep one")
        if self.contracts is not None and len(set(self.contracts)) != len(self.contracts):
            raise ValueError("contracts lists a contract twice (after canonical naming)")
        if self.compares_contracts():
            self.rule.pairs = [(_cell(a), _cell(b)) for a, b in self.rule.pairs]
            if self.rule.treatment is not None:
                self.rule.treatment = [_cell(c) for c in self.rule.treatment]
            if self.rule.control is not None:
                self.rule.control = [_cell(c) for c in self.rule.control]
            for a, b in self.rule.pairs:
                if a == b:
                    raise ValueError(f"rule.pairs compares the cell {a!r} with itself")
        cells = self.cells()
        for pair in self.rule.pairs:
            for c in pair:
                if c not in cells:
                    what = "cell" if self.compares_contracts() else "configuration"
                    hint = (
                        f" (with contracts, name cells config{CELL_SEP}contract: "
                        f"{', '.join(cells[:3])}, …)"
                        if self.compares_contracts()
                        else ""
                    )
                    raise ValueError(f"rule.pairs names {what} {c!r}, not in the plan{hint}")
        if self.relay is not None:
            self._relay_fits(self.relay)
        return self

    def _relay_fits(self, relay: RelayPlan) -> None:
        from curiosity_tui.protocol.configs import get_configuration

        for c in self.configurations:
            if not get_configuration(c).store:
                raise ValueError(
                    f"relay cannot relay configuration {c!r}: it has no store "
                    "(only B-armed and C configurations can be relayed)"
                )
        if relay.humans(min(self.sessions, len(relay.sessions))):
            raise ValueError(
                "relay names a person's session: a pilot runs unattended; "
                "relay such a ledger with run --relay"
            )
        if self.sessions > len(relay.sessions) and not relay.cycle:
            raise ValueError(
                f"relay names {len(relay.sessions)} session(s), the plan runs {self.sessions}: "
                "list more, or set cycle = true"
            )


def _curator_fits(name: str, arm: Arm, relayed: bool) -> None:
    """An arm's ``curator``/``curators`` (decision 560): a human curator needs a curated
    configuration (``+cur``) and no relay; ``curators`` only with ``curator = "human"``."""
    from curiosity_tui.protocol.configs import get_configuration

    if arm.curator is not None and not get_configuration(arm.config).curator:
        raise ValueError(
            f"arms.{name}.curator {arm.curator!r}: configuration {arm.config} has no curator "
            "(use a +cur configuration)"
        )
    if arm.curators is not None and not arm.human_curated():
        raise ValueError(
            f'arms.{name}.curators names people, but the arm\'s curator is not "human"'
        )
    if arm.human_curated() and relayed:
        raise ValueError(
            f"arms.{name}.curator human: a plan with a relay runs unattended; "
            "relay a human-curated ledger with run --relay"
        )


def _cell(name: str) -> str:
    """A pair element ``config@contract`` with its contract in canonical form (as given if it
    does not parse: the membership check then names it)."""
    from curiosity_tui.contract_switches import canonical_name

    config, sep, contract = name.partition(CELL_SEP)
    if not sep:
        return name
    try:
        return f"{config}{CELL_SEP}{canonical_name(contract)}"
    except InputError:
        return name


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

    _check_comparisons(data.get("comparisons"), reg, source, text)
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
        got = first.get("input")
        if isinstance(got, (int, float, str)) and first["type"] != "extra_forbidden":
            msg = f"{msg} (got {got!r})"
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


def _check_comparisons(value: Any, reg: Registry, source: str, text: str) -> None:
    """Each ``[[comparisons]]`` entry closes its own metric set, and its rule names only those
    metrics, each with a direction (the headline rule's checks, per comparison)."""
    if value is None:
        return
    if not isinstance(value, list):
        raise PlanError(f"{source}: comparisons must be an array of tables ([[comparisons]])")
    for i, comp in enumerate(value):
        name = comp.get("name", f"#{i + 1}") if isinstance(comp, dict) else f"#{i + 1}"
        if not isinstance(comp, dict) or not isinstance(comp.get("rule"), dict):
            raise PlanError(f"{source}: comparisons {name}: needs name, metrics and a [rule]")
        key = f"comparisons.{name}"
        try:
            own = _check_metric_list(comp.get("metrics"), f"{key}.metrics", reg, None)
            listed = _check_metric_list(comp["rule"].get("metrics"), "rule.metrics", reg, own)
        except ValueError as err:
            raise PlanError(f"{source}: {key}: metrics {err}; refused") from None
        for m in listed:
            if reg.get(m).higher_is_better is None:
                raise PlanError(
                    f"{source}: {key}: rule.metrics names {m!r}, which has no direction; refused"
                )


def load_plan(path: Path, *, registry: Registry | None = None) -> tuple[PilotPlan, str]:
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise PlanError(f"{path}: cannot read plan: {err.strerror}") from err
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise PlanError(
            f"{path}:{line}: not UTF-8 text (bad byte 0x{raw[err.start]:02x} at offset "
            f"{err.start}); a plan is a UTF-8 TOML file"
        ) from None
    return parse_plan(text, source=str(path), registry=registry), text
