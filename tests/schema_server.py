"""A schema-obedient OpenAI-compatible server on loopback (issue 27 item 3), independent of
the project's scripted server: it knows nothing of our prompts, call kinds or rules.

Every ``json_schema`` request (and ``json_object`` with a ``schema``, llama.cpp's extension)
is answered with a random instance of that schema, drawn by tests/schema_sampler.py (text as
3 to 12 random words, as a model writes it): a perfectly schema-obedient model. A request
without a schema gets random words; ``/v1/embeddings`` gives a vector hashed from the text.

Modes:

* ``obedient``: takes every keyword the sampler knows;
* ``llama-cpp-python``: HTTP 500 for ``json_schema``, a grammar from ``json_object``'s
  ``schema`` (what llama-cpp-python does);
* ``strict-hosted``: HTTP 400 naming the first count, length or tuple keyword of a
  ``json_schema`` (``minItems``, ``maxItems``, ``minLength``, ``maxLength``, ``prefixItems``),
  as some hosted strict endpoints refuse them.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.schema_sampler import sample

MODES = ("obedient", "llama-cpp-python", "strict-hosted")
REFUSED = ("minItems", "maxItems", "minLength", "maxLength", "prefixItems")


def _first_refused(node: Any) -> str | None:
    if isinstance(node, dict):
        for key in REFUSED:
            if key in node:
                return key
        children: Any = list(node.values())
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _first_refused(child)
        if found:
            return found
    return None


class SchemaServer:
    """The server; use as a context manager. ``requests`` counts chat requests by the
    ``X-Curiosity-Call`` header (for the test's report only; replies never depend on it)."""

    def __init__(self, mode: str = "obedient", seed: int | str = 0) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.seed = seed
        self.requests: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()
        self._n = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> SchemaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=30)

    def _rng(self) -> random.Random:
        with self._lock:
            self._n += 1
            n = self._n
        return random.Random(f"{self.seed}|{n}")

    def chat(self, kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests[kind] += 1
        fmt = body.get("response_format") or {}
        schema: dict[str, Any] | None = None
        if fmt.get("type") == "json_schema":
            if self.mode == "llama-cpp-python":
                return 500, _error("json_schema is not supported", "server_error")
            schema = fmt["json_schema"]["schema"]
            refused = _first_refused(schema) if self.mode == "strict-hosted" else None
            if refused:
                with self._lock:
                    self.refusals[refused] += 1
                return 400, _error(f"Invalid schema: '{refused}' is not permitted.")
        elif fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
            schema = fmt["schema"]
        rng = self._rng()
        if schema is not None:
            content = json.dumps(sample(schema, rng, words=True), ensure_ascii=False)
        elif fmt.get("type") == "json_object":
            content = "{}"
        else:
            content = " ".join(
                "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))
                for _ in range(rng.randint(5, 30))
            )
        return 200, _completion(body, content)


def _error(message: str, type_: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": None}}


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages") or []) // 4
    completion = len(content) // 4 + 1
    return {
        "id": "chatcmpl-schema",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or "obedient",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _vector(text: str, dim: int = 16) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 127.5) / 127.5 for b in digest[:dim]]


def _handler(server: SchemaServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/v1/models"):
                self._send(200, {"object": "list", "data": [{"id": "obedient", "object": "model"}]})
            else:
                self._send(404, _error("not found"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.endswith("/chat/completions"):
                kind = self.headers.get("X-Curiosity-Call", "")
                self._send(*server.chat(kind, body))
            elif self.path.endswith("/embeddings"):
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts or [])
                data = [
                    {"object": "embedding", "index": i, "embedding": _vector(str(t))}
                    for i, t in enumerate(texts)
                ]
                self._send(200, {"object": "list", "data": data, "model": body.get("model")})
            else:
                self._send(404, _error("not found"))

    return Handler
