"""modelio/wire.py: the reply read from parsed JSON equals openai's ChatCompletion reading on
varied replies (well-formed and not), and coalesced writes send the same bytes once."""

from __future__ import annotations

import copy
import json
import socket
from typing import Any

import openai
import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletion

from curiosity_tui.modelio import wire
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule

GOOD: dict[str, Any] = {
    "id": "x-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hi ü"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
}


def _variant(path: list[Any], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


MSG = ["choices", 0, "message"]
VARIANTS: list[Any] = [
    GOOD,
    _variant([*MSG, "content"], None),
    _variant([*MSG, "content"], KeyError),
    _variant([*MSG, "content"], ""),
    _variant([*MSG, "content"], ["not", "text"]),
    _variant([*MSG, "content"], 7),
    _variant([*MSG, "refusal"], "I will not."),
    _variant([*MSG, "refusal"], {"odd": 1}),
    _variant(MSG, None),
    _variant(MSG, "text"),
    _variant(MSG, KeyError),
    _variant(["choices", 0, "finish_reason"], "length"),
    _variant(["choices", 0, "finish_reason"], None),
    _variant(["choices", 0, "finish_reason"], KeyError),
    _variant(["choices", 0, "finish_reason"], 3),
    _variant(["choices", 0], "a string"),
    _variant(["choices", 0], None),
    _variant(["choices"], []),
    _variant(["choices"], None),
    _variant(["choices"], KeyError),
    _variant(["choices"], {"0": 1}),
    _variant(["usage"], None),
    _variant(["usage"], KeyError),
    _variant(["usage"], {}),
    _variant(["usage", "prompt_tokens"], None),
    _variant(["usage", "prompt_tokens"], "12"),
    _variant(["usage", "completion_tokens"], 2.5),
    _variant(["usage", "completion_tokens"], True),
    _variant(["usage", "completion_tokens"], KeyError),
    _variant(["usage"], "lots"),
    {**GOOD, "choices": [*GOOD["choices"], {"message": {"content": "second"}}]},
    None,
    [],
    [GOOD],
    "plain text, not JSON",
    json.dumps(GOOD),  # JSON served without a JSON content type
    17,
]


def _outcome(fn: Any, value: Any) -> Any:
    try:
        return ("ok", fn(value))
    except Exception as exc:  # the same failure, of the same type, is part of the contract
        return ("raised", type(exc))


def _before(value: Any) -> Any:
    """What the client read before: openai built a ChatCompletion (after trying a str as
    JSON), and _reply read its attributes."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return wire.definitional_fields(value)
    built = None if value is None else construct_type(type_=ChatCompletion, value=value)
    return wire.definitional_fields(built)


@pytest.mark.parametrize("value", VARIANTS, ids=[str(i) for i in range(len(VARIANTS))])
def test_the_fast_reading_equals_openais_on_every_shape(value: Any) -> None:
    got = _outcome(wire.reply_fields_of_json, copy.deepcopy(value))
    want = _outcome(_before, copy.deepcopy(value))
    assert got == want
    if got[0] == "ok":  # and the same types (True is not 1 in a record)
        assert [type(v) for v in got[1]] == [type(v) for v in want[1]]


def test_a_well_formed_reply_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no(**kw: Any) -> Any:
        raise AssertionError("construct_type called for a well-formed reply")

    monkeypatch.setattr("openai._models.construct_type", no)
    fields = wire.reply_fields_of_json(copy.deepcopy(GOOD))
    assert fields == wire.ReplyFields("hi ü", None, "stop", 12, 3)


class _Inner:
    def __init__(self, fail: bool = False) -> None:
        self.writes: list[bytes] = []
        self.reads = 0
        self.fail = fail
        self.sock_a, self.sock_b = socket.socketpair()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.fail:
            raise OSError("broken")
        self.writes.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.reads += 1
        return b"HTTP/1.1 200 OK\r\n"

    async def aclose(self) -> None:
        self.sock_a.close()
        self.sock_b.close()

    def get_extra_info(self, info: str) -> Any:
        return self.sock_a if info == "socket" else f"inner:{info}"


def _readable(sock: socket.socket) -> bool:
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    return True


async def test_writes_wait_for_the_read_and_go_as_one() -> None:
    inner = _Inner()
    stream = wire._CoalescingStream(inner, OSError, _readable)
    await stream.write(b"POST / HTTP/1.1\r\n\r\n")
    await stream.write(b"")
    await stream.write(b'{"a": 1}')
    assert inner.writes == []
    assert await stream.read(100) == b"HTTP/1.1 200 OK\r\n"
    assert inner.writes == [b'POST / HTTP/1.1\r\n\r\n{"a": 1}']
    await stream.read(100)
    assert inner.writes == [b'POST / HTTP/1.1\r\n\r\n{"a": 1}'] and inner.reads == 2
    assert stream.get_extra_info("is_readable") is False
    inner.sock_b.sendall(b"x")
    assert stream.get_extra_info("is_readable") is True
    assert stream.get_extra_info("client_addr") == "inner:client_addr"
    await stream.aclose()


async def test_a_failed_write_is_left_to_the_read_as_httpcore_does() -> None:
    inner = _Inner(fail=True)
    stream = wire._CoalescingStream(inner, OSError, _readable)
    await stream.write(b"GET / HTTP/1.1\r\n\r\n")
    assert await stream.read(10) == b"HTTP/1.1 200 OK\r\n" and inner.reads == 1
    await stream.aclose()


async def test_the_client_pool_is_wrapped_once_and_connections_are_reused() -> None:
    script = Script(rules=[ScriptRule(kind="answer", reply="ok")])
    with ScriptedServer(script) as server:
        client = ModelClient(base_url=server.base_url, api_key="sk-x", model="m")
        try:
            for _ in range(3):
                text, _ = await client.complete(
                    kind="answer",
                    session=1,
                    messages=[{"role": "user", "content": "q"}],
                    max_tokens=5,
                    internal=True,
                )
                assert text == "ok"
            oa = client._client()
            pool = oa._client._transport._pool
            assert isinstance(pool._network_backend, wire._CoalescingBackend)
            assert wire.coalesce_writes(oa) is False  # already wrapped
            assert len(pool.connections) == 1  # one keep-alive connection served all three
        finally:
            await client.aclose()


def test_an_unexpected_client_is_left_alone() -> None:
    class Bare:
        pass

    assert wire.coalesce_writes(Bare()) is False
    assert wire.coalesce_writes(openai) is False
