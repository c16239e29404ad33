"""The tier's view of the servers and of the CLI: ``curiosity-tui ARGS`` as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class RealServers:
    chat_url: str  # http://127.0.0.1:PORT/v1
    embed_url: str
    model: str
    embed_model: str
    run_dir: Path

    @property
    def chat_upstream(self) -> str:
        return self.chat_url.removesuffix("/v1")

    @property
    def embed_upstream(self) -> str:
        return self.embed_url.removesuffix("/v1")


@dataclass(frozen=True)
class CliResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def explain(self) -> str:
        return f"$ curiosity-tui {' '.join(self.args)}\nexit {self.returncode}\n{self.stdout[-3000:]}\n{self.stderr[-3000:]}"


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    return env


def run_cli(*args: str, cwd: Path, timeout_s: float = 3000) -> CliResult:
    """``curiosity-tui ARGS`` as a user types it (stdin closed), with its output kept."""
    proc = subprocess.run(
        [sys.executable, "-m", "curiosity_tui", *args],
        cwd=cwd,
        env=_cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    result = CliResult(list(args), proc.returncode, proc.stdout, proc.stderr)
    (cwd / "cli.log").open("a", encoding="utf-8").write(result.explain() + "\n\n")
    return result
