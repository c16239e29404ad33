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
  record, no error message (they are redacted as a second guard) and no repr;
  a reply that echoes it has it replaced by ``[redacted]`` before anything reads
  the reply, so no journal, projection, pack or rater copy can hold it.
* Model text is returned verbatim: nothing is stripped or escaped here;
  display code escapes it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import openai
from pydantic import BaseModel

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.modelio import retry as rt
from curiosity_tui.modelio import wire
from curiosity_tui.modelio.chat_call import (
    call_record,
    chat_body,
    prepare_body,
    reply_identity,
)
from curiosity_tui.modelio.json_reply import (
    read_reply,
    repair_turn,
    reply_excerpt,
    schema_of,
    schema_response_format,
    with_schema_in_last_user_turn,
)
from curiosity_tui.modelio.openai_clients import close_clients, openai_client, pool_key
from curiosity_tui.modelio.reply_cache import REPLAY_MISS, answer_current, keep_accepted
from curiosity_tui.modelio.run_context import run_headers
from curiosity_tui.modelio.sampling import call_sampling, note_refusal
from curiosity_tui.textsafe import replace_unstorable

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


def _post_chat(
    oa: openai.AsyncOpenAI,
    model: str,
    messages: list[dict[str, str]],
    headers: dict[str, str],
    timeout: float,
    kwargs: dict[str, Any],
) -> Any:
    """``oa.chat.completions.create`` without its typed-params transform (a walk over every
    message and the schema, about 1 ms of CPU a call, issue 14.5): openai's public ``post``
    for the same wire request (``kwargs``: the token limit and ``extra_body``), openai's
    errors. The reply comes back as parsed JSON (``cast_to=object``), read by
    ``wire.reply_fields_of_json``."""
    body = chat_body(model, messages, kwargs)
    options: Any = {"headers": headers, "timeout": timeout}
    return oa.post("/chat/completions", cast_to=object, body=body, options=options)


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
        self.refused_sampling: dict[str, str] = {}  # parameter -> the server's 400 (sampling.py)
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
        self._pool_key = pool_key(self.base_url, key, timeout_s)
        self._embed_pool_key = (self.embedding_base_url, *self._pool_key[1:])

    def __repr__(self) -> str:
        return f"ModelClient(base_url={self.base_url!r}, model={self.model!r})"

    # -- plumbing ------------------------------------------------------------

    def _client(self, *, embeddings: bool = False) -> openai.AsyncOpenAI:
        separate = embeddings and self.embedding_base_url is not None
        return openai_client(
            self._embed_pool_key if separate else self._pool_key,
            api_key=self._key,
            base_url=self.embedding_base_url if separate else self.base_url,
            timeout_s=self.timeout_s,
        )

    async def aclose(self) -> None:
        """Close this endpoint's connections in the running event loop (a later call reconnects).

        Clients for the same endpoint share connections within a loop; closing is optional
        (they are released with the loop) but tidy at the end of a program.
        """
        await close_clients((self._pool_key, self._embed_pool_key))

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _redact(self, text: str) -> str:
        """``text`` without this client's key, as written or as a JSON string escapes it."""
        if self._key and self._key != NO_KEY_PLACEHOLDER and len(self._key) >= 4:
            text = text.replace(self._key, "[redacted]")
            escaped = json.dumps(self._key, ensure_ascii=False)[1:-1]
            if escaped != self._key:
                text = text.replace(escaped, "[redacted]")
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
        after_cut: bool = False,
    ) -> tuple[str, CallRecord]:
        # kept whole on purpose: one loop, every fall-back, one record (halves: _request, _reply)
        fmt = self._format_for(schema)
        common: dict[str, Any] = dict(
            kind=kind, model=self.model, session=session, internal=internal, repair=repair
        )
        common.update(max_tokens=max_tokens, schema_dialect=dialect if wire is not None else None)
        common.update(started_at=utc_now_micro())
        sampled = call_sampling(kind, session, set(self.refused_sampling), after_cut=after_cut)
        start = time.perf_counter()
        retries = 0
        fell_back = False
        waits: list[float] = []
        while True:
            sent, kwargs = self._request(messages, max_tokens, schema, fmt, wire)
            prepare_body(self.model, kwargs, sent, sampled, common)
            hit = self._from_cache(common, prior, repair)  # a resumed session or a replay
            if hit is not None:
                return hit
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
                text = self._redact(self._describe(exc)[1])
                if note_refusal(self.refused_sampling, exc, text, sampled):  # not sent again
                    sampled = call_sampling(
                        kind, session, set(self.refused_sampling), after_cut=after_cut
                    )
                    retries += 1
                    continue
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
                record = call_record(common, start, retries, waits, sent, fmt)
                self.calls.append(record)
                code, text = self._describe(exc)
                if ex.note:
                    text = f"{text}; {ex.note}"
                raise self._fail(record, code, text, [*prior, record]) from None
        if fell_back and self.json_schema_supported is None:
            self.json_schema_supported = False  # negotiated once, for the client's lifetime
        elif fmt == "json_schema":
            self.json_schema_supported = True
        record = call_record(common, start, retries, waits, sent, fmt)
        content, record = self._reply(response, record, prior)
        keep_accepted(session, [record] if schema is None else [])  # free text: as it came
        return content, record

    def _from_cache(
        self, common: dict[str, Any], prior: Sequence[CallRecord], repair: bool
    ) -> tuple[str, CallRecord] | None:
        """The recorded reply to this request (reply_cache.py); a replay's miss fails the call."""
        record = answer_current(common, repair=repair)
        if record is None:
            return None
        self.calls.append(record)
        if record.cached:
            return record.response_text, record
        raise self._fail(record, "replay_miss", REPLAY_MISS, [*prior, record])

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
                    rf["schema"] = wire if wire is not None else schema_of(schema)
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
        content = self._redact(content)  # an echoed key is never recorded (decision 402)
        record.prompt_tokens = fields.prompt_tokens
        record.completion_tokens = fields.completion_tokens
        record.finish_reason = fields.finish_reason
        record.response_text = content
        record.response_model, record.system_fingerprint = reply_identity(response)  # 23.2
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
        extra: dict[str, Any] | None = None,
    ) -> tuple[str, float, str | None]:
        """One probe request in format ``fmt`` (``extra``: the sampling trial's): reply text, seconds,
        finish reason. No record; a 500 is not retried (it is the answer). ModelCallError."""
        sent, kwargs = self._request(messages, max_tokens, schema, fmt, object_schema=object_schema)
        kwargs.update(extra or {})
        oa = self._client()
        start = time.perf_counter()

        def make() -> Any:
            return oa.chat.completions.create(
                model=self.model,
                messages=sent,  # type: ignore[arg-type]
                extra_headers=self._headers("probe-sampling" if extra else "probe", 0),
                timeout=self.timeout_s,
                **kwargs,
            )

        try:
            response, _ = await self._with_retries(make, [], negotiating=True)
        except _Exhausted as ex:
            code, text = self._describe(ex.exc)
            raise ModelCallError(self._redact(text), code=code, records=[]) from None
        choice = response.choices[0] if response.choices else None
        content = self._redact((choice.message.content if choice is not None else None) or "")
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
        shorter_schema: Callable[[], dict[str, Any]] | None = None,
    ) -> tuple[M, CallRecord]:
        """A JSON call validated against ``schema`` (and ``validator``, which raises ValueError).

        ``wire_schema`` is the call's own JSON schema (sent instead of ``schema``'s; recorded
        with its ``dialect``), built with ``validator`` from one ``CallSpec``;
        ``shorter_schema`` gives the one the retry after a reply cut at its cap sends (the
        call's optional parts bounded tighter, ``CallSpec.shorter``; issue 27).

        One repair retry on invalid JSON / schema violation / validator failure /
        refusal; then :class:`ModelCallError` (``code`` = ``invalid_json``,
        ``schema_violation`` or ``length`` when the failing reply was truncated)
        with both records. A truncated reply that still validates is accepted.
        """
        records: list[CallRecord] = []
        convo = list(messages)
        shorter: dict[str, Any] | None = None
        cut = False  # the retry after a cut asks with its own seed and a repetition penalty
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
                wire=wire_schema if attempt == 0 or shorter is None else shorter,
                dialect=dialect,
                after_cut=cut,
            )
            records.append(record)
            if record.refusal:
                code, problem = "refusal", f"the model refused: {content}"
            else:
                read = read_reply(content, schema, validator, self.max_field_chars)
                if read.code == "oversized":
                    record.response_text = reply_excerpt(content)
                    raise self._fail(record, "oversized", read.problem, records)
                record.replaced_chars += read.replaced
                if read.value is not None:
                    record.earlier = records[:-1]
                    keep_accepted(session, records)  # for a resume, with its repair
                    return read.value, record
                code, problem = read.code, read.problem
            if record.finish_reason == "length":
                code = "length"
                problem = f"the reply was cut off at the {max_tokens}-token limit, and {problem}"
            if attempt == 1:
                raise self._fail(record, code, problem, records)
            record.error = self._redact(problem)
            cut = code == "length"
            convo = repair_turn(messages, content, problem, truncated=cut)
            if cut and shorter_schema is not None and wire_schema is not None:
                shorter = shorter_schema()
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
            started_at=utc_now_micro(),
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
            record.ended_at = utc_now_micro()
            self.calls.append(record)
            code, text = self._describe(ex.exc)
            if ex.note:
                text = f"{text}; {ex.note}"
            raise self._fail(record, code, text, [record]) from None
        record.retries = retries
        record.waited_s = round(sum(waits), 3)
        record.latency_s = time.perf_counter() - start
        record.ended_at = utc_now_micro()
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
