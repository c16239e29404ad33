"""scikit-learn's ``TfidfVectorizer(analyzer="char_wb")`` fitted on one call's texts, fast.

The same tokens, vocabulary, counts, idf and L2 norm as ``TfidfVectorizer(analyzer="char_wb",
ngram_range=(lo, hi), lowercase=True, norm="l2", smooth_idf=True, sublinear_tf=False)``'s
``fit_transform`` (decision 255), computed differently:

* a document is lower-cased, its whitespace runs collapsed and split into words exactly as
  scikit-learn does; a word's n-grams depend only on the word, so each distinct word is cut
  into n-grams once per process and kept as an array of token ids (``_WORDS``);
* counting, document frequencies and weights are numpy array operations over the call's
  token ids instead of a Python loop per token.

Columns are the call's distinct tokens in the order they were first seen by the process, not
sorted by text; a permutation of columns changes no dot product beyond float rounding
(~1e-16). The caches grow with distinct words, are dropped past ``_MAX_WORDS`` and are
shared by threads under one lock.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["char_wb_ngrams", "char_wb_terms", "char_wb_tfidf"]

#: scikit-learn's ``_VectorizerMixin._white_spaces``
_WHITE_SPACES = re.compile(r"\s\s+")
#: distinct words kept before the caches are dropped (about 100 bytes of ids per word)
_MAX_WORDS = 200_000

#: documents up to which rows sort as uint16; keys up to which they sort as int32
_UINT16_ROWS = 2**16
_INT32_KEYS = 2**31

_LOCK = threading.Lock()
_TOKENS: dict[str, int] = {}  # n-gram -> process-wide token id
_WORDS: dict[tuple[int, int], dict[str, NDArray[np.int64]]] = {}  # (lo, hi) -> word -> ids


def _word_ngrams(word: str, lo: int, hi: int) -> list[str]:
    """scikit-learn's n-grams of one word: padded with a space each side; a padded word no
    longer than n is one n-gram, counted once, and ends the word's n-grams."""
    w = f" {word} "
    size = len(w)
    grams: list[str] = []
    for n in range(lo, hi + 1):
        if size <= n:
            grams.append(w)
            break
        grams.extend([w[i : i + n] for i in range(size - n + 1)])
    return grams


def _words(text: str) -> list[str]:
    """The words scikit-learn's char_wb analyzer sees (lower-cased, whitespace collapsed)."""
    return _WHITE_SPACES.sub(" ", text.lower()).split()


def char_wb_ngrams(text: str, lo: int, hi: int) -> list[str]:
    """The analyzer's tokens of one document, in scikit-learn's order."""
    return [g for w in _words(text) for g in _word_ngrams(w, lo, hi)]


def _new_word(
    cache: dict[str, NDArray[np.int64]], word: str, lo: int, hi: int
) -> NDArray[np.int64]:
    tokens = _TOKENS
    ids = np.array(
        [tokens.setdefault(g, len(tokens)) for g in _word_ngrams(word, lo, hi)], dtype=np.int64
    )
    cache[word] = ids
    return ids


def _token_ids(
    docs: Sequence[str], lo: int, hi: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """All token ids of ``docs`` concatenated, and the document of each."""
    words = [_words(doc) for doc in docs]
    with _LOCK:  # one call's ids come from one state of the caches, whatever other threads do
        if sum(len(c) for c in _WORDS.values()) > _MAX_WORDS:
            _WORDS.clear()
            _TOKENS.clear()
        cache = _WORDS.setdefault((lo, hi), {})
        parts = [
            cache[w] if w in cache else _new_word(cache, w, lo, hi) for ws in words for w in ws
        ]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    per_word = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    word_doc = np.repeat(np.arange(len(docs), dtype=np.int64), [len(ws) for ws in words])
    return np.concatenate(parts), np.repeat(word_doc, per_word)


def char_wb_tfidf(
    texts: Sequence[str], references: Sequence[str] = (), ngram_range: tuple[int, int] = (3, 5)
) -> sparse.csr_matrix | None:
    """TF-IDF rows of ``texts`` fitted on ``texts + references`` (CSR, rows L2-normalised).

    ``None`` where scikit-learn raises "empty vocabulary" (no document has a word).
    """
    from scipy import sparse  # here: importing scipy costs a CLI start 0.2 s

    lo, hi = ngram_range
    docs = [*texts, *references]
    ids, rows = _token_ids(docs, lo, hi)
    if ids.size == 0:
        return None
    n = len(docs)
    # one sort: cells ordered by (token, document); a token's cells are its column
    keys = ids * n + rows
    if (int(ids.max()) + 1) * n <= _INT32_KEYS:  # every key fits int32: sorts twice as fast
        keys = keys.astype(np.int32)
    cells, counts = np.unique(keys, return_counts=True)
    cells = cells.astype(np.int64, copy=False)
    token, row_of = np.divmod(cells, n)
    first = np.empty(len(cells), dtype=bool)
    first[0] = True
    np.not_equal(token[1:], token[:-1], out=first[1:])
    col_of = np.cumsum(first) - 1
    width = int(col_of[-1]) + 1
    df = np.bincount(col_of, minlength=width).astype(np.float64)
    df += 1.0  # smooth_idf: one document holding every term
    idf = np.full(width, n + 1, dtype=np.float64)
    idf /= df
    np.log(idf, out=idf)
    idf += 1.0
    data = counts.astype(np.float64) * idf[col_of]
    norms = np.sqrt(np.bincount(row_of, weights=data * data, minlength=n))
    data /= norms[row_of]  # every stored cell's row has a positive norm
    m = len(texts)
    # CSR order: by row, then column (a stable sort of 16-bit rows is a radix sort)
    order = np.argsort(row_of.astype(np.uint16) if n <= _UINT16_ROWS else row_of, kind="stable")
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=n)[:m], out=indptr[1:])
    keep = order[: indptr[m]]  # the rows of ``texts`` come first
    return sparse.csr_matrix((data[keep], col_of[keep], indptr), shape=(m, width), copy=False)


def char_wb_terms(
    texts: Sequence[str], references: Sequence[str] = (), ngram_range: tuple[int, int] = (3, 5)
) -> list[str]:
    """The n-gram of each column of :func:`char_wb_tfidf` for the same arguments (for tests
    and inspection; valid until the caches are next dropped)."""
    lo, hi = ngram_range
    ids, _ = _token_ids([*texts, *references], lo, hi)
    text_of = {i: g for g, i in _TOKENS.items()}
    return [text_of[int(i)] for i in np.unique(ids)]
