"""Sampling on llama-server (issue 23.1): the stated values reach the server on every call
kind (seen by the recording proxy), the ledger records them, and with temperature 0 and a fixed
seed two runs of one C configuration write identical candidates."""

from __future__ import annotations

from pathlib import Path

import pytest
from real_cli import RealServers
from real_proxy import RecordingProxy
from real_runs import assert_completed, run_configuration

from curiosity_tui.ledger import Ledger
from curiosity_tui.modelio.sampling import call_seed

SAMPLING = ("--sampling", "seed=7", "--sampling", "temperature=0")


def _candidates(ledger: Path) -> list[str]:
    with Ledger.open(ledger) as led:
        return [c.response_text for r in led.session_records() for c in r.calls
                if c.kind == "candidate"]  # fmt: skip


@pytest.mark.realserver
@pytest.mark.timeout(3600)
def test_temperature_zero_and_a_seed_give_the_same_candidates_twice(
    servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
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
        assert_completed(outcome, 1)
        outcomes.append(outcome)
    first, second = (_candidates(o.ledger) for o in outcomes)
    assert len(first) == 3 and first == second
    # on the wire: every call of the runs carried temperature 0, top_p and its derived seed
    calls = [e for e in proxy.exchanges if e.path.endswith("/chat/completions") and e.kind
             and not e.kind.startswith("probe")]  # fmt: skip
    assert {e.kind for e in calls} >= {"candidate", "judge-before", "judge-after", "deliverable"}
    for e in calls:
        assert e.sampling.get("temperature") == 0.0, e.kind
        assert "top_p" in e.sampling and isinstance(e.sampling.get("seed"), int), e.kind
    seeds = sorted(e.sampling["seed"] for e in calls if e.kind == "candidate")
    expected = sorted(call_seed(7, "ledger", 1, f"candidate-{i}") for i in (1, 2, 3)) * 2
    assert seeds == sorted(expected)
    with Ledger.open(outcomes[0].ledger) as led:
        recorded = [c for r in led.session_records() for c in r.calls if c.sampling is not None]
        endpoint = led.meta.endpoint
    assert recorded and all(c.sampling.temperature == 0.0 for c in recorded)
    assert endpoint is not None and endpoint.sampling_defaults  # llama.cpp /props says them
    assert endpoint.server_props and "model_path" in endpoint.server_props
    assert all(c.response_model for c in recorded)
