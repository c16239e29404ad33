"""One layout for every arm's delivered text, and opaque node labels (blind by construction).

The protocol arm's deliverable opens with prose (the answer, when it answered, and a status
line such as "q4 stays open after session 5.") and then lists living questions, new
questions, facts and action notes; self-ask with a store delivers the bare lists. Left as
they are, a rater tells the arms apart by the opening prose alone. :func:`uniform_text`
lays out every arm's text the way self-ask's is laid out: ``- `` questions, then ``* ``
facts, then ``> `` notes, where every prose paragraph becomes a note (the protocol arm's
answer and status line are what its session said about the node it worked on, which is
what self-ask's action notes are). Return-condition lines (``? ``, ``= ``) are dropped.

Node ids (``q7``) inside any section are rewritten by :func:`relabel` to the item's own
opaque labels (``n41``), drawn at random per item, the same label for the same node in all
three sections; section 2 names each node by its label, so "returned to n41" can be read
against the input without revealing creation order, node count or which node is the seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

__all__ = ["NODE_ID_RE", "LABEL_RE", "relabel", "uniform_text"]

NODE_ID_RE = re.compile(r"\bq[0-9]+\b")
LABEL_RE = re.compile(r"\bn[0-9]+\b")
_MARKERS = ("- ", "* ", "> ")
_DROPPED = ("? ", "= ")
#: the protocol's node-status vocabulary (the open layer's ``node_status`` line: "q4 stays
#: open: …", "q4 is answered …"): a sentence carrying it says which arm wrote it (issue 25,
#: item 7; decision 410), so it is left out of every arm's text
_STATUS = re.compile(
    r"\b(?:stays|remains|left|kept|is still) open\b|\bis (?:now )?(?:answered|narrowed|closed)\b"
    r"|\bnot (?:yet )?answered\b|\breturn condition\b|\bclosure test\b|\bopen layer\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _sentences(prose: str) -> list[str]:
    """``prose`` cut into sentences, protocol status sentences left out."""
    return [t for t in _SENTENCE.split(prose.strip()) if t and not _STATUS.search(t)]


def _entries(paragraph: list[str]) -> list[tuple[str, str]]:
    """(marker, text) entries of a list paragraph; unmarked lines continue the entry."""
    out: list[tuple[str, str]] = []
    for line in paragraph:
        s = line.strip()
        head = s[:2]
        if head in _MARKERS or head in _DROPPED:
            out.append((head, s[2:].strip()))
        elif out:
            out[-1] = (out[-1][0], f"{out[-1][1]} {s}")
    return [(m, t) for m, t in out if m in _MARKERS and t]


def uniform_text(text: str) -> str:
    """``text`` in the one layout: questions, facts, then notes (prose paragraphs first)."""
    paragraphs: list[list[str]] = [[]]
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.strip():
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    by_marker: dict[str, list[str]] = {m: [] for m in _MARKERS}
    prose: list[str] = []
    for para in (p for p in paragraphs if p):
        first = para[0].strip()[:2]
        if first in _MARKERS or first in _DROPPED:
            for marker, body in _entries(para):
                by_marker[marker].append(body)
        else:
            prose.append(" ".join(ln.strip() for ln in para))
    # one sentence a note, whatever wrote it: an answer paragraph and an action note take
    # the same shape; status sentences go (decision 410)
    notes = [" ".join(ts) for n in [*prose, *by_marker["> "]] if (ts := _sentences(n))]
    lines = [f"- {q}" for q in by_marker["- "]]
    lines += [f"* {f}" for f in by_marker["* "]]
    lines += [f"> {n}" for n in notes]
    return "\n".join(lines)


def relabel(
    sections: Sequence[str], rng: random.Random, pattern: re.Pattern[str] = NODE_ID_RE
) -> list[str]:
    """Every token matching ``pattern`` (node ids, or an item's existing labels) replaced by
    a fresh opaque label, the same one wherever the token recurs in ``sections``."""
    found = sorted({m.group(0) for s in sections for m in pattern.finditer(s)})
    numbers = rng.sample(range(10, 100 if len(found) < 60 else 10 * len(found) + 100), len(found))
    mapping = {old: f"n{k}" for old, k in zip(found, numbers, strict=True)}
    return [pattern.sub(lambda m: mapping[m.group(0)], s) for s in sections]
