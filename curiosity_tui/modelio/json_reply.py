"""What a structured call asks the model for, and how its JSON reply is read and repaired.

The ``response_format`` payload (strict ``json_schema``) and the schema instruction that
``json_object`` and prompt mode put in the last user turn; the reply parsed as one JSON object
(one code fence tolerated); the one-line description of a schema violation; and the repair
turn, which never re-sends a whole long or cut-off reply. Pure functions over messages and
pydantic schemas: :class:`~curiosity_tui.modelio.client.ModelClient` sends what they build.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from curiosity_tui.modelio.schema_text import schema_text as compact_text
from curiosity_tui.textsafe import replace_unstorable_in_json

M = TypeVar("M", bound=BaseModel)

__all__ = [
    "REPAIR_EXCERPT_CHARS",
    "describe_validation_error",
    "longest_string",
    "parse_json_object",
    "read_reply",
    "repair_message",
    "repair_turn",
    "reply_excerpt",
    "schema_instruction",
    "schema_of",
    "schema_response_format",
    "with_schema_in_last_user_turn",
]


@functools.cache
def schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    # model_json_schema() costs ~2 ms for DeliverableResponse; schemas are fixed classes.
    # The cached dict is shared: treat it as read-only.
    return schema.model_json_schema()


@functools.cache
def schema_text(schema: type[BaseModel]) -> str:
    """The instruction with ``schema``'s compact text (``modelio/schema_text.py``; issue 27)."""
    return compact_text(schema_of(schema))


def schema_response_format(
    schema: type[BaseModel], wire: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``response_format`` payload for a pydantic model (strict structured outputs);
    ``wire`` is the call's own schema (``call_schemas.CallSpec.json_schema``) when it has one."""
    body = wire if wire is not None else schema_of(schema)
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": body, "strict": True},
    }


