"""A run's tension setting (issue 26, items 4 and 5): which measure decides, its weights, Δ per
candidate with the fallback, and which sessions are service sessions.

Stored in ``RunMeta.options["tension"]`` only when it differs from the default, so a run that
does not set it (every run before issue 26) has the ledger, the records and every metric it
had, byte for byte. docs/protocol.md ("Tension settings") defines each measure with a worked
example; decisions 530–534 say why.

* ``as-run`` (default): the pilot's paired proxy, (D + F/5 + U/8)/3, D cancelling (report §2).
* ``pre-amendment``: the shake-out proxy Amendment 1 replaced (report §3): after the answer the
  judge lists framings and dependencies anew (capped at 5 and 8) and names follow-up questions;
  D is measured over the candidates before and over the follow-up questions after.
* ``four-component``: the design's measure (report §2): candidate disagreement D, the entropy H
  of the answer distribution over semantic clusters of the candidates, surviving viable
  framings F and unresolved dependencies U, weighted as the plan states.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, model_validator

from curiosity_tui.errors import InputError

TensionMeasure = Literal["as-run", "pre-amendment", "four-component"]
TENSION_MEASURES: tuple[TensionMeasure, ...] = ("as-run", "pre-amendment", "four-component")
SessionKind = Literal["research", "service"]

#: the key of RunMeta.options that holds the setting (absent = the default)
OPTIONS_KEY = "tension"
#: four-component: two candidates are one semantic cluster when their cosine reaches this
DEFAULT_CLUSTER_SIMILARITY = 0.8


class TensionWeights(BaseModel):
    """The four-component weights: non-negative, summing to 1 (so tension stays in [0, 1])."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    D: float = Field(default=0.25, ge=0.0, le=1.0, allow_inf_nan=False)
    H: float = Field(default=0.25, ge=0.0, le=1.0, allow_inf_nan=False)
    F: float = Field(default=0.25, ge=0.0, le=1.0, allow_inf_nan=False)
    U: float = Field(default=0.25, ge=0.0, le=1.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _sum_one(self) -> TensionWeights:
        total = self.D + self.H + self.F + self.U
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"the weights D, H, F, U must sum to 1 (they sum to {total:g})")
        return self


class TensionOptions(BaseModel):
    """A run's tension setting; the default is the pilot as run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    measure: TensionMeasure = "as-run"
    #: four-component only (None there = equal quarters, recorded as such)
    weights: TensionWeights | None = None
    #: four-component only: the cosine at which two candidates are one semantic cluster
    cluster_similarity: float = Field(
        default=DEFAULT_CLUSTER_SIMILARITY, gt=0.0, le=1.0, allow_inf_nan=False
    )
    #: Δ per candidate (the design's form) beside the medoid's, and the fallback (decision 533)
    per_candidate: bool = False
    #: sessions that are service sessions (PRESERVE may not fire in them); the rest are research
    service_sessions: tuple[StrictInt, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> TensionOptions:
        if self.weights is not None and self.measure != "four-component":
            raise ValueError("weights apply only to tension = 'four-component'")
        if any(t < 1 for t in self.service_sessions):
            raise ValueError("service_sessions are session numbers, 1 or more")
        if len(set(self.service_sessions)) != len(self.service_sessions):
            raise ValueError("service_sessions lists a session twice")
        return self

    def resolved_weights(self) -> TensionWeights:
        return self.weights or TensionWeights()

    def kind(self, session: int) -> SessionKind:
        return "service" if session in self.service_sessions else "research"

    def is_default(self) -> bool:
        return self == TensionOptions()

    def to_options(self) -> dict[str, Any]:
        """What goes into ``RunMeta.options["tension"]`` (sorted service sessions; the weights
        written out for four-component, so the record states them)."""
        out: dict[str, Any] = {"measure": self.measure}
        if self.measure == "four-component":
            out["weights"] = self.resolved_weights().model_dump()
            out["cluster_similarity"] = self.cluster_similarity
        if self.per_candidate:
            out["per_candidate"] = True
        if self.service_sessions:
            out["service_sessions"] = sorted(self.service_sessions)
        return out


def tension_options(options: Any) -> TensionOptions:
    """The setting recorded in a run's options (the default when none is recorded)."""
    raw = options.get(OPTIONS_KEY) if isinstance(options, dict) else None
    if raw is None:
        return TensionOptions()
    try:
        return TensionOptions.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"the run's options.tension{'.' + where if where else ''}: {first['msg']}"
        ) from None


def with_tension(options: dict[str, Any], setting: TensionOptions) -> dict[str, Any]:
    """``options`` with the setting recorded (unchanged when it is the default)."""
    if setting.is_default():
        return options
    return {**options, OPTIONS_KEY: setting.to_options()}


def parse_sessions(text: str, *, flag: str) -> tuple[int, ...]:
    """``"2,4-5"`` → (2, 4, 5); InputError naming ``flag`` otherwise."""
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise InputError(f"{flag} {text!r}: {part!r} is not a session number") from None
        if a < 1 or b < a:
            raise InputError(f"{flag} {text!r}: {part!r} is not a range of sessions 1 or more")
        out.extend(range(a, b + 1))
    if len(set(out)) != len(out):
        raise InputError(f"{flag} {text!r}: a session is listed twice")
    return tuple(out)


def parse_weights(text: str, *, flag: str) -> TensionWeights:
    """``"D=0.4,H=0.2,F=0.2,U=0.2"`` → weights; InputError naming ``flag`` otherwise."""
    values: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, raw = part.partition("=")
        try:
            values[key.strip()] = float(raw)
        except ValueError:
            raise InputError(f"{flag} {text!r}: use D=..,H=..,F=..,U=..") from None
        if not sep:
            raise InputError(f"{flag} {text!r}: use D=..,H=..,F=..,U=..")
    try:
        return TensionWeights.model_validate(values)
    except ValidationError as err:
        first = err.errors()[0]
        raise InputError(
            f"{flag} {text!r}: {str(first['msg']).removeprefix('Value error, ')}"
        ) from None
