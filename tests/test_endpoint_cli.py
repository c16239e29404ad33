"""``endpoint check`` and the probe before session 1 of ``run``, through the CLI, against the
scripted server (loopback) playing servers that lack a capability."""

from __future__ import annotations

import json

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.replay import verify
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer

SEED = "Did the printing press cause the Reformation?"


@pytest.fixture
def server_with():
    started: list[ScriptedServer] = []

    def start(**kw: object) -> ScriptedServer:
        s = ScriptedServer(responder=DemoResponder(), **kw).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def new_ledger(tmp_path, config: str = "C+cur") -> str:
    path = tmp_path / f"run-{config}"
    meta = RunMeta(name=path.name, seed=SEED, config=config, curator="none", model="scripted")
    Ledger.create(path, meta).close()
    return str(path)


def endpoint(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.base_url, "--api-key", "k", "--model", "scripted"]


def test_check_names_missing_embeddings_and_the_workaround(server_with, capsys):
    server = server_with(embeddings=False, llama_props=True, context_window=4096)
    code = main(["endpoint", "check", *endpoint(server), "--embedding-model", "minilm"])
    out = capsys.readouterr().out
    assert code == 1
    assert "embeddings minilm: missing (HTTP 501" in out
    assert "--embedding-fallback offline" in out and "a run would stop before session 1" in out
    assert "context    4096 tokens (props)" in out
    assert "schemas    full dialect: the server enforces item counts" in out
    code = main(["endpoint", "check", *endpoint(server), "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["problems"] == []
    assert record["response_format"] == "json_schema" and record["slots"] == 4


def test_run_with_embedding_model_refuses_before_session_1(server_with, tmp_path, capsys):
    server = server_with(embeddings=False)
    path = new_ledger(tmp_path)
    before = (tmp_path / "run-C+cur" / "journal.jsonl").read_bytes()
    code = main(["run", path, "--sessions", "2", *endpoint(server), "--embedding-model", "e5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "no embeddings for e5" in err[0]
    assert "--embedding-fallback offline" in err[0]
    assert (tmp_path / "run-C+cur" / "journal.jsonl").read_bytes() == before  # nothing run
    assert not [
        r for r in server.requests if r.kind not in ("probe", "probe-sampling", "embeddings")
    ]


def test_offline_fallback_is_named_on_every_similarity_figure(server_with, tmp_path):
    server = server_with(embeddings=False)
    path = new_ledger(tmp_path)
    code = main(
        [
            "run",
            path,
            "--sessions",
            "2",
            *endpoint(server),
            "--embedding-model",
            "e5",
            "--embedding-fallback",
            "offline",
        ]
    )
    assert code == 0
    with Ledger.open(path) as led:
        records = led.session_records()
        assert led.meta.endpoint is not None and led.meta.endpoint.embeddings == "missing"
    assert len(records) == 2
    for rec in records:
        assert rec.embedder and "offline fallback: endpoint:e5 not served" in rec.embedder
        assert rec.tension is not None and rec.tension.embedder == rec.embedder


def test_json_schema_500_server_negotiates_once_records_it_and_completes(
    server_with, tmp_path, capsys
):
    server = server_with(supports_json_schema=False, json_schema_status=500)
    path = new_ledger(tmp_path)
    code = main(["run", path, "--sessions", "3", *endpoint(server)])
    assert code == 0, capsys.readouterr().err
    assert "endpoint: format json_object" in capsys.readouterr().out
    schema_requests = [
        r
        for r in server.requests
        if (r.body.get("response_format") or {}).get("type") == "json_schema"
    ]
    assert len(schema_requests) == 1 and schema_requests[0].kind == "probe"  # negotiated once
    with Ledger.open(path) as led:
        assert led.last_session == 3
        caps = led.meta.endpoint
        assert caps is not None and caps.response_format == "json_object"
        formats = {c.response_format for r in led.session_records() for c in r.calls}
    assert formats <= {"json_object", None, "embeddings"} and "json_object" in formats
    assert verify(path).ok
    # resuming against the same server records nothing new
    lines = (tmp_path / "run-C+cur" / "journal.jsonl").read_text().count("endpoint_probed")
    assert main(["run", path, "--sessions", "3", *endpoint(server)]) == 0
    again = (tmp_path / "run-C+cur" / "journal.jsonl").read_text().count("endpoint_probed")
    assert lines == again == 1


def test_bad_capability_flag_is_one_line(server_with, tmp_path, capsys):
    server = server_with()
    path = new_ledger(tmp_path)
    code = main(["run", path, "--sessions", "1", *endpoint(server), "--max-reply-kb", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--max-reply-kb must be positive" in err[0]


PLAN = """\
name = "probe"
configurations = ["B-armed-cur", "C-cur"]
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted"
epsilon = 0.15
metrics = ["max_depth"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C-cur", "B-armed-cur"]]
metrics = ["max_depth"]
"""


def test_pilot_run_records_the_probe_in_every_run_or_starts_none(server_with, tmp_path, capsys):
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "runs"
    no_embeddings = server_with(embeddings=False)
    run = ["pilot", "run", str(plan), "--out", str(out), "--unregistered"]
    code = main([*run, *endpoint(no_embeddings), "--embedding-model", "e5"])
    err = capsys.readouterr().err
    assert code == 2 and "no embeddings for e5" in err
    assert not out.exists() or not any(out.iterdir())  # no run was created
    refusing = server_with(supports_json_schema=False, json_schema_status=500)
    assert main([*run, *endpoint(refusing)]) == 0, capsys.readouterr().err
    for name in ("B-armed-cur-r0", "C-cur-r0"):
        with Ledger.open(out / name) as led:
            assert led.last_session == 2
            assert led.meta.endpoint is not None
            assert led.meta.endpoint.response_format == "json_object"
        assert verify(out / name).ok


def test_oversized_reply_fails_the_session_with_a_small_journal_line(tmp_path, capsys):
    from curiosity_tui.offline.scripted_server import Script, ScriptRule

    script = Script(
        rules=[ScriptRule(kind="candidate", reply="x" * 1_000_000, completion_tokens=10)]
    )
    server = ScriptedServer(script, responder=DemoResponder()).start()
    try:
        path = new_ledger(tmp_path)
        code = main(["run", path, "--sessions", "1", *endpoint(server)])
    finally:
        server.stop()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert any("over the 65536-byte cap (--max-reply-kb)" in line for line in err)
    lines = (tmp_path / "run-C+cur" / "journal.jsonl").read_text().splitlines()
    failed = [line for line in lines if '"session_failed"' in line]
    assert len(failed) == 1 and len(failed[0]) < 64_000
    assert verify(path).ok


def test_human_curated_run_refuses_before_the_app_opens(server_with, tmp_path, capsys):
    server = server_with(embeddings=False)
    path = tmp_path / "human"
    meta = RunMeta(name="human", seed=SEED, config="C+cur", curator="human", model="scripted")
    Ledger.create(path, meta).close()
    argv = ["run", str(path), "--sessions", "1", *endpoint(server), "--embedding-model", "e5"]
    code = main([*argv, "--curator-name", "ada"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no embeddings for e5" in err[0]
    with Ledger.open(path) as led:
        assert led.last_session == 0 and led.meta.endpoint is None


def _structured_calls(path: str) -> list:
    with Ledger.open(path) as led:
        records = led.session_records()
    return [c for rec in records for c in rec.calls if c.response_format == "json_schema"]


def test_run_sends_the_dialect_the_probe_found_unless_the_flag_says(server_with, tmp_path):
    server = server_with(llama_props=True, context_window=8192)
    path = new_ledger(tmp_path)
    assert main(["run", path, "--sessions", "1", *endpoint(server)]) == 0
    calls = _structured_calls(path)
    assert calls and {c.schema_dialect for c in calls} == {"full"}
    with Ledger.open(path) as led:
        assert led.meta.endpoint is not None and led.meta.endpoint.schema_dialect == "full"
    other = tmp_path / "strict"
    other.mkdir()
    path2 = new_ledger(other)
    args = ["run", path2, "--sessions", "1", *endpoint(server), "--schema-dialect", "strict"]
    assert main(args) == 0
    assert {c.schema_dialect for c in _structured_calls(path2)} == {"strict"}


def _deliverable_cap(server: ScriptedServer, where) -> tuple[int, list]:
    where.mkdir()
    path = new_ledger(where)
    assert main(["run", path, "--sessions", "1", *endpoint(server)]) == 0
    with Ledger.open(path) as led:
        (rec,) = led.session_records()
    sized = [c for c in rec.calls if c.max_tokens is not None]
    (deliverable,) = [c for c in sized if c.kind == "deliverable"]
    return deliverable.max_tokens, sized


def test_caps_fit_the_context_window_the_probe_found(server_with, tmp_path):
    unbounded, _ = _deliverable_cap(server_with(), tmp_path / "no-window")
    cap, sized = _deliverable_cap(
        server_with(llama_props=True, context_window=2000), tmp_path / "window"
    )
    # each cap leaves room for its prompt (at least a third of its characters in tokens)
    assert all(c.max_tokens + len(c.request_text) // 3 <= 2000 for c in sized)
    assert cap < unbounded  # the window, not what is left of the budget, set the cap
