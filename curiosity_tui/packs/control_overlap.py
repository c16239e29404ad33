"""How many lines a control item shares with its base item, against how many two real items
of one configuration share with each other (issue 25, item 7; decision 410): a control that
copies more of its base than real items copy of each other can be told by a rater who reads
both. Lines are compared stripped; labels are fresh per item, so a labelled line never
matches by accident."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from curiosity_tui.packs.pack import KeyEntry, PackItem


def item_lines(sections: Sequence[str]) -> set[str]:
    return {ln.strip() for s in sections for ln in s.split("\n") if ln.strip()}


def arm_overlap(staged: Sequence[tuple[PackItem, KeyEntry]]) -> int:
    """The most lines two real items of one configuration share (0 with fewer than two)."""
    by_config: dict[str, list[set[str]]] = {}
    for item, entry in staged:
        if entry.kind == "run":
            by_config.setdefault(entry.config, []).append(item_lines(item.sections))
    return max(
        (len(a & b) for lines in by_config.values() for a, b in itertools.combinations(lines, 2)),
        default=0,
    )
