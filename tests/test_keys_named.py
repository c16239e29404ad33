"""Keys named once (issue 28, item 9): a key named in README.md's screen list, in a screen's
help text or in the curator's status line must be bound on that screen (or everywhere, or by
the focused widget: enter, esc, tab, arrows); docs/keys.md is generated from the bindings
(tests/test_keys_doc.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from curiosity_tui.app.base import AppBase
from curiosity_tui.app.screen_registry import key_holders

ROOT = Path(__file__).resolve().parents[1]

#: README bullet title -> the screens (titles of app/screen_registry.py) whose keys it may name
README_SCREENS = {
    "Workspace": ["Workspace"],
    "Ledger browser": ["Ledger browser", "Ledger tree (browser, curator)", "Session input"],
    "Curator": ["Curator between sessions", "Curator's reason form", "Run monitor"],
    "Downgrades": ["Downgrades", "Downgrade decision"],
    "Audit": ["Closure audit"],
    "Analysis": ["Analysis", "Workspace"],
    "Compare": ["Compare two runs", "Workspace"],
    "Rating": ["Rating"],
}
WIDGET_KEYS = {"enter", "escape", "tab", "shift+tab", "up", "down", "left", "right"}
NAMES = {
    "esc": "escape",
    "/": "slash",
    "?": "question_mark",
    "[": "left_square_bracket",
    "]": "right_square_bracket",
    "{": "left_curly_bracket",
    "}": "right_curly_bracket",
    "↓": "down",
    "↑": "up",
}
KEY_RE = re.compile(r"^(ctrl\+[a-z]|shift\+tab|[A-Za-z0-9]|enter|esc|tab|[/?\[\]{}↓↑])$", re.I)


def _keys_of(cls: type) -> set[str]:
    return {k.strip() for b in getattr(cls, "BINDINGS", []) for k in b.key.split(",")}


def _bound(titles: list[str]) -> set[str]:
    out = set(WIDGET_KEYS) | _keys_of(AppBase)  # the app's keys hold on every screen
    for title, _ids, cls in key_holders():
        if title in titles:
            out |= _keys_of(cls)
    return out


def keys_named(text: str) -> list[str]:
    """Every key a text names: backticked key tokens, and ctrl+<letter> anywhere."""
    found = [t for t in re.findall(r"`([^`]+)`", text) if KEY_RE.match(t)]
    found += re.findall(r"\b(ctrl\+[a-z])\b", text, flags=re.I)
    out = []
    for k in found:
        k = NAMES.get(k, k)
        out.append(k.lower() if len(k) > 1 else k)
    return out


def unbound(text: str, titles: list[str]) -> list[str]:
    bound = _bound(titles)
    return sorted({k for k in keys_named(text) if k not in bound})


def _readme_bullets() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for m in re.finditer(r"^- \*\*([^*]+)\*\*(.*?)(?=^- \*\*|^\s*$)", text, flags=re.M | re.S):
        out[m.group(1).strip()] = m.group(2)
    return out


def test_every_key_the_readme_names_on_a_screen_is_bound_there() -> None:
    bullets = _readme_bullets()
    assert set(README_SCREENS) <= set(bullets), "README's screen list lost a bullet"
    for title, screens in README_SCREENS.items():
        assert keys_named(bullets[title]), f"README's {title} bullet names no key"
        assert unbound(bullets[title], screens) == [], f"README, {title}"


def test_every_key_a_screens_help_names_is_bound_there() -> None:
    for title, _ids, cls in key_holders():
        help_text = getattr(cls, "HELP", "") or ""
        assert unbound(help_text, [title]) == [], f"{cls.__name__}.HELP"


@pytest.mark.parametrize(
    ("text", "screens", "bad"),
    [
        (
            "`a` audit, `m` merge, `x` archive, `c` continue",
            ["Curator between sessions"],
            ["a", "c", "m", "x"],
        ),  # fmt: skip
        ("Enter expands; `g` jumps to the node", ["Closure audit"], ["g"]),
        ("press ctrl+n to go on", ["Workspace"], ["ctrl+n"]),
        ("`M` merge, `X` archive, `ctrl+n` continues", ["Curator between sessions"], []),
    ],
)
def test_the_check_fails_on_what_the_issue_saw(
    text: str, screens: list[str], bad: list[str]
) -> None:
    assert unbound(text, screens) == bad
