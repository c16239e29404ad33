"""Many comparisons read as one family (issue 24, item 2; decision 424).

A plan with several ``[[comparisons]]`` declares ``family``: how their clauses' p-values are
adjusted together. The hypotheses of the family are the clauses (metric x pair) of every
``[[comparisons]]`` rule; the headline rule is the plan's primary hypothesis and is read alone at
``alpha``. A clause's p-value is its bootstrap p (:mod:`curiosity_tui.analysis.interval_rule`);
a clause without one (a side below two runs) counts in the family with p = 1, so an untestable
clause never makes the correction milder.

* ``none``: the raw p-values;
* ``bonferroni``: min(1, m p);
* ``holm`` (step-down, Holm 1979): sorted ascending, p(i) -> max over j <= i of
  min(1, (m - j + 1) p(j));
* ``bh`` (Benjamini-Hochberg 1995, false-discovery rate): sorted ascending,
  p(i) -> min over j >= i of min(1, m p(j) / j).

An adjusted clause counts when its adjusted p < alpha; each comparison's adjusted reading
combines its clauses as its rule does (any / all metrics, every pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Family = Literal["none", "holm", "bonferroni", "bh"]
FAMILIES: tuple[str, ...] = ("none", "holm", "bonferroni", "bh")


def adjust(p_values: Sequence[float | None], family: str) -> list[float]:
    """The adjusted p-values, in the input order (None counts as 1)."""
    p = [1.0 if x is None else float(x) for x in p_values]
    m = len(p)
    if family == "none" or m == 0:
        return p
    if family == "bonferroni":
        return [min(1.0, m * x) for x in p]
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    if family == "holm":
        running = 0.0
        for rank, i in enumerate(order, start=1):
            running = max(running, min(1.0, (m - rank + 1) * p[i]))
            out[i] = running
        return out
    if family == "bh":
        running = 1.0
        for rank in range(m, 0, -1):
            i = order[rank - 1]
            running = min(running, min(1.0, m * p[i] / rank))
            out[i] = running
        return out
    raise ValueError(f"unknown family correction {family!r}: one of {', '.join(FAMILIES)}")
