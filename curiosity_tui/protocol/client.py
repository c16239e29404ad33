"""The model client: chat completions and embeddings over ``openai.AsyncOpenAI``.

Works with any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp
server). Every request carries ``X-Curiosity-Call: <kind>`` and
``X-Curiosity-Session: <n>``; every call — success or failure — leaves one
:class:`CallRecord` in ``ModelClient.calls``, which the session record stores.

* Retries: HTTP 408/409/429/5xx, timeouts and connection errors are retried
  up to ``max_retries`` times with exponential backoff (``retry_backoff_s``,
  doubled each time); the count is the record's ``retries``.
* Structured calls send ``response_format: json_schema`` derived from the
  pydantic model; a server that rejects it (HTTP 400/422) gets
  ``json_object`` plus the schema in a system message, and the client
  remembers that for its lifetime. The reply is parsed and validated; on
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
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.models import CallRecord

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

NO_KEY_PLACEHOLDER = "no-key"  # local servers (vLLM, Ollama, llama.cpp) ignore the key


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
    """The system message added when the server only supports ``json_object``."""
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


_RETRYABLE_STATUS = {408, 409, 429}

# One openai client per (event loop, endpoint, key, timeout), shared by every ModelClient and
# released with its loop. httpx connections cannot cross loops; and an AsyncOpenAI dropped
# unclosed inside a *running* loop lets asyncio close its sockets behind the selector's back,
# after which new connections of that loop can hang until they time out (observed with 200
# concurrent calls after a discarded client). Holding the clients here for the loop's lifetime
# means dropping a ModelClient is always safe. The key enters only as a sha256 digest.
_POOL: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[Any, ...], openai.AsyncOpenAI]
] = weakref.WeakKeyDictionary()


class _Exhausted(Exception):
    def __init__(self, exc: Exception, retries: int):
        super().__init__(str(exc))
        self.exc = exc
        self.retries = retries


class ModelClient:
    """Chat completions and embeddings for one endpoint and model."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str,
        embedding_model: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        retry_backoff_s: float = 1.0,
        token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
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
        self.calls: list[CallRecord] = []
        self._pool_key = (
            self.base_url,
            hashlib.sha256(key.encode("utf-8")).hexdigest(),
            timeout_s,
        )

    def __repr__(self) -> str:
        return f"ModelClient(base_url={self.base_url!r}, model={self.model!r})"

    # -- plumbing ------------------------------------------------------------

    def _client(self) -> openai.AsyncOpenAI:
        per_loop = _POOL.setdefault(asyncio.get_running_loop(), {})
        oa = per_loop.get(self._pool_key)
        if oa is None:
            oa = openai.AsyncOpenAI(
                api_key=self._key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s
            )
            per_loop[self._pool_key] = oa
        return oa

    async def aclose(self) -> None:
        """Close this endpoint's connections in the running event loop (a later call reconnects).

        Clients for the same endpoint share connections within a loop; closing is optional
        (they are released with the loop) but tidy at the end of a program.
        """
        per_loop = _POOL.get(asyncio.get_running_loop(), {})
        oa = per_loop.pop(self._pool_key, None)
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
        return {"X-Curiosity-Call": kind, "X-Curiosity-Session": str(session)}

    async def _with_retries(self, make: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        retries = 0
        while True:
            try:
                return await make(), retries
            except (openai.APIConnectionError, openai.InternalServerError) as exc:
                err: Exception = exc
            except openai.APIStatusError as exc:
                if exc.status_code not in _RETRYABLE_STATUS:
                    raise _Exhausted(exc, retries) from exc
                err = exc
            if retries >= self.max_retries:
                raise _Exhausted(err, retries) from err
            await asyncio.sleep(self.retry_backoff_s * (2**retries))
            retries += 1

    def _describe(self, exc: Exception) -> tuple[str, str]:
        """(code, human text) for a transport/HTTP failure; never includes the key."""
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
        fmt: str | None = None
        if schema is not None:
            fmt = "json_object" if self.json_schema_supported is False else "json_schema"
        common: dict[str, Any] = dict(
            kind=kind, model=self.model, session=session, internal=internal, repair=repair
        )
        common.update(max_tokens=max_tokens, schema_dialect=dialect if wire is not None else None)
        start = time.perf_counter()
        retries = 0
        fell_back = False
        while True:
            sent, kwargs = self._request(messages, max_tokens, schema, fmt, wire)
            oa = self._client()

            def make(
                sent: list[dict[str, str]] = sent,
                kwargs: dict[str, Any] = kwargs,
                oa: openai.AsyncOpenAI = oa,
            ) -> Any:
                return oa.chat.completions.create(
                    model=self.model,
                    messages=sent,  # type: ignore[arg-type]
                    extra_headers=self._headers(kind, session),
                    timeout=self.timeout_s,
                    **kwargs,
                )

            try:
                response, r = await self._with_retries(make)
                retries += r
                break
            except _Exhausted as ex:
                retries += ex.retries
                exc = ex.exc
                bad_request = isinstance(
                    exc, openai.BadRequestError | openai.UnprocessableEntityError
                )
                if bad_request and fmt == "json_schema" and not fell_back:
                    fmt, fell_back, retries = "json_object", True, retries + 1
                    continue
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
                    request_text=render_messages(sent),
                    response_format=fmt,
                )
                self.calls.append(record)
                code, text = self._describe(exc)
                raise self._fail(record, code, text, [*prior, record]) from None
        if fell_back:
            self.json_schema_supported = False
        elif fmt == "json_schema":
            self.json_schema_supported = True
        record = CallRecord(
            **common,
            latency_s=time.perf_counter() - start,
            retries=retries,
            request_text=render_messages(sent),
            response_format=fmt,
        )
        return self._reply(response, record)

    def _request(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        schema: type[BaseModel] | None,
        fmt: str | None,
        wire: dict[str, Any] | None = None,
    ) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """The messages to send and the request's extra arguments for response format ``fmt``."""
        sent = list(messages)
        kwargs: dict[str, Any] = {self.token_param: max_tokens}
        # response_format travels in extra_body: merged into the JSON body as it is, so the
        # openai client does not walk the whole schema on every call (its typed-param
        # transform); the wire request is identical.
        if schema is not None and fmt == "json_schema":
            kwargs["extra_body"] = {"response_format": schema_response_format(schema, wire)}
        elif schema is not None:
            sent = [*messages, {"role": "system", "content": schema_instruction(schema, wire)}]
            kwargs["extra_body"] = {"response_format": {"type": "json_object"}}
        return sent, kwargs

    def _reply(self, response: Any, record: CallRecord) -> tuple[str, CallRecord]:
        """Complete ``record`` from a chat response (text, usage, finish reason, refusal)."""
        choice = response.choices[0] if response.choices else None
        message = choice.message if choice is not None else None
        content = (message.content if message is not None else None) or ""
        refusal = getattr(message, "refusal", None) if message is not None else None
        if not content and refusal:
            content = str(refusal)
        usage = response.usage
        record.prompt_tokens = (usage.prompt_tokens or 0) if usage else 0
        record.completion_tokens = (usage.completion_tokens or 0) if usage else 0
        record.finish_reason = choice.finish_reason if choice is not None else None
        record.response_text = content
        if refusal and not (message is not None and message.content):
            record.refusal = True
        self.calls.append(record)
        return content, record

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
        oa = self._client()

        def make() -> Any:
            return oa.embeddings.create(
                model=model_name,
                input=request,
                encoding_format="float",
                extra_headers=self._headers(kind, session),
                timeout=self.timeout_s,
            )

        try:
            response, retries = await self._with_retries(make)
        except _Exhausted as ex:
            record.retries = ex.retries
            record.latency_s = time.perf_counter() - start
            self.calls.append(record)
            code, text = self._describe(ex.exc)
            raise self._fail(record, code, text, [record]) from None
        record.retries = retries
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
