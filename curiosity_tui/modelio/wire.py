"""How a chat call crosses the wire cheaply, through the ``openai`` client (issue 14.5).

Two costs of a loopback call through ``openai.AsyncOpenAI`` that a pilot of thousands of calls
pays on one core, each about 0.3 ms of CPU a call, and what replaces them:

* **The reply.** ``openai`` builds a ``ChatCompletion`` object tree for every reply (its
  loose ``construct_type`` walk over every field). The client asks for the parsed JSON instead
  (``cast_to=object``) and reads the five fields a :class:`CallRecord` keeps
  (:func:`reply_fields_of_json`). A reply of any other shape goes through ``openai``'s own
  construction (:func:`definitional_fields`), so every value, and every failure, is what it was.
* **Two writes a request.** httpcore writes the request head and its body with two socket
  sends; on loopback each send also runs the receiving side's TCP stack. The connection pool's
  network streams are wrapped (:func:`coalesce_writes`) so that the writes of one request are
  sent as one buffer just before the response is read. The bytes on the wire are the same,
  in the same order. The wrapped streams also answer the pool's "is the idle connection
  readable?" (asked of every idle connection for every request placed) from the socket they
  keep, with httpcore's own test, instead of anyio's attribute lookup that builds a dict.

Building the request (openai's header merging and URL parsing, httpx's header normalising) is
the third cost; :mod:`curiosity_tui.modelio.request_template` takes it.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, NamedTuple

__all__ = ["ReplyFields", "coalesce_writes", "definitional_fields", "reply_fields_of_json"]


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
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    return definitional_fields(
        None if value is None else construct_type(type_=ChatCompletion, value=value)
    )


class _CoalescingStream:
    """A network stream whose writes wait, joined, until the next read (or close)."""

    def __init__(self, inner: Any, write_error: type[Exception], readable: Any = None) -> None:
        self._inner = inner
        self._pending: list[bytes] = []
        self._write_error = write_error
        # the pool asks every idle connection "is_readable" on every request it places;
        # anyio answers by building a dict of its stream attributes each time
        self._readable = readable
        self._socket = inner.get_extra_info("socket") if readable is not None else None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(buffer)

    async def _flush(self, timeout: float | None) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        # httpcore ignores a failed request write and reads the response (a server may answer
        # and close early); the read that follows reports a dead connection
        with contextlib.suppress(self._write_error):
            await self._inner.write(data, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush(timeout)
        data: bytes = await self._inner.read(max_bytes, timeout)
        return data

    async def aclose(self) -> None:
        self._pending.clear()
        await self._inner.aclose()

    async def start_tls(self, *args: Any, **kwargs: Any) -> _CoalescingStream:
        await self._flush(kwargs.get("timeout"))
        stream = await self._inner.start_tls(*args, **kwargs)
        return _CoalescingStream(stream, self._write_error, self._readable)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return self._readable(self._socket)
        return self._inner.get_extra_info(info)


class _CoalescingBackend:
    """A network backend whose streams are :class:`_CoalescingStream`."""

    def __init__(self, inner: Any, write_error: type[Exception], readable: Any) -> None:
        self._inner = inner
        self._write_error = write_error
        self._readable = readable

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> _CoalescingStream:
        stream = await self._inner.connect_tcp(*args, **kwargs)
        return _CoalescingStream(stream, self._write_error, self._readable)

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _CoalescingStream:
        stream = await self._inner.connect_unix_socket(*args, **kwargs)
        return _CoalescingStream(stream, self._write_error, self._readable)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def coalesce_writes(oa: Any) -> bool:
    """Wrap the network backend of ``oa``'s connection pool (before its first connection).
    False, and nothing changed, when the client is not built the way this expects."""
    pool: Any = getattr(getattr(getattr(oa, "_client", None), "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if pool is None or backend is None or isinstance(backend, _CoalescingBackend):
        return False
    name = type(pool).__module__.split(".")[0]
    write_error = getattr(sys.modules.get(name), "WriteError", None)
    if not (isinstance(write_error, type) and issubclass(write_error, Exception)):
        return False
    # httpcore's own readability test (a zero-timeout poll), on the stream's socket
    readable = getattr(sys.modules.get(f"{name}._utils"), "is_socket_readable", None)
    pool._network_backend = _CoalescingBackend(backend, write_error, readable)
    return True
