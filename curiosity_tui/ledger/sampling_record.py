"""Sampling settings as the ledger stores them (issue 23.1): a run's table and each call's values.

A run's :class:`SamplingTable` is fixed at creation (``RunMeta.options["sampling"]``, from a
plan's ``[sampling]`` table and the ``--sampling`` flags) and each chat call records the values
it was sent with (:class:`CallSampling`, ``CallRecord.sampling``). The wire side (per-call seeds,
what goes into the request, a refused parameter) is :mod:`curiosity_tui.modelio.sampling`.

"server-default" is a value, never an absence: the parameter is then not sent, and the endpoint
record keeps what the server says its default is (llama.cpp ``/props``), else "unknown".
A ledger created before sampling was recorded has no table; it is read as every parameter
"server-default" (:meth:`SamplingTable.legacy`), which is what its calls were sent with.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

SERVER_DEFAULT: Final = "server-default"
ServerDefault = Literal["server-default"]
Temperature = Annotated[float, Field(ge=0.0, le=2.0, allow_inf_nan=False)]
TopP = Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=0, le=2**31 - 1)]
Stop = Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(max_length=4)]

GROUPS = ("candidate", "judge", "checker", "deliverable", "curator", "rater")
"""The call groups a table can set apart (the same names as ``--cap``, plus model raters)."""

_KIND_GROUP = {
    "candidate": "candidate",
    "judge-before": "judge",
    "judge-after": "judge",
    "checker": "checker",
    "support-judge": "checker",  # a measurement, like the checker (decision 520)
    "deliverable": "deliverable",
    "answer": "deliverable",
    "self-ask": "deliverable",
    "curator": "curator",
    "rate": "rater",
}


def group_of(kind: str) -> str | None:
    """The table group of call kind ``kind`` (``judge-after`` -> ``judge``); None if none."""
    return _KIND_GROUP.get(kind)


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SamplingValues(_Rec):
    """One group's values; a value left out falls back to the table's, then the protocol's."""

    temperature: Temperature | ServerDefault | None = None
    top_p: TopP | ServerDefault | None = None
    stop: Stop | ServerDefault | None = None


PROTOCOL_DEFAULTS: dict[str, SamplingValues] = {
    # three candidates are sampled so that their disagreement D measures the model's spread
    # on the question: at temperature 0 they would (nearly) coincide and D would be ~0
    "candidate": SamplingValues(temperature=0.8, top_p=0.95, stop=[]),
    # the judges and checkers are measurements: the same input should give the same verdict
    "judge": SamplingValues(temperature=0.0, top_p=1.0, stop=[]),
    "checker": SamplingValues(temperature=0.0, top_p=1.0, stop=[]),
    # the curator's actions change the ledger: deterministic as far as the server allows
    "curator": SamplingValues(temperature=0.0, top_p=1.0, stop=[]),
    # the session's own text (and A's answer, B's self-ask): a usual writing temperature; greedy
    # decoding of long texts loops on small models
    "deliverable": SamplingValues(temperature=0.7, top_p=0.95, stop=[]),
    # a model rater rates as a measurement, like the judges
    "rater": SamplingValues(temperature=0.0, top_p=1.0, stop=[]),
}
"""The protocol's defaults per group (docs/model-io.md, decision 380)."""

PROTOCOL_SEED = 0
"""The run seed when a plan or flag names none: per-call seeds still differ by run name."""


class SamplingTable(_Rec):
    """A run's sampling: ``seed`` and defaults for every group, then each group's own values.

    In a plan::

        [sampling]
        seed = 7
        [sampling.candidate]
        temperature = 0.8
    """

    seed: Seed | ServerDefault = PROTOCOL_SEED
    temperature: Temperature | ServerDefault | None = None
    top_p: TopP | ServerDefault | None = None
    stop: Stop | ServerDefault | None = None
    candidate: SamplingValues | None = None
    judge: SamplingValues | None = None
    checker: SamplingValues | None = None
    deliverable: SamplingValues | None = None
    curator: SamplingValues | None = None
    rater: SamplingValues | None = None

    @classmethod
    def legacy(cls) -> SamplingTable:
        """A ledger from before sampling was recorded: nothing was sent, so nothing is."""
        every = SamplingValues(
            temperature=SERVER_DEFAULT, top_p=SERVER_DEFAULT, stop=SERVER_DEFAULT
        )
        return cls.model_validate({"seed": SERVER_DEFAULT, **{g: every for g in GROUPS}})

    def values_for(self, kind: str) -> SamplingValues:
        """The values a call of ``kind`` uses: its group's, else the table's, else the
        protocol's (a kind outside every group: the table's, else server-default)."""
        return self._group_values(group_of(kind))

    def _group_values(self, group: str | None) -> SamplingValues:
        own: SamplingValues | None = getattr(self, group) if group else None
        base = PROTOCOL_DEFAULTS.get(group or "")
        out: dict[str, Any] = {}
        for name in ("temperature", "top_p", "stop"):
            value = getattr(own, name) if own is not None else None
            if value is None:
                value = getattr(self, name)
            if value is None:
                value = getattr(base, name) if base is not None else SERVER_DEFAULT
            out[name] = value
        return SamplingValues(**out)

    def resolved(self) -> SamplingTable:
        """Every group spelt out (what a run's metadata stores: a later change of the protocol's
        defaults does not change a recorded run)."""
        groups = {g: self._group_values(g) for g in GROUPS}
        return SamplingTable.model_validate({"seed": self.seed, **groups})

    def with_override(self, dotted: str, value: Any) -> SamplingTable:
        """This table with ``dotted`` set: ``candidate.top_p`` sets one group's value; a
        top-level ``temperature`` / ``top_p`` / ``stop`` sets every group's (a flag over a plan
        wins over what its groups say); ``seed`` the run seed."""
        data = self.model_dump(exclude_none=True)
        group, _, name = dotted.rpartition(".")
        if group:
            data.setdefault(group, {})[name] = value
        else:
            data[name] = value
            for g in GROUPS:
                if isinstance(data.get(g), dict):
                    data[g].pop(name, None)
        return SamplingTable.model_validate(data)


class CallSampling(_Rec):
    """What one chat call was sent with. A number or list: sent as it is; "server-default": not
    sent (the endpoint record has the server's default where it says); ``refused``: parameters
    the server rejected (HTTP 400 naming them), so not sent either."""

    temperature: float | ServerDefault
    top_p: float | ServerDefault
    seed: int | ServerDefault
    stop: list[str] | ServerDefault
    refused: list[str] = Field(default_factory=list)
    frequency_penalty: float | None = Field(
        default=None,
        description="Sent only on the retry after a reply cut at its cap (decision 600); "
        "left out of the record when not sent.",
    )

    @model_serializer(mode="wrap")
    def _omit_unsent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("frequency_penalty", 0) is None:
            del out["frequency_penalty"]  # records of calls without it dump as before
        return out

    def summary(self) -> str:
        """``temperature 0.8 · top_p 0.95 · seed 123 · stop -`` for a header line."""
        stop = self.stop if isinstance(self.stop, str) else (", ".join(self.stop) or "-")
        parts = [
            f"temperature {self.temperature}",
            f"top_p {self.top_p}",
            f"seed {self.seed}",
            f"stop {stop}",
        ]
        if self.frequency_penalty is not None:
            parts.append(f"frequency_penalty {self.frequency_penalty} (retry after a cut)")
        if self.refused:
            parts.append(f"refused by the server: {', '.join(self.refused)}")
        return " · ".join(parts)
