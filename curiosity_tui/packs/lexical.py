"""Lexical leak features: can the *wording* of items predict which arm they came from?

Each item's three sections are joined (each prefixed with a section marker, so "fact in
section 3" and "fact in section 2" differ) and turned into TF-IDF word 1–2-grams and
character 2–5-grams (within word boundaries), each block L2-normalised. The vectorisers
are fitted on all the pack's items without labels, so no label information enters the
features. The classifier is linear: ridge regression on the ±1 labels with an intercept,
solved in its dual form (an n × n system, so each fit costs microseconds at pack sizes).
Accuracy is stratified k-fold; its p-value comes from label permutations, each with fresh
stratified folds. Two classes per task (a pair of configurations, or controls vs items).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LexicalResult", "lexical_matrix", "lexical_test", "stratified_folds"]

LEXICAL_FEATURES = "TF-IDF word 1–2-grams + char 2–5-grams (char_wb), linear ridge classifier"


def lexical_matrix(items: Sequence[Sequence[str]]) -> np.ndarray:
    """Rows: items; columns: word and character TF-IDF features (dense; packs are small)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [
        "\n".join(f"§{k} " + (s or "∅") for k, s in enumerate(sections, start=1))
        for sections in items
    ]
    if not docs:
        return np.zeros((0, 0))
    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, lowercase=True)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)
    blocks = [v.fit_transform(docs).toarray() for v in (words, chars)]
    matrix: np.ndarray = np.hstack(blocks) / np.sqrt(len(blocks))
    return matrix


def stratified_folds(y: np.ndarray, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Test-index arrays of ``k`` folds, every class dealt round-robin after a shuffle."""
    fold_of = np.empty(len(y), dtype=int)
    offset = 0
    for cls in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == cls))
        fold_of[idx] = (np.arange(len(idx)) + offset) % k
        offset += len(idx)
    return [np.flatnonzero(fold_of == f) for f in range(k)]


def _cv_accuracy(kernel: np.ndarray, y: np.ndarray, folds: list[np.ndarray], lam: float) -> float:
    hits = 0
    n = len(y)
    for te in folds:
        tr = np.setdiff1d(np.arange(n), te)
        t = np.where(y[tr] == 1, 1.0, -1.0)
        k_tr = kernel[np.ix_(tr, tr)] + 1.0  # +1: an intercept feature
        alpha = np.linalg.solve(k_tr + lam * np.eye(len(tr)), t)
        scores = (kernel[np.ix_(te, tr)] + 1.0) @ alpha
        hits += int(((scores > 0).astype(int) == y[te]).sum())
    return hits / n


@dataclass(frozen=True)
class LexicalResult:
    accuracy: float
    chance: float
    p_value: float
    folds: int


def lexical_test(
    x: np.ndarray,
    labels: Sequence[str],
    *,
    seed: int,
    permutations: int,
    lam: float = 0.01,
) -> LexicalResult | None:
    """Cross-validated accuracy of a linear classifier on ``x`` for two classes, chance
    (majority share) and a permutation p-value; None when not testable (one class, or a
    class with fewer than two items)."""
    classes = sorted(set(labels))
    if len(classes) != 2:
        return None
    y = np.array([classes.index(v) for v in labels])
    smallest = int(min(np.bincount(y)))
    if smallest < 2:
        return None
    k = min(5, smallest)
    kernel = x @ x.T
    rng = np.random.default_rng(seed)
    score = _cv_accuracy(kernel, y, stratified_folds(y, k, rng), lam)
    beats = 0
    for _ in range(permutations):
        yp = rng.permutation(y)
        if _cv_accuracy(kernel, yp, stratified_folds(yp, k, rng), lam) >= score:
            beats += 1
    chance = float(np.bincount(y).max() / len(y))
    return LexicalResult(score, chance, (1 + beats) / (permutations + 1), k)
