"""numpy, scikit-learn and openai stay off the app's start-up path (issue 5); the CLI starts
without pydantic and the ledger stack (decision 285)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _loaded_after(code: str, watched: tuple[str, ...]) -> str:
    """Which of ``watched`` are in ``sys.modules`` after ``code`` runs in a fresh interpreter."""
    probe = f"import sys\n{code}\nprint(','.join(m for m in {watched!r} if m in sys.modules))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_app_and_cli_start_without_heavy_imports() -> None:
    code = (
        "from curiosity_tui.app import make_app\n"
        "import curiosity_tui.cli as cli\n"
        "cli.build_parser()\n"
        "make_app(sys.argv[1])\n"
    )
    assert _loaded_after(code, ("numpy", "sklearn", "openai")) == ""


def test_the_cli_starts_without_the_ledger_stack() -> None:
    """So that the first scan's child imports it beside Textual's import (decision 285)."""
    code = "import curiosity_tui.cli as cli\ncli.build_parser()\n"
    assert _loaded_after(code, ("pydantic", "curiosity_tui.ledger", "textual")) == ""
