"""Textual's footer, rebuilt only when the keys it shows change (decision 278).

Textual's ``Footer`` removes and mounts all its key widgets again each time the screen
publishes "bindings updated": on mount, on every focus change, when a worker finishes, when
the screen is resumed. Opening the ledger browser published it five times, each rebuild
styling a dozen key widgets (about 0.14 s of CPU of the open). What it shows depends only
on the screen's shown bindings (key, action, description, enabled, tooltip, key display),
so a rebuild is queued only when that list differs from the one last queued; the rebuild
itself is textual's, so what is shown is the same.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter

__all__ = ["Footer", "shown_bindings"]


def shown_bindings(screen: Screen[Any]) -> tuple[tuple[Any, ...], ...]:
    """What a footer on ``screen`` would show, as a comparable value."""
    app = screen.app
    palette = app.COMMAND_PALETTE_BINDING
    return tuple(
        (key, binding.action, binding.description, enabled, tooltip, app.get_key_display(binding))
        for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette
    )


class Footer(TextualFooter):
    """A ``Footer`` that skips rebuilds which would show the same keys."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queued: tuple[tuple[Any, ...], ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        # textual's own handler (it marks the bindings ready, then queues a rebuild when the
        # app has focus and this footer is on ``screen``), unless it would show the same keys
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            shown = shown_bindings(screen)
            if shown == self._queued:
                return
            self._queued = shown
        super().bindings_changed(screen)
