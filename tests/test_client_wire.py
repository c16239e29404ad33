"""What ModelClient puts on the wire, byte for byte, for every kind of call.

The requests each scenario sends (path, body bytes, header names in order and their values)
were recorded from the client before its per-call CPU was cut (issue 14.5) and are kept in
``tests/data/client_wire.json``; a faster client must send exactly the same. Header values that
depend on the machine or the installed packages (user agent, OS, runtime, host port, the
decoders httpx offers) are compared by name only. Regenerate (only when a request is meant to change) with
``PYTHONPATH=. python tests/test_client_wire.py --write``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.modelio.run_context import run_scope
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.protocol.call_specs import judge_before_spec
from curiosity_tui.protocol.schemas import JudgeBeforeResponse

GOLDEN = Path(__file__).parent / "data" / "client_wire.json"
KEY = "sk-test-wire-0123456789"
MSGS = [
    {"role": "system", "content": "You judge. Ünïcode — “quotes” \u2028 and \\ backslash."},
    {"role": "user", "content": "Q? F1: a\nF2: b"},
]
JB = {"framings": ["economic", "religious"], "dependencies": ["literacy rates"]}
BY_NAME_ONLY = {
    "host",
    "accept-encoding",  # httpx lists the decoders installed (br, zstd)
    "user-agent",
    "x-stainless-os",
    "x-stainless-arch",
    "x-stainless-runtime",
    "x-stainless-runtime-version",
    "x-stainless-package-version",
}

Scenario = Callable[[ModelClient], Awaitable[None]]


def _client(server: ScriptedServer, **kw: Any) -> ModelClient:
    opts: dict[str, Any] = {"timeout_s": 5.0, "max_retries": 2, "retry_backoff_s": 0.001}
    opts.update(kw)
    return ModelClient(base_url=server.base_url, api_key=KEY, model="scripted", **opts)


async def _structured(client: ModelClient, **kw: Any) -> None:
    kw.setdefault("schema", JudgeBeforeResponse)
    await client.structured(
        kind="judge-before",
        session=2,
        messages=MSGS,
        max_tokens=300,
        internal=True,
        **kw,
    )


async def _complete(client: ModelClient) -> None:
    with run_scope("C+cur-r0"):
        await client.complete(
            kind="answer", session=3, messages=MSGS, max_tokens=100, internal=False
        )
    await client.complete(kind="answer", session=4, messages=MSGS, max_tokens=100, internal=False)


async def _schema(client: ModelClient) -> None:
    await _structured(client)
    await _structured(client)


async def _wire_schema(client: ModelClient) -> None:
    spec = judge_before_spec()
    for dialect in ("strict", "full"):
        await _structured(
            client,
            schema=spec.model,
            validator=spec.check,
            wire_schema=spec.json_schema(dialect),
            dialect=dialect,
        )


async def _probe(client: ModelClient) -> None:
    for fmt, with_schema in (("json_schema", False), ("json_object", True), ("prompt", False)):
        await client.probe_chat(
            messages=MSGS,
            fmt=fmt,
            schema=JudgeBeforeResponse,
            max_tokens=50,
            object_schema=with_schema,
        )


async def _embed(client: ModelClient) -> None:
    await client.embed(["one", "", "three ü"], session=1, model="minilm")


async def _failing(client: ModelClient) -> None:
    with pytest.raises(ModelCallError):
        await client.complete(kind="answer", session=1, messages=MSGS, max_tokens=9, internal=False)


def _json_object_schema(client: ModelClient) -> Awaitable[None]:
    client.json_object_schema = True
    return _structured(client)


SCENARIOS: dict[str, tuple[dict[str, Any], list[ScriptRule], dict[str, Any], Scenario]] = {
    # name: (server options, script rules, client options, calls)
    "complete": ({}, [ScriptRule(kind="answer", reply="fine")], {}, _complete),
    "json_schema": ({}, [ScriptRule(kind="judge-before", reply=JB)], {}, _schema),
    "wire_schema": ({}, [ScriptRule(kind="judge-before", reply=JB)], {}, _wire_schema),
    "repair": (
        {},
        [
            ScriptRule(kind="judge-before", fault="invalid_json", reply=JB, times=1),
            ScriptRule(kind="judge-before", reply=JB),
        ],
        {},
        _schema,
    ),
    "fallback": (
        {"supports_json_schema": False},
        [ScriptRule(kind="judge-before", reply=JB)],
        {},
        _schema,
    ),
    "json_object_schema": (
        {},
        [ScriptRule(kind="judge-before", reply=JB)],
        {"response_format": "json_object"},
        _json_object_schema,
    ),
    "prompt": (
        {},
        [ScriptRule(kind="judge-before", reply=JB)],
        {"response_format": "prompt"},
        _schema,
    ),
    "max_completion_tokens": (
        {"accepts_max_tokens": False},
        [ScriptRule(kind="answer", reply="ok")],
        {},
        _complete,
    ),
    "retry_429": (
        {},
        [
            ScriptRule(kind="answer", fault="http_429", retry_after_s=0.01, times=1),
            ScriptRule(kind="answer", reply="ok"),
        ],
        {},
        _complete,
    ),
    "http_500_fails": ({}, [ScriptRule(kind="answer", fault="http_500")], {}, _failing),
    "probe": ({}, [ScriptRule(kind="probe", reply=JB)], {}, _probe),
    "embeddings": ({}, [], {}, _embed),
}


def _headers(headers: dict[str, str]) -> list[list[str]]:
    return [[k, "<by name>" if k in BY_NAME_ONLY else v] for k, v in headers.items()]


async def _record(name: str) -> list[dict[str, Any]]:
    server_kw, rules, client_kw, calls = SCENARIOS[name]
    with ScriptedServer(Script(rules=rules), **server_kw) as server:
        client = _client(server, **client_kw)
        try:
            await calls(client)
        finally:
            await client.aclose()
        return [
            {"path": r.path, "body": raw.decode("utf-8"), "headers": _headers(r.headers)}
            for r, raw in zip(server.requests, server.raw_bodies, strict=True)
        ]


def _golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_requests_are_byte_identical_to_the_recorded_ones(name: str) -> None:
    sent = await _record(name)
    expected = _golden()[name]
    assert len(sent) == len(expected)
    for got, want in zip(sent, expected, strict=True):
        assert got["path"] == want["path"]
        assert got["body"] == want["body"]
        assert got["headers"] == want["headers"]


def test_the_recording_covers_every_call_kind() -> None:
    golden = _golden()
    assert sorted(golden) == sorted(SCENARIOS)
    bodies = [json.loads(r["body"]) for rs in golden.values() for r in rs]
    formats = {(b.get("response_format") or {}).get("type") for b in bodies}
    assert formats == {None, "json_schema", "json_object"}
    assert any("max_completion_tokens" in b for b in bodies)
    assert any("input" in b for b in bodies)  # embeddings
    names = {h[0] for rs in golden.values() for r in rs for h in r["headers"]}
    assert {"x-curiosity-call", "x-curiosity-session", "x-curiosity-run"} <= names


def _write() -> None:
    async def all_of() -> dict[str, Any]:
        return {name: await _record(name) for name in sorted(SCENARIOS)}

    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    data = asyncio.run(all_of())
    GOLDEN.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__" and "--write" in sys.argv:
    _write()
