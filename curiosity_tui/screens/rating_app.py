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
