"""Replies reused instead of asked again (issue 23.5): a session killed after its candidates
and before its judge-after call is resumed with the candidates served from the ledger's reply
cache (no new request for them), recorded ``cached: true`` with the original call's digest and
times; ``--no-cache`` asks again; ``pilot run --replay-from`` reproduces a six-configuration
scripted pilot's journals without a single request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger
from curiosity_tui.modelio.reply_cache import CACHE_FILE
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.protocol.configs import CONFIG_NAMES

SEED = "Did the printing press cause the Reformation?"
DEADLINE_S = 120.0
FIRST_ROUND = {"candidate", "judge-before", "checker"}


def _run_argv(ledger: Path, server: ScriptedServer, *extra: str) -> list[str]:
    return ["run", str(ledger), "--sessions", "1", "--base-url", server.base_url,
            "--api-key", "x", "--model", "scripted", *extra]  # fmt: skip


def _killed_after_the_candidates(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A ``run`` in a child process, SIGKILLed while its judge-after request is in flight."""
    ledger = tmp_path / "run"
    assert main(["ledger", "new", str(ledger), "--seed", SEED, "--config", "C-cur"]) == 0
    hang = Script(rules=[ScriptRule(kind="judge-after", fault="timeout")])
    with ScriptedServer(hang, responder=ResearchResponder(), hang_s=DEADLINE_S) as server:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        child = subprocess.Popen(
            [sys.executable, "-m", "curiosity_tui", *_run_argv(ledger, server)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            deadline = time.monotonic() + DEADLINE_S
            while not server.requests_of("judge-after"):
                assert child.poll() is None, "the run ended before its judge-after call"
                assert time.monotonic() < deadline, "no judge-after request in time"
                time.sleep(0.05)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=DEADLINE_S)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=DEADLINE_S)
        first = [r for r in server.requests if r.kind in FIRST_ROUND]
    lines = [json.loads(x) for x in (ledger / CACHE_FILE).read_text().splitlines()]
    assert first and len(lines) == len(first)  # every reply that came back was kept
    return ledger, lines


def test_a_killed_session_resumes_with_its_candidates_from_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger, kept = _killed_after_the_candidates(tmp_path)
    with Ledger.open(ledger) as led:
        assert led.last_session == 0  # nothing of the session was committed
    with ScriptedServer(responder=ResearchResponder()) as server:
        assert main(_run_argv(ledger, server)) == 0
        asked = [r.kind for r in server.requests if r.path.endswith("/chat/completions")]
    # no request of the first round reached the server again; the rest did
    assert not FIRST_ROUND & set(asked)
    assert "judge-after" in asked and "deliverable" in asked
    with Ledger.open(ledger) as led:
        calls = led.session_records()[0].calls
    cached = [c for c in calls if c.cached]
    assert {c.kind for c in cached} == {k for k in FIRST_ROUND if any(c.kind == k for c in calls)}
    assert len([c for c in cached if c.kind == "candidate"]) == 3
    originals = {x["record"]["request_sha256"]: x["record"] for x in kept}
    for c in cached:
        assert c.cached_from is not None and c.request_sha256 == c.cached_from.request_sha256
        original = originals[c.request_sha256 or ""]
        assert c.cached_from.started_at == original["started_at"]
        assert c.cached_from.ended_at == original["ended_at"]
        assert c.response_text == original["response_text"] and c.latency_s == 0.0
    assert not any(c.cached for c in calls if c.kind in ("judge-after", "deliverable"))
    assert not (ledger / CACHE_FILE).exists()  # committed: the journal has the replies


def test_no_cache_asks_again(tmp_path: Path) -> None:
    ledger, _ = _killed_after_the_candidates(tmp_path)
    with ScriptedServer(responder=ResearchResponder()) as server:
        assert main(_run_argv(ledger, server, "--no-cache")) == 0
        asked = [r.kind for r in server.requests]
    assert asked.count("candidate") == 3
    with Ledger.open(ledger) as led:
        assert not any(c.cached for c in led.session_records()[0].calls)


