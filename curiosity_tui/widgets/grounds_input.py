"""The rating form's grounds line (issue 28): focusing it — a re-picked category does —
never selects the saved grounds, and the cursor goes to their end, so the next key adds
instead of replacing; ctrl+u clears them."""

from __future__ import annotations

from typing import Any

from textual.events import Focus

from curiosity_tui.widgets.ordered import OrderedInput

__all__ = ["GroundsInput"]


class GroundsInput(OrderedInput):
    """A grounds line: focusing it (a re-picked category does) never selects the saved
    grounds, and the cursor goes to their end, so the next key adds instead of replacing
    (issue 28); ctrl+u clears them."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(select_on_focus=False, **kw)

    def on_focus(self, event: Focus) -> None:
        self.cursor_position = len(self.value)
