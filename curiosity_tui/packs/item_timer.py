"""Time on item for the rating app (issue 24, item 5; decision 427): when each item was first
shown, and the time it has been on screen while the app had the terminal's focus.

Domain code (no Textual): the rating screen calls :meth:`ItemTimer.show` when an item is
shown, :meth:`pause` / :meth:`resume` when the app loses or regains focus (terminals that
report focus; elsewhere time away cannot be told apart and counts), and :meth:`timing` when
it saves. Time on an item accumulates over every visit, so a revisited item's time is the sum.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from curiosity_tui.clock import utc_now_milli


class ItemTimer:
    def __init__(
        self,
        *,
        wall: Callable[[], str] = utc_now_milli,
        mono: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wall = wall
        self._mono = mono
        self._first: dict[str, str] = {}
        self._spent: dict[str, float] = {}
        self._current: str | None = None
        self._since: float | None = None  # None while paused or nothing shown

    def _stop(self) -> None:
        if self._current is not None and self._since is not None:
            spent = self._mono() - self._since
            self._spent[self._current] = self._spent.get(self._current, 0.0) + spent
        self._since = None

    def show(self, item: str) -> None:
        """``item`` is now on screen (its first showing is remembered)."""
        self._stop()
        self._current = item
        self._first.setdefault(item, self._wall())
        self._since = self._mono()

    def pause(self) -> None:
        """The app lost focus: the time from now on is time away."""
        self._stop()

    def resume(self) -> None:
        if self._current is not None and self._since is None:
            self._since = self._mono()

    def timing(self, item: str) -> tuple[str, float] | None:
        """(first shown, seconds on the item so far), or None if it was never shown."""
        if item not in self._first:
            return None
        if item == self._current and self._since is not None:
            now = self._mono()
            self._spent[item] = self._spent.get(item, 0.0) + now - self._since
            self._since = now
        return self._first[item], self._spent.get(item, 0.0)

    def seconds_so_far(self) -> list[float]:
        """Seconds spent on each item shown so far (for an estimate of the time left)."""
        return list(self._spent.values())


def time_left(timer: ItemTimer, items_left: int) -> str:
    """ " · about N min left": the median time per item so far times the items left ('' before
    any item was timed or when none is left)."""
    spent = sorted(x for x in timer.seconds_so_far() if x > 0)
    if not spent or items_left <= 0:
        return ""
    mid = len(spent) // 2
    median = spent[mid] if len(spent) % 2 else (spent[mid - 1] + spent[mid]) / 2
    minutes = median * items_left / 60.0
    return " · about " + ("<1" if minutes < 1 else f"{minutes:.0f}") + " min left"
