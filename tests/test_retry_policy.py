"""The client's retry policy, negotiation and size caps against the scripted server, through
the real openai client (loopback only). Waits are captured through the client's ``sleep``
hook, so no test sleeps through a backoff."""

from __future__ import annotations

import random

import pytest

from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.protocol.schemas import JudgeBeforeResponse

MSGS = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Q?"}]
JB = {"framings": ["economic", "religious"], "dependencies": ["literacy rates"]}


@pytest.fixture
def servers():
    started: list[ScriptedServer] = []

    def start(*rules: ScriptRule, **kw: object) -> ScriptedServer:
        s = ScriptedServer(Script(rules=list(rules)), **kw).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def client_for(server: ScriptedServer, **kw: object) -> tuple[ModelClient, Sleeps]:
    sleeps = Sleeps()
    opts: dict = {"timeout_s": 5.0, "max_retries": 3, "sleep": sleeps, "rng": random.Random(7)}
    opts.update(kw)
    return ModelClient(base_url=server.base_url, api_key="k", model="scripted", **opts), sleeps


async def complete(client: ModelClient, kind: str = "candidate") -> tuple[str, object]:
    return await client.complete(kind=kind, session=1, messages=MSGS, max_tokens=50, internal=True)


async def judge(client: ModelClient, max_tokens: int = 300) -> tuple[object, object]:
    return await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=max_tokens,
        internal=True,
    )


async def test_retry_after_is_the_wait_used(servers):
    server = servers(
        ScriptRule(kind="candidate", fault="http_429", retry_after_s=7, times=1),
        ScriptRule(kind="candidate", reply="fine"),
    )
    client, sleeps = client_for(server)
    text, rec = await complete(client)
    assert text == "fine"
    assert sleeps.waits == [7.0]
    assert rec.retries == 1 and rec.waited_s == 7.0


async def test_retry_after_over_the_limit_fails_without_waiting(servers):
    server = servers(ScriptRule(kind="candidate", fault="http_429", retry_after_s=900))
    client, sleeps = client_for(server, max_retry_after_s=60)
    with pytest.raises(ModelCallError) as info:
        await complete(client)
    assert sleeps.waits == []
    assert "retry after 900 s, over the 60 s limit" in info.value.reason
    assert len(server.requests) == 1


async def test_backoff_is_exponential_with_jitter(servers):
    server = servers(
        ScriptRule(kind="candidate", fault="http_503", times=3),
        ScriptRule(kind="candidate", reply="up"),
    )
    client, sleeps = client_for(server, retry_backoff_s=1.0)
    text, rec = await complete(client)
    assert text == "up" and rec.retries == 3
    assert len(sleeps.waits) == 3
    for n, wait in enumerate(sleeps.waits):
        assert 0.5 * 2**n <= wait <= 2**n
    assert sleeps.waits != [1.0, 2.0, 4.0]  # jittered, not lockstep


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
async def test_retryable_statuses_are_retried(servers, status):
    server = servers(
        ScriptRule(kind="candidate", fault=f"http_{status}", times=1),
        ScriptRule(kind="candidate", reply="ok"),
    )
    client, sleeps = client_for(server)
    text, rec = await complete(client)
    assert text == "ok" and rec.retries == 1 and len(sleeps.waits) == 1


@pytest.mark.parametrize("fault", ["http_501", None])
async def test_501_and_400_are_not_retried(servers, fault):
    rules = [ScriptRule(kind="candidate", fault=fault)] if fault else []
    server = servers(*rules)  # no rule: the scripted server answers 400 (nothing scripted)
    client, sleeps = client_for(server)
    with pytest.raises(ModelCallError) as info:
        await complete(client)
    assert info.value.code == ("http_501" if fault else "http_400")
    assert len(server.requests) == 1 and sleeps.waits == []
    assert info.value.records[0].retries == 0


async def test_embeddings_501_is_not_retried(servers):
    server = servers(embeddings=False)
    client, sleeps = client_for(server)
    with pytest.raises(ModelCallError) as info:
        await client.embed(["a"], session=1, model="minilm")
    assert info.value.code == "http_501" and "--embeddings" in info.value.reason
    assert len(server.requests) == 1 and sleeps.waits == []