def schema_instruction(schema: type[BaseModel], wire: dict[str, Any] | None = None) -> str:
    """The schema text added to the last user turn for ``json_object`` and prompt mode (a
    trailing system message would be dropped by some chat templates, Gemma's among them);
    ``wire`` is the call's own schema when it has one. Compact: a model reads it, so no
    title, description or keyword is said twice (``modelio/schema_text.py``)."""
    return compact_text(wire) if wire is not None else schema_text(schema)


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n?```\s*$", re.DOTALL)


def parse_json_object(text: str) -> dict[str, Any]:
    """Parse a reply as one JSON object (a single surrounding code fence is tolerated).

    Control characters inside strings are accepted (``strict=False``) and kept.
    Raises ``ValueError`` with a message fit to send back in a repair request.
    """
    candidates = [text]
    fenced = _FENCE.match(text)
    if fenced:
        candidates.append(fenced.group(1))
    error: Exception | None = None
    for candidate in candidates:
        try:
            value = json.loads(candidate, strict=False)
        except ValueError as exc:
            error = exc
            continue
        if not isinstance(value, dict):
            raise ValueError(f"the reply is JSON but not an object (got {type(value).__name__})")
        return value
    if not text.strip():
        raise ValueError("the reply is empty, not a JSON object")
    raise ValueError(f"the reply is not valid JSON: {error}")


class ReadReply(NamedTuple, Generic[M]):
    """A structured reply read: its ``value`` when it passed, else ``code`` and ``problem``."""

    value: M | None
    code: str  # "" when it passed; invalid_json, schema_violation, oversized
    problem: str
    replaced: int  # characters replaced because they cannot be stored


def read_reply(
    content: str,
    schema: type[M],
    validator: Callable[[M], None] | None,
    max_field_chars: int,
) -> ReadReply[M]:
    """Parse ``content`` as one JSON object, refuse a text over ``max_field_chars``
    (``oversized``), then validate it against ``schema`` and ``validator`` (a ValueError:
    the reply breaks a rule)."""
    try:
        data = parse_json_object(content)
    except ValueError as exc:
        return ReadReply(None, "invalid_json", str(exc), 0)
    # a parsed string is no longer than the text it came from
    longest = longest_string(data) if len(content) > max_field_chars else 0
    if longest > max_field_chars:
        problem = (
            f"a field of the reply is {longest} characters, over the "
            f"{max_field_chars}-character cap (--max-field-kb)"
        )
        return ReadReply(None, "oversized", problem, 0)
    data, replaced = replace_unstorable_in_json(data, content)  # "\ud800"
    try:
        value = schema.model_validate(data)
        if validator is not None:
            validator(value)
    except ValidationError as exc:
        return ReadReply(None, "schema_violation", describe_validation_error(exc), replaced)
    except ValueError as exc:
        return ReadReply(None, "schema_violation", f"the reply breaks a rule: {exc}", replaced)
    return ReadReply(value, "", "", replaced)


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"{where}: {err['msg']}")
    more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return "the reply does not match the schema: " + "; ".join(parts) + more


def repair_message(problem: str) -> str:
    return (
        f"Your previous reply could not be used: {problem}. "
        "Reply again with only the corrected JSON object, following the schema exactly."
    )


REPAIR_EXCERPT_CHARS = 600
"""A rejected reply longer than this goes back in the repair turn as an excerpt only."""


def repair_turn(
    messages: Sequence[dict[str, str]], content: str, problem: str, *, truncated: bool
) -> list[dict[str, str]]:
    """The conversation of the repair retry. It never re-sends a whole long or cut-off reply
    (that can overflow a small context): a cut-off reply starts again from the original
    messages with a note to be brief; a long one is quoted as a short excerpt."""
    if truncated:
        note = (
            f"\n\n(An earlier reply was cut off and could not be used: {problem}.{ran_on(content)} "
            f"Reply with a shorter, complete JSON object: {BOUNDS_IN_WORDS})"
        )
        *head, last = [dict(m) for m in messages]
        if last.get("role") == "user":
            return [*head, {**last, "content": last.get("content", "") + note}]
        return [*head, last, {"role": "user", "content": note.strip()}]
    if len(content) <= REPAIR_EXCERPT_CHARS:
        return [
            *messages,
            {"role": "assistant", "content": content},
            {"role": "user", "content": repair_message(problem)},
        ]
    excerpt = content[: REPAIR_EXCERPT_CHARS - 100] + " … " + content[-80:]
    return [
        *messages,
        {
            "role": "user",
            "content": f"Your previous reply began and ended: {excerpt}\n\n"
            + repair_message(problem),
        },
    ]


BOUNDS_IN_WORDS = (
    "each text one or two sentences (under 200 characters), no repeated words or numbers, "
    "and only the items you need (null for a slot left unused)."
)
"""What the repair after a cut asks, in words: a dialect without lengths (strict) cannot say
them in the schema, and a small model's runaway string or list is what a cut usually is."""


def ran_on(content: str) -> str:
    """Where a reply cut mid-JSON ran on, said for the repair turn ("" when it cannot be told):
    the path of the text or list it was writing and how long that had grown."""
    found = open_value(content)
    if found is None:
        return ""
    path, size, is_text = found
    if not path:
        return ""
    if is_text:
        tail = " ".join(content[-min(size, 60) :].split())
        return f" It was writing {path}, a text that ran on for {size} characters (…{tail})."
    return f" It was writing {path} ({size} items so far)."


def open_value(text: str) -> tuple[str, int, bool] | None:
    """The innermost value still open where ``text`` (JSON cut short) ends: its path
    (``framings.F1``, ``facts[3]``), its size (characters of a text; items of a list, keys of an
    object) and whether it is a text; None when the text is not JSON cut inside an object."""
    stack: list[list[Any]] = []  # per open container: [kind "{"/"[", key or index, items, key next]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        top = stack[-1] if stack else None
        if c == '"':
            is_key = top is not None and top[0] == "{" and top[3]
            if top is not None and not is_key and top[0] == "[":
                top[1], top[2] = top[2], top[2] + 1
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:  # the cut is inside this string
                if is_key:
                    return (_path(stack[:-1]), top[2], False) if top else None
                return _path(stack), n - i - 1, True
            if is_key and top is not None:
                top[1], top[2], top[3] = text[i + 1 : j], top[2] + 1, False
            i = j + 1
            continue
        if c in "{[":
            if top is not None and top[0] == "[":
                top[1], top[2] = top[2], top[2] + 1
            stack.append([c, None, 0, c == "{"])
        elif c in "}]" and stack:
            stack.pop()
        elif c == "," and top is not None and top[0] == "{":
            top[3] = True
        elif c not in ",: \t\r\n" and top is not None and top[0] == "[":
            top[1], top[2] = top[2], top[2] + 1  # a number, true, false or null
            while i + 1 < n and text[i + 1] not in ",]":
                i += 1
        i += 1
    if not stack:
        return None
    return _path(stack[:-1]), stack[-1][2], False


def _path(stack: list[list[Any]]) -> str:
    out = ""
    for kind, key, _items, _key_next in stack:
        if key is None:
            continue
        out += f"[{key}]" if kind == "[" else (f".{key}" if out else str(key))
    return out


def with_schema_in_last_user_turn(
    messages: Sequence[dict[str, str]],
    schema: type[BaseModel],
    wire: dict[str, Any] | None = None,
) -> list[dict[str, str]]:
    """``messages`` with the schema instruction appended to the last user message."""
    sent = [dict(m) for m in messages]
    for m in reversed(sent):
        if m.get("role") == "user":
            m["content"] = f"{m.get('content', '')}\n\n{schema_instruction(schema, wire)}"
            return sent
    return [*sent, {"role": "user", "content": schema_instruction(schema, wire)}]


def longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((longest_string(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((longest_string(v) for v in value), default=0)
    return 0


def reply_excerpt(text: str, limit: int = 2000) -> str:
    """The start of an oversized reply, marked as cut (what the record keeps)."""
    return f"{text[:limit]}\n[... cut: the reply was {len(text)} characters]"
