"""One registry of screens (issue 22 item 3): app/screen_registry.py names every screen once,
and the navigator, the keymap documentation and the keymap's id check are derived from it.

Held here: every screen class of screens/ has exactly one entry; every binding id of a screen
lies in its entry's namespace; every method of the Navigator protocol is implemented by the
navigator and pushes a registered screen; within the app only the registry imports screen
modules; importing the app loads no screen until one is opened.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_import_hygiene import graph
from textual.binding import Binding
from textual.screen import Screen

from curiosity_tui.app import screen_registry as registry
from curiosity_tui.app.keys import all_rows
from curiosity_tui.app.main import CuriosityApp
from curiosity_tui.app.navigator import Navigation
from curiosity_tui.screens.base import Navigator

PKG = Path(__file__).resolve().parents[1] / "curiosity_tui"
#: modules of screens/ that hold no screen
SHARED = {"__init__", "base", "form_base"}


def screen_classes_on_disk() -> set[tuple[str, str]]:
    """(module, class) of every Screen subclass defined in a module of screens/."""
    import importlib

    found = set()
    for path in sorted((PKG / "screens").glob("*.py")):
        if path.stem in SHARED:
            continue
        mod = importlib.import_module(f"curiosity_tui.screens.{path.stem}")
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and issubclass(obj, Screen) and obj.__module__ == mod.__name__:
                found.add((mod.__name__, name))
    return found


def ids_outside(namespace: str, cls: type[Any]) -> list[str]:
    """Binding ids of ``cls`` that are neither ``<namespace>.*`` nor the app's ``app.*``."""
    return [
        b.id or f"<no id: {b.key}>"
        for b in getattr(cls, "BINDINGS", [])
        if isinstance(b, Binding) and not (b.id or "").startswith((f"{namespace}.", "app."))
    ]


def test_every_screen_has_exactly_one_entry() -> None:
    registered = [(c.__module__, c.__name__) for c in (e.load() for e in registry.SCREENS)]
    assert len(registered) == len(set(registered)), "a screen is registered twice"
    assert set(registered) == screen_classes_on_disk()
    assert len(registered) >= 17


def test_binding_ids_lie_in_their_screens_namespace() -> None:
    holders = list(registry.key_holders())
    namespaces = [ids for _title, ids, _cls in holders]
    assert len(namespaces) == len(set(namespaces)), "two screens share an id namespace"
    outside = {title: ids_outside(ids, cls) for title, ids, cls in holders}
    assert {t: bad for t, bad in outside.items() if bad} == {}


def test_namespace_check_can_fail() -> None:
    class Fake(Screen[None]):
        BINDINGS = [
            Binding("x", "x", "X", id="fake.x"),
            Binding("y", "y", "Y", id="other.y"),
            Binding("z", "z", "Z"),
            Binding("question_mark", "help", "Help", id="app.help"),
        ]

    assert ids_outside("fake", Fake) == ["other.y", "<no id: z>"]


def test_binding_id_check_is_the_registrys_plus_the_apps() -> None:
    documented = {r.id for r in all_rows() if r.id}
    app_ids = {r.id for r in all_rows() if r.screen == "Everywhere" and r.id}
    assert registry.binding_ids() | app_ids == documented
    assert "browser.prev_session" in registry.binding_ids() and "tree.expand" in documented


def _navigator_methods() -> dict[str, Any]:
    return {
        name: member
        for name, member in vars(Navigator).items()
        if not name.startswith("_") and callable(member)
    }


def test_the_navigator_implements_the_protocol_with_its_signatures() -> None:
    methods = _navigator_methods()
    assert "open_ledger" in methods and "ask_reason" in methods
    for name, declared in methods.items():
        implemented = getattr(Navigation, name, None)
        assert implemented is not None, f"Navigation has no {name}"
        assert list(inspect.signature(implemented).parameters) == list(
            inspect.signature(declared).parameters
        ), name
        assert inspect.iscoroutinefunction(implemented) == inspect.iscoroutinefunction(declared)


def test_every_navigator_method_pushes_a_registered_screen() -> None:
    opened_by = [name for e in registry.SCREENS for name in e.opened_by]
    assert set(_navigator_methods()) - {"close_screen"} <= set(opened_by)
    missing = [name for name in opened_by if not callable(getattr(CuriosityApp, name, None))]
    assert missing == [], f"entries name methods the app does not have: {missing}"


def test_within_the_app_only_the_registry_imports_screen_modules() -> None:
    g = graph(type_checking=True)
    screen_modules = {f"curiosity_tui.screens.{p.stem}" for p in (PKG / "screens").glob("*.py")}
    screen_modules -= {f"curiosity_tui.screens.{name}" for name in SHARED}
    importers = {
        mod
        for mod, targets in g.items()
        if mod.startswith("curiosity_tui.app") and targets & screen_modules
    }
    assert importers == {"curiosity_tui.app.screen_registry"}


def test_importing_the_app_loads_no_screen() -> None:
    code = (
        "import json, sys\n"
        "import curiosity_tui.app, curiosity_tui.app.keys, curiosity_tui.app.standalone\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('curiosity_tui.screens.')"
        " and m != 'curiosity_tui.screens.base')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(PKG.parent), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