async def test_context_overflow_is_reported_as_that_not_as_a_format_refusal(servers):
    server = servers(ScriptRule(kind="judge-before", reply=JB), context_window=200)
    client, sleeps = client_for(server)
    client.context_window = 200
    with pytest.raises(ModelCallError) as info:
        await judge(client, max_tokens=4000)
    assert info.value.code == "context_overflow"
    assert "context overflow" in info.value.reason and "of 200 tokens" in info.value.reason
    formats = [r.body["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema"]  # no json_object fallback, no retry
    assert client.json_schema_supported is None
    value, _ = await judge(client, max_tokens=100)  # fits: json_schema still used
    assert value.framings == ["economic", "religious"]
    assert server.requests[-1].body["response_format"]["type"] == "json_schema"


async def test_500_for_json_schema_negotiates_json_object_once(servers):
    server = servers(
        ScriptRule(kind="judge-before", reply=JB),
        supports_json_schema=False,
        json_schema_status=500,  # llama-cpp-python's answer to a strict json_schema
    )
    client, sleeps = client_for(server)
    for _ in range(3):
        value, rec = await judge(client)
        assert value.framings == ["economic", "religious"]
        assert rec.response_format == "json_object"
    formats = [r.body["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object", "json_object"]
    assert sleeps.waits == []  # the 500 was the answer, not retried
    assert client.json_schema_supported is False


async def test_prompt_mode_sends_no_response_format(servers):
    server = servers(ScriptRule(kind="judge-before", reply=JB))
    client, _ = client_for(server, response_format="prompt")
    value, rec = await judge(client)
    assert value.framings == ["economic", "religious"] and rec.response_format == "prompt"
    body = server.requests[-1].body
    assert "response_format" not in body
    assert "JSON schema" in body["messages"][-1]["content"]
    assert body["messages"][-1]["role"] == "user"


async def test_timeout_on_a_one_slot_server_is_not_re_sent(servers):
    server = servers(ScriptRule(kind="candidate", fault="timeout"), one_slot=True, hang_s=1.0)
    client, sleeps = client_for(server, timeout_s=0.3)
    client.server_slots = 1  # what the probe finds on a one-slot llama-server
    with pytest.raises(ModelCallError) as info:
        await complete(client)
    assert info.value.code == "timeout"
    assert "not re-sent" in info.value.reason and "--retry-timeouts always" in info.value.reason
    assert len(server.requests) == 1 and sleeps.waits == []


async def test_timeout_re_sent_when_asked_or_when_slots_allow(servers):
    server = servers(
        ScriptRule(kind="candidate", fault="timeout", times=1),
        ScriptRule(kind="candidate", reply="second try"),
        hang_s=1.0,
    )
    client, sleeps = client_for(server, timeout_s=0.3)
    client.server_slots = 4
    text, rec = await complete(client)
    assert text == "second try" and rec.retries == 1
    one = servers(ScriptRule(kind="candidate", fault="timeout"), one_slot=True, hang_s=0.5)
    forced, _ = client_for(one, timeout_s=0.2, retry_timeouts="always", max_retries=1)
    forced.server_slots = 1
    with pytest.raises(ModelCallError):
        await complete(forced)
    assert len(one.requests) == 2  # re-sent, as asked


async def test_oversized_reply_fails_cleanly_and_keeps_an_excerpt(servers):
    server = servers(ScriptRule(kind="candidate", reply="x" * 70_000, completion_tokens=10))
    client, _ = client_for(server)
    with pytest.raises(ModelCallError) as info:
        await complete(client)
    err = info.value
    assert err.code == "oversized" and "over the 65536-byte cap" in err.reason
    assert "\n" not in err.reason
    rec = err.records[-1]
    assert len(rec.response_text) < 3000 and "cut: the reply was 70000 characters" in (
        rec.response_text
    )
    assert len(rec.model_dump_json()) < 5000


async def test_oversized_field_fails_without_a_repair(servers):
    big = {"framings": ["y" * 20_000], "dependencies": []}
    server = servers(ScriptRule(kind="judge-before", reply=big, completion_tokens=10))
    client, _ = client_for(server)
    with pytest.raises(ModelCallError) as info:
        await judge(client)
    assert info.value.code == "oversized"
    assert "20000 characters, over the 16384-character cap" in info.value.reason
    assert len(server.requests) == 1  # no repair turn re-sending the reply
    small, _ = client_for(server, max_field_chars=30_000)
    value, _ = await judge(small)
    assert len(value.framings[0]) == 20_000


async def test_a_400_for_one_schema_after_json_schema_worked_falls_back_for_that_call(servers):
    server = servers(ScriptRule(kind="judge-before", reply=JB))
    client, _ = client_for(server)
    _, first = await judge(client)
    assert first.response_format == "json_schema" and client.json_schema_supported is True
    server.supports_json_schema = False  # e.g. a hosted API refusing one call's constraints
    _, second = await judge(client)
    assert second.response_format == "json_object"
    assert client.json_schema_supported is True  # one call's refusal is not a verdict on all
    server.supports_json_schema, server.json_schema_status = False, 500
    with pytest.raises(ModelCallError) as info:  # a 500 once support is known: a server error
        await judge(client)
    assert info.value.code == "http_500" and info.value.records[-1].retries == 3
