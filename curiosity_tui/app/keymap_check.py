"""A keymap's values are checked before any screen sees them (issue 25, item 9; decision 408):

- every key is a Textual key name (``ctrl+s``, ``f5``, ``question_mark``; a bare ``?`` would
  never fire, leaving the binding with no reachable key);
- ``q``, ``escape`` and ``ctrl+q`` keep their meaning on every screen: no binding may take
  them, and the bindings that have them may not be moved;
- a remapped key does not take one another binding of the same screen already has (one of
  the two would be unreachable: a keymap could leave "save" with no key).

Each problem is an InputError naming the file and the binding id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from curiosity_tui.app.screen_registry import key_holders
from curiosity_tui.errors import InputError

RESERVED = frozenset({"q", "escape", "ctrl+q"})
_KEY = re.compile(
    r"\A(?:(?:ctrl|shift|alt|meta|super)\+)*(?:[A-Za-z0-9]|f[1-9][0-9]?|[a-z]+(?:_[a-z]+)*)\Z"
)


def _keys(value: str) -> list[str]:
    return [k.strip() for k in value.split(",") if k.strip()]


def _rows(app_bindings: Iterable[Any]) -> Iterator[tuple[str, str, str]]:
    """(screen, binding id, key) of every key: the app's own, then every screen's."""
    holders: list[tuple[str, Iterable[Any]]] = [("Everywhere", app_bindings)]
    holders += [(title, getattr(cls, "BINDINGS", [])) for title, _ids, cls in key_holders()]
    for title, bindings in holders:
        for b in bindings:
            if getattr(b, "id", None) and isinstance(getattr(b, "key", None), str):
                for key in b.key.split(","):
                    yield title, b.id, key.strip()


def check_keymap(keymap: dict[str, str], where: Path, app_bindings: Iterable[Any] = ()) -> None:
    """Raise InputError for the first bad value (``app_bindings``: the app's own bindings)."""
    defaults: dict[str, set[str]] = {}
    screens: dict[str, dict[str, set[str]]] = {}
    for title, bid, key in _rows(app_bindings):
        defaults.setdefault(bid, set()).add(key)
        screens.setdefault(title, {}).setdefault(bid, set()).add(key)
    for bid, value in sorted(keymap.items()):
        keys = _keys(value)
        bad = next((k for k in keys if not _KEY.match(k)), None) if keys else value
        if bad is not None:
            raise InputError(
                f"{where}: keymap.{bid}: {bad!r} is not a key name (e.g. ctrl+s, f5, "
                "question_mark; see docs/keys.md)"
            )
        own = defaults.get(bid, set())
        if own & RESERVED and set(keys) != own:
            raise InputError(f"{where}: keymap.{bid}: q, escape and ctrl+q cannot be moved")
        taken = (set(keys) & RESERVED) - own
        if taken:
            raise InputError(
                f"{where}: keymap.{bid}: {sorted(taken)[0]!r} quits or goes back on every "
                "screen and cannot be bound to anything else"
            )
    _refuse_collisions(keymap, screens, where)


def _refuse_collisions(
    keymap: dict[str, str], screens: dict[str, dict[str, set[str]]], where: Path
) -> None:
    for title, bindings in screens.items():
        now = {
            bid: set(_keys(keymap[bid])) if bid in keymap else keys
            for bid, keys in bindings.items()
        }
        for bid in sorted(set(keymap) & set(bindings)):
            for other, keys in sorted(now.items()):
                clash = sorted(now[bid] & keys) if other != bid else []
                if clash:
                    raise InputError(
                        f"{where}: keymap.{bid}: {clash[0]!r} is already {other} on the "
                        f"{title} screen; one of the two would have no key"
                    )
