"""A chat reply read from openai's parsed JSON, cheaply (issue 14.5, decision 260).

``openai`` builds a ``ChatCompletion`` object tree for every reply (a loose construction of
every field). The client asks for the parsed JSON instead (``oa.post(..., cast_to=object)``)
and reads the five fields a :class:`CallRecord` keeps (:func:`reply_fields_of_json`). A reply
of any other shape is built as openai builds a ``ChatCompletion`` without validation
(``ChatCompletion.model_construct``, openai's own loose construction, public API) and read as
before (:func:`definitional_fields`), so every value, and every failure, is what it was.

Only public API of ``openai`` is used here (decision 340).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["ReplyFields", "chat_completion_of", "definitional_fields", "reply_fields_of_json"]


class ReplyFields(NamedTuple):
    """What a chat reply contributes to its record, read as ``_reply`` reads a ``ChatCompletion``."""

    content: Any  # choices[0].message.content (None without a choice or message)
    refusal: Any  # choices[0].message.refusal
    finish_reason: Any  # choices[0].finish_reason
    prompt_tokens: Any  # usage.prompt_tokens or 0
    completion_tokens: Any  # usage.completion_tokens or 0


def definitional_fields(response: Any) -> ReplyFields:
    """The fields of a ``ChatCompletion`` (or whatever ``openai`` returned), as read before."""
    choice = response.choices[0] if response.choices else None
    message = choice.message if choice is not None else None
    usage = response.usage
    return ReplyFields(
        content=message.content if message is not None else None,
        refusal=getattr(message, "refusal", None) if message is not None else None,
        finish_reason=choice.finish_reason if choice is not None else None,
        prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
        completion_tokens=(usage.completion_tokens or 0) if usage else 0,
    )


def _text(value: Any) -> bool:
    return value is None or type(value) is str


def _count(value: Any) -> bool:
    return value is None or type(value) is int


def _fast(data: Any) -> ReplyFields | None:
    """The fields of a well-formed reply body; None for any other shape."""
    if type(data) is not dict or type(data.get("choices")) is not list:
        return None
    usage = data.get("usage")
    if usage is not None and not (
        type(usage) is dict
        and "prompt_tokens" in usage
        and "completion_tokens" in usage
        and _count(usage["prompt_tokens"])
        and _count(usage["completion_tokens"])
    ):
        return None
    prompt = (usage["prompt_tokens"] or 0) if usage else 0
    completion = (usage["completion_tokens"] or 0) if usage else 0
    if not data["choices"]:
        return ReplyFields(None, None, None, prompt, completion)
    choice = data["choices"][0]
    if type(choice) is not dict or "finish_reason" not in choice or "message" not in choice:
        return None
    message, finish = choice["message"], choice["finish_reason"]
    if type(message) is not dict or not _text(finish):
        return None
    content, refusal = message.get("content"), message.get("refusal")
    if not (_text(content) and _text(refusal)):
        return None
    return ReplyFields(content, refusal, finish, prompt, completion)


def reply_fields_of_json(value: Any) -> ReplyFields:
    """The fields of a chat reply that ``openai`` returned parsed (``cast_to=object``): the
    JSON value, or the body's text when the server did not call it JSON (``openai`` then
    tried the text as JSON itself). Odd shapes take ``openai``'s ``ChatCompletion`` path."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return definitional_fields(value)  # fails as it did: a str has no choices
    fields = _fast(value)
    if fields is not None:
        return fields
    return definitional_fields(None if value is None else chat_completion_of(value))


def chat_completion_of(value: Any) -> Any:
    """``value`` built as openai builds a reply it does not validate: a mapping becomes a
    ``ChatCompletion`` by openai's loose ``model_construct`` (nested fields constructed, odd
    values kept as they are), a list a list of them, anything else stays as it is."""
    from openai.types.chat import ChatCompletion

    if isinstance(value, Mapping):
        return ChatCompletion.model_construct(**value)
    if isinstance(value, list):
        return [ChatCompletion.model_construct(**v) if isinstance(v, Mapping) else v for v in value]
    return value
