"""The model client: chat completions and embeddings over ``openai.AsyncOpenAI``.

Works with any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp
server). Every request carries ``X-Curiosity-Call: <kind>`` and
``X-Curiosity-Session: <n>``; every call — success or failure — leaves one
:class:`CallRecord` in ``ModelClient.calls``, which the session record stores.

* Retries (``modelio/retry.py``): HTTP 408/409/429/500/502/503/504 and
  connection errors are retried up to ``max_retries`` times, waiting what
  ``Retry-After`` says or else exponential backoff with jitter; 400/401/403/
  404/422/501 never are. A timeout is re-sent only where the server can serve
  another request meanwhile (``retry_timeouts``; a one-slot llama-server would
  still be generating the abandoned reply). The count is the record's
  ``retries``, the seconds waited its ``waited_s``.
* Structured calls send ``response_format: json_schema`` derived from the
  pydantic model (``response_format="auto"``); a server that refuses it (HTTP
  400/422, or 500 as llama-cpp-python does, on the first structured call) gets
  ``json_object`` once, with the schema in the last user turn, and the client
  remembers that for its lifetime. A context-overflow 400 is reported as that
  (code ``context_overflow``), never taken as a refusal. ``json_object`` and
  ``prompt`` can also be fixed (the endpoint probe does this). Replies over
  ``max_reply_bytes`` and JSON strings over ``max_field_chars`` fail the call
  (code ``oversized``) with only an excerpt kept. The reply is parsed and validated; on
  invalid JSON, a schema violation or a failed ``validator``, one repair
  retry sends the error back with the reply, or an excerpt of a long one, or starts
  again after a cut-off reply (:func:`repair_turn`); a second failure raises
  :class:`ModelCallError` carrying both records.
* The API key is used only to build the ``openai`` client: it is in no
  record, no error message (they are redacted as a second guard) and no repr.
* Model text is returned verbatim: nothing is stripped or escaped here;
  display code escapes it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import random
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.modelio import ratelimit, request_template, wire
from curiosity_tui.modelio import retry as rt
from curiosity_tui.modelio.run_context import run_headers
from curiosity_tui.textsafe import replace_unstorable, replace_unstorable_in_json

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

NO_KEY_PLACEHOLDER = "no-key"  # local servers (vLLM, Ollama, llama.cpp) ignore the key
FormatChoice = Literal["auto", "json_schema", "json_object", "prompt"]
RetryTimeouts = Literal["auto", "always", "never"]
DEFAULT_TIMEOUT_S = 600.0  # a CPU model writing a 4000-token deliverable needs minutes
DEFAULT_MAX_REPLY_BYTES = 64 * 1024
DEFAULT_MAX_FIELD_CHARS = 16 * 1024


class ModelCallError(CuriosityError):
    """A model call failed for good. ``reason`` is the one-line message; ``code`` a short tag."""

    def __init__(self, reason: str, *, code: str, records: list[CallRecord]):
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.records = records


class ModelConfigError(CuriosityError):
    """The model endpoint is not configured well enough to make the call."""


def render_messages(messages: Sequence[dict[str, str]]) -> str:
    """The deterministic text form of a message list, stored as ``request_text``."""
    return "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in messages)


@functools.cache
def _schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    # model_json_schema() costs ~2 ms for DeliverableResponse; schemas are fixed classes.
    # The cached dict is shared: treat it as read-only.
    return schema.model_json_schema()


@functools.cache
def _schema_text(schema: type[BaseModel]) -> str:
    return json.dumps(_schema_of(schema), ensure_ascii=False, sort_keys=True)


def schema_response_format(
    schema: type[BaseModel], wire: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``response_format`` payload for a pydantic model (strict structured outputs);
    ``wire`` is the call's own schema (``call_schemas.CallSpec.json_schema``) when it has one."""
    body = wire if wire is not None else _schema_of(schema)
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": body, "strict": True},
    }


def schema_instruction(schema: type[BaseModel], wire: dict[str, Any] | None = None) -> str:
    """The schema text added to the last user turn for ``json_object`` and prompt mode (a
    trailing system message would be dropped by some chat templates, Gemma's among them);
    ``wire`` is the call's own schema when it has one."""
    text = (
        json.dumps(wire, ensure_ascii=False, sort_keys=True)
        if wire is not None
        else _schema_text(schema)
    )
    return (
        "Reply with one JSON object and nothing else. It must validate against this JSON schema:\n"
        + text
    )


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
            f"\n\n(An earlier reply was cut off and could not be used: {problem}. "
            "Reply with a shorter, complete JSON object.)"
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


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def reply_excerpt(text: str, limit: int = 2000) -> str:
    """The start of an oversized reply, marked as cut (what the record keeps)."""
    return f"{text[:limit]}\n[... cut: the reply was {len(text)} characters]"


