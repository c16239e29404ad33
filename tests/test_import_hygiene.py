"""The import rules of docs/architecture.md, checked over every module of the package.

- Only the app layer (app/, screens/, widgets/) imports textual; cli/app_cmds.py (and other
  cli modules) may import the app lazily inside a function. Checked statically over every
  module and dynamically in a fresh interpreter.
- No import cycle among the package's modules (by ast, imports inside functions included).
- Layers point one way, cli -> app -> screens -> widgets -> domain: the domain never imports
  app/screens/widgets/cli; app, screens and widgets never import cli; screens and widgets
  never import the app; widgets never import screens; screens never import sibling screens.
- Inside the domain, rooms point down (ledger, contract, modelio, protocol, runs,
  analysis/packs, offline), and the offline fakes are imported by real code only at the
  CLI's choice points (``--scripted``, ``demo``).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "curiosity_tui"
APP_LAYER = ("app/", "screens/", "widgets/")
#: app-layer modules of ours: importing them pulls textual in
APP_MODULES = ("curiosity_tui.app", "curiosity_tui.screens", "curiosity_tui.widgets")


def _rel(path: Path) -> str:
    return path.relative_to(PKG).as_posix()


def _in_app_layer(rel: str) -> bool:
    return rel.startswith(APP_LAYER)


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


# -- the module graph ---------------------------------------------------------------------
# Which imports count: every ``import`` / ``from … import`` statement anywhere in a module —
# at module level and inside functions and methods (a lazy import still runs, and two lazy
# imports can still be a cycle of responsibilities) — except those under
# ``if TYPE_CHECKING:``, which never run. For the layer rules the TYPE_CHECKING imports count
# too: a type-only dependency on a higher layer is still a dependency on it.
# ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _targets(mod: str, node: ast.AST, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:  # relative: resolve against the importing module's package
        is_pkg = modules.get(mod, Path()).name == "__init__.py"
        pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
        pkg = pkg[: len(pkg) - node.level + 1]
        base = ".".join(pkg + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def imports_of(
    mod: str, tree: ast.AST, modules: dict[str, Path], *, type_checking: bool
) -> set[str]:
    """Modules of the package that ``mod`` imports (see the comment above for which count)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        found.update(t for t in _targets(mod, node, modules) if t in modules and t != mod)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def graph(*, type_checking: bool) -> dict[str, set[str]]:
    trees = {
        m: ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for m, p in MODULES.items()
    }
    return {m: imports_of(m, t, MODULES, type_checking=type_checking) for m, t in trees.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing itself),
    by Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in g.get(v, ()):
                    found.append(sorted(comp))
    return found


def test_no_import_cycles() -> None:
    assert cycles(graph(type_checking=False)) == []


