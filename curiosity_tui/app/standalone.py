"""The apps that host one screen: blind rating (``curiosity-tui rate``), agreement
(``curiosity-tui agreement --tui``), adjudication (``curiosity-tui adjudicate``), analysis (``AnalysisApp(paths).run()``) and
comparison (``curiosity-tui compare A B --app``).

Each is a thin :class:`~curiosity_tui.app.base.AppBase`: the same help, palette, keymap
(``$CURIOSITY_TUI_KEYMAP``) and shell stylesheet as the full app. Neither the agreement app
nor the adjudication app is reachable from the rating app: a rater must not see other raters'
work.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from curiosity_tui.app import screen_registry as screens
from curiosity_tui.app.base import SHELL_CSS, TABLES_CSS, AppBase, env_keymap

__all__ = ["AdjudicationApp", "AgreementApp", "AnalysisApp", "CompareApp", "RatingApp"]


class RatingApp(AppBase):
    """Hosts :class:`~curiosity_tui.screens.rating.RatingScreen` for
    ``curiosity-tui rate PACKDIR --rater NAME``."""

    TITLE = "curiosity-tui · blind rating"

    def __init__(
        self, packdir: str | Path, rater: str, *, keymap: dict[str, str] | None = None
    ) -> None:
        RatingScreen = screens.rating()
        super().__init__(keymap=env_keymap(keymap))
        self.packdir = Path(packdir)
        self.rater = rater
        # Built here so a bad pack or rater name fails before the terminal is taken over.
        self.rating_screen = RatingScreen(self.packdir, self.rater)

    def open_home(self) -> None:
        self.push_screen(self.rating_screen)


class AgreementApp(AppBase):
    """Hosts :class:`~curiosity_tui.screens.agreement.AgreementScreen` (coordinator only)."""

    TITLE = "curiosity-tui · agreement"

    def __init__(
        self,
        packdir: str | Path,
        *,
        n_boot: int = 10_000,
        seed: int = 0,
        keymap: dict[str, str] | None = None,
    ) -> None:
        super().__init__(keymap=env_keymap(keymap))
        self.packdir = Path(packdir)
        self.n_boot = n_boot
        self.seed = seed

    def open_home(self) -> None:
        AgreementScreen = screens.agreement()
        self.push_screen(AgreementScreen(self.packdir, n_boot=self.n_boot, seed=self.seed))


class AdjudicationApp(AppBase):
    """Hosts :class:`~curiosity_tui.screens.adjudication.AdjudicationScreen` for
    ``curiosity-tui adjudicate PACKDIR --coordinator NAME`` (coordinator only, still blind)."""

    TITLE = "curiosity-tui · adjudication"
    EXIT_WITH_LAST_SCREEN = True

    def __init__(
        self, packdir: str | Path, coordinator: str, *, keymap: dict[str, str] | None = None
    ) -> None:
        AdjudicationScreen = screens.adjudication()
        super().__init__(keymap=env_keymap(keymap))
        self.packdir = Path(packdir)
        self.coordinator = coordinator
        # Built here so a bad pack or adjudication file fails before the terminal is taken over.
        self.adjudication_screen = AdjudicationScreen(self.packdir, coordinator)

    def open_home(self) -> None:
        self.push_screen(self.adjudication_screen)


class AnalysisApp(AppBase):
    """The analysis screen on its own: ``AnalysisApp(paths).run()`` (and tests)."""

    TITLE = "curiosity-tui analysis"
    CSS_PATH = [SHELL_CSS, TABLES_CSS]
    EXIT_WITH_LAST_SCREEN = True

    def __init__(
        self,
        paths: Path | str | Iterable[Path | str],
        chain: Path | None = None,
        *,
        keymap: dict[str, str] | None = None,
    ) -> None:
        super().__init__(keymap=env_keymap(keymap))
        if isinstance(paths, (str, Path)):
            paths = [paths]
        self.paths = [Path(p) for p in paths]
        self.chain = chain

    def open_home(self) -> None:
        AnalysisScreen = screens.analysis()
        self.push_screen(AnalysisScreen(self.paths, self.chain))


class CompareApp(AppBase):
    """The comparison screen on its own: ``curiosity-tui compare A B --app`` (and tests). ``o``
    opens a node in the ledger browser, as in the full app."""

    TITLE = "curiosity-tui compare"
    CSS_PATH = [SHELL_CSS, TABLES_CSS]
    EXIT_WITH_LAST_SCREEN = True

    def __init__(
        self, path_a: Path | str, path_b: Path | str, *, keymap: dict[str, str] | None = None
    ) -> None:
        super().__init__(keymap=env_keymap(keymap))
        self.path_a, self.path_b = Path(path_a), Path(path_b)

    def open_home(self) -> None:
        self.open_compare(self.path_a, self.path_b)
