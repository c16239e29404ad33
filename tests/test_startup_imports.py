"""numpy, scikit-learn and openai stay off the app's start-up path (issue 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_app_and_cli_start_without_heavy_imports() -> None:
    code = (
        "import sys\n"
        "from curiosity_tui.app import make_app\n"
        "import curiosity_tui.cli as cli\n"
        "cli.build_parser()\n"
        "make_app(sys.argv[1])\n"
        "print(','.join(m for m in ('numpy', 'sklearn', 'openai') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
