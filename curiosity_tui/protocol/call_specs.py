"""The spec of each structured call, built from what the session knows (decision 150).

Each function returns a :class:`~curiosity_tui.modelio.call_schemas.CallSpec`: the call's
response model and its rules. The caller sends ``spec.json_schema(dialect)`` and validates the
reply with ``spec.check``. The enforced rules are the ones the protocol has always checked
(item counts, the open layer's bounds, the judge-after's pairing); the others carry the ids
the apply step accepts and size bounds that keep a reply inside its token cap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from curiosity_tui.contract.downgrades import MIN_GROUNDS_CHARS
from curiosity_tui.ledger.node_record import NOT_LIVE
from curiosity_tui.modelio.call_schemas import CallSpec, Rule
from curiosity_tui.protocol.reply_shapes import (
    DeliverableReply,
    JudgeAfterReply,
    JudgeBeforeReply,
    JudgeRelistReply,
    to_record,
)
from curiosity_tui.protocol.schemas import (
    MAX_DEPENDENCIES,
    MAX_FOLLOW_UPS,
    MAX_FRAMINGS,
    MAX_LIVING_QUESTIONS,
    ArmedSelfAskResponse,
    CheckerResponse,
    CuratorResponse,
    JudgeBeforeResponse,
    SelfAskResponse,
    SupportJudgeResponse,
    dependency_ids,
    framing_ids,
)

# Size bounds (not enforced): characters per field, items per list.
TEXT = 200  # a question, a note, a fact, a framing, a reason
LONG = 400  # a node status, evidence, a passage
ANSWER = 1000  # the delivered answer
#: a question's least length: an empty or blank question is no question (the validator counts
#: characters after stripping; the full dialect's grammar gets it as minLength)
MIN_QUESTION = 8


def live_ids(nodes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ids of the nodes an action may name (not closed, archived or merged), sorted."""
    return sorted(nid for nid, n in nodes.items() if n.get("status") not in NOT_LIVE)


def _texts(*paths: str, limit: int = TEXT) -> tuple[Rule, ...]:
    return tuple(Rule(p, max_length=limit, enforced=False) for p in paths)


def _ids(path: str, ids: Sequence[str]) -> Rule:
    return Rule(path, one_of=tuple(ids), enforced=False)


def _size(path: str, n: int) -> Rule:
    return Rule(path, max_items=n, enforced=False)


def judge_before_spec() -> CallSpec:
    return CallSpec(
        JudgeBeforeReply,
        (
            Rule("framings", max_items=MAX_FRAMINGS),
            Rule("dependencies", max_items=MAX_DEPENDENCIES),
            *_texts("framings[]", "dependencies[]"),
        ),
        stored=to_record,
    )


def judge_after_spec(before: JudgeBeforeResponse) -> CallSpec:
    """One verdict per item the judge-before listed (F1…, D1…), each id exactly once: the
    reply is an object keyed by the listed ids, every one required, no other."""
    return CallSpec(
        JudgeAfterReply,
        (
            Rule("framings", exact_ids=tuple(framing_ids(before))),
            Rule("dependencies", exact_ids=tuple(dependency_ids(before))),
        ),
        stored=to_record,
    )


def judge_relist_spec() -> CallSpec:
    """The pre-amendment judge-after (issue 26): framings, dependencies and follow-up questions
    listed anew after the answer, each list an object of slots (decision 360), so the caps are
    said by the shape in every dialect."""
    return CallSpec(
        JudgeRelistReply,
        (
            Rule("framings", max_items=MAX_FRAMINGS),
            Rule("dependencies", max_items=MAX_DEPENDENCIES),
            Rule("follow_ups", max_items=MAX_FOLLOW_UPS),
            *_texts("framings[]", "dependencies[]", "follow_ups[]"),
        ),
        stored=to_record,
    )


def checker_spec(requirement_id: str, source_ids: Sequence[str]) -> CallSpec:
    """pilot-02's checker call on one requirement of the focus."""
    return CallSpec(
        CheckerResponse,
        (
            _ids("fact_id", [requirement_id]),
            _ids("source_id", source_ids),
            *_texts("evidence", "passage", limit=LONG),
        ),
    )


def support_judge_spec() -> CallSpec:
    """The labelled model judge of support: one verified passage, one requirement."""
    return CallSpec(SupportJudgeResponse, _texts("grounds", limit=LONG))


def _question_text(path: str, *, enforced: bool = False) -> Rule:
    return Rule(path, min_length=MIN_QUESTION, max_length=TEXT, enforced=enforced)


