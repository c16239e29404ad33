"""No private part of a dependency is used by the package (issue 22 item 2, decision 340).

Checked over every module's syntax tree:

- no import of a private module or name (``openai._models``, ``from httpx import _x``) of
  openai, httpx, httpcore, pydantic, textual or their relatives;
- no private attribute used (read or written) that the package does not define itself: ``x._name`` (and
  ``getattr(x, "_name")``) must name an attribute or method that one of the package's own
  classes defines (``self._name = …``, ``def _name``, a class-level ``_name``);
- no class of the package defines a private name that a dependency base class already has
  (overriding a private hook such as Textual's ``_on_key`` or a private flag).

The only exceptions are Textual's, in ``widgets/textual_private.py`` (its docstring says why
each is needed and ``tests/test_textual_private.py`` tests each), and the standard library's,
listed below with their reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "curiosity_tui"
DEPENDENCIES = (
    "openai",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "anyio",
    "h11",
    "pydantic",
    "pydantic_core",
    "textual",
    "rich",
)
TEXTUAL_EXCEPTIONS = "widgets/textual_private.py"
#: standard-library names that look private but are public, or are argparse's (not a
#: dependency): a namedtuple's documented methods; argparse's sub-command and group types
#: (only in annotations) and ``parser._actions`` (the CLI's help walk)
STDLIB = frozenset({"_asdict", "_replace", "_fields", "_make", "_SubParsersAction"})
STDLIB |= {"_ArgumentGroup", "_actions"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(PKG).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(PKG.rglob("*.py"))
    ]


def _own_attributes(modules: list[tuple[str, ast.Module]]) -> set[str]:
    """Private names the package's own classes define (methods, class and instance attributes)."""
    own: set[str] = set()
    for _, tree in modules:
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    own.add(node.name)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    own.add(node.attr)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    own.add(node.id)  # class-level assignments (and locals: harmless)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    own.add(node.target.id)
    return own


def _private_imports(modules: list[tuple[str, ast.Module]]) -> list[str]:
    found = []
    for rel, tree in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            bad = [
                name
                for name in names
                if name.split(".")[0] in DEPENDENCIES
                and any(_private(p) for p in name.split(".")[1:])
                and not (rel == TEXTUAL_EXCEPTIONS and name.startswith("textual."))
            ]
            if bad:
                found.append(f"{rel}:{node.lineno} imports {bad[-1]}")
    return found


def test_no_private_module_or_name_of_a_dependency_is_imported() -> None:
    assert _private_imports(_modules()) == []


def _foreign_reads(modules: list[tuple[str, ast.Module]]) -> list[str]:
    own = _own_attributes(modules) | STDLIB
    found = []
    for rel, tree in modules:
        if rel == TEXTUAL_EXCEPTIONS:
            continue
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute) and _private(node.attr):
                name = node.attr
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and _private(node.args[1].value)
            ):
                name = node.args[1].value
            if name is not None and name not in own:
                found.append(f"{rel}:{node.lineno} uses {name}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for dep in DEPENDENCIES:
                    if f"{dep}._" in node.value and not node.value.startswith(" "):
                        found.append(f"{rel}:{node.lineno} names {dep}._… in a string")
    return found


def test_no_private_attribute_the_package_does_not_define_is_used() -> None:
    assert _foreign_reads(_modules()) == []


def _defined_private_names(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _private(node.name):
            names.add(node.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
            and _private(node.attr)
        ):
            names.add(node.attr)
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign):
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name) and _private(t.id)}
    return names


def test_no_class_overrides_a_private_name_of_a_dependency_base() -> None:
    found = []
    for rel, tree in _modules():
        module_name = "curiosity_tui." + rel[: -len(".py")].replace("/", ".")
        module_name = module_name.removesuffix(".__init__")
        top = [n for n in tree.body if isinstance(n, ast.ClassDef) and _defined_private_names(n)]
        if not top:
            continue
        module = importlib.import_module(module_name)
        for node in top:
            cls = getattr(module, node.name, None)
            if not inspect.isclass(cls):
                continue
            for name in sorted(_defined_private_names(node)):
                owner = _foreign_owner(cls, name)
                if owner:
                    found.append(f"{rel}: {node.name}.{name} is also {owner}.{name}")
    assert found == []


def _foreign_owner(cls: type, name: str) -> str | None:
    """The dependency base class of ``cls`` that already has ``name``, if any."""
    for base in cls.__mro__:
        if base.__module__.split(".")[0] in DEPENDENCIES and name in vars(base):
            return f"{base.__module__}.{base.__qualname__}"
    return None


def test_the_checks_flag_the_reach_ins_this_issue_removed() -> None:
    """Each check, on code as it was before decision 340, finds what was there."""
    before = ast.parse(
        "from openai._models import construct_type\n"
        "from openai._base_client import _merge_headers\n"
        "import openai._base_client as base\n"
        "def coalesce(oa):\n"
        "    pool = getattr(getattr(oa, '_client', None), '_transport', None)._pool\n"
        "    pool._network_backend = wrap(pool._network_backend)\n"
        "    log = logging.getLogger('openai._base_client')\n"
        "class Ordered:\n"
        "    async def on_key(self, event):\n"
        "        return self._bindings.key_to_bindings\n"
    )
    assert len(_private_imports([("x.py", before)])) == 3
    reads = _foreign_reads([("x.py", before)])
    assert sorted(r.split(" ", 1)[1] for r in reads) == [
        "names openai._… in a string",
        "uses _bindings",
        "uses _client",
        "uses _network_backend",  # written
        "uses _network_backend",  # read
        "uses _pool",
        "uses _transport",
    ]
    from textual.widgets import Footer, Input

    class OrderedInput(Input):
        async def _on_key(self, event: object) -> None: ...

    assert _foreign_owner(OrderedInput, "_on_key") == "textual.widgets._input.Input"
    assert _foreign_owner(Footer, "_bindings_ready") is not None
    assert _foreign_owner(OrderedInput, "_queued") is None


def test_the_http_stack_is_reached_only_through_openai() -> None:
    """openai 1.x sends with httpx, 3.x with httpx2: the package imports neither (nor their
    httpcore), so one code path serves every openai the declared bound allows (>= 1.45)."""
    found = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            for name in _imported_names(node):
                if name.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2"):
                    found.append(f"{rel}:{node.lineno} imports {name}")
    assert found == []


def _imported_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module]
    return []
