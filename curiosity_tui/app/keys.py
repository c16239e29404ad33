"""Every key of every screen in one table: ``docs/keys.md`` is generated from here
(``curiosity-tui keys --markdown``) and ``tests/test_keys_doc.py`` checks that the file matches
and that no key means two things across screens.

A key's *meaning* is its binding's description with the trailing "…" dropped, read through
:data:`SAME_MEANING`, which names the descriptions that say one thing in a screen's own words
("Reload" / "Recompute", "Earlier session" / "Previous item"). The rating scheme's category
keys are not screen bindings: they act only while a category row has focus (decision 140)
and are listed apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding

from curiosity_tui.app.base import AppBase
from curiosity_tui.app.screen_registry import key_holders

__all__ = [
    "KeyRow",
    "all_rows",
    "binding_holders",
    "conflicts",
    "markdown",
    "meaning",
]

#: the heading of the keys every screen shares (the app's own bindings)
EVERYWHERE = "Everywhere"


def binding_holders() -> Iterator[tuple[str, type[Any]]]:
    """(title, class) of everything with bindings, in the order docs/keys.md lists them: the
    app, then every screen of the registry (:data:`~curiosity_tui.app.screen_registry.SCREENS`)
    with the widgets documented after it."""
    yield EVERYWHERE, AppBase
    for title, _ids, cls in key_holders():
        yield title, cls


_BACK = "Back / cancel / close"
_ACCEPT = "Accept: open the row, or go on to the next field"
#: descriptions that mean the same thing -> the one meaning they share
SAME_MEANING: dict[str, str] = {
    "Back": _BACK,
    "Cancel": _BACK,
    "Close": _BACK,
    "Leave field": _BACK,
    "Clear filter": _BACK,
    "Workspace": _BACK,
    "Recompute": "Reload",
    "Mark (moves select)": "Mark",
    "Refresh": "Reload",
    "Browse ledger": "Browse",
    "Earlier": "Earlier / previous",
    "Earlier session": "Earlier / previous",
    "Previous item": "Earlier / previous",
    "Later": "Later / next",
    "Later session": "Later / next",
    "Next item": "Later / next",
    "Next match": "Next (match, metric)",
    "Next metric": "Next (match, metric)",
    "Previous match": "Previous (match, metric)",
    "Previous metric": "Previous (match, metric)",
    "Save item": "Save / submit",
    "Submit": "Save / submit",
    "Tree/detail": "Next field / pane",
    "Search": "Search / filter",
    "Filter": "Search / filter",
    "Open node": "Open",
}
#: keys whose meaning is given per key: Enter accepts and Tab moves focus, whatever a
#: screen calls it
KEY_MEANING: dict[str, str] = {
    "enter": _ACCEPT,
    "tab": "Next field / pane",
    "shift+tab": "Previous field / pane",
}


@dataclass(frozen=True)
class KeyRow:
    screen: str
    key: str
    description: str
    id: str
    shown: bool

    @property
    def meaning(self) -> str:
        return KEY_MEANING.get(self.key) or meaning(self.description)


def meaning(description: str) -> str:
    """The shared meaning of a binding description (see :data:`SAME_MEANING`)."""
    text = description.strip().removesuffix("…").strip()
    return SAME_MEANING.get(text, text)


def all_rows() -> Iterator[KeyRow]:
    """One row per key of every binding of every screen (a "j,down" binding gives two)."""
    for title, cls in binding_holders():
        for b in getattr(cls, "BINDINGS", []):
            if isinstance(b, Binding):
                for key in b.key.split(","):
                    yield KeyRow(title, key.strip(), b.description, b.id or "", b.show)


def conflicts() -> dict[str, set[str]]:
    """Keys bound with more than one meaning across screens -> those meanings."""
    by_key: dict[str, set[str]] = {}
    for r in all_rows():
        if r.description:
            by_key.setdefault(r.key, set()).add(r.meaning)
    return {k: v for k, v in by_key.items() if len(v) > 1}


def _shown(key: str) -> str:
    names = {
        "question_mark": "?",
        "slash": "/",
        "left_square_bracket": "[",
        "right_square_bracket": "]",
        "left_curly_bracket": "{",
        "right_curly_bracket": "}",
        "escape": "esc",
        "plus": "+",
        "equals_sign": "=",
    }
    return names.get(key, key)


HEADER = """# Keys

Generated from the screens' bindings by `curiosity-tui keys --markdown`; do not edit by hand
(`tests/test_keys_doc.py` checks this file against the code and that no key has two meanings
across screens). `q` quits, `?` shows the keys of the screen you are on and `esc` goes back,
cancels or closes on every screen; ctrl+p opens the command palette.

Remap a key by its id: point `CURIOSITY_TUI_KEYMAP` (or `open --keymap FILE`) at a TOML file:

```toml
[keymap]
"browser.prev_session" = "p"   # quote ids: they contain a dot

[keymap.browser]               # or a table per screen
next_session = "n"
```

A missing file or an id that names no binding is an error.

The rating scheme's category keys act only while a category row has focus (the field a
rater types in never sees them), so a scheme may use letters bound elsewhere.
"""


def markdown() -> str:
    """docs/keys.md: one meaning per key, then each screen's keys."""
    rows = list(all_rows())
    out = [HEADER, "## One meaning per key", "", "| key | means | on |", "| --- | --- | --- |"]
    by_key: dict[str, tuple[str, list[str]]] = {}
    for r in rows:
        if r.description:
            entry = by_key.setdefault(r.key, (r.meaning, []))
            if r.screen not in entry[1]:
                entry[1].append(r.screen)
    for key in sorted(by_key, key=lambda k: (len(_shown(k)) > 1, _shown(k).lower(), k)):
        what, screens = by_key[key]
        out.append(f"| `{_shown(key)}` | {what} | {', '.join(screens)} |")
    for title, _cls in binding_holders():
        mine = [r for r in rows if r.screen == title and r.description]
        out += ["", f"## {title}", "", "| key | does | id |", "| --- | --- | --- |"]
        for r in mine:
            hidden = "" if r.shown else " (not in the footer)"
            out.append(f"| `{_shown(r.key)}` | {r.description}{hidden} | `{r.id}` |")
    return "\n".join(out) + "\n"
