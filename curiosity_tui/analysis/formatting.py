"""How a figure is printed, without importing numpy: ``0.87``, ``—`` for none, ``[+0.10, +0.52]``.

The same two rules as :func:`curiosity_tui.analysis.aggregate.fmt` / ``fmt_interval``; this
module exists so the analysis screen and its charts can format figures without loading numpy
(``aggregate`` imports it at module level). ``aggregate`` re-exports these two.
"""

from __future__ import annotations

from typing import Protocol


class Interval(Protocol):
    """Anything with an interval's two ends (an ``aggregate.Difference``, say)."""

    @property
    def ci_low(self) -> float | None: ...
    @property
    def ci_high(self) -> float | None: ...


__all__ = ["fmt", "fmt_interval"]


def fmt(value: float | None, digits: int = 2) -> str:
    """``value`` to ``digits`` places; an em dash when there is none."""
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_interval(d: Interval, digits: int = 2) -> str:
    """``[low, high]`` of a difference's interval, signed; "no interval" when it has none."""
    if d.ci_low is None or d.ci_high is None:
        return "no interval"
    return f"[{d.ci_low:+.{digits}f}, {d.ci_high:+.{digits}f}]"
