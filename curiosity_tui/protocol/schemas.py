"""Response schemas of the structured model calls (report §2; docs/model-io.md).

Every model here is sent to the endpoint as a JSON schema (response_format
json_schema) and every reply is validated against it. The models are
written to be *strict-compatible* (OpenAI structured outputs, vLLM, llama.cpp
grammars): every property is required (optional values are nullable, never
defaulted), every object forbids extra keys, nested objects live in $defs.
docs/model-io.md quotes model_json_schema() of each model verbatim and
tests/test_model_io_doc.py keeps the two identical.

Free-text calls (answer, candidate) have no schema: the reply content
is the text. Cross-field rules that a JSON schema cannot state (the judge-after
must pair exactly the items the judge-before listed; the open layer's lower
bound depends on the run option) are checked by the helpers at the bottom,
which callers pass to ModelClient.structured(validator=...) so that a
violation gets the same single repair retry as a schema violation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CALL_KINDS: tuple[str, ...] = (
    "answer",
    "self-ask",
    "candidate",
    "judge-before",
    "judge-after",
    "checker",
    "deliverable",
    "curator",
    "support-judge",
    "embeddings",
)
"""Every call kind; sent as the X-Curiosity-Call header."""

INTERNAL_KINDS: frozenset[str] = frozenset(
    {"candidate", "judge-before", "judge-after", "checker", "support-judge"}
)
"""Calls that are internal to a session (the rest are final calls, or the curator)."""

MAX_FRAMINGS = 5
MAX_DEPENDENCIES = 8
MAX_LIVING_QUESTIONS = 3
MAX_FOLLOW_UPS = 3  # the pre-amendment judge-after's follow-up questions (issue 26 item 4)

Verdict = Literal["excluded_or_settled", "viable"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- shared parts -----------------------------------------------------------


class NewQuestion(_Strict):
    """A question the session raises; becomes a new node."""

    text: str = Field(description="The question, one sentence.")
    parent: str | None = Field(
        description="Id of an existing node it refines (e.g. 'q3'), or null."
    )


class FactItem(_Strict):
    """A factual assertion to attach to an existing node."""

    node: str = Field(description="Id of an existing node.")
    text: str = Field(description="The assertion, as it should be stored.")
    source_id: str | None = Field(description="Id of a ledger source it rests on, or null.")


class NodeAction(_Strict):
    """A voluntary action on an existing node."""

    node: str = Field(description="Id of an existing node.")
    action: Literal["work", "close", "revive"] = Field(
        description="work: develop it this session; close: declare it answered; revive: reopen a dormant node."
    )
    note: str = Field(description="What was done or why, one or two sentences.")


class ReturnConditionProposal(_Strict):
    """What would have to change for the focus question to become closeable."""

    required_facts: list[str] = Field(description="Facts that would have to be established.")
    required_actions: list[str] = Field(description="Actions that would have to be taken.")
    closure_test: str = Field(description="The test a later session applies before closing.")


class CheckResult(_Strict):
    """One dependency check: is a required fact of the focus now established?"""

    fact_id: str = Field(description="Id of the required fact checked (e.g. 'q1.f2').")
    satisfied: bool = Field(description="Whether the required fact is established.")
    evidence: str = Field(description="The grounds for the verdict, in words.")
    source_id: str | None = Field(
        description="pilot-02: id of the ledger source relied on; null under pilot-01 or when none."
    )
    passage: str | None = Field(
        description="pilot-02: the exact passage of that source relied on, copied verbatim; else null."
    )


class DowngradeProposal(_Strict):
    """A proposal to waive or weaken one requirement; only a human curator decides it."""

    node: str = Field(description="Id of the node whose return condition holds the requirement.")
    fact_id: str = Field(description="Id of the required fact.")
    proposal: Literal["waive", "weaken"]
    new_text: str | None = Field(description="For weaken: the weaker requirement; for waive: null.")
    grounds: str = Field(description="Why the requirement should be lowered.")


class OpenLayer(_Strict):
    """What the session leaves open about the focus (report §2 'Open layer')."""

    node_status: str = Field(description="Where the focus question stands, one or two sentences.")
    living_questions: list[NewQuestion] = Field(
        max_length=MAX_LIVING_QUESTIONS,
        description="Questions that keep the focus alive (children of the focus).",
    )
    return_condition: ReturnConditionProposal | None = Field(
        description="Proposed return condition for the focus, or null to propose no new requirements."
    )


# --- one model per structured call kind -------------------------------------


class SelfAskResponse(_Strict):
    """self-ask in configuration B: bare self-ask, nothing is stored."""

    questions: list[NewQuestion] = Field(description="Questions raised this session.")


class ArmedSelfAskResponse(_Strict):
    """self-ask in B-armed: self-ask writing into the question store."""

    questions: list[NewQuestion] = Field(
        description="New questions (parent = an existing node or null)."
    )
    facts: list[FactItem] = Field(description="Facts to attach to existing nodes.")
    actions: list[NodeAction] = Field(description="Voluntary actions on existing nodes.")


class JudgeBeforeResponse(_Strict):
    """judge-before: list what is open about the focus before any answer."""

    framings: list[str] = Field(
        max_length=MAX_FRAMINGS, description="Viable framings of the question (at most 5)."
    )
    dependencies: list[str] = Field(
        max_length=MAX_DEPENDENCIES,
        description="Unresolved dependencies the answer turns on (at most 8).",
    )


class JudgedItem(_Strict):
    """The verdict on one item the judge-before listed (F1…F5, D1…D8)."""

    id: str = Field(description="The item's id as listed in the prompt, e.g. 'F2' or 'D5'.")
    verdict: Verdict


class JudgeAfterResponse(_Strict):
    """judge-after: for each listed item only, excluded/settled or still viable."""

    framings: list[JudgedItem] = Field(max_length=MAX_FRAMINGS)
    dependencies: list[JudgedItem] = Field(max_length=MAX_DEPENDENCIES)


class JudgeRelistResponse(_Strict):
    """judge-after under tension = "pre-amendment" (the shake-out proxy, report §3): after the
    answer the judge lists framings and dependencies anew, and names follow-up questions."""

    framings: list[str] = Field(
        max_length=MAX_FRAMINGS, description="Framings still viable after the answer (at most 5)."
    )
    dependencies: list[str] = Field(
        max_length=MAX_DEPENDENCIES,
        description="Dependencies still unresolved after the answer (at most 8).",
    )
    follow_ups: list[str] = Field(
        max_length=MAX_FOLLOW_UPS, description="Follow-up questions the answer raises (at most 3)."
    )


class CheckerResponse(CheckResult):
    """checker: one call per required fact of the focus; the fields of one dependency check."""


class SupportJudgeResponse(_Strict):
    """support-judge: does one verified passage establish one requirement (decision 520)?"""

    verdict: Literal["yes", "no", "partly"] = Field(
        description="yes: the passage establishes the requirement; partly: only part of it; "
        "no: it does not bear on it or does not establish it."
    )
    grounds: str = Field(description="Why, in a sentence or two, quoting the passage's words.")


class DeliverableResponse(_Strict):
    """deliverable: the session's one final structured call in configuration C."""

    answer: str | None = Field(
        description="The delivered answer to the focus when the decision is ANSWER; null under PRESERVE."
    )
    actions: list[NodeAction] = Field(description="Voluntary actions on existing nodes.")
    new_questions: list[NewQuestion] = Field(
        description="Questions raised beyond the open layer (counted separately)."
    )
    open_layer: OpenLayer
    facts: list[FactItem] = Field(description="Facts to attach to existing nodes.")
    checks: list[CheckResult] = Field(
        description="pilot-01: dependency checks on the focus's required facts; pilot-02: empty."
    )
    downgrade_proposals: list[DowngradeProposal] = Field(
        description="Proposals to waive or weaken a requirement (a human curator decides)."
    )