# One openai client per (event loop, endpoint, key, timeout), shared by every ModelClient and
# released with its loop. httpx connections cannot cross loops; and an AsyncOpenAI dropped
# unclosed inside a *running* loop lets asyncio close its sockets behind the selector's back,
# after which new connections of that loop can hang until they time out (observed with 200
# concurrent calls after a discarded client). Holding the clients here for the loop's lifetime
# means dropping a ModelClient is always safe. The key enters only as a sha256 digest.
_POOL: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[Any, ...], openai.AsyncOpenAI]
] = weakref.WeakKeyDictionary()


def _post_chat(
    oa: openai.AsyncOpenAI,
    model: str,
    messages: list[dict[str, str]],
    headers: dict[str, str],
    timeout: float,
    kwargs: dict[str, Any],
) -> Any:
    """``oa.chat.completions.create`` without its typed-params transform: the same wire
    request (``kwargs``: the token limit and ``extra_body``), about 1 ms less CPU a call, which
    a pilot pays thousands of times (issue 14.5). Errors are openai's, as before. It is
    ``oa.post`` (``request_template.post_json``: its options built cheaply, the request from
    its shape's template). The reply comes back as parsed JSON (``cast_to=object``), read by
    ``wire.reply_fields_of_json``."""
    extra = dict(kwargs)
    body = {"model": model, "messages": messages, **extra.pop("extra_body", {}), **extra}
    return request_template.post_json(oa, "/chat/completions", body, headers, timeout)


class _Exhausted(Exception):
    def __init__(self, exc: Exception, retries: int, note: str = ""):
        super().__init__(str(exc))
        self.exc = exc
        self.retries = retries
        self.note = note  # why no (further) retry was made, when that needs saying


