"""Domain modules under curiosity_tui.packs never import Textual (UI/domain split), and the
CLI module imports neither Textual nor scikit-learn until a command needs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACK_MODULES = [
    "curiosity_tui.packs.agreement",
    "curiosity_tui.packs.schemes",
    "curiosity_tui.packs.pack",
    "curiosity_tui.packs.rating",
    "curiosity_tui.packs.unblind",
    "curiosity_tui.packs.build",
    "curiosity_tui.packs.leakcheck",
    "curiosity_tui.packs.pack_agreement",
    "curiosity_tui.offline.synthetic_ledgers",
    "curiosity_tui.packs.model_rater",
    "curiosity_tui.packs.rater_groups",
    "curiosity_tui.cli.pack_cmds",
]


@pytest.mark.parametrize("module", PACK_MODULES)
def test_module_imports_no_ui_and_no_sklearn(module: str) -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); import {module}; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'sklearn')); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