class CuratorAction(_Strict):
    """One curator action between sessions."""

    action: Literal["prioritise", "merge", "archive"]
    node: str = Field(description="Id of the node acted on.")
    priority: int | None = Field(description="prioritise: rank, 1 = first; else null.")
    into: str | None = Field(description="merge: id of the node it is merged into; else null.")
    reason: str = Field(description="Why, one sentence.")


class CuratorResponse(_Strict):
    """curator: the model curator's actions between sessions."""

    actions: list[CuratorAction]


SCHEMAS: dict[str, type[BaseModel]] = {
    "SelfAskResponse": SelfAskResponse,
    "ArmedSelfAskResponse": ArmedSelfAskResponse,
    "JudgeBeforeResponse": JudgeBeforeResponse,
    "JudgeAfterResponse": JudgeAfterResponse,
    "JudgeRelistResponse": JudgeRelistResponse,
    "CheckerResponse": CheckerResponse,
    "DeliverableResponse": DeliverableResponse,
    "CuratorResponse": CuratorResponse,
    "SupportJudgeResponse": SupportJudgeResponse,
}
"""Every response model by name (the names docs/model-io.md uses)."""


# --- cross-field validators (pass to ModelClient.structured(validator=...)) --


def framing_ids(before: JudgeBeforeResponse) -> list[str]:
    return [f"F{i}" for i in range(1, len(before.framings) + 1)]


def dependency_ids(before: JudgeBeforeResponse) -> list[str]:
    return [f"D{i}" for i in range(1, len(before.dependencies) + 1)]


def _paired(got: Iterable[JudgedItem], want: list[str], what: str) -> None:
    ids = [item.id.strip() for item in got]
    if sorted(ids) != sorted(want) or len(set(ids)) != len(ids):
        raise ValueError(
            f"{what}: judge exactly the listed ids {want} once each, nothing else (got {ids})"
        )


def judge_after_pairing(before: JudgeBeforeResponse) -> Callable[[BaseModel], None]:
    """A validator: the judge-after must give one verdict per listed item, nothing re-listed."""

    def check(reply: BaseModel) -> None:
        assert isinstance(reply, JudgeAfterResponse)
        _paired(reply.framings, framing_ids(before), "framings")
        _paired(reply.dependencies, dependency_ids(before), "dependencies")

    return check


def open_layer_bounds(minimum: int) -> Callable[[BaseModel], None]:
    """A validator: the deliverable's open layer has minimum..3 living questions."""

    def check(reply: BaseModel) -> None:
        assert isinstance(reply, DeliverableResponse)
        n = len(reply.open_layer.living_questions)
        if not minimum <= n <= MAX_LIVING_QUESTIONS:
            raise ValueError(
                f"open_layer.living_questions: give {minimum} to {MAX_LIVING_QUESTIONS} questions (got {n})"
            )

    return check


def strict_problems(schema: dict[str, Any]) -> list[str]:
    """Ways a JSON schema is not strict-compatible (empty list = fine). Used by tests."""
    problems: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" or "properties" in node:
                props = set(node.get("properties", {}))
                if node.get("additionalProperties") is not False:
                    problems.append(f"{where}: additionalProperties is not false")
                if set(node.get("required", [])) != props:
                    problems.append(f"{where}: not every property is required")
            if "default" in node:
                problems.append(f"{where}: has a default")
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")

    walk(schema, "#")
    return problems
