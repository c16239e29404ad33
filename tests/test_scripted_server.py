"""The scripted server: wire format, rule selection, faults, hooks, recording."""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request

import openai
import pytest

from curiosity_tui.errors import InputError
from curiosity_tui.offline.scripted_server import (
    Reply,
    Script,
    ScriptedServer,
    ScriptRule,
    estimate_tokens,
    hashed_embedding,
)


def post(server: ScriptedServer, path: str, body: dict, headers: dict | None = None):
    req = urllib.request.Request(
        server.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def chat(server, kind="answer", session=1, **body):
    payload = {"model": "m", "messages": [{"role": "user", "content": "hello there"}], **body}
    return post(
        server,
        "/chat/completions",
        payload,
        {"X-Curiosity-Call": kind, "X-Curiosity-Session": str(session)},
    )


@pytest.fixture
def make():
    started: list[ScriptedServer] = []

    def start(script: Script | None = None, **kw) -> ScriptedServer:
        s = ScriptedServer(script, **kw).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def test_chat_wire_format(make):
    server = make(Script(defaults={"answer": "Yes, partly."}))
    status, body = chat(server)
    assert status == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int) and body["model"] == "m"
    choice = body["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": "Yes, partly."}
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["completion_tokens"] == estimate_tokens("Yes, partly.")
    assert usage["prompt_tokens"] == estimate_tokens("hello there")
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_rules_by_kind_session_and_times(make):
    script = Script(
        rules=[
            ScriptRule(kind="candidate", session=2, reply="s2 first", times=1),
            ScriptRule(kind="candidate", session=2, reply="s2 rest"),
            ScriptRule(kind="candidate", reply="any session", times=2),
        ],
        defaults={"candidate": "default"},
    )
    server = make(script)
    got = [chat(server, "candidate", 2)[1]["choices"][0]["message"]["content"] for _ in range(3)]
    assert got == ["s2 first", "s2 rest", "s2 rest"]
    got = [chat(server, "candidate", 1)[1]["choices"][0]["message"]["content"] for _ in range(3)]
    assert got == ["any session", "any session", "default"]


def test_json_reply_is_serialised_and_overrides(make):
    server = make(
        Script(
            rules=[
                ScriptRule(
                    kind="judge-before",
                    reply={"framings": ["é"], "dependencies": []},
                    completion_tokens=77,
                    finish_reason="stop",
                )
            ]
        )
    )
    _, body = chat(server, "judge-before")
    content = body["choices"][0]["message"]["content"]
    assert json.loads(content) == {"framings": ["é"], "dependencies": []}
    assert body["usage"]["completion_tokens"] == 77


def test_max_tokens_cuts_and_reports_length(make):
    server = make(Script(defaults={"candidate": "x" * 2000}))
    _, body = chat(server, "candidate", max_tokens=260)
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 260
    assert len(body["choices"][0]["message"]["content"]) == 260 * 4
    _, body = chat(server, "candidate", max_completion_tokens=10)
    assert body["usage"]["completion_tokens"] == 10
    relaxed = make(Script(defaults={"candidate": "x" * 2000}), enforce_max_tokens=False)
    _, body = chat(relaxed, "candidate", max_tokens=10)
    assert body["choices"][0]["finish_reason"] == "stop"


def test_fault_replies(make):
    server = make(
        Script(
            rules=[
                ScriptRule(kind="a", fault="http_429"),
                ScriptRule(kind="b", fault="http_500"),
                ScriptRule(kind="c", reply={"k": "vvvv"}, fault="invalid_json"),
                ScriptRule(kind="d", fault="schema_violation"),
                ScriptRule(kind="e", reply={"framings": 3}, fault="schema_violation"),
                ScriptRule(kind="f", reply="abcdef", fault="length"),
            ]
        )
    )
    status, body = chat(server, "a")
    assert status == 429 and body["error"]["type"] == "rate_limit_exceeded"
    status, body = chat(server, "b")
    assert status == 500 and "error" in body
    _, body = chat(server, "c")
    with pytest.raises(ValueError):
        json.loads(body["choices"][0]["message"]["content"])
    _, body = chat(server, "d")
    assert json.loads(body["choices"][0]["message"]["content"]) == {
        "unexpected": "this object does not follow the requested schema"
    }
    _, body = chat(server, "e")
    assert json.loads(body["choices"][0]["message"]["content"]) == {"framings": 3}
    _, body = chat(server, "f")
    assert body["choices"][0]["message"]["content"] == "abc"
    assert body["choices"][0]["finish_reason"] == "length"


def test_unscripted_kind_is_400(make):
    server = make()
    status, body = chat(server, "curator", 4)
    assert status == 400 and "kind='curator' session=4" in body["error"]["message"]


def test_json_schema_rejected_when_unsupported(make):
    server = make(Script(defaults={"x": "{}"}), supports_json_schema=False)
    status, body = chat(server, "x", response_format={"type": "json_schema", "json_schema": {}})
    assert status == 400 and "json_schema" in body["error"]["message"]
    status, _ = chat(server, "x", response_format={"type": "json_object"})
    assert status == 200


