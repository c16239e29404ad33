"""The real-server tier: tests against llama-server processes started by
``scripts/real-server-tests.sh``.

Not collected by the normal suite: without ``CURIOSITY_REAL_SERVER`` set this folder's test files
are ignored (``collect_ignore_glob``), so ``python -m pytest`` neither runs nor skips them. With it
set, the servers' URLs must be in the environment (the script exports them); a missing one is a
usage error, never a skip.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_cli import RealServers
from real_proxy import RecordingProxy

ENABLED = bool(os.environ.get("CURIOSITY_REAL_SERVER"))

if not ENABLED:
    collect_ignore_glob = ["test_*.py"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "realserver: needs the llama-server processes of the tier")
    config.addinivalue_line(
        "markers",
        "realserver_ci: the subset of the tier CI runs (C +/-cur, json_schema 500, embeddings, relay)",
    )


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise pytest.UsageError(
            f"{name} is not set: run the tier with scripts/real-server-tests.sh"
        )
    return value


@pytest.fixture(scope="session")
def servers() -> RealServers:
    run_dir = Path(
        os.environ.get("REAL_SERVER_RUN_DIR") or tempfile.mkdtemp(prefix="real-server-run-")
    )
    return RealServers(
        chat_url=_required("REAL_SERVER_CHAT_URL"),
        embed_url=_required("REAL_SERVER_EMBED_URL"),
        model=os.environ.get("REAL_SERVER_MODEL", "gemma"),
        embed_model=os.environ.get("REAL_SERVER_EMBED_MODEL", "minilm"),
        run_dir=run_dir,
    )


@pytest.fixture
def run_dir(servers: RealServers, request: pytest.FixtureRequest) -> Path:
    """A kept folder for this test's ledgers and its proxy log (under the tier's run folder)."""
    safe = "".join(c if c.isalnum() or c in "-_+" else "_" for c in request.node.name)
    path = servers.run_dir / "tests" / safe
    shutil.rmtree(path, ignore_errors=True)  # a re-run in the same run folder starts clean
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def proxy(servers: RealServers, run_dir: Path) -> Iterator[RecordingProxy]:
    """A recording proxy in front of both servers (chat and /v1/embeddings)."""
    p = RecordingProxy(servers.chat_upstream, servers.embed_upstream).start()
    yield p
    p.stop()
    p.dump(run_dir / "exchanges.jsonl")