def test_cycle_finder_finds_cycles() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert sorted(cycles(g)) == [["a", "b", "c"], ["e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_counts_lazy_imports_and_skips_type_checking() -> None:
    src = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from curiosity_tui.app import make_app\n"
        "def f():\n    from curiosity_tui.screens import browser\n"
        "from curiosity_tui.ledger.ledger import Ledger\n"
    )
    tree = ast.parse(src)
    run = imports_of("curiosity_tui.x", tree, MODULES, type_checking=False)
    assert run == {"curiosity_tui.screens.browser", "curiosity_tui.ledger.ledger"}
    every = imports_of("curiosity_tui.x", tree, MODULES, type_checking=True)
    assert every == run | {"curiosity_tui.app"}


# -- layers -------------------------------------------------------------------------------

LAYERS = ("cli", "app", "screens", "widgets")
#: modules of screens/ that hold no screen (shared parts every screen may import)
SCREEN_SHARED = {
    "curiosity_tui.screens",
    "curiosity_tui.screens.base",
    "curiosity_tui.screens.form_base",
}
#: which layers each layer must not import ("domain" is everything outside LAYERS)
FORBIDDEN = {
    "domain": {"cli", "app", "screens", "widgets"},
    "app": {"cli"},
    "screens": {"cli", "app"},
    "widgets": {"cli", "app", "screens"},
    "cli": set(),
}


def layer(mod: str) -> str:
    parts = mod.split(".")
    if mod == "curiosity_tui.__main__":
        return "cli"  # the entry point: runs the CLI
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "domain"


def layer_violations(g: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in sorted(g.items()):
        for t in sorted(targets):
            if layer(t) in FORBIDDEN[layer(mod)]:
                bad.append(f"{mod} ({layer(mod)}) imports {t} ({layer(t)})")
            elif (
                layer(mod) == "screens"
                and layer(t) == "screens"
                and mod not in SCREEN_SHARED
                and t not in SCREEN_SHARED
            ):
                bad.append(f"{mod} imports its sibling screen {t}: ask the app (Navigator)")
    return bad


def test_layers_point_one_way() -> None:
    g = graph(type_checking=True)
    assert "curiosity_tui.screens.base" in g["curiosity_tui.screens.browser"]
    assert layer_violations(g) == []


def test_layer_checker_catches_violations() -> None:
    g = {
        "curiosity_tui.ledger.ledger": {"curiosity_tui.widgets.literal"},
        "curiosity_tui.screens.audit": {
            "curiosity_tui.screens.browser",
            "curiosity_tui.screens.base",
        },
        "curiosity_tui.widgets.charts": {"curiosity_tui.screens.analysis"},
        "curiosity_tui.app.main": {"curiosity_tui.cli.run_cmds", "curiosity_tui.screens.audit"},
        "curiosity_tui.cli.run_cmds": {"curiosity_tui.app"},
    }
    assert layer_violations(g) == [
        "curiosity_tui.app.main (app) imports curiosity_tui.cli.run_cmds (cli)",
        "curiosity_tui.ledger.ledger (domain) imports curiosity_tui.widgets.literal (widgets)",
        "curiosity_tui.screens.audit imports its sibling screen curiosity_tui.screens.browser: "
        "ask the app (Navigator)",
        "curiosity_tui.widgets.charts (widgets) imports curiosity_tui.screens.analysis (screens)",
    ]


# -- rooms inside the domain --------------------------------------------------------------

#: the domain's rooms, bottom up: a room imports only rooms of its own rank or below.
#: Modules at the package's top (errors.py, atomic.py, ...) sit under every room.
ROOM_RANK = {
    "ledger": 0,
    "contract": 1,
    "modelio": 2,
    "protocol": 3,
    "runs": 4,
    "analysis": 5,
    "packs": 5,
    "offline": 6,
}
#: the only places real code may import the offline room: (module, function) — the CLI's
#: choice of a scripted model (``--scripted``, ``demo``) and of the scripted relay
OFFLINE_CHOICE_POINTS = {
    ("curiosity_tui.cli.run_cmds", "model_client"),
    ("curiosity_tui.cli.relay_cmds", "demo_relay"),
    ("curiosity_tui.cli.relay_cmds", "scripted_relay_plan"),  # run --relay FILE --scripted
}


def room(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOM_RANK else None


def room_violations(g: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in sorted(g.items()):
        here = room(mod)
        for t in sorted(targets):
            there = room(t)
            if here and there and ROOM_RANK[there] > ROOM_RANK[here]:
                bad.append(f"{mod} ({here}) imports {t} ({there}): a room above it")
    return bad


def offline_importers(mod: str, tree: ast.AST, modules: dict[str, Path]) -> set[tuple[str, str]]:
    """(module, enclosing function or "<module>") of every import of the offline room."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, where: str) -> None:
        if any(room(t) == "offline" for t in _targets(mod, node, modules)):
            found.add((mod, where))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            where = node.name
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(tree, "<module>")
    return found


def test_domain_rooms_point_down() -> None:
    g = graph(type_checking=True)
    assert "curiosity_tui.modelio.client" in g["curiosity_tui.runs.runner"]
    assert room_violations(g) == []


def test_room_checker_catches_violations() -> None:
    g = {
        "curiosity_tui.modelio.client": {"curiosity_tui.protocol.steps"},
        "curiosity_tui.protocol.steps": {"curiosity_tui.runs.runner", "curiosity_tui.ledger"},
        "curiosity_tui.analysis.plan": {"curiosity_tui.packs.pack", "curiosity_tui.runs.relay"},
    }
    assert room_violations(g) == [
        "curiosity_tui.modelio.client (modelio) imports curiosity_tui.protocol.steps "
        "(protocol): a room above it",
        "curiosity_tui.protocol.steps (protocol) imports curiosity_tui.runs.runner (runs): "
        "a room above it",
    ]


def test_offline_room_only_where_it_is_chosen() -> None:
    users: set[tuple[str, str]] = set()
    for mod, path in MODULES.items():
        if room(mod) != "offline":
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            users |= offline_importers(mod, tree, MODULES)
    assert users - OFFLINE_CHOICE_POINTS == set(), "real code imports the offline fakes"
    assert users == OFFLINE_CHOICE_POINTS, "a choice point no longer imports the offline room"


def test_offline_checker_finds_imports_by_function() -> None:
    src = (
        "import curiosity_tui.offline.demo\n"
        "def pick():\n    from curiosity_tui.offline.scripted_server import ScriptedServer\n"
        "class C:\n    def m(self):\n        from curiosity_tui.offline import research\n"
        "from curiosity_tui.ledger.ledger import Ledger\n"
    )
    found = offline_importers("curiosity_tui.cli.x", ast.parse(src), MODULES)
    assert found == {
        ("curiosity_tui.cli.x", "<module>"),
        ("curiosity_tui.cli.x", "pick"),
        ("curiosity_tui.cli.x", "m"),
    }