def test_responder_hook_and_precedence(make):
    seen: list[tuple] = []

    def responder(kind, session, request):
        seen.append((kind, session, request["messages"][0]["content"]))
        if kind == "fault":
            return Reply(fault="http_500")
        if kind == "skip":
            return None
        return {"echo": f"{kind}/{session}"}

    server = make(
        Script(rules=[ScriptRule(kind="ruled", reply="rule wins")], defaults={"skip": "default"}),
        responder=responder,
    )
    assert chat(server, "ruled")[1]["choices"][0]["message"]["content"] == "rule wins"
    _, body = chat(server, "deliverable", 3)
    assert json.loads(body["choices"][0]["message"]["content"]) == {"echo": "deliverable/3"}
    assert chat(server, "fault")[0] == 500
    assert chat(server, "skip")[1]["choices"][0]["message"]["content"] == "default"
    assert seen == [
        ("deliverable", 3, "hello there"),
        ("fault", 1, "hello there"),
        ("skip", 1, "hello there"),
    ]


def test_requests_are_recorded_without_credentials(make):
    server = make(Script(defaults={"answer": "ok"}))
    chat(server, "answer", 7)
    post(
        server,
        "/chat/completions",
        {"model": "m", "messages": []},
        {"Authorization": "Bearer sk-secret", "X-Curiosity-Call": "answer"},
    )
    first, second = server.requests
    assert first.path == "/v1/chat/completions" and (first.kind, first.session) == ("answer", 7)
    assert first.body["messages"][0]["content"] == "hello there"
    assert second.headers["authorization"] == "<redacted>"
    assert "sk-secret" not in json.dumps([r.model_dump() for r in server.requests])
    assert server.requests_of("answer") == [first, second]


def test_embeddings_wire_format_and_vectors(make):
    server = make(Script(embeddings={"pinned": [1.0, 0.0]}))
    status, body = post(
        server, "/embeddings", {"model": "e", "input": ["pinned", "printing press", "x"]}
    )
    assert status == 200 and body["object"] == "list" and body["model"] == "e"
    assert [d["index"] for d in body["data"]] == [0, 1, 2]
    assert body["data"][0]["embedding"] == [1.0, 0.0]
    assert body["data"][1]["embedding"] == hashed_embedding("printing press")
    assert body["usage"]["prompt_tokens"] > 0
    status, body = post(server, "/embeddings", {"model": "e", "input": "single"})
    assert len(body["data"]) == 1
    status, body = post(server, "/embeddings", {"model": "e", "input": [[1, 2]]})
    assert status == 400


def test_hashed_embedding_is_deterministic_and_similarity_preserving():
    a = hashed_embedding("Did the printing press cause the Reformation")
    b = hashed_embedding("did the PRINTING press cause the reformation?")
    c = hashed_embedding("grain prices in Antwerp")
    assert a == b
    assert sum(x * x for x in a) == pytest.approx(1.0)
    assert sum(x * y for x, y in zip(a, c, strict=True)) < 0.9
    assert hashed_embedding("") == [1.0] + [0.0] * 63


async def test_openai_client_base64_embeddings(make):
    # the openai client's own default encoding is base64; the server speaks it
    server = make()
    oa = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    resp = await oa.embeddings.create(model="e", input=["printing press"])
    assert resp.data[0].embedding == pytest.approx(hashed_embedding("printing press"), abs=1e-6)
    await oa.close()


async def test_openai_client_models_and_404(make):
    server = make(model="scripted-x")
    oa = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    models = await oa.models.list()
    assert [m.id for m in models.data] == ["scripted-x"]
    with pytest.raises(openai.NotFoundError):
        await oa.completions.create(model="m", prompt="legacy endpoint")
    await oa.close()


def test_embedding_faults(make):
    server = make(Script(rules=[ScriptRule(kind="embeddings", fault="http_500", times=1)]))
    hdr = {"X-Curiosity-Call": "embeddings"}
    assert post(server, "/embeddings", {"model": "e", "input": ["a"]}, hdr)[0] == 500
    assert post(server, "/embeddings", {"model": "e", "input": ["a"]}, hdr)[0] == 200


def test_script_load(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "rules": [
                    {"kind": "candidate", "session": 1, "reply": {"a": 1}, "fault": "length"},
                    {"kind": "candidate", "reply": "plain", "times": 2, "latency_ms": 5},
                ],
                "defaults": {"judge-before": {"framings": [], "dependencies": []}},
            }
        )
    )
    script = Script.load(path)
    assert script.rules[0].reply == {"a": 1} and script.rules[1].times == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rules": [{"kind": "x", "fault": "explode"}]}))
    with pytest.raises(InputError, match=r"invalid script .*bad\.json: rules\.0\.fault"):
        Script.load(bad)
    with pytest.raises(InputError, match="cannot read script"):
        Script.load(tmp_path / "missing.json")


def test_start_stop_lifecycle():
    server = ScriptedServer()
    with pytest.raises(RuntimeError):
        _ = server.base_url
    with server as s:
        assert s.start() is s  # idempotent
        url = s.base_url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    server.stop()  # idempotent
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/models", timeout=1)


def test_stop_releases_a_hanging_request(make):
    import threading

    server = make(Script(rules=[ScriptRule(kind="slow", fault="timeout")]), hang_s=30)
    done = threading.Event()

    def call():
        with contextlib.suppress(Exception):
            chat(server, "slow")
        done.set()

    t = threading.Thread(target=call, daemon=True)
    t.start()
    while not server.requests:
        done.wait(0.01)
    server.stop()
    assert done.wait(10)
