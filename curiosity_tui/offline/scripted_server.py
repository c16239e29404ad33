"""A scripted OpenAI-compatible model server on 127.0.0.1 (tests, demo, benchmark).

It is a real HTTP server (stdlib ``ThreadingHTTPServer`` in a background
thread) speaking ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and
``GET /v1/models`` in the OpenAI wire format, so the real ``openai`` client
talks to it unchanged. Replies come from a :class:`Script`, keyed by the call
kind (``X-Curiosity-Call`` header) and session (``X-Curiosity-Session``):

1. the first rule matching (kind, session) that still has uses left;
2. else the ``responder`` hook, if given and it returns something;
3. else the script's default reply for the kind;
4. else HTTP 400 naming the kind and session (a script gap is a test bug).

Faults a rule can inject: ``http_429`` (with ``Retry-After`` when the rule's ``retry_after_s``
is set), ``http_408/409/500/501/502/503/504``, ``timeout`` (the
request hangs until the client gives up), ``invalid_json`` (the reply cut in
half), ``schema_violation`` (a JSON object of the wrong shape, or the rule's
reply as given), ``length`` (the reply cut in half with ``finish_reason:
length``), ``refusal`` (``content: null`` and the reply as ``message.refusal``, as
OpenAI structured outputs do). Replies longer than the request's ``max_tokens`` (by the server's
deterministic token estimate) are cut and end on ``length``, as a real server
would. A JSON reply scripted in the stored shape of a judge-before, judge-after or deliverable
goes out in the wire shape the request asks for (``reply_shapes.to_wire``). Every request is recorded (headers without the Authorization value,
and the JSON body) for tests to inspect.

Server behaviours the endpoint probe and the retry policy are tested against (constructor
flags): ``json_schema_status`` (500 plays llama-cpp-python, which answers a strict
``json_schema`` with HTTP 500), ``embeddings=False`` (HTTP 501 as llama-server without
``--embeddings``), ``context_window`` (a 400 ``exceed_context_size_error`` when the prompt
estimate plus ``max_tokens`` do not fit; also reported by ``GET /v1/models``), ``llama_props``
(``GET /props`` as llama.cpp: ``default_generation_settings.n_ctx``, ``total_slots``) and
``one_slot`` (one chat request served at a time, as a one-slot llama-server), ``rejects``
(request parameters answered with a 400 naming them, as a server without ``seed``),
``system_fingerprint`` (sent with every chat reply) and ``props_extra`` (more of ``/props``:
``model_path``, ``build_info``, ``chat_template``). Probe requests
(kind ``probe``) get a reply that follows the request's schema when no rule answers them.

Usage::

    with ScriptedServer(Script(defaults={"candidate": "An answer."})) as server:
        client = ModelClient(base_url=server.base_url, api_key="x", model="scripted")
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import re
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curiosity_tui.errors import InputError
from curiosity_tui.modelio.call_schemas import slots_from_lists
from curiosity_tui.modelio.schema_text import PREAMBLE
from curiosity_tui.protocol.reply_shapes import OTHER_WIRE_MODELS, WIRE_MODEL_OF_KIND, to_wire

Fault = Literal[
    "http_408",
    "http_409",
    "http_429",
    "http_500",
    "http_501",
    "http_502",
    "http_503",
    "http_504",
    "timeout",
    "invalid_json",
    "schema_violation",
    "length",
    "refusal",
]
ReplyContent = str | dict[str, Any] | list[Any]
_STATUS_FAULTS: dict[int, tuple[str, str]] = {
    408: ("scripted: request timeout", "timeout_error"),
    409: ("scripted: conflict", "conflict_error"),
    500: ("scripted server error", "server_error"),
    501: ("scripted: not implemented", "not_supported_error"),
    502: ("scripted: bad gateway", "server_error"),
    503: ("scripted: loading model", "unavailable_error"),
    504: ("scripted: gateway timeout", "server_error"),
}

SCRIPTED_MODEL = "scripted"
#: the sampling defaults ``GET /props`` reports with ``llama_props`` (as llama-server's)
LLAMA_DEFAULTS = {"temperature": 0.8, "top_p": 0.95, "top_k": 40, "min_p": 0.05, "seed": -1}
EMBEDDING_DIM = 64
SCHEMA_VIOLATION_REPLY = {"unexpected": "this object does not follow the requested schema"}


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate used for usage figures: about four characters a token."""
    return (len(text) + 3) // 4


def hashed_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic unit vector: a bag of hashed lower-case words (similar texts are close)."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(v * v for v in vec) ** 0.5
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return [v / norm for v in vec]


