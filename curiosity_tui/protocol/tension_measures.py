"""The pieces of the pre-amendment and four-component measures (issue 26 item 4), pure.

The as-run proxy is :func:`curiosity_tui.protocol.tension.tension`; the pre-amendment proxy
uses it too, with D measured over different objects on each side. The four-component measure:

    tension = w_D·D + w_H·H + w_F·F/5 + w_U·U/8

with H the entropy of the answer distribution over semantic clusters of the candidates
(normalised by log n, so in [0, 1]). After the answer, the answer distribution is the
candidates the delivered one leaves standing — those in its own semantic cluster — so
H_after = 0 and D_after is the disagreement among those (decision 532).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from curiosity_tui.protocol.tension import MAX_F, MAX_U, disagreement
from curiosity_tui.protocol.tension_options import TensionWeights

ENTROPY_DECIMALS = 12


def cluster_labels(similarities: Sequence[Sequence[float]], threshold: float) -> list[int]:
    """Semantic clusters of the candidates: single linkage at cosine ≥ ``threshold``. Each
    candidate's label is the lowest index in its cluster (so labels are stable and readable)."""
    n = len(similarities)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if similarities[i][j] >= threshold:
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    return [root(i) for i in range(n)]


def cluster_entropy(labels: Sequence[int], n: int | None = None) -> float:
    """Shannon entropy of the share of candidates per cluster, divided by log n (n = the number
    of candidates, by default ``len(labels)``): 0 when all agree, 1 when every one differs."""
    total = len(labels)
    base = total if n is None else n
    if total == 0 or base < 2:
        return 0.0
    h = -sum((c / total) * math.log(c / total) for c in Counter(labels).values())
    return round(h / math.log(base), ENTROPY_DECIMALS) + 0.0


def standing(labels: Sequence[int], chosen: int) -> list[int]:
    """The candidates the delivered one leaves standing: those in its own cluster."""
    return [i for i, lab in enumerate(labels) if lab == labels[chosen]]


def disagreement_among(similarities: Sequence[Sequence[float]], members: Sequence[int]) -> float:
    """D over a subset of the candidates (0 for fewer than two)."""
    return disagreement([[similarities[i][j] for j in members] for i in members])


def four_tension(w: TensionWeights, d: float, h: float, f: int, u: int) -> float:
    return w.D * d + w.H * h + w.F * f / MAX_F + w.U * u / MAX_U
