"""modelio/wire.py: the reply read from parsed JSON equals openai's ChatCompletion reading on
varied replies (well-formed and not); the client's connections are kept alive."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletion

from curiosity_tui.modelio import ratelimit, wire
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
    def no(value: Any) -> Any:
        raise AssertionError("a ChatCompletion built for a well-formed reply")

    monkeypatch.setattr(wire, "chat_completion_of", no)
    fields = wire.reply_fields_of_json(copy.deepcopy(GOOD))
    assert fields == wire.ReplyFields("hi ü", None, "stop", 12, 3)


def test_an_odd_reply_is_built_by_openais_public_construction() -> None:
    odd = _variant(["choices", 0, "finish_reason"], 3)
    built = wire.chat_completion_of(copy.deepcopy(odd))
    assert isinstance(built, ChatCompletion)
    assert built.choices[0].message.content == "hi ü" and built.choices[0].finish_reason == 3
    assert wire.chat_completion_of(17) == 17
    assert [type(x) for x in wire.chat_completion_of([GOOD, 1])] == [ChatCompletion, int]


async def test_one_keep_alive_connection_serves_successive_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client is built with httpx's public event hooks (the rate limiter's); a response
    hook sees each reply's connection through httpx's public ``network_stream`` extension."""
    ports: list[Any] = []

    async def on_response(response: Any) -> None:
        ports.append(response.extensions["network_stream"].get_extra_info("client_addr"))

    monkeypatch.setattr(ratelimit, "event_hooks", lambda: {"response": [on_response]})
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
        finally:
            await client.aclose()
    assert len(ports) == 3 and len(set(ports)) == 1  # one connection served all three
