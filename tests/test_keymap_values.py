"""A keymap file is checked for its values as well as its ids (issue 25, item 9): non-UTF-8
bytes, key names that never fire, q/escape rebound, and a key taken from another binding of
the same screen (leaving "save" with no key) are each one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.app.base import load_keymap
from curiosity_tui.errors import InputError


def _file(tmp_path: Path, body: str | bytes) -> Path:
    p = tmp_path / "keys.toml"
    p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return p


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'[keymap]\n"app.help" = "\xff\xfe"\n', "not UTF-8"),
        ('[keymap]\n"rating.save" = "?"\n', "is not a key name"),
        ('[keymap]\n"rating.save" = "ctrl+l"\n', "'ctrl+l' is already rating.items"),
        ('[keymap]\n"rating.items" = "ctrl+s"\n', "'ctrl+s' is already rating.save"),
        ('[keymap]\n"rating.save" = "q"\n', "'q' quits or goes back"),
        ('[keymap]\n"rating.guide" = "escape"\n', "'escape' quits or goes back"),
        ('[keymap]\n"app.q" = "x"\n', "cannot be moved"),
        ('[keymap]\n"analysis.back" = "b"\n', "cannot be moved"),
    ],
)
def test_bad_keymap_values_are_refused(tmp_path: Path, body: str | bytes, problem: str) -> None:
    path = _file(tmp_path, body)
    with pytest.raises(InputError) as err:
        load_keymap(path)
    assert problem in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_good_keymaps_load(tmp_path: Path) -> None:
    path = _file(tmp_path, '[keymap]\n"rating.save" = "ctrl+s,f5"\n"app.help" = "f2"\n')
    assert load_keymap(path) == {"rating.save": "ctrl+s,f5", "app.help": "f2"}
