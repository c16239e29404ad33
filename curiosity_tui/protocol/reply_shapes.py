"""The wire shapes of the replies whose rules a strict schema must say exactly (issue 27).

The strict subset of JSON schema (hosted APIs in strict mode, most servers) has ``required``,
``enum``, ``const``, nullable types and ``additionalProperties: false``, and no item counts,
lengths or tuples. So a rule on a list is said by the reply's *shape* instead:

* a bounded list is an object of fixed, nullable slots (``framings``: ``F1`` … ``F5``;
  ``dependencies``: ``D1`` … ``D8``; the open layer's ``living_questions``: ``Q1`` … ``Q3``,
  the first ones not nullable where the open layer is compulsory);
* the judge-after's verdicts are an object keyed by the ids the judge-before listed, every id
  required and no other (``{"F1": "viable", "F2": "excluded_or_settled"}``).

The stored records keep their shapes (``schemas.py``): a reply is translated once, at the
boundary (:func:`to_record`), so old ledgers and every metric are unchanged.
:func:`to_wire` goes the other way on plain JSON data (the scripted server's canned replies,
a person's deliverable checked against the model's rules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from curiosity_tui.protocol.schemas import (
    MAX_DEPENDENCIES,
    MAX_FOLLOW_UPS,
    MAX_FRAMINGS,
    MAX_LIVING_QUESTIONS,
    DeliverableResponse,
    JudgeAfterResponse,
    JudgeBeforeResponse,
    JudgedItem,
    JudgeRelistResponse,
    NewQuestion,
    OpenLayer,
    ReturnConditionProposal,
    Verdict,
)

FRAMING_SLOTS: tuple[str, ...] = tuple(f"F{i}" for i in range(1, MAX_FRAMINGS + 1))
DEPENDENCY_SLOTS: tuple[str, ...] = tuple(f"D{i}" for i in range(1, MAX_DEPENDENCIES + 1))
LIVING_SLOTS: tuple[str, ...] = tuple(f"Q{i}" for i in range(1, MAX_LIVING_QUESTIONS + 1))
FOLLOW_UP_SLOTS: tuple[str, ...] = tuple(f"Q{i}" for i in range(1, MAX_FOLLOW_UPS + 1))

_STRICT = ConfigDict(extra="forbid")


def slots_model(name: str, keys: tuple[str, ...], item: Any, doc: str) -> type[BaseModel]:
    """An object of fixed slots ``keys``, each ``item`` or null (no description per slot:
    the schema text stays short in prompt mode)."""
    fields: dict[str, Any] = {key: (item | None, ...) for key in keys}
    model: type[BaseModel] = create_model(name, __config__=_STRICT, __doc__=doc, **fields)
    return model


def filled(slots: BaseModel | None) -> list[Any]:
    """The values of the slots that are not null, in slot order."""
    if slots is None:
        return []
    return [v for v in (getattr(slots, k) for k in type(slots).model_fields) if v is not None]


FramingSlots = slots_model(
    "FramingSlots", FRAMING_SLOTS, str, "Up to 5 framings, one per slot; null = unused."
)
DependencySlots = slots_model(
    "DependencySlots", DEPENDENCY_SLOTS, str, "Up to 8 dependencies, one per slot; null = unused."
)
LivingSlots = slots_model(
    "LivingSlots", LIVING_SLOTS, NewQuestion, "Up to 3 living questions; null = unused."
)


class JudgeBeforeReply(BaseModel):
    """judge-before: list what is open about the focus before any answer."""

    model_config = _STRICT
    framings: FramingSlots = Field(description="Viable framings of the question.")  # type: ignore[valid-type]
    dependencies: DependencySlots = Field(  # type: ignore[valid-type]
        description="Unresolved dependencies the answer turns on."
    )


FollowUpSlots = slots_model(
    "FollowUpSlots", FOLLOW_UP_SLOTS, str, "Up to 3 follow-up questions; null = unused."
)


class JudgeRelistReply(BaseModel):
    """judge-after, pre-amendment (issue 26): framings and dependencies listed anew after the
    answer, and the follow-up questions it raises, as slots."""

    model_config = _STRICT
    framings: FramingSlots = Field(description="Framings still viable after the answer.")  # type: ignore[valid-type]
    dependencies: DependencySlots = Field(  # type: ignore[valid-type]
        description="Dependencies still unresolved after the answer."
    )
    follow_ups: FollowUpSlots = Field(  # type: ignore[valid-type]
        description="Follow-up questions the answer raises."
    )


class JudgeAfterReply(BaseModel):
    """judge-after: a verdict for each listed id (the schema sent names every id)."""

    model_config = _STRICT
    framings: dict[str, Verdict] = Field(description="Listed framing id -> verdict.")
    dependencies: dict[str, Verdict] = Field(description="Listed dependency id -> verdict.")


class OpenLayerReply(BaseModel):
    """What the session leaves open about the focus (report §2 'Open layer')."""

    model_config = _STRICT
    node_status: str = Field(description="Where the focus question stands, one or two sentences.")
    living_questions: LivingSlots = Field(  # type: ignore[valid-type]
        description="Questions that keep the focus alive (children of the focus)."
    )
    return_condition: ReturnConditionProposal | None = Field(
        description="Proposed return condition for the focus, or null to propose no new requirements."
    )


_DELIVERABLE_FIELDS: dict[str, Any] = {
    name: (info.annotation, info)
    for name, info in DeliverableResponse.model_fields.items()
    if name != "open_layer"
}
DeliverableReply: type[BaseModel] = create_model(
    "DeliverableReply",
    __config__=_STRICT,
    __doc__="deliverable: the session's one final structured call in configuration C.",
    open_layer=(OpenLayerReply, ...),
    **_DELIVERABLE_FIELDS,
)

REPLY_MODELS: dict[str, type[BaseModel]] = {
    "JudgeBeforeReply": JudgeBeforeReply,
    "JudgeAfterReply": JudgeAfterReply,
    "JudgeRelistReply": JudgeRelistReply,
    "DeliverableReply": DeliverableReply,
}
"""The reply models whose wire shape differs from the stored record, by name."""


# --------------------------------------------------------------------------- wire -> record


def to_record(reply: BaseModel) -> BaseModel:
    """The stored record of a reply (the reply itself where the shapes agree)."""
    if isinstance(reply, JudgeBeforeReply):
        return JudgeBeforeResponse(
            framings=filled(reply.framings), dependencies=filled(reply.dependencies)
        )
    if isinstance(reply, JudgeRelistReply):
        return JudgeRelistResponse(
            framings=filled(reply.framings),
            dependencies=filled(reply.dependencies),
            follow_ups=filled(reply.follow_ups),
        )
    if isinstance(reply, JudgeAfterReply):
        return JudgeAfterResponse(
            framings=[JudgedItem(id=k, verdict=v) for k, v in reply.framings.items()],
            dependencies=[JudgedItem(id=k, verdict=v) for k, v in reply.dependencies.items()],
        )
    if isinstance(reply, DeliverableReply):
        data = {k: getattr(reply, k) for k in _DELIVERABLE_FIELDS}
        ol: OpenLayerReply = reply.open_layer  # type: ignore[attr-defined]
        layer = OpenLayer(
            node_status=ol.node_status,
            living_questions=filled(ol.living_questions),
            return_condition=ol.return_condition,
        )
        return DeliverableResponse(open_layer=layer, **data)
    return reply


# --------------------------------------------------------------------------- record -> wire


def _slotted(value: Any, keys: tuple[str, ...]) -> Any:
    """A list as slots (extra items keep numbered keys past the last slot, which the reply
    model then rejects as it rejected the long list); anything else as given."""
    if not isinstance(value, list):
        return value
    prefix = keys[0][:-1]
    out: dict[str, Any] = {k: None for k in keys}
    out.update({f"{prefix}{i}": v for i, v in enumerate(value, start=1)})
    return out


def _keyed(value: Any) -> Any:
    """A list of ``{id, verdict}`` as ``{id: verdict}`` when the ids are distinct strings;
    anything else as given (a duplicate stays a list, which the reply model rejects)."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return value
    ids = [v.get("id") for v in value]
    if not all(isinstance(i, str) for i in ids) or len(set(ids)) != len(ids):
        return value
    return {v["id"]: v.get("verdict") for v in value}


