"""A recording loopback proxy in front of the real llama-server processes.

* Every request and reply passes through unchanged and is recorded (method, path, status, the
  request's ``response_format``/``max_tokens``, excerpts of both bodies), so a failing run can
  show exactly what the server was asked and what it answered.
* ``/v1/embeddings`` goes to the embedding server, everything else to the chat server: the CLI
  has one ``--base-url`` for chat and embeddings, while llama-server serves one model per
  process (or many only in its router mode).
* ``refuse_json_schema=True`` answers every ``response_format: json_schema`` request with
  HTTP 500, as llama-cpp-python's server does, and forwards the rest to the real model.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EXCERPT = 1500


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    response_format: str | None
    max_tokens: int | None
    request_excerpt: str
    response_excerpt: str
    #: the call kind header and the sampling values the request carried (issue 23.1)
    kind: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False)


@dataclass
class RecordingProxy:
    chat_upstream: str  # e.g. http://127.0.0.1:PORT (no /v1)
    embed_upstream: str | None = None
    refuse_json_schema: bool = False
    upstream_timeout_s: float = 900.0
    #: merged into every chat request's JSON body on its way upstream (a server option the
    #: client does not send, e.g. llama.cpp's ``cache_prompt``); what was recorded is the
    #: client's own request
    chat_body_extra: dict[str, Any] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> RecordingProxy:
        proxy = self

        class Handler(_Handler):
            owner = proxy

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "proxy not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def dump(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            path.write_text("".join(e.as_json() + "\n" for e in self.exchanges), encoding="utf-8")

    def count(self, status: int | None = None, response_format: str | None = None) -> int:
        with self._lock:
            return sum(
                (status is None or e.status == status)
                and (response_format is None or e.response_format == response_format)
                for e in self.exchanges
            )

    def forward(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        upstream = self.chat_upstream
        if path.rstrip("/").endswith("/embeddings") and self.embed_upstream:
            upstream = self.embed_upstream
        if self.chat_body_extra and body and path.rstrip("/").endswith("/chat/completions"):
            body = json.dumps({**json.loads(body), **self.chat_body_extra}).encode("utf-8")
        request = urllib.request.Request(upstream + path, data=body, method=method)
        for name, value in headers.items():
            if name.lower() not in _HOP_BY_HOP:
                request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.upstream_timeout_s) as reply:
                return reply.status, reply.read(), _end_to_end(reply.headers.items())
        except urllib.error.HTTPError as err:
            return err.code, err.read(), _end_to_end(err.headers.items())


_HOP_BY_HOP = {"host", "content-length", "connection", "keep-alive", "transfer-encoding"}


def _end_to_end(items: Any) -> dict[str, str]:
    return {k: v for k, v in items if k.lower() not in _HOP_BY_HOP}


def _request_fields(body: bytes | None) -> tuple[str | None, int | None]:
    try:
        data: Any = json.loads(body or b"{}")
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    fmt = data.get("response_format")
    return (fmt.get("type") if isinstance(fmt, dict) else None), data.get("max_tokens")


def _sampling_fields(body: bytes | None) -> dict[str, Any]:
    try:
        data: Any = json.loads(body or b"{}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: data[k] for k in ("temperature", "top_p", "seed", "stop") if k in data}


class _Handler(BaseHTTPRequestHandler):
    owner: RecordingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return None

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        fmt, max_tokens = _request_fields(body)
        if self.owner.refuse_json_schema and fmt == "json_schema":
            status, payload, headers = 500, _refusal(), {"Content-Type": "application/json"}
        else:
            status, payload, headers = self.owner.forward(
                method, self.path, body, dict(self.headers.items())
            )
        self.owner.record(
            Exchange(
                method=method,
                path=self.path,
                status=status,
                response_format=fmt,
                max_tokens=max_tokens,
                request_excerpt=(body or b"")[-EXCERPT:].decode("utf-8", "replace"),
                response_excerpt=payload[:EXCERPT].decode("utf-8", "replace"),
                kind=self.headers.get("X-Curiosity-Call") or "",
                sampling=_sampling_fields(body),
            )
        )
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (its timeout); the exchange is recorded all the same

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self._handle("POST")


def _refusal() -> bytes:
    """The body llama-cpp-python's server sends when it cannot honour a json_schema request."""
    error = {
        "message": "Internal Server Error: json_schema response_format",
        "type": "server_error",
    }
    return json.dumps({"error": error}).encode("utf-8")