def _question_rules(prefix: str, parents: Sequence[str], n: int) -> tuple[Rule, ...]:
    return (
        _size(prefix, n),
        _ids(f"{prefix}[].parent", parents),
        _question_text(f"{prefix}[].text"),
    )


def _fact_rules(
    prefix: str, node_ids: Sequence[str], source_ids: Sequence[str]
) -> tuple[Rule, ...]:
    return (
        _size(prefix, 3 if node_ids else 0),
        _ids(f"{prefix}[].node", node_ids),
        _ids(f"{prefix}[].source_id", source_ids),
        *_texts(f"{prefix}[].text"),
    )


def _action_rules(prefix: str, node_ids: Sequence[str]) -> tuple[Rule, ...]:
    n = 2 if node_ids else 0  # no node an action may name: no action
    return (_size(prefix, n), _ids(f"{prefix}[].node", node_ids), *_texts(f"{prefix}[].note"))


def deliverable_spec(
    *,
    node_ids: Sequence[str],
    live_ids: Sequence[str] | None = None,
    focus_id: str,
    requirement_ids: Sequence[str],
    open_layer_min: int,
    checks_in_deliverable: bool,
    downgrades_allowed: bool,
    preserve: bool,
    source_ids: Sequence[str] = (),
) -> CallSpec:
    """The final call of C: the open layer's bounds (enforced), the ids it may name (actions:
    ``live_ids``, the nodes not closed, archived or merged; default all)."""
    n_checks = len(requirement_ids) if checks_in_deliverable else 0
    rules: tuple[Rule, ...] = (
        Rule(
            "open_layer.living_questions", min_items=open_layer_min, max_items=MAX_LIVING_QUESTIONS
        ),
        _ids("open_layer.living_questions[].parent", [focus_id]),
        # a compulsory open layer of blank questions would leave nothing open (seen on Gemma)
        _question_text("open_layer.living_questions[].text", enforced=open_layer_min > 0),
        *_texts("open_layer.node_status", limit=LONG),
        _size("open_layer.return_condition.required_facts", 3),
        _size("open_layer.return_condition.required_actions", 3),
        *_texts(
            "open_layer.return_condition.required_facts[]",
            "open_layer.return_condition.required_actions[]",
            "open_layer.return_condition.closure_test",
        ),
        Rule("answer", one_of=() if preserve else None, max_length=ANSWER, enforced=False),
        *_action_rules("actions", node_ids if live_ids is None else live_ids),
        *_question_rules("new_questions", node_ids, 2),
        *_fact_rules("facts", node_ids, source_ids),
        _size("checks", n_checks),
        _ids("checks[].fact_id", requirement_ids),
        _ids("checks[].source_id", source_ids),
        *_texts("checks[].evidence", "checks[].passage", limit=LONG),
        # a downgrade names one of the focus's requirements still in force
        _size("downgrade_proposals", 1 if downgrades_allowed and requirement_ids else 0),
        _ids("downgrade_proposals[].node", [focus_id]),
        _ids("downgrade_proposals[].fact_id", requirement_ids),
        Rule(
            "downgrade_proposals[].grounds",
            min_length=MIN_GROUNDS_CHARS,
            max_length=TEXT,
            enforced=False,
        ),
        *_texts("downgrade_proposals[].new_text"),
    )
    return CallSpec(DeliverableReply, rules, stored=to_record)


def self_ask_spec() -> CallSpec:
    """B: bare self-ask; nothing is stored, so a parent names nothing (null)."""
    return CallSpec(SelfAskResponse, _question_rules("questions", (), 8))


def armed_self_ask_spec(
    node_ids: Sequence[str],
    source_ids: Sequence[str] = (),
    live_ids: Sequence[str] | None = None,
) -> CallSpec:
    """B-armed: self-ask writing into the store; every id names an existing node (an action,
    a live one)."""
    return CallSpec(
        ArmedSelfAskResponse,
        (
            *_question_rules("questions", node_ids, 5),
            *_fact_rules("facts", node_ids, source_ids),
            *_action_rules("actions", node_ids if live_ids is None else live_ids),
        ),
    )


def curator_spec(node_ids: Sequence[str], live_ids: Sequence[str] | None = None) -> CallSpec:
    """The model curator: actions on nodes that can still be acted on (``live_ids``: neither
    merged nor archived; every node when not given). A merge target is a live node too: a merge
    into an archived or merged node, or into nothing, is a reply the rules reject."""
    live = tuple(node_ids if live_ids is None else live_ids)
    return CallSpec(
        CuratorResponse,
        (
            _size("actions", 5 if live else 0),
            _ids("actions[].node", live),
            _ids("actions[].into", live),
            *_texts("actions[].reason"),
        ),
    )
