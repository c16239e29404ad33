"""A minimal app that hosts the rating screen, for ``curiosity-tui rate PACKDIR --rater NAME``
until the main app pushes :class:`~curiosity_tui.screens.rating.RatingScreen` itself."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from curiosity_tui.screens.rating import RatingScreen

__all__ = ["RatingApp"]


class RatingApp(App[None]):
    TITLE = "curiosity-tui · blind rating"

    def __init__(self, packdir: str | Path, rater: str) -> None:
        super().__init__()
        self.packdir = Path(packdir)
        self.rater = rater
        # Built here so a bad pack or rater name fails before the terminal is taken over.
        self.rating_screen = RatingScreen(self.packdir, self.rater)

    def on_mount(self) -> None:
        self.push_screen(self.rating_screen)


class AgreementApp(App[None]):
    """Hosts :class:`~curiosity_tui.screens.agreement.AgreementScreen` for
    ``curiosity-tui agreement PACKDIR --tui`` (coordinator only; never reachable from
    :class:`RatingApp`, since a rater must not see other raters' work)."""

    TITLE = "curiosity-tui · agreement"

    def __init__(self, packdir: str | Path, *, n_boot: int = 10_000, seed: int = 0) -> None:
        super().__init__()
        self.packdir = Path(packdir)
        self.n_boot = n_boot
        self.seed = seed

    def on_mount(self) -> None:
        from curiosity_tui.screens.agreement import AgreementScreen

        self.push_screen(AgreementScreen(self.packdir, n_boot=self.n_boot, seed=self.seed))
