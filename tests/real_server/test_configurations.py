"""Issue 11 acceptance on llama-server with SmolLM2-135M-Instruct: the six configurations, both
contracts; issue 27: C-cur, C+cur and B-armed+cur in each schema dialect."""

from __future__ import annotations

from pathlib import Path

import pytest
from real_cli import RealServers
from real_proxy import RecordingProxy
from real_runs import assert_completed, assert_protocol_records, run_configuration

CONFIGS = ["A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
CONTRACTS = ["pilot-01", "pilot-02"]


@pytest.mark.realserver
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("contract", CONTRACTS)
@pytest.mark.parametrize("config", CONFIGS)
def test_three_sessions(
    config: str, contract: str, servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
    outcome = run_configuration(
        run_dir,
        config=config,
        contract=contract,
        sessions=3,
        base_url=proxy.base_url,
        model=servers.model,
    )
    assert_completed(outcome, 3)
    if config.startswith("C"):
        assert_protocol_records(outcome)


@pytest.mark.realserver
@pytest.mark.realserver_ci
@pytest.mark.timeout(2400)
@pytest.mark.parametrize("config", ["C+cur", "C-cur"])
def test_protocol_two_sessions(
    config: str, servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
    """The CI subset: C with and without a curator, 2 sessions, pilot-02, in the probe's dialect."""
    outcome = run_configuration(
        run_dir,
        config=config,
        contract="pilot-02",
        sessions=2,
        base_url=proxy.base_url,
        model=servers.model,
        resumes=2,  # a cut reply stops a session; the CI subset resumes as a user would
    )
    assert_completed(outcome, 2)
    assert_protocol_records(outcome)


@pytest.mark.realserver
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("dialect", ["strict", "full"])
@pytest.mark.parametrize("config", ["C-cur", "C+cur", "B-armed+cur"])
def test_three_sessions_in_each_dialect(
    config: str, dialect: str, servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
    """Issue 27: a reply that follows the schema sent passes the rules in either dialect, so an
    instruction-tuned model commits every session in both (a reply cut at its cap gets the
    call's repair turn, a shorter retry; results.jsonl keeps repairs and cuts per call kind)."""
    outcome = run_configuration(
        run_dir,
        config=config,
        contract="pilot-02",
        sessions=3,
        base_url=proxy.base_url,
        model=servers.model,
        dialect=dialect,
    )
    assert_completed(outcome, 3)
    if config.startswith("C"):
        assert_protocol_records(outcome)
