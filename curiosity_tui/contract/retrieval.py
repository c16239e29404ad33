"""Retrieval over a ledger's sources (S4): lexical ranking with scikit-learn (TF-IDF, cosine).

Sources are split into passages (paragraphs, long ones into windows of ~80 words with overlap);
for each requirement the top-k passages are handed to the checker with their source ids. The
checker must copy a passage verbatim for its evidence to be verified.
"""

from __future__ import annotations

import re

from curiosity_tui.contract.sources import read_stored_source
from curiosity_tui.ledger.ledger import Ledger

WINDOW = 80
STEP = 60


def split_passages(text: str) -> list[str]:
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        words = para.split()
        if not words:
            continue
        if len(words) <= WINDOW:
            out.append(" ".join(words))
            continue
        for start in range(0, len(words), STEP):
            chunk = words[start : start + WINDOW]
            out.append(" ".join(chunk))
            if start + WINDOW >= len(words):
                break
    return out


def retrieve(
    led: Ledger, queries: list[tuple[str, str]], k: int = 3
) -> dict[str, list[tuple[str, str]]]:
    """For each (requirement id, text): the top-k (source id, passage) pairs with a nonzero score."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    passages: list[tuple[str, str]] = []
    for src in sorted(led.sources(), key=lambda s: s.id):
        # a missing or altered source file raises TransitionError naming it (a failed session)
        text = read_stored_source(led.path, src.model_dump())
        for p in split_passages(text):
            passages.append((src.id, p))
    if not passages or not queries:
        return {rid: [] for rid, _ in queries}
    vec = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1)
    mat = vec.fit_transform([p for _, p in passages])
    q = vec.transform([t for _, t in queries])
    scores = (q @ mat.T).toarray()
    out: dict[str, list[tuple[str, str]]] = {}
    for row, (rid, _) in enumerate(queries):
        order = sorted(range(len(passages)), key=lambda i: (-scores[row, i], i))[:k]
        out[rid] = [passages[i] for i in order if scores[row, i] > 0]
    return out
