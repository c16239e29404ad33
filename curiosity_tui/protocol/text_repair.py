"""A structured reply whose only fault is a text too short or too long, mended text by text
(issue 27).

In the strict dialect no schema can say a length, so a small model may fill a compulsory living
question with a label ("1.1.1.1", "Q1") or run one on for thousands of characters; shown its
reply in the repair turn, it copies it. When a structured call has failed and every enforced
rule its reply breaks is a text's length (least, most, "not blank"), each such text is asked
again alone, as free text, with the call's own prompt and a note naming the field, what was
wrong and what the schema says of it; the answer (its first line within the lengths, stripped)
goes into the reply, which must then pass every rule (an answer still outside the lengths is
asked for once more, told what was wrong with it). Each of these calls is recorded in the
session record (``repair: true``, the call's kind). Anything else broken, or a mended text
that still breaks a rule, and the call fails as it did.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ValidationError

from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.modelio.call_schemas import CallSpec, Dialect, Rule
from curiosity_tui.modelio.client import ModelCallError
from curiosity_tui.modelio.json_reply import parse_json_object

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from curiosity_tui.modelio.client import ModelClient


class _Settings(Protocol):
    @property
    def schema_dialect(self) -> Dialect: ...

    def fit(self, cap: int, messages: Sequence[dict[str, str]]) -> int: ...


class SessionContext(Protocol):
    """What a mend needs of the session's context (``protocol.context.SessionContext``, which
    imports this module: named by shape here, so the two do not import each other)."""

    @property
    def client(self) -> ModelClient: ...

    @property
    def t(self) -> int: ...

    @property
    def settings(self) -> _Settings: ...

    @property
    def answered_by(self) -> dict[str, CallRecord]: ...

    async def call(
        self, aw: Awaitable[tuple[str, CallRecord]], *, key: str | None = None
    ) -> str: ...


MENDABLE_CODES = ("schema_violation", "length", "invalid_json")
"""How a call may have failed for its earlier reply to be mended: a rule broken, or a repair
turn whose reply was cut or not JSON (a refusal or an oversized reply is never mended)."""
MEND_TRIES = 2
"""Asks per text: a mend whose line is still outside the lengths ("No." for a question) is
asked once more, told what was wrong with it (decision 600)."""
TEXT_CAP = 50  # tokens for one mended text: a sentence under 200 characters (its line is taken)
_PART = re.compile(r"\[\d+\]|[^.\[\]]+")


def _length_only(rule: Rule) -> bool:
    return (rule.min_length, rule.max_length) != (None, None) and (
        rule.one_of,
        rule.min_items,
        rule.max_items,
        rule.exact_ids,
    ) == (None, None, None, None)


def short_texts(spec: CallSpec, reply: BaseModel) -> list[tuple[Rule, str, str]] | None:
    """The breaks of ``reply`` when every one is a text outside its length bounds (None when
    it breaks anything else, or nothing)."""
    found = spec.breaks(reply)
    if not found or not all(_length_only(rule) for rule, _where, _problem in found):
        return None
    return found


def mendable(
    spec: CallSpec, err: ModelCallError, dialect: Dialect
) -> tuple[BaseModel, list[Any], CallRecord] | None:
    """The latest reply of the failed call that reads as the call's model and breaks only
    lengths, with its breaks; None when there is none. The repair turn's own reply may be cut
    or not JSON (shown a runaway text, a small model copies it to the cap): the reply before
    it is then the one mended (decision 600)."""
    if err.code not in MENDABLE_CODES:
        return None
    model = spec.reply_model(dialect)
    for record in reversed(err.records):
        try:
            reply = model.model_validate(parse_json_object(record.response_text or ""))
        except (ValueError, ValidationError):
            continue
        breaks = short_texts(spec, reply)
        if breaks is not None:
            return reply, breaks, record
    return None


def _note(spec: CallSpec, rule: Rule, where: str, problem: str) -> str:
    what = problem.split(": ", 1)[-1]
    return (
        f"\n\n(Your JSON reply could not be used as it was: {where}: {what}. Write that one "
        f"text again, in words: {spec.description(rule.path)} Reply with the text alone: no "
        "JSON, no label, no numbering.)"
    )


def _first_line(text: str, rule: Rule) -> str:
    """The answer's first line within the rule's lengths (a shorter line before it is a label,
    "(1)" or "Q1:"), stripped of quotes; else its first line."""
    low, high = rule.min_length or 0, rule.max_length or len(text)
    lines = [line.strip().strip("\"'`").strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    return next((line for line in lines if low <= len(line) <= high), lines[0] if lines else "")


def _put(data: Any, where: str, value: str) -> None:
    parts = _PART.findall(where)
    node = data
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    last = parts[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value


async def mend_short_texts(
    ctx: SessionContext,
    spec: CallSpec,
    err: ModelCallError,
    *,
    kind: str,
    messages: list[dict[str, str]],
    internal: bool,
    key: str | None,
) -> BaseModel | None:
    """The stored record of the failed call's reply with its short texts asked again (see the
    module's docstring); None when it cannot be mended that way."""
    dialect = ctx.settings.schema_dialect
    found = mendable(spec, err, dialect)
    if found is None:
        return None
    reply, breaks, source = found
    data = reply.model_dump(mode="json")
    sent = [dict(m) for m in messages]
    if sent[-1].get("role") != "user":
        return None
    for rule, where, problem in breaks:
        line = await _mend_one(ctx, spec, rule, where, problem, sent, kind, internal, key)
        _put(data, where, line)
    try:
        mended = spec.reply_model(dialect).model_validate_json(json.dumps(data))
        spec.check(mended)
    except (ValueError, ValidationError):
        return None
    ctx.answered_by[key or kind] = source
    return spec.record(mended)


async def _mend_one(
    ctx: SessionContext,
    spec: CallSpec,
    rule: Rule,
    where: str,
    problem: str,
    messages: list[dict[str, str]],
    kind: str,
    internal: bool,
    key: str | None,
) -> str:
    """One text asked again alone: its line, asked once more while still outside the lengths
    (each ask its own draw, so its own seed)."""
    *head, last = messages
    line = ""
    for attempt in range(MEND_TRIES):
        note = _note(spec, rule, where, problem)
        asked = [*head, {**last, "content": last.get("content", "") + note}]
        again = f":again-{attempt}" if attempt else ""
        text = await ctx.call(_ask(ctx, kind, asked, internal), key=f"{key or kind}:{where}{again}")
        line = _first_line(text, rule)
        problem = next(rule.problems(where, line), "")
        if not problem:
            break
    return line


async def _ask(
    ctx: SessionContext, kind: str, messages: list[dict[str, str]], internal: bool
) -> tuple[str, CallRecord]:
    text, record = await ctx.client.complete(
        kind=kind,
        session=ctx.t,
        messages=messages,
        max_tokens=ctx.settings.fit(TEXT_CAP, messages),
        internal=internal,
    )
    record.repair = True
    return text, record
