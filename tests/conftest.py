"""Shared, generic fixtures. Keep this small; put special-purpose fixtures in their own files."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from exit_guard import pytest_sessionfinish, pytest_unconfigure  # noqa: F401 - hooks (decision 321)

REPO = Path(__file__).resolve().parents[1]


class FixedClock:
    """A deterministic clock for ledgers: 2026-01-01T00:00:00.000001Z, …000002Z, …"""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"2026-01-01T00:00:{self.n // 1_000_000:02d}.{self.n % 1_000_000:06d}Z"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """Environment for ``sys.executable -m curiosity_tui`` (or a script) run from a test."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    return env


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture
def file_bytes() -> Callable[[Path], dict[str, bytes]]:
    """Every file under a directory (relative path -> bytes), the writer lock and the reply
    cache of a session in progress excepted (``reply-cache.jsonl``: replies kept for a resume,
    not ledger state; modelio/reply_cache.py)."""

    def read(root: Path) -> dict[str, bytes]:
        return {
            str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("writer.lock", "reply-cache.jsonl")
        }

    return read


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh home directory for a module's tests ($HOME points at it): a workspace built in it
    shows as ``~/…`` on screen, the same on every run and every xdist worker, with no fixed
    shared directory (decision 322)."""
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("home")
        mp.setenv("HOME", str(path))
        yield path


@pytest.fixture
def chdir_tmp(tmp_path: Path) -> Iterator[Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)
