"""What a session records of its tension setting (issue 26 items 4, 5): the per-candidate Δ and
how the decision was reached. Written only for runs whose tension setting is not the default,
so every earlier record serialises as before (docs/protocol.md, "Tension settings")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class CandidateDelta(BaseModel):
    """One candidate's after-side and Δ (the design's form, beside the medoid's)."""

    model_config = ConfigDict(extra="forbid")

    index: int  # 0-based, as ``medoid``
    F_after: int
    U_after: int
    D_after: float | None = None  # pre-amendment and four-component
    H_after: float | None = None  # four-component
    tension_after: float
    delta: float


class DecisionBasis(BaseModel):
    """How a session's decision was reached under a non-default tension setting."""

    model_config = ConfigDict(extra="forbid")

    #: the measure that gave Δ
    measure: Literal["as-run", "pre-amendment", "four-component"]
    #: research sessions may PRESERVE; service sessions answer (report §1, decision 534)
    kind: Literal["research", "service"]
    #: what the Δ rule alone decided (medoid's Δ; with per-candidate Δ: PRESERVE iff no
    #: candidate meets the threshold)
    by_delta: Literal["ANSWER", "PRESERVE"]
    #: with per-candidate Δ: no candidate met the threshold, and the fallback applied
    fallback: bool = False
    #: the candidate delivered (ANSWER) or withheld (PRESERVE), 0-based
    candidate: int
    #: its Δ (the medoid's is ``SessionRecord.delta``)
    delta: float