class Reply(BaseModel):
    """What the server answers for one request."""

    model_config = ConfigDict(extra="forbid")

    reply: ReplyContent = ""
    finish_reason: str = "stop"
    completion_tokens: int | None = Field(
        default=None, description="Override of the usage figure; default: the token estimate."
    )
    latency_ms: int = 0
    fault: Fault | None = None
    retry_after_s: float | None = Field(
        default=None, description="Retry-After header (seconds) sent with an http_429 fault."
    )


class ScriptRule(Reply):
    """A reply for matching requests: ``kind`` and optionally ``session``."""

    kind: str
    session: int | None = None
    times: int | None = Field(
        default=None,
        description="How many requests this rule serves before later matching rules apply; null = all.",
    )


class Script(BaseModel):
    """Rules tried in order, then a default reply per kind; plus fixed embedding vectors."""

    model_config = ConfigDict(extra="forbid")

    rules: list[ScriptRule] = Field(default_factory=list)
    defaults: dict[str, ReplyContent | Reply] = Field(default_factory=dict)
    embeddings: dict[str, list[float]] = Field(
        default_factory=dict, description="Text → vector overrides for /v1/embeddings."
    )

    @classmethod
    def load(cls, path: str | Path) -> Script:
        path = Path(path)
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"cannot read script {path}: {exc.strerror}") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InputError(f"invalid script {path}: {where}: {first['msg']}") from exc


Responder = Callable[..., ReplyContent | Reply | None]
"""responder(kind, session, request_json) -> reply, a Reply (to inject faults), or None to fall
through. A responder whose signature has a ``run`` parameter also gets the request's
``X-Curiosity-Run`` header (``""`` when absent) as ``run=``: seeded responders draw from it."""


def _takes_run(responder: Responder | None) -> bool:
    if responder is None:
        return False
    try:
        return "run" in inspect.signature(responder).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False


class RecordedRequest(BaseModel):
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def kind(self) -> str | None:
        return self.headers.get("x-curiosity-call")

    @property
    def run(self) -> str | None:
        return self.headers.get("x-curiosity-run")

    @property
    def session(self) -> int | None:
        value = self.headers.get("x-curiosity-session")
        return int(value) if value is not None and value.lstrip("-").isdigit() else None


class _HTTPError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.type_ = type_
        self.headers = headers or {}


def probe_reply(body: dict[str, Any], counts: bool = False) -> dict[str, Any]:
    """A reply to an endpoint probe that follows its schema, as constrained decoding would:
    each property's first enum value (the probe's schema is one enum property). ``counts``
    (a llama.cpp grammar) also follows the dialect trial's item counts and lengths."""
    fmt = body.get("response_format") or {}
    # json_schema, or json_object with a "schema" key (llama.cpp / llama-cpp-python's extension)
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        values = prop.get("enum") or ([prop["const"]] if "const" in prop else None)
        out[name] = values[0] if values else "x"
        if counts and prop.get("type") == "array":
            item = prop.get("items") or {}
            out[name] = [item.get("const") or item.get("enum", ["x"])[0]] * prop["minItems"]
        elif counts and "minLength" in prop:
            out[name] = "x" * prop["minLength"]
    return out or {"probe": "curiosity-probe-7f3a"}


def _shaped(kind: str, body: dict[str, Any], reply: Any) -> Any:
    """A reply scripted in the stored shape, in the wire shape the request asks for (issue 27):
    where the request's schema (in any response format) is the kind's wire model; and every
    list the schema sends as slots (the strict dialect's bounded lists) as those slots."""
    name = WIRE_MODEL_OF_KIND.get(kind)
    sent = json.dumps(body, ensure_ascii=False)
    names = (name, *OTHER_WIRE_MODELS.get(kind, ())) if name else ()
    if any(n in sent for n in names):
        reply = to_wire(kind, reply)
    schema = _request_schema(body)
    return reply if schema is None else slots_from_lists(reply, schema)


def _request_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request carries: in ``response_format`` (json_schema, or json_object's
    ``schema``), else the one the last user turn states (prompt mode); None when none."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
    if isinstance(schema, dict):
        return schema
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    text = str(users[-1].get("content") or "") if users else ""
    if PREAMBLE not in text:
        return None
    try:
        found = json.loads(text.rsplit(PREAMBLE, 1)[1])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