PLAN = """\
name = "replayed"
configurations = [{configs}]
runs = 1
sessions = 3
seed_question = "Did the printing press cause the Reformation?"
model = "scripted"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth"]

[sampling]
seed = 5
"""

#: what differs between a run and its replay: when things happened and how long they took,
#: and that the replay's calls were answered from the record (``cached``, ``cached_from``)
TIME_KEYS = frozenset(
    {
        "created_at",
        "probed_at",
        "started",
        "finished",
        "started_at",
        "ended_at",
        "latency_s",
        "waited_s",
        "cached",
        "cached_from",
    }  # fmt: skip
)


def _normal(value: Any) -> Any:
    """``value`` without TIME_KEYS; a ``calls`` list in a canonical order (a concurrent round
    records its calls in the order they completed, which no rerun reproduces)."""
    if isinstance(value, dict):
        out = {k: _normal(v) for k, v in value.items() if k not in TIME_KEYS}
        if isinstance(out.get("calls"), list):
            out["calls"] = sorted(out["calls"], key=lambda c: json.dumps(c, sort_keys=True))
        return out
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def _payloads(journal: Path) -> list[Any]:
    """Each event without its timestamp and chain hashes: (seq, session, kind, node, actor,
    data with TIME_KEYS removed)."""
    out = []
    for line in journal.read_text().splitlines():
        e = json.loads(line)
        out.append((e["seq"], e["session"], e["kind"], e.get("node"), e.get("actor"),
                    _normal(e.get("data"))))  # fmt: skip
    return out


def test_replay_from_reproduces_every_journal_without_a_request(tmp_path: Path) -> None:
    assert len(CONFIG_NAMES) == 6
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(configs=", ".join(f'"{c}"' for c in CONFIG_NAMES)))
    first, again = tmp_path / "first", tmp_path / "again"
    base = ["pilot", "run", str(plan), "--unregistered", "--workers", "1", "--api-key", "x"]
    with ScriptedServer(responder=ResearchResponder()) as server:
        assert main([*base, "--out", str(first), "--base-url", server.base_url]) == 0
        assert server.requests
    with ScriptedServer(responder=ResearchResponder()) as idle:
        argv = [*base, "--out", str(again), "--base-url", idle.base_url]
        assert main([*argv, "--replay-from", str(first)]) == 0
        assert idle.requests == []  # not one request, not even the probe
    names = sorted(p.name for p in first.iterdir() if (p / "journal.jsonl").is_file())
    assert len(names) == 6
    for name in names:
        a, b = _payloads(first / name / "journal.jsonl"), _payloads(again / name / "journal.jsonl")
        assert a == b, name
        with Ledger.open(again / name) as led:
            calls = [c for r in led.session_records() for c in r.calls]
        assert calls and all(c.cached for c in calls)


def test_replay_refuses_a_diverging_run_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A replay whose requests differ from the recorded ones (here: another sampling seed)
    stops at the first call with no recorded reply, and names it."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(configs='"C+cur", "B-armed+cur"'))
    first, again = tmp_path / "first", tmp_path / "again"
    base = ["pilot", "run", str(plan), "--unregistered", "--workers", "1", "--api-key", "x"]
    with ScriptedServer(responder=ResearchResponder()) as server:
        assert main([*base, "--out", str(first), "--base-url", server.base_url]) == 0
    capsys.readouterr()
    code = main([*base, "--out", str(again), "--replay-from", str(first), "--sampling", "seed=6"])
    err = capsys.readouterr().err
    assert code != 0 and "no recorded reply to this exact request" in err
    assert "Traceback" not in err
    assert main([*base, "--out", str(tmp_path / "x"), "--replay-from", str(tmp_path / "no")]) != 0
    assert "no such directory" in capsys.readouterr().err
