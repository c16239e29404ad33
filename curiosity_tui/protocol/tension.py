"""Tension and Δ exactly as run (report §2, §3 Amendment 1; S5).

tension = (D + F/5 + U/8) / 3 with F viable framings (≤ 5) and U unresolved dependencies (≤ 8);
Δ = tension_after − tension_before. The disagreement D is a property of the candidate set and
enters both sides equally, so it cancels in Δ. <PRESERVE> fires when Δ < −ε (strict).

Δ is rounded to 12 decimal places (DELTA_DECIMALS). Without it, float noise decides the
boundary: with D = 0.3, (F, U) = (5, 8) → (4, 6) the exact Δ is −0.15, but
tension_after − tension_before evaluates to −0.1499999999999999, and for other counts to
−0.15000000000000002 — which would PRESERVE at ε = 0.15 although Δ = −ε must ANSWER. Every
exact Δ is a multiple of 1/120 (ΔF/15 + ΔU/24), so rounding at 1e-12 never merges two
distinct values; the stored, rounded Δ is what the ε sweep re-classifies, so the session's
decision and the sweep agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

MAX_F = 5
MAX_U = 8
DEFAULT_EPSILON = 0.15
DELTA_DECIMALS = 12

Decision = Literal["PRESERVE", "ANSWER"]


def tension(d: float, f: int, u: int) -> float:
    return (d + f / MAX_F + u / MAX_U) / 3.0


def delta(before: float, after: float) -> float:
    """Δ = after − before, rounded to DELTA_DECIMALS places (see the module docstring)."""
    return round(after - before, DELTA_DECIMALS) + 0.0  # + 0.0 turns −0.0 into 0.0


def decide(delta_value: float, epsilon: float = DEFAULT_EPSILON) -> Decision:
    """PRESERVE iff Δ < −ε; Δ = −ε exactly gives ANSWER. Pass Δ from delta() (rounded)."""
    return "PRESERVE" if delta_value < -epsilon else "ANSWER"


def disagreement(similarities: Sequence[Sequence[float]]) -> float:
    """D = 1 − mean pairwise cosine among the candidates, clipped to [0, 1]."""
    n = len(similarities)
    if n < 2:
        return 0.0
    pairs = [similarities[i][j] for i in range(n) for j in range(i + 1, n)]
    return min(1.0, max(0.0, 1.0 - sum(pairs) / len(pairs)))
