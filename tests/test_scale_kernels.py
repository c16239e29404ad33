"""Kernels that use the machine once (issue 14.4): one BLAS thread, bounded memory."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from threadpoolctl import threadpool_info

from curiosity_tui.analysis import similarity
from curiosity_tui.blas import one_blas_thread, single_threaded


def _dense_reference(vecs: np.ndarray, sessions: np.ndarray) -> list[tuple[int, float]]:
    sims = np.clip(vecs @ vecs.T, -1.0, 1.0)
    earlier = sessions[None, :] < sessions[:, None]
    return [
        (int(sessions[i]), float(sims[i, earlier[i]].max()))
        for i in range(len(sessions))
        if earlier[i].any()
    ]


@pytest.mark.parametrize("block", [1, 3, 7, 1024])
def test_blocked_maxima_equal_the_dense_matrix(block: int) -> None:
    rng = np.random.default_rng(4)
    sessions = np.sort(rng.integers(1, 6, size=40))
    vecs = rng.normal(size=(40, 12))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    got = list(similarity._earlier_maxima(vecs, sessions, block=block))
    want = _dense_reference(vecs, sessions)
    assert [s for s, _ in got] == [s for s, _ in want]
    assert np.allclose([m for _, m in got], [m for _, m in want], atol=1e-12)


def test_first_session_questions_have_no_maximum() -> None:
    vecs = np.eye(3)
    assert list(similarity._earlier_maxima(vecs, np.array([1, 1, 1]))) == []
    assert [s for s, _ in similarity._earlier_maxima(vecs, np.array([1, 1, 2]))] == [2]


def _blas_threads() -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_one_blas_thread_inside_and_restored_after() -> None:
    before = _blas_threads()
    with one_blas_thread():
        assert _blas_threads() == {1}
    assert _blas_threads() == before

    @single_threaded
    def probe() -> set[int]:
        return _blas_threads()

    assert probe() == {1}


class _DenseEmbedder:
    """Vectors from a table: the dense (BLAS) path of question_maxima."""

    name = "dense-test"

    def embed(self, texts):  # type: ignore[no-untyped-def]
        table = {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.0, 1.0]}
        return np.array([table[t] for t in texts])

    async def aembed(self, texts, *, session=0):  # type: ignore[no-untyped-def]
        return self.embed(texts)


def test_question_maxima_runs_with_one_blas_thread_or_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[bool, set[int]]] = []
    real = similarity._earlier_maxima

    def spy(vecs, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((sparse.issparse(vecs), _blas_threads()))
        yield from real(vecs, *args, **kwargs)

    monkeypatch.setattr(similarity, "_earlier_maxima", spy)
    by = {1: ["a"], 2: ["b", "c"]}
    dense = similarity.question_maxima(by, _DenseEmbedder())
    assert dense == pytest.approx([(2, 0.6), (2, 0.0)])
    assert seen == [(False, {1})]  # a dense product: BLAS with one thread
    seen.clear()
    out = similarity.question_maxima(
        {1: ["why is the sky blue"], 2: ["why is the sea blue", "what is ink"]},
        similarity.TfidfEmbedder(),
    )
    assert [s for s, _ in out] == [2, 2]
    assert seen == [(True, {1})]  # TF-IDF rows stay sparse; tiles multiply with one thread
