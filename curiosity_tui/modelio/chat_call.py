"""The parts of one chat call that the client's loop does not need to hold (issue 23): the
request body and its digest with the run's sampling, the record a call leaves, and what the
reply says produced it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.modelio.reply_cache import request_digest
from curiosity_tui.textsafe import replace_unstorable

__all__ = ["call_record", "chat_body", "prepare_body", "render_messages", "reply_identity"]


def render_messages(messages: Sequence[dict[str, str]]) -> str:
    """The deterministic text form of a message list, stored as ``request_text``."""
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages)


def chat_body(model: str, messages: list[dict[str, str]], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a chat request (``kwargs``: the token limit, sampling, ``extra_body``)."""
    extra = dict(kwargs)
    return {"model": model, "messages": messages, **extra.pop("extra_body", {}), **extra}


def prepare_body(
    model: str,
    kwargs: dict[str, Any],
    sent: list[dict[str, str]],
    sampled: tuple[dict[str, Any], Any] | None,
    common: dict[str, Any],
) -> None:
    """Add the run's sampling to ``kwargs`` (modelio/sampling.py, issue 23.1) and record it and
    the request's digest in ``common`` (modelio/reply_cache.py, issue 23.5)."""
    if sampled is not None:
        kwargs.update(sampled[0])
        common["sampling"] = sampled[1]
    common["request_sha256"] = request_digest(chat_body(model, sent, kwargs))


def call_record(
    common: dict[str, Any],
    start: float,
    retries: int,
    waits: list[float],
    sent: list[dict[str, str]],
    fmt: str | None,
) -> CallRecord:
    """A chat call's record as it ends (its reply, if any, is filled in by the client)."""
    return CallRecord(
        **common,
        ended_at=utc_now_micro(),
        latency_s=time.perf_counter() - start,
        retries=retries,
        waited_s=round(sum(waits), 3),
        request_text=render_messages(sent),
        response_format=fmt,
    )


def _short(value: Any, limit: int = 200) -> str | None:
    return replace_unstorable(value[:limit])[0] if isinstance(value, str) else None


def reply_identity(response: Any) -> tuple[str | None, str | None]:
    """(``model``, ``system_fingerprint``) of a parsed chat reply: what the server says
    produced it (issue 23.2); None where absent or not a string; at most 200 characters."""
    if not isinstance(response, dict):
        return None, None
    return _short(response.get("model")), _short(response.get("system_fingerprint"))
