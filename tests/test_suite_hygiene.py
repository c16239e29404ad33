"""The suite runs as bare `pytest` and in parallel: no test module writes to a fixed shared
directory, and the shared fixture modules import without the current directory on sys.path
(decision 322)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
#: a fixed place outside the test's own tmp_path that two runs (or two xdist workers) share
SHARED_DIR = re.compile(r"""gettempdir\s*\(|["']/tmp\b|Path\.home\s*\(|expanduser\s*\(""")


def test_no_test_module_uses_a_fixed_shared_directory() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == Path(__file__).name or "__snapshots__" in path.parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if SHARED_DIR.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "use tmp_path / tmp_path_factory (or the home fixture):\n" + "\n".join(found)


def test_bare_pytest_collects_modules_that_import_tests_and_fixture_modules() -> None:
    """`-P` leaves the current directory off sys.path, as the `pytest` script does; these
    modules import `tests.keyburst`, `tests.adjudication_fixtures`, `app_fixtures`,
    `human_fixtures` and another test module."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    modules = [
        "tests/test_snapshots_human.py",
        "tests/test_adjudication_app.py",
        "tests/test_snapshots_app.py",
    ]
    r = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-p", "no:xdist", *modules],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "error" not in r.stdout.lower()
    for module in modules:  # "-q -q" lists "module: N" per module
        assert re.search(rf"^{re.escape(module)}(::|: [1-9])", r.stdout, re.M), r.stdout
