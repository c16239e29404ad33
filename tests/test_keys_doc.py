"""Keys that mean one thing (issue 13, item 6): docs/keys.md is generated from the bindings,
no key has two meanings across screens, q / ? / esc work on every screen, and the keymap
TOML accepts the documented forms or stops with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import build_workspace
from textual.widgets import Input

from curiosity_tui.app import make_app
from curiosity_tui.app.base import load_keymap
from curiosity_tui.app.keys import all_rows, binding_holders, conflicts, markdown, meaning
from curiosity_tui.app.screen_registry import SCREENS
from curiosity_tui.errors import InputError
from curiosity_tui.screens.base import help_title
from curiosity_tui.screens.browser import BrowserScreen

ROOT = Path(__file__).resolve().parents[1]


def test_docs_keys_md_is_the_generated_text() -> None:
    doc = (ROOT / "docs" / "keys.md").read_text(encoding="utf-8")
    assert doc == markdown(), "docs/keys.md is stale: curiosity-tui keys --markdown > docs/keys.md"


def test_no_key_has_two_meanings() -> None:
    assert conflicts() == {}
    # the check can fail: two descriptions that are not aliases are two meanings
    assert meaning("Audit") != meaning("Approve…")
    assert meaning("Recompute") == meaning("Reload")


def test_the_cli_prints_the_doc_and_fails_on_a_clash() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "curiosity_tui", "keys", "--markdown"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0 and r.stdout == markdown() and r.stderr == ""


def test_q_help_and_esc_on_every_screen() -> None:
    rows = list(all_rows())
    everywhere = {r.key for r in rows if r.screen == "Everywhere"}
    assert {"q", "question_mark"} <= everywhere
    parts = {p.title for e in SCREENS for p in e.parts}  # widgets: their screen's esc holds
    for title, cls in binding_holders():
        if title == "Everywhere" or title in parts:
            continue
        keys = {r.key for r in rows if r.screen == title}
        assert "escape" in keys, f"{title} has no esc"
        assert "Screen" not in help_title(cls.__new__(cls)), cls.__name__


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "keys.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_keymap_accepts_quoted_nested_and_dotted_ids(tmp_path: Path) -> None:
    quoted = _write(tmp_path, '[keymap]\n"browser.prev_session" = "p"\n')
    assert load_keymap(quoted) == {"browser.prev_session": "p"}
    nested = _write(tmp_path, '[keymap.browser]\nprev_session = "p"\nnext_session = "o"\n')
    assert load_keymap(nested) == {"browser.prev_session": "p", "browser.next_session": "o"}
    dotted = _write(tmp_path, '[keymap]\nbrowser.prev_session = "p"\n')
    assert load_keymap(dotted) == {"browser.prev_session": "p"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[keymap]\n"browser.prev_sesion" = "p"\n', "unknown binding id 'browser.prev_sesion'"),
        ('[keymap.browser]\nprev = "p"\n', "unknown binding id 'browser.prev'"),
        ('[keymap]\n"browser.prev_session" = 3\n', "must be a key name"),
        ('[keys]\n"browser.prev_session" = "p"\n', "no [keymap] table"),
        ("[keymap\n", "not a readable TOML file"),
    ],
)
def test_keymap_errors_name_the_problem(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(InputError) as err:
        load_keymap(_write(tmp_path, text))
    assert says in str(err.value) and "keys.toml" in str(err.value)


def test_missing_keymap_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="keymap file not found"):
        load_keymap(tmp_path / "nope.toml")
    for argv, env in (
        (["open", str(tmp_path), "--keymap", str(tmp_path / "nope.toml")], {}),
        (["open", str(tmp_path)], {"CURIOSITY_TUI_KEYMAP": str(tmp_path / "nope.toml")}),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "curiosity_tui", *argv],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(ROOT), **env},
            timeout=60,
        )
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip().count("\n") == 0 and "keymap file not found" in r.stderr


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("keys") / "example")


async def test_nested_keymap_table_remaps_in_the_app(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "CURIOSITY_TUI_KEYMAP", str(_write(tmp_path, '[keymap.browser]\nprev_session = "p"\n'))
    )
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        assert app.screen.state.position.session is None  # now
        await pilot.press("p")
        await pilot.pause()
        assert app.screen.state.position.session == 3


async def test_q_quits_but_not_while_typing(ws: Path) -> None:
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.focused, Input)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.focused.value == "q"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running
