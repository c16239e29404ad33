"""Tension and Δ exactly as run (report §2, §3 Amendment 1; S5).

tension = (D + F/5 + U/8) / 3 with F viable framings (≤ 5) and U unresolved dependencies (≤ 8);
Δ = tension_after − tension_before. The disagreement D is a property of the candidate set and
enters both sides equally, so it cancels in Δ. <PRESERVE> fires when Δ < −ε (strict).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

MAX_F = 5
MAX_U = 8
DEFAULT_EPSILON = 0.15

Decision = Literal["PRESERVE", "ANSWER"]


def tension(d: float, f: int, u: int) -> float:
    return (d + f / MAX_F + u / MAX_U) / 3.0


def delta(before: float, after: float) -> float:
    return after - before


def decide(delta_value: float, epsilon: float = DEFAULT_EPSILON) -> Decision:
    """PRESERVE iff Δ < −ε; Δ = −ε exactly gives ANSWER."""
    return "PRESERVE" if delta_value < -epsilon else "ANSWER"


def disagreement(similarities: Sequence[Sequence[float]]) -> float:
    """D = 1 − mean pairwise cosine among the candidates, clipped to [0, 1]."""
    n = len(similarities)
    if n < 2:
        return 0.0
    pairs = [similarities[i][j] for i in range(n) for j in range(i + 1, n)]
    return min(1.0, max(0.0, 1.0 - sum(pairs) / len(pairs)))
