"""Long ``metrics`` sections wrap (issue 28, item 10): the denominators were one 3,000-
character line, the per-run lists a line each as long as the runs made them."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.analysis.tables import WRAP, wrap_line
from curiosity_tui.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_metrics_text_lines_wrap(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", str(ROOT / "ledgers")]) == 0
    lines = capsys.readouterr().out.splitlines()
    long = [ln for ln in lines[1:] if len(ln) > WRAP + 20 and not ln.startswith("|")]
    assert long == []  # the first line is the practice banner (one line to grep)
    start = lines.index("Denominators:")
    assert any(ln.startswith("  max_depth: per run") for ln in lines[start:])
    per_run = [i for i, ln in enumerate(lines) if ln.startswith("  max_depth per run — ")]
    assert per_run and lines[per_run[0] + 1].startswith("      ")  # continued, indented


def test_wrap_line_keeps_words_and_indents() -> None:
    text = "  name per run — " + "; ".join(f"C{i}: 1.00, 2.00" for i in range(20))
    out = wrap_line(text, indent="      ")
    assert len(out) > 1 and all(len(x) <= WRAP for x in out)
    assert out[0].startswith("  name per run") and all(x.startswith("      ") for x in out[1:])
    assert " ".join(x.strip() for x in out) == text.strip()
    assert wrap_line("short", indent="  ") == ["short"]
