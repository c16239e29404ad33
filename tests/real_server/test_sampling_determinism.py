"""Sampling on llama-server (issue 23.1): the stated values reach the server on every call
kind (seen by the recording proxy), the ledger records them, and with temperature 0 and a fixed
seed two runs of one C configuration write identical candidates. The session itself need not
commit: SmolLM2 at temperature 0 can loop inside a judge's JSON until its cap (seen on the tier);
the candidates come first and are recorded either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from real_cli import RealServers
from real_proxy import RecordingProxy
from real_runs import run_configuration

from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.modelio.sampling import call_seed

SAMPLING = ("--sampling", "seed=7", "--sampling", "temperature=0")


def _calls(ledger: Path) -> list[CallRecord]:
    """Session 1's calls: its committed record, else its failed attempt's (a small model at
    temperature 0 can loop in a judge's JSON until the cap; the candidates came before)."""
    with Ledger.open(ledger) as led:
        calls = [c for r in led.session_records() for c in r.calls]
    if calls:
        return calls
    for line in (ledger / "journal.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["kind"] == "session_failed":
            return [CallRecord.model_validate(c) for c in event["data"]["record"]["calls"]]
    return []


def _candidates(ledger: Path) -> list[str]:
    return [c.response_text for c in _calls(ledger) if c.kind == "candidate"]


@pytest.mark.realserver
@pytest.mark.timeout(3600)
def test_temperature_zero_and_a_seed_give_the_same_candidates_twice(
    servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
    # llama.cpp's prompt cache makes greedy decoding depend on what the slot held before (its
    # README: cache_prompt "can cause nondeterministic results"); seen on the tier: candidate 3
    # differed between two runs. The server's determinism is not what is tested here, so the
    # proxy turns the cache off; the client's requests (recorded) are as a user's.
    proxy.chat_body_extra = {"cache_prompt": False}
    outcomes = []
    for n in ("one", "two"):
        (run_dir / n).mkdir()
        outcome = run_configuration(
            run_dir / n,
            config="C-cur",
            contract="pilot-02",
            sessions=1,
            base_url=proxy.base_url,
            model=servers.model,
            extra=SAMPLING,
        )
        assert outcome.verify.returncode == 0, outcome.explain()
        outcomes.append(outcome)
    first, second = (_candidates(o.ledger) for o in outcomes)
    assert len(first) == 3 and first == second
    # on the wire: every call of the runs carried temperature 0, top_p and its derived seed
    calls = [e for e in proxy.exchanges if e.path.endswith("/chat/completions") and e.kind
             and not e.kind.startswith("probe")]  # fmt: skip
    assert {e.kind for e in calls} >= {"candidate", "judge-before"}
    for e in calls:
        assert e.sampling.get("temperature") == 0.0, e.kind
        assert isinstance(e.sampling.get("seed"), int), e.kind
    seeds = sorted(e.sampling["seed"] for e in calls if e.kind == "candidate")
    expected = sorted(call_seed(7, "ledger", 1, f"candidate-{i}") for i in (1, 2, 3)) * 2
    assert seeds == sorted(expected)
    recorded = [c for c in _calls(outcomes[0].ledger) if c.sampling is not None]
    with Ledger.open(outcomes[0].ledger) as led:
        endpoint = led.meta.endpoint
    assert recorded and all(c.sampling.temperature == 0.0 for c in recorded)
    assert endpoint is not None and endpoint.sampling_defaults  # llama.cpp /props says them
    assert endpoint.server_props and "model_path" in endpoint.server_props
    assert all(c.response_model for c in recorded)
