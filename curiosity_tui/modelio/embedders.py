"""Embedders for medoid choice and similarity metrics, and the two cosine helpers.

* :class:`TfidfEmbedder` — the offline default: scikit-learn's TF-IDF over
  character n-grams within word boundaries (``char_wb``, 3–5), computed by
  :mod:`~curiosity_tui.modelio.char_tfidf` (the same vectors, decision 255).
  No network, no model download, deterministic. The vectoriser is fitted, on every call, on
  the texts given plus the embedder's fixed ``reference_texts``; so vectors
  from *one* call are comparable with each other, and two calls are
  comparable only if their inputs are the same. Callers therefore embed all
  texts to be compared in one call (the three candidates; a run's questions).
* :class:`EndpointEmbedder` — the endpoint's ``/v1/embeddings`` through
  :class:`~curiosity_tui.modelio.client.ModelClient` (each call recorded).

Every embedder has a ``name``, stored with every figure computed from it.
Vectors are float64 rows, L2-normalised (an all-zero row — e.g. an empty
text under TF-IDF — stays zero and has cosine 0 with everything).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from curiosity_tui.modelio.char_tfidf import char_wb_tfidf

if TYPE_CHECKING:
    from scipy import sparse

    from curiosity_tui.modelio.client import ModelClient

Matrix = NDArray[np.float64]

_TIE_DECIMALS = 9  # summed cosines equal to 9 decimals are a tie (BLAS order noise is ~1e-16)


@runtime_checkable
class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> Matrix:
        """An (n, d) array of L2-normalised rows, one per text."""
        ...

    async def aembed(self, texts: Sequence[str], *, session: int = 0) -> Matrix:
        """The same, from async code (the endpoint embedder does not block the loop)."""
        ...


def l2_normalise(matrix: NDArray[np.floating]) -> Matrix:
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    unit: Matrix = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    return unit


class TfidfEmbedder:
    """Offline TF-IDF embedder (scikit-learn), ``char_wb`` n-grams 3–5 by default."""

    def __init__(
        self,
        reference_texts: Sequence[str] = (),
        *,
        analyzer: str = "char_wb",
        ngram_range: tuple[int, int] = (3, 5),
    ) -> None:
        self.reference_texts = list(reference_texts)
        self.analyzer = analyzer
        self.ngram_range = ngram_range
        lo, hi = ngram_range
        self.name = f"tfidf-{analyzer.replace('_', '-')}-{lo}-{hi}@sklearn"

    def __repr__(self) -> str:
        return f"TfidfEmbedder({self.name!r}, reference_texts={len(self.reference_texts)})"

    def embed(self, texts: Sequence[str]) -> Matrix:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0))
        return l2_normalise(self.embed_sparse(texts).toarray())

    def embed_sparse(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """The TF-IDF rows before densifying (each row L2-normalised; an (n, 1) zero matrix
        when no text has a token, where scikit-learn reports an empty vocabulary).

        ``char_wb`` is computed by :func:`~curiosity_tui.modelio.char_tfidf.char_wb_tfidf`
        (scikit-learn's vectors, decision 255); other analyzers by scikit-learn itself.
        """
        from scipy import sparse

        texts = list(texts)
        if self.analyzer == "char_wb":
            fast = char_wb_tfidf(texts, self.reference_texts, self.ngram_range)
            return sparse.csr_matrix((len(texts), 1)) if fast is None else fast
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(
            analyzer=self.analyzer,
            ngram_range=self.ngram_range,
            lowercase=True,
            norm="l2",
            dtype=np.float64,
        )
        try:
            # one pass: fit on texts + references, keep the rows of ``texts`` (same vectors as
            # fit-then-transform, about half the time)
            matrix = vectorizer.fit_transform([*texts, *self.reference_texts])[: len(texts)]
        except ValueError:  # empty vocabulary: nothing but blanks/short strings
            return sparse.csr_matrix((len(texts), 1))
        return sparse.csr_matrix(matrix)

    async def aembed(self, texts: Sequence[str], *, session: int = 0) -> Matrix:
        return self.embed(texts)


def offline_fallback_name(wanted_model: str) -> str:
    """The name similarity figures carry when the offline embedder stands in for an endpoint
    embedding model the server does not serve (``--embedding-fallback offline``)."""
    return f"{TfidfEmbedder().name} (offline fallback: endpoint:{wanted_model} not served)"


class OfflineFallbackEmbedder(TfidfEmbedder):
    """The offline TF-IDF embedder, named so that every figure says it stood in for ``wanted``."""

    def __init__(self, wanted_model: str) -> None:
        super().__init__()
        self.wanted_model = wanted_model
        self.name = offline_fallback_name(wanted_model)


class EndpointEmbedder:
    """The endpoint's embeddings via ``ModelClient.embed`` (name ``endpoint:<model>``)."""

    def __init__(self, client: ModelClient, model: str | None = None, *, session: int = 0) -> None:
        model = model or client.embedding_model
        if not model:
            from curiosity_tui.modelio.client import ModelConfigError

            raise ModelConfigError("no embedding model configured: pass --embedding-model")
        self.client = client
        self.model = model
        self.session = session
        self.name = f"endpoint:{model}"

    def __repr__(self) -> str:
        return f"EndpointEmbedder({self.name!r})"

    async def aembed(self, texts: Sequence[str], *, session: int | None = None) -> Matrix:
        if not texts:
            return np.zeros((0, 0))
        vectors, _ = await self.client.embed(
            list(texts), session=self.session if session is None else session, model=self.model
        )
        return l2_normalise(np.asarray(vectors, dtype=np.float64))

    async def _embed_once(self, texts: Sequence[str]) -> Matrix:
        try:
            return await self.aembed(texts)
        finally:
            await self.client.aclose()  # only this short-lived loop's connections

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Synchronous form (its own short event loop; from inside a running loop, in a thread).

        In async code use :meth:`aembed`, which shares the loop's connections.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._embed_once(texts))
        result: list[Matrix] = []
        errors: list[BaseException] = []

        def work() -> None:
            try:
                result.append(asyncio.run(self._embed_once(texts)))
            except BaseException as exc:  # re-raised in the caller's thread
                errors.append(exc)

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join()
        if errors:
            raise errors[0]
        return result[0]


def cosine_matrix(a: NDArray[np.floating], b: NDArray[np.floating]) -> Matrix:
    """Pairwise cosines between the rows of ``a`` (n, d) and ``b`` (m, d): an (n, m) array."""
    a2, b2 = l2_normalise(np.atleast_2d(a)), l2_normalise(np.atleast_2d(b))
    if a2.shape[1] != b2.shape[1]:
        raise ValueError(f"vector dimensions differ: {a2.shape[1]} vs {b2.shape[1]}")
    return np.clip(a2 @ b2.T, -1.0, 1.0)


def medoid_index(vectors: NDArray[np.floating]) -> int:
    """The row with the greatest summed cosine to the other rows; ties → lowest index.

    Sums are rounded to 9 decimals before comparison so that float noise
    cannot break a tie differently on different machines.
    """
    v = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    n = v.shape[0]
    if n == 0:
        raise ValueError("medoid of no vectors")
    sims = cosine_matrix(v, v)
    np.fill_diagonal(sims, 0.0)
    sums = np.round(sims.sum(axis=1), _TIE_DECIMALS)
    return int(np.argmax(sums))  # argmax returns the first maximum
