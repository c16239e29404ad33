"""A server that answers strict ``json_schema`` with HTTP 500 (llama-cpp-python's behaviour).

The refusal is played by the recording proxy in front of the real llama-server: every
``response_format: json_schema`` request gets a 500, everything else reaches Gemma. The run must
negotiate ``json_object`` (or prompt mode) once, record it, and complete.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from real_cli import RealServers
from real_proxy import RecordingProxy
from real_runs import assert_completed, run_configuration


@pytest.fixture
def refusing_proxy(servers: RealServers, run_dir: Path) -> Iterator[RecordingProxy]:
    p = RecordingProxy(
        servers.chat_upstream, servers.embed_upstream, refuse_json_schema=True
    ).start()
    yield p
    p.stop()
    p.dump(run_dir / "exchanges.jsonl")


@pytest.mark.realserver
@pytest.mark.realserver_ci
@pytest.mark.timeout(2400)
def test_negotiates_once_and_completes(
    servers: RealServers, refusing_proxy: RecordingProxy, run_dir: Path
) -> None:
    outcome = run_configuration(
        run_dir,
        config="C-cur",
        contract="pilot-02",
        sessions=2,
        base_url=refusing_proxy.base_url,
        model=servers.model,
    )
    refused = refusing_proxy.count(status=500, response_format="json_schema")
    assert refused >= 1, "the client never tried json_schema"
    assert_completed(outcome, 2)
    assert refused == 1, f"json_schema was refused {refused} times: negotiated more than once"
    structured = sum(outcome.figures.fallbacks_by_kind.values())
    assert structured > 0, f"no call recorded response_format json_object: {outcome.figures}"
