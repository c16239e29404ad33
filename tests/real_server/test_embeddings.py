"""Embeddings from all-MiniLM-L6-v2 served by llama-server ``--embedding``."""

from __future__ import annotations

import json
import math
import urllib.request
from pathlib import Path

import pytest
from real_cli import RealServers
from real_proxy import RecordingProxy
from real_runs import assert_completed, assert_protocol_records, run_configuration


def _embed(servers: RealServers, texts: list[str]) -> list[list[float]]:
    body = json.dumps({"model": servers.embed_model, "input": texts}).encode("utf-8")
    request = urllib.request.Request(
        servers.embed_url + "/embeddings", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        data = json.loads(reply.read())
    return [item["embedding"] for item in sorted(data["data"], key=lambda d: d["index"])]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.mark.realserver
@pytest.mark.realserver_ci
def test_minilm_scale_ranks_paraphrases_above_unrelated(servers: RealServers) -> None:
    a, paraphrase, unrelated = _embed(
        servers,
        [
            "The printing press spread the Reformation through cheap pamphlets.",
            "Cheap printed pamphlets carried Reformation ideas across the cities.",
            "My cat sleeps on the warm windowsill every afternoon.",
        ],
    )
    assert len(a) == 384
    close, far = _cosine(a, paraphrase), _cosine(a, unrelated)
    assert close > 0.5 > far, (close, far)


@pytest.mark.realserver
@pytest.mark.realserver_ci
@pytest.mark.timeout(2400)
def test_protocol_run_with_endpoint_embeddings(
    servers: RealServers, proxy: RecordingProxy, run_dir: Path
) -> None:
    outcome = run_configuration(
        run_dir,
        config="C-cur",
        contract="pilot-02",
        sessions=2,
        base_url=proxy.base_url,
        model=servers.model,
        extra=("--embedding-model", servers.embed_model),
        resumes=2,  # a 135M model's reply cut twice at its cap stops a session: resume it
    )
    assert_completed(outcome, 2)
    assert_protocol_records(outcome)
    assert outcome.figures.embedders == [f"endpoint:{servers.embed_model}"] * 2, outcome.figures
    assert proxy.count(status=200) > 0 and any(
        e.path.endswith("/embeddings") and e.status == 200 for e in proxy.exchanges
    )
