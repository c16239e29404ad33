"""Only the app layer (app.py, screens/, widgets/) imports textual; cli/app_cmds.py (and other
cli modules) may import the app lazily inside a function. Checked statically over every
module and dynamically in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "curiosity_tui"
APP_LAYER = ("app.py", "screens/", "widgets/")
#: app-layer modules of ours: importing them pulls textual in
APP_MODULES = ("curiosity_tui.app", "curiosity_tui.screens", "curiosity_tui.widgets")


def _rel(path: Path) -> str:
    return path.relative_to(PKG).as_posix()


def _in_app_layer(rel: str) -> bool:
    return rel == "app.py" or rel.startswith(("screens/", "widgets/"))


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module]
    return []


def _bad(name: str) -> bool:
    return name == "textual" or name.startswith("textual.") or name.startswith(APP_MODULES)


def _violations(path: Path) -> list[str]:
    rel = _rel(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lazy_ok = rel.startswith("cli/")
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for name in _imported(node):
            if _bad(name) and not (lazy_ok and in_function):
                where = "inside a function" if in_function else "at module level"
                found.append(f"{rel}:{node.lineno} imports {name} {where}")
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return found


def test_static_no_textual_outside_the_app_layer() -> None:
    problems = []
    for path in sorted(PKG.rglob("*.py")):
        if not _in_app_layer(_rel(path)):
            problems.extend(_violations(path))
    assert problems == []


def test_static_checker_catches_violations(tmp_path: Path) -> None:
    sample = ast.parse("import os\nfrom textual.app import App\ndef f():\n    import textual\n")
    names = [n for node in ast.walk(sample) for n in _imported(node)]
    assert [n for n in names if _bad(n)] == ["textual.app", "textual"]


def domain_modules() -> list[str]:
    mods = []
    for path in sorted(PKG.rglob("*.py")):
        rel = _rel(path)
        if _in_app_layer(rel) or rel == "__main__.py":
            continue
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods.append(".".join(["curiosity_tui", *parts]))
    return mods


def test_dynamic_domain_imports_leave_textual_unloaded() -> None:
    mods = domain_modules()
    assert "curiosity_tui.ledger.ledger" in mods and "curiosity_tui.cli.ledger_cmds" in mods
    code = (
        "import importlib, json, sys\n"
        f"mods = {mods!r}\n"
        "failed = {}\n"
        "for m in mods:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except Exception as e:\n"
        "        failed[m] = repr(e)\n"
        "loaded = sorted(k for k in sys.modules if k == 'textual' or k.startswith('textual.'))\n"
        "print(json.dumps({'failed': failed, 'textual': loaded[:5]}))\n"
    )
    env_path = str(PKG.parent)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["failed"] == {}
    assert result["textual"] == [], "a domain module imported textual"
