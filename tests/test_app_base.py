"""One base for every app (issue 10): help titles in words, the standalone apps inherit help,
palette and keymap, and the navigator is the only way between screens."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.screen import Screen

from curiosity_tui.app import AgreementApp, AnalysisApp, AppBase, CuriosityApp, RatingApp
from curiosity_tui.app.base import SHELL_CSS, TABLES_CSS
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.screens.base import help_title
from curiosity_tui.screens.help import HelpScreen
from curiosity_tui.screens.rating import RatingScreen

SIZE = (160, 50)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=11)
    return out


class RunMonitorXScreen(Screen[None]):
    pass


class TitledScreen(Screen[None]):
    HELP_TITLE = "Titled — keys"


def test_help_titles_are_words() -> None:
    assert help_title(TitledScreen()) == "Titled — keys"
    assert help_title(RunMonitorXScreen()) == "Run monitor x"
    from curiosity_tui.screens.pack_open import PackOpenScreen
    from curiosity_tui.screens.workspace import WorkspaceScreen

    assert help_title(PackOpenScreen(Path("p"))) == "Open a pack"
    assert help_title(WorkspaceScreen(Path("."))) == "Workspace"


def test_every_app_is_an_appbase_with_the_tcss_sheets() -> None:
    for cls in (CuriosityApp, RatingApp, AgreementApp, AnalysisApp):
        assert issubclass(cls, AppBase)
    assert SHELL_CSS.is_file() and TABLES_CSS.is_file()
    assert CuriosityApp.CSS_PATH == [SHELL_CSS, TABLES_CSS]
    assert RatingApp.CSS_PATH == [SHELL_CSS]
    assert "DataTable" in TABLES_CSS.read_text() and "DataTable" not in SHELL_CSS.read_text()


async def test_rating_app_has_help_and_a_keymap(
    pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(app.screen._table())
        body = console.export_text()
        assert "Rating" in body and "Save item" in body and "rating.save" in body
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RatingScreen)
    keys = tmp_path / "keys.toml"
    keys.write_text('[keymap]\n"app.help" = "f2"\n', encoding="utf-8")
    monkeypatch.setenv("CURIOSITY_TUI_KEYMAP", str(keys))
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_rating_app_palette_offers_help(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE):
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Help" in titles


async def test_analysis_app_exits_from_its_only_screen(tmp_path: Path) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    app = AnalysisApp([empty])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running