class ModelClient:
    """Chat completions and embeddings for one endpoint and model."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str,
        embedding_model: str | None = None,
        embedding_base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = 3,
        retry_backoff_s: float = 1.0,
        token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        response_format: FormatChoice = "auto",
        retry_timeouts: RetryTimeouts = "auto",
        max_backoff_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        max_field_chars: int = DEFAULT_MAX_FIELD_CHARS,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None:
            if self.base_url is None:
                raise ModelConfigError(
                    "no model endpoint configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a "
                    "local server) or pass --api-key / --base-url"
                )
            key = NO_KEY_PLACEHOLDER
        if not model:
            raise ModelConfigError("no model name given: pass --model")
        self._key = key
        self.model = model
        self.embedding_model = embedding_model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.retry_backoff_s = retry_backoff_s
        self.token_param: str = token_param
        self.json_schema_supported: bool | None = None  # None = not yet known
        #: json_object requests carry the schema as response_format.schema (the probe found
        #: that the server enforces it: llama.cpp, llama-cpp-python)
        self.json_object_schema = False
        self.response_format: FormatChoice = response_format
        self.policy = rt.RetryPolicy(
            max_retries=max_retries,
            backoff_s=retry_backoff_s,
            max_backoff_s=max_backoff_s,
            max_retry_after_s=max_retry_after_s,
            retry_timeouts=retry_timeouts,
        )
        self.server_slots: int | None = None  # from the endpoint probe; 1 = one request at a time
        self.context_window: int | None = None  # tokens, where the server or a flag says
        self.max_reply_bytes = max_reply_bytes
        self.max_field_chars = max_field_chars
        self._rng = rng or random.Random()
        self._sleep = sleep or asyncio.sleep
        self.calls: list[CallRecord] = []
        #: where /v1/embeddings is served, when not at ``base_url`` (llama-server serves one
        #: model per process: the chat model on one port, MiniLM on another)
        self.embedding_base_url = embedding_base_url or None
        self._pool_key = (
            self.base_url,
            hashlib.sha256(key.encode("utf-8")).hexdigest(),
            timeout_s,
        )
        self._embed_pool_key = (self.embedding_base_url, *self._pool_key[1:])

    def __repr__(self) -> str:
        return f"ModelClient(base_url={self.base_url!r}, model={self.model!r})"

    # -- plumbing ------------------------------------------------------------

    def _client(self, *, embeddings: bool = False) -> openai.AsyncOpenAI:
        separate = embeddings and self.embedding_base_url is not None
        pool_key = self._embed_pool_key if separate else self._pool_key
        per_loop = _POOL.setdefault(asyncio.get_running_loop(), {})
        oa = per_loop.get(pool_key)
        if oa is None:
            oa = openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self.embedding_base_url if separate else self.base_url,
                max_retries=0,
                timeout=self.timeout_s,
            )
            wire.coalesce_writes(oa)  # one socket write a request (issue 14.5)
            request_template.attach(oa)  # a chat request from its shape's template (14.5)
            ratelimit.attach(oa)  # --max-rpm / --max-tpm: waits before each request (14.6)
            per_loop[pool_key] = oa
        return oa

    async def aclose(self) -> None:
        """Close this endpoint's connections in the running event loop (a later call reconnects).

        Clients for the same endpoint share connections within a loop; closing is optional
        (they are released with the loop) but tidy at the end of a program.
        """
        per_loop = _POOL.get(asyncio.get_running_loop(), {})
        for pool_key in (self._pool_key, self._embed_pool_key):
            oa = per_loop.pop(pool_key, None)
            if oa is not None:
                await oa.close()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _redact(self, text: str) -> str:
        if self._key and self._key != NO_KEY_PLACEHOLDER and len(self._key) >= 4:
            text = text.replace(self._key, "[redacted]")
        return text

    def _headers(self, kind: str, session: int) -> dict[str, str]:
        headers = {"X-Curiosity-Call": kind, "X-Curiosity-Session": str(session)}
        headers.update(run_headers())  # X-Curiosity-Run, when a runner set one
        return headers

    async def _with_retries(
        self, make: Callable[[], Awaitable[T]], waits: list[float], *, negotiating: bool = False
    ) -> tuple[T, int]:
        """Await ``make()`` under the retry policy; ``waits`` collects the seconds slept.
        ``negotiating``: a 500 ends the attempts at once (the caller tries another format)."""
        retries = 0
        while True:
            try:
                return await make(), retries
            except Exception as exc:  # classified below; anything unknown propagates
                if not isinstance(exc, openai.APIError):
                    raise
                err: Exception = exc
            if negotiating and rt.status_of(err) == 500:
                raise _Exhausted(err, retries) from err
            why_not = self.policy.why_not_retried(err, retries, slots=self.server_slots)
            if why_not is not None:
                raise _Exhausted(err, retries, note=why_not) from err
            wait = self.policy.wait_s(err, retries, self._rng)
            if wait is None:
                after = rt.retry_after_s(err)
                note = (
                    f"the server asked to retry after {after:g} s, over the "
                    f"{self.policy.max_retry_after_s:g} s limit"
                )
                raise _Exhausted(err, retries, note=note) from err
            waits.append(wait)
            await self._sleep(wait)
            retries += 1

    def _describe(self, exc: Exception) -> tuple[str, str]:
        """(code, human text) for a transport/HTTP failure; never includes the key."""
        if rt.is_context_overflow(exc):
            window = f" of {self.context_window} tokens" if self.context_window else ""
            return "context_overflow", (
                f"context overflow (HTTP 400): the prompt and max_tokens do not fit the "
                f"server's context window{window}: {rt.error_message(exc)}"
            )
        if isinstance(exc, openai.APITimeoutError):
            return "timeout", f"timed out after {self.timeout_s:g} s"
        if isinstance(exc, openai.APIConnectionError):
            return "connection", f"cannot connect to {self.base_url or 'the OpenAI API'}"
        if isinstance(exc, openai.AuthenticationError):
            return "http_401", "HTTP 401: the endpoint rejected the API key"
        if isinstance(exc, openai.APIStatusError):
            message = exc.message
            body = exc.body
            if isinstance(body, dict):
                inner = body.get("error", body)
                if isinstance(inner, dict) and isinstance(inner.get("message"), str):
                    message = inner["message"]
            return f"http_{exc.status_code}", f"HTTP {exc.status_code}: {message}"
        return "error", f"{type(exc).__name__}: {exc}"

    def _fail(
        self, record: CallRecord, code: str, text: str, records: list[CallRecord]
    ) -> ModelCallError:
        text = self._redact(text)
        record.error = text
        where = f"{record.kind} call (session {record.session}, model {record.model})"
        tries = (
            f" after {record.retries} retr{'y' if record.retries == 1 else 'ies'}"
            if record.retries
            else ""
        )
        return ModelCallError(f"{where} failed{tries}: {text}", code=code, records=records)

    # -- chat ------------------------------------------------------------------

    async def _chat(
        self,
        *,
        kind: str,
        session: int,
        messages: list[dict[str, str]],
        max_tokens: int,
        internal: bool,
        schema: type[BaseModel] | None = None,
        repair: bool = False,
        prior: Sequence[CallRecord] = (),
        wire: dict[str, Any] | None = None,
        dialect: str | None = None,
    ) -> tuple[str, CallRecord]:
        # ~80 lines, kept whole on purpose: one loop holds the call's three fall-backs (HTTP
        # retries, json_schema -> json_object, max_tokens -> max_completion_tokens) and the one
        # record every outcome leaves; the request and reply halves are _request and _reply.
        fmt = self._format_for(schema)
        common: dict[str, Any] = dict(
            kind=kind, model=self.model, session=session, internal=internal, repair=repair
        )
        common.update(max_tokens=max_tokens, schema_dialect=dialect if wire is not None else None)
        start = time.perf_counter()
        retries = 0
        fell_back = False
        waits: list[float] = []
        while True:
            sent, kwargs = self._request(messages, max_tokens, schema, fmt, wire)
            oa = self._client()

            def make(
                sent: list[dict[str, str]] = sent,
                kwargs: dict[str, Any] = kwargs,
                oa: openai.AsyncOpenAI = oa,
            ) -> Any:
                return _post_chat(
                    oa, self.model, sent, self._headers(kind, session), self.timeout_s, kwargs
                )

            may_fall_back = fmt == "json_schema" and self.response_format == "auto"
            may_fall_back = may_fall_back and not fell_back
            negotiating = may_fall_back and self.json_schema_supported is None
            try:
                response, r = await self._with_retries(make, waits, negotiating=negotiating)
                retries += r
                break
            except _Exhausted as ex:
                retries += ex.retries
                exc = ex.exc
                if may_fall_back and self._is_format_refusal(exc, unknown=negotiating):
                    fmt, fell_back, retries = "json_object", True, retries + 1
                    continue
                bad_request = isinstance(
                    exc, openai.BadRequestError | openai.UnprocessableEntityError
                )
                if (
                    bad_request
                    and self.token_param == "max_tokens"
                    and "max_completion_tokens" in str(exc)
                ):
                    self.token_param, retries = "max_completion_tokens", retries + 1
                    continue
                record = CallRecord(
                    **common,
                    latency_s=time.perf_counter() - start,
                    retries=retries,
                    waited_s=round(sum(waits), 3),
                    request_text=render_messages(sent),
                    response_format=fmt,
                )
                self.calls.append(record)
                code, text = self._describe(exc)
                if ex.note:
                    text = f"{text}; {ex.note}"
                raise self._fail(record, code, text, [*prior, record]) from None
        if fell_back and self.json_schema_supported is None:
            self.json_schema_supported = False  # negotiated once, for the client's lifetime
        elif fmt == "json_schema":
            self.json_schema_supported = True
        record = CallRecord(
            **common,
            latency_s=time.perf_counter() - start,
            retries=retries,
            waited_s=round(sum(waits), 3),
            request_text=render_messages(sent),
            response_format=fmt,
        )
        return self._reply(response, record, prior)

    def _format_for(self, schema: type[BaseModel] | None) -> str | None:
        """The response format a call with ``schema`` uses now (None: free text)."""
        if schema is None:
            return None
        if self.response_format != "auto":
            return self.response_format
        return "json_object" if self.json_schema_supported is False else "json_schema"

    @staticmethod
    def _is_format_refusal(exc: Exception, *, unknown: bool) -> bool:
        """A refusal of this call's ``json_schema``: 400/422 (not a context overflow; this
        call then uses ``json_object``), or, while support is unknown, the 500
        llama-cpp-python answers with."""
        if rt.is_context_overflow(exc):
            return False
        status = rt.status_of(exc)
        return status in (400, 422) or (unknown and status == 500)

    def _request(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        schema: type[BaseModel] | None,
        fmt: str | None,
        wire: dict[str, Any] | None = None,
        object_schema: bool | None = None,
    ) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """The messages to send and the request's extra arguments for response format ``fmt``
        (``object_schema``: whether json_object carries the schema; default the client's)."""
        sent = list(messages)
        kwargs: dict[str, Any] = {self.token_param: max_tokens}
        # response_format travels in extra_body: merged into the JSON body as it is, so the
        # openai client does not walk the whole schema on every call (its typed-param
        # transform); the wire request is identical.
        if schema is not None and fmt == "json_schema":
            kwargs["extra_body"] = {"response_format": schema_response_format(schema, wire)}
        elif schema is not None:
            sent = with_schema_in_last_user_turn(messages, schema, wire)
            if fmt == "json_object":
                rf: dict[str, Any] = {"type": "json_object"}
                if self.json_object_schema if object_schema is None else object_schema:
                    rf["schema"] = wire if wire is not None else _schema_of(schema)
                kwargs["extra_body"] = {"response_format": rf}
        return sent, kwargs

    def _reply(
        self, response: Any, record: CallRecord, prior: Sequence[CallRecord] = ()
    ) -> tuple[str, CallRecord]:
        """Complete ``record`` from a chat response (text, usage, finish reason, refusal):
        the parsed JSON ``_post_chat`` returns. A reply over ``max_reply_bytes`` fails the
        call; the record keeps an excerpt."""
        fields = wire.reply_fields_of_json(response)
        content = fields.content or ""
        refusal = fields.refusal
        if not content and refusal:
            content = str(refusal)
        content, record.replaced_chars = replace_unstorable(content)  # lone surrogates
        record.prompt_tokens = fields.prompt_tokens
        record.completion_tokens = fields.completion_tokens
        record.finish_reason = fields.finish_reason
        record.response_text = content
        if refusal and not fields.content:
            record.refusal = True
        self.calls.append(record)
        size = len(content.encode("utf-8", "replace"))
        if size > self.max_reply_bytes:
            record.response_text = reply_excerpt(content)
            raise self._fail(
                record,
                "oversized",
                f"the reply is {size} bytes, over the {self.max_reply_bytes}-byte cap "
                "(--max-reply-kb)",
                [*prior, record],
            )
        return content, record

    async def get_json(self, url: str) -> Any:
        """GET ``url`` (absolute, or relative to the base URL) with the endpoint's key; the
        parsed JSON, or None when the server has no such path or answers something else."""
        oa = self._client()
        try:
            # cast_to=object: the parsed JSON body as it is
            return await oa.get(url, cast_to=object, options={"timeout": self.timeout_s})
        except (openai.APIError, ValueError):
            return None

    async def probe_chat(
        self,
        *,
        messages: list[dict[str, str]],
        fmt: str,
        schema: type[BaseModel],
        max_tokens: int,
        object_schema: bool = False,
    ) -> tuple[str, float, str | None]:
        """One probe request in response format ``fmt`` (the endpoint probe's trial): the
        reply text, seconds taken and finish reason. No record is kept; a 500 is not retried (it is the
        answer). Raises :class:`ModelCallError` with the failure's code."""
        sent, kwargs = self._request(messages, max_tokens, schema, fmt, object_schema=object_schema)
        oa = self._client()
        start = time.perf_counter()

        def make() -> Any:
            return oa.chat.completions.create(
                model=self.model,
                messages=sent,  # type: ignore[arg-type]
                extra_headers=self._headers("probe", 0),
                timeout=self.timeout_s,
                **kwargs,
            )

        try:
            response, _ = await self._with_retries(make, [], negotiating=True)
        except _Exhausted as ex:
            code, text = self._describe(ex.exc)
            raise ModelCallError(self._redact(text), code=code, records=[]) from None
        choice = response.choices[0] if response.choices else None
        content = (choice.message.content if choice is not None else None) or ""
        finish = choice.finish_reason if choice is not None else None
        return content, time.perf_counter() - start, finish

    async def complete(
        self,
        *,
        kind: str,
        session: int,
        messages: list[dict[str, str]],
        max_tokens: int,
        internal: bool,
    ) -> tuple[str, CallRecord]:
        """A free-text call. ``finish_reason: length`` is recorded, not an error."""
        return await self._chat(
            kind=kind, session=session, messages=messages, max_tokens=max_tokens, internal=internal
        )

    async def structured(
        self,
        *,
        kind: str,
        session: int,
        messages: list[dict[str, str]],
        schema: type[M],
        max_tokens: int,
        internal: bool,
        validator: Callable[[M], None] | None = None,
        wire_schema: dict[str, Any] | None = None,
        dialect: str | None = None,
    ) -> tuple[M, CallRecord]:
        """A JSON call validated against ``schema`` (and ``validator``, which raises ValueError).

        ``wire_schema`` is the call's own JSON schema (sent instead of ``schema``'s; recorded
        with its ``dialect``), built with ``validator`` from one ``CallSpec``.

        One repair retry on invalid JSON / schema violation / validator failure /
        refusal; then :class:`ModelCallError` (``code`` = ``invalid_json``,
        ``schema_violation`` or ``length`` when the failing reply was truncated)
        with both records. A truncated reply that still validates is accepted.
        """
        records: list[CallRecord] = []
        convo = list(messages)
        for attempt in (0, 1):
            content, record = await self._chat(
                kind=kind,
                session=session,
                messages=convo,
                max_tokens=max_tokens,
                internal=internal,
                schema=schema,
                repair=attempt == 1,
                prior=records,
                wire=wire_schema,
                dialect=dialect,
            )
            records.append(record)
            code, problem = "schema_violation", ""
            if record.refusal:
                code, problem = "refusal", f"the model refused: {content}"
            else:
                try:
                    data = parse_json_object(content)
                except ValueError as exc:
                    code, problem = "invalid_json", str(exc)
                else:
                    # a parsed string is no longer than the text it came from
                    longest = _longest_string(data) if len(content) > self.max_field_chars else 0
                    if longest > self.max_field_chars:
                        record.response_text = reply_excerpt(content)
                        raise self._fail(
                            record,
                            "oversized",
                            f"a field of the reply is {longest} characters, over the "
                            f"{self.max_field_chars}-character cap (--max-field-kb)",
                            records,
                        )
                    data, n_escaped = replace_unstorable_in_json(data, content)  # "\ud800"
                    record.replaced_chars += n_escaped
                    try:
                        value = schema.model_validate(data)
                        if validator is not None:
                            validator(value)
                        record.earlier = records[:-1]
                        return value, record
                    except ValidationError as exc:
                        problem = describe_validation_error(exc)
                    except ValueError as exc:
                        problem = f"the reply breaks a rule: {exc}"
            if record.finish_reason == "length":
                code = "length"
                problem = f"the reply was cut off at the {max_tokens}-token limit, and {problem}"
            if attempt == 1:
                raise self._fail(record, code, problem, records)
            record.error = self._redact(problem)
            convo = repair_turn(messages, content, problem, truncated=code == "length")
        raise AssertionError("unreachable")

    # -- embeddings ------------------------------------------------------------

    async def embed(
        self,
        texts: list[str],
        *,
        session: int,
        kind: str = "embeddings",
        model: str | None = None,
    ) -> tuple[list[list[float]], CallRecord]:
        """Embed ``texts`` (one request). Empty strings are sent as a single space."""
        model_name = model or self.embedding_model
        if not model_name:
            raise ModelConfigError("no embedding model configured: pass --embedding-model")
        request = [t if t else " " for t in texts]
        start = time.perf_counter()
        record = CallRecord(
            kind=kind,
            model=model_name,
            session=session,
            internal=True,
            request_text=json.dumps(request, ensure_ascii=False),
            response_format="embeddings",
        )
        if not request:
            return [], record
        oa = self._client(embeddings=True)

        def make() -> Any:
            return oa.embeddings.create(
                model=model_name,
                input=request,
                encoding_format="float",
                extra_headers=self._headers(kind, session),
                timeout=self.timeout_s,
            )

        waits: list[float] = []
        try:
            response, retries = await self._with_retries(make, waits)
        except _Exhausted as ex:
            record.retries = ex.retries
            record.waited_s = round(sum(waits), 3)
            record.latency_s = time.perf_counter() - start
            self.calls.append(record)
            code, text = self._describe(ex.exc)
            if ex.note:
                text = f"{text}; {ex.note}"
            raise self._fail(record, code, text, [record]) from None
        record.retries = retries
        record.waited_s = round(sum(waits), 3)
        record.latency_s = time.perf_counter() - start
        data = sorted(response.data, key=lambda d: d.index)
        vectors = [list(map(float, d.embedding)) for d in data]
        if len(vectors) != len(request):
            self.calls.append(record)
            raise self._fail(
                record,
                "embeddings",
                f"asked for {len(request)} embeddings, got {len(vectors)}",
                [record],
            )
        usage = getattr(response, "usage", None)
        record.prompt_tokens = (getattr(usage, "prompt_tokens", 0) or 0) if usage else 0
        dim = len(vectors[0]) if vectors else 0
        record.finish_reason = "stop"
        record.response_text = f"{len(vectors)} vectors of dimension {dim}"
        self.calls.append(record)
        return vectors, record