class ScriptedServer:
    """The server. ``start()``/``stop()`` or use it as a context manager."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        responder: Responder | None = None,
        latency_ms: int = 0,
        supports_json_schema: bool = True,
        accepts_max_tokens: bool = True,
        enforce_max_tokens: bool = True,
        model: str = SCRIPTED_MODEL,
        hang_s: float = 30.0,
        port: int = 0,
        json_schema_status: int = 400,
        embeddings: bool = True,
        context_window: int | None = None,
        llama_props: bool = False,
        slots: int = 4,
        one_slot: bool = False,
        rejects: tuple[str, ...] = (),
        system_fingerprint: str | None = None,
        props_extra: dict[str, Any] | None = None,
    ) -> None:
        self.script = script or Script()
        self.responder = responder
        self._responder_takes_run = _takes_run(responder)
        self.latency_ms = latency_ms
        self.supports_json_schema = supports_json_schema
        self.accepts_max_tokens = accepts_max_tokens
        self.enforce_max_tokens = enforce_max_tokens
        self.model = model
        self.hang_s = hang_s
        self.json_schema_status = json_schema_status
        self.embeddings = embeddings
        self.context_window = context_window
        self.llama_props = llama_props
        self.slots = 1 if one_slot else slots
        #: request parameters answered with a 400 naming them (a server without ``seed``)
        self.rejects = tuple(rejects)
        #: sent with every chat reply when set (as OpenAI's system_fingerprint)
        self.system_fingerprint = system_fingerprint
        #: more of llama.cpp's /props (model_path, build_info, chat_template) with llama_props
        self.props_extra = dict(props_extra or {})
        self._slot = threading.Lock() if one_slot else None
        self.requests: list[RecordedRequest] = []
        #: each request's body as it arrived, in the order of ``requests`` (wire tests)
        self.raw_bodies: list[bytes] = []
        self._port = port
        self._lock = threading.Lock()
        self._used: list[int] = [0] * len(self.script.rules)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        #: extra headers on every reply (tests of rate-limit headers): () -> {name: value}
        self.response_headers: Callable[[], dict[str, str]] | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        server = self

        class Handler(_Handler):
            owner = server

        httpd = _Server(("127.0.0.1", self._port), Handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._stopping.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("scripted server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests_of(self, kind: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    # -- reply selection ---------------------------------------------------

    def _record(
        self, path: str, headers: dict[str, str], body: dict[str, Any], raw: bytes = b""
    ) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(path=path, headers=headers, body=body))
            self.raw_bodies.append(raw)

    def _select(
        self, kind: str, session: int | None, body: dict[str, Any], run: str = ""
    ) -> Reply | None:
        with self._lock:
            for i, rule in enumerate(self.script.rules):
                if rule.kind != kind or (rule.session is not None and rule.session != session):
                    continue
                if rule.times is not None and self._used[i] >= rule.times:
                    continue
                self._used[i] += 1
                return Reply.model_validate(rule.model_dump(include=set(Reply.model_fields)))
        if self.responder is not None:
            if self._responder_takes_run:
                got = self.responder(kind, session, body, run=run)
            else:
                got = self.responder(kind, session, body)
            if got is not None:
                return got if isinstance(got, Reply) else Reply(reply=got)
        default = self.script.defaults.get(kind)
        if default is None and kind in ("probe", "probe-sampling"):
            return Reply(reply=probe_reply(body, counts=self.llama_props))
        if default is None:
            return None
        return default if isinstance(default, Reply) else Reply(reply=default)

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _sleep(self, ms: int) -> None:
        if ms > 0:
            self._stopping.wait(ms / 1000.0)

    def _apply_fault(self, reply: Reply) -> None:
        if reply.fault == "http_429":
            after = reply.retry_after_s
            headers = {"Retry-After": f"{after:g}"} if after is not None else None
            raise _HTTPError(429, "scripted rate limit", "rate_limit_exceeded", headers)
        if reply.fault is not None and reply.fault.startswith("http_"):
            status = int(reply.fault[5:])
            message, type_ = _STATUS_FAULTS[status]
            raise _HTTPError(status, message, type_)
        if reply.fault == "timeout":
            self._stopping.wait(self.hang_s)
            raise _HTTPError(504, "scripted timeout", "timeout")

    def handle_chat(self, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        if self._slot is None:
            return self._handle_chat(headers, body)
        with self._slot:  # one request at a time, as a one-slot llama-server
            return self._handle_chat(headers, body)

    def _check_context(self, body: dict[str, Any]) -> None:
        if self.context_window is None:
            return
        messages = body.get("messages") or []
        text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        cap = body.get("max_completion_tokens") or body.get("max_tokens") or 0
        need = estimate_tokens(text) + (cap if isinstance(cap, int) else 0)
        if need > self.context_window:
            raise _HTTPError(
                400,
                f"request ({need} tokens) exceeds the available context size "
                f"({self.context_window} tokens), try increasing it",
                "exceed_context_size_error",
            )

    def _handle_chat(self, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        kind = headers.get("x-curiosity-call", "")
        session_raw = headers.get("x-curiosity-session")
        session = int(session_raw) if session_raw and session_raw.lstrip("-").isdigit() else None
        response_format = body.get("response_format") or {}
        self._check_context(body)
        if response_format.get("type") == "json_schema" and not self.supports_json_schema:
            status = self.json_schema_status
            raise _HTTPError(
                status,
                "response_format type 'json_schema' is not supported",
                "server_error" if status >= 500 else "invalid_request_error",
            )
        for name in self.rejects:
            if name in body:
                raise _HTTPError(400, f"Unsupported parameter: '{name}' is not supported.")
        if "max_tokens" in body and not self.accepts_max_tokens:
            raise _HTTPError(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
            )
        reply = self._select(kind, session, body, headers.get("x-curiosity-run", ""))
        if reply is None:
            raise _HTTPError(
                400, f"scripted server: no reply scripted for kind={kind!r} session={session}"
            )
        self._sleep(self.latency_ms + reply.latency_ms)
        self._apply_fault(reply)
        content = (
            reply.reply
            if isinstance(reply.reply, str)
            else json.dumps(_shaped(kind, body, reply.reply), ensure_ascii=False)
        )
        finish = reply.finish_reason
        if reply.fault == "invalid_json":
            content = content[: len(content) // 2] if len(content) > 1 else "{"
        elif reply.fault == "schema_violation":
            if not isinstance(reply.reply, dict | list) or not reply.reply:
                content = json.dumps(SCHEMA_VIOLATION_REPLY)
        elif reply.fault == "length":
            content, finish = content[: len(content) // 2], "length"
        completion = reply.completion_tokens
        if completion is None:
            completion = estimate_tokens(content)
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        if self.enforce_max_tokens and isinstance(cap, int) and completion > cap:
            content, finish, completion = content[: cap * 4], "length", cap
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.fault == "refusal":
            message = {"role": "assistant", "content": None, "refusal": content}
        messages = body.get("messages") or []
        prompt_text = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        prompt = estimate_tokens(prompt_text)
        out: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{self._next_id()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        if self.system_fingerprint is not None:
            out["system_fingerprint"] = self.system_fingerprint
        return out

    def handle_embeddings(self, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        if not self.embeddings:
            raise _HTTPError(
                501,
                "This server does not support embeddings. Start it with `--embeddings`",
                "not_supported_error",
            )
        kind = headers.get("x-curiosity-call", "embeddings")
        session_raw = headers.get("x-curiosity-session")
        session = int(session_raw) if session_raw and session_raw.lstrip("-").isdigit() else None
        with self._lock:
            rule: Reply | None = None
            for i, r in enumerate(self.script.rules):
                if r.kind != kind or (r.session is not None and r.session != session):
                    continue
                if r.times is not None and self._used[i] >= r.times:
                    continue
                self._used[i] += 1
                rule = r
                break
        self._sleep(self.latency_ms + (rule.latency_ms if rule else 0))
        if rule is not None:
            self._apply_fault(rule)
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise _HTTPError(400, "input must be a string or a list of strings")
        data = []
        for i, text in enumerate(texts):
            vec = self.script.embeddings.get(text) or hashed_embedding(text)
            value: Any = vec
            if body.get("encoding_format") == "base64":
                value = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(estimate_tokens(t) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model") or self.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


class _Server(ThreadingHTTPServer):
    # The benchmark opens ~100 connections at once; the default backlog (5) would refuse some.
    request_queue_size = 256
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing an idle keep-alive connection is normal; say nothing.
        return


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the client's delayed ACK adds
    # ~40 ms to every reply (measured: 54 ms a call instead of ~2 ms).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (self.owner.response_headers or dict)().items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _error(self, err: _HTTPError) -> None:
        payload = {"error": {"message": str(err), "type": err.type_, "code": err.status}}
        self._send(err.status, payload, err.headers)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.owner
        if self.path.rstrip("/") == "/v1/models":
            entry: dict[str, Any] = {"id": owner.model, "object": "model"}
            if owner.context_window is not None:
                entry["meta"] = {"n_ctx": owner.context_window}
            self._send(200, {"object": "list", "data": [entry]})
        elif self.path.rstrip("/") == "/props" and owner.llama_props:
            settings = {"n_ctx": owner.context_window or 4096, "params": LLAMA_DEFAULTS}
            props = {"default_generation_settings": settings, "total_slots": owner.slots}
            props.update(owner.props_extra)
            self._send(200, props)
        else:
            self._error(_HTTPError(404, f"no such path {self.path}"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {
            k.lower(): ("<redacted>" if k.lower() in {"authorization", "api-key"} else v)
            for k, v in self.headers.items()
        }
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            self._error(_HTTPError(400, f"invalid JSON body: {exc}"))
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        self.owner._record(path, headers, body, raw)
        try:
            if path == "/v1/chat/completions":
                payload = self.owner.handle_chat(headers, body)
            elif path == "/v1/embeddings":
                payload = self.owner.handle_embeddings(headers, body)
            else:
                raise _HTTPError(404, f"no such path {path}")
        except _HTTPError as err:
            if err.type_ == "timeout":
                self.close_connection = True
                return
            self._error(err)
            return
        self._send(200, payload)