WIRE_MODEL_OF_KIND: dict[str, str] = {
    "judge-before": "JudgeBeforeReply",
    "judge-after": "JudgeAfterReply",
    "deliverable": "DeliverableReply",
    "rate": "RatingReply",
}
"""The call kinds whose reply has a wire shape of its own, and its model's name (the title of
the schema sent, in every response format)."""

OTHER_WIRE_MODELS: dict[str, tuple[str, ...]] = {"judge-after": ("JudgeRelistReply",)}
"""Further wire models of a kind (the pre-amendment judge-after, issue 26)."""


def to_wire(kind: str, data: Any) -> Any:
    """A reply in the stored shape (plain JSON) in the wire shape of call ``kind``; data that
    is already in the wire shape, or not an object, is returned as given."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    if kind == "judge-before":
        _reshape(out, "framings", lambda v: _slotted(v, FRAMING_SLOTS))
        _reshape(out, "dependencies", lambda v: _slotted(v, DEPENDENCY_SLOTS))
    elif kind == "judge-after" and "follow_ups" in out:  # pre-amendment: listed anew
        _reshape(out, "framings", lambda v: _slotted(v, FRAMING_SLOTS))
        _reshape(out, "dependencies", lambda v: _slotted(v, DEPENDENCY_SLOTS))
        _reshape(out, "follow_ups", lambda v: _slotted(v, FOLLOW_UP_SLOTS))
    elif kind == "judge-after":
        _reshape(out, "framings", _keyed)
        _reshape(out, "dependencies", _keyed)
    elif kind == "rate":  # the model rater: per question, quotes as slots quote_1, …
        for key, answer in out.items():
            if isinstance(answer, dict) and isinstance(answer.get("quotes"), list):
                quotes = answer["quotes"]
                out[key] = {**answer, "quotes": {f"quote_{i}": v for i, v in enumerate(quotes, 1)}}
    elif kind == "deliverable" and isinstance(out.get("open_layer"), dict):
        layer = out["open_layer"] = dict(out["open_layer"])
        _reshape(layer, "living_questions", lambda v: _slotted(v, LIVING_SLOTS))
    return out


def _reshape(data: dict[str, Any], key: str, how: Callable[[Any], Any]) -> None:
    if key in data:
        data[key] = how(data[key])
