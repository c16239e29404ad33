"""The fast char_wb TF-IDF and the regen metrics equal scikit-learn + the definition."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from curiosity_tui.analysis import similarity
from curiosity_tui.analysis.rundata import RunData, RunSession
from curiosity_tui.analysis.similarity import (
    DUP_THRESHOLD,
    dup_share_of,
    pooled_dup_share,
    question_maxima,
    regen_dup_share,
    regen_mean,
)
from curiosity_tui.modelio import char_tfidf
from curiosity_tui.modelio.char_tfidf import char_wb_ngrams, char_wb_terms, char_wb_tfidf
from curiosity_tui.modelio.embedders import TfidfEmbedder, l2_normalise

ODD = [
    "Did the printing press cause the Reformation?",
    "Did the printing press cause the Reformation?",  # a duplicate
    "",
    "   ",
    "\t\n",
    "a",
    "I",
    "ab cd  ef\t\tgh\n\nij",
    "naïve café — “quoted”, (brackets) & ampersands!!",
    "ΟΔΟΣ ΑΣ σοφός Σ",  # Greek final sigma depends on the word: lower-cased as a whole
    "İstanbul ǅemal ß ﬁ",  # lower() that changes length
    "non\u00a0breaking\u2003em\u3000ideographic\u2028line\u0085nel",
    "e\u0301 combining accents a\u0308",
    "emoji 🙂🙂 and 中文字符 and עברית",
    "x" * 40,
    "2024-01-02 12:30:00 v1.2.3 #tag @user",
    "  leading and trailing  ",
]


def _sklearn(texts: Sequence[str], refs: Sequence[str] = (), ngram=(3, 5)):  # type: ignore[no-untyped-def]
    vec = TfidfVectorizer(
        analyzer="char_wb", ngram_range=ngram, lowercase=True, norm="l2", dtype=np.float64
    )
    return vec, vec.fit_transform([*texts, *refs])[: len(texts)]


@pytest.mark.parametrize("ngram", [(3, 5), (2, 5), (1, 3), (4, 4)])
def test_tokens_are_sklearns(ngram: tuple[int, int]) -> None:
    analyze = TfidfVectorizer(analyzer="char_wb", ngram_range=ngram).build_analyzer()
    for text in ODD:
        assert char_wb_ngrams(text, *ngram) == analyze(text), text


def _random_texts(rng: np.random.Generator, n: int) -> list[str]:
    alphabet = list("abcdeéßΣσ中 \t\n.,?!-") + ["  ", "\u00a0", "ab", "the "]
    return ["".join(rng.choice(alphabet, size=int(rng.integers(0, 30)))) for _ in range(n)]


@pytest.mark.parametrize("refs", [(), ("reference one", "ΟΔΟΣ", "")])
@pytest.mark.parametrize("ngram", [(3, 5), (2, 4)])
def test_tfidf_equals_sklearns_cell_by_cell(refs: tuple[str, ...], ngram: tuple[int, int]) -> None:
    rng = np.random.default_rng(3)
    for texts in (ODD, _random_texts(rng, 60), ODD[:1], ["zz", "zz", "zz"]):
        vec, want = _sklearn(texts, refs, ngram)
        got = char_wb_tfidf(texts, refs, ngram)
        assert got is not None
        terms = char_wb_terms(texts, refs, ngram)
        assert sorted(terms) == sorted(vec.vocabulary_)  # same vocabulary
        cols = [vec.vocabulary_[t] for t in terms]
        want_dense = want.toarray()[:, cols]
        got_dense = got.toarray()
        assert got.shape == want_dense.shape
        assert np.array_equal(got_dense != 0, want_dense != 0)  # same cells
        assert np.abs(got_dense - want_dense).max() <= 1e-15


def test_wide_keys_and_many_rows_sort_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _random_texts(np.random.default_rng(8), 80)
    narrow = char_wb_tfidf(texts)
    monkeypatch.setattr(char_tfidf, "_INT32_KEYS", 0)  # int64 keys
    monkeypatch.setattr(char_tfidf, "_UINT16_ROWS", 0)  # int64 rows
    wide = char_wb_tfidf(texts)
    assert narrow is not None and wide is not None
    assert np.array_equal(narrow.toarray(), wide.toarray())


def test_empty_vocabulary_and_the_embedder() -> None:
    assert char_wb_tfidf(["", "  ", "\n"]) is None
    emb = TfidfEmbedder()
    assert np.array_equal(emb.embed(["", " "]), np.zeros((2, 1)))
    assert emb.embed([]).shape == (0, 0)
    # blanks beside references: zero rows, as scikit-learn gives
    ref_emb = TfidfEmbedder(reference_texts=["some reference text"])
    assert not ref_emb.embed(["", " "]).any()
    texts = ODD + ["the press and the church", "printing presses"]
    for e in (emb, ref_emb):
        _, want = _sklearn(texts, e.reference_texts)
        want_cos = l2_normalise(want.toarray()) @ l2_normalise(want.toarray()).T
        got = e.embed(texts)
        assert np.abs(got @ got.T - want_cos).max() <= 1e-12
        assert np.allclose(np.linalg.norm(got, axis=1)[got.any(axis=1)], 1.0, atol=1e-15)


def test_other_analyzers_are_sklearns() -> None:
    emb = TfidfEmbedder(analyzer="word", ngram_range=(1, 2))
    texts = ["the press", "the church and the press", "!!"]
    want = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), norm="l2").fit_transform(texts)
    assert np.abs(emb.embed(texts) - l2_normalise(want.toarray())).max() <= 1e-15


def test_cache_drop_between_calls_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    before = char_wb_tfidf(ODD)
    monkeypatch.setattr(char_tfidf, "_MAX_WORDS", 3)
    char_wb_tfidf(["fill the word cache with words"])
    after = char_wb_tfidf(ODD)  # the caches were dropped first
    assert len(char_tfidf._TOKENS) < 2000
    assert before is not None and after is not None
    assert np.abs((before @ before.T - after @ after.T).toarray()).max() <= 1e-15


def test_threads_share_the_caches_safely() -> None:
    import threading

    rng = np.random.default_rng(9)
    sets = [_random_texts(rng, 40) for _ in range(6)]
    char_tfidf._WORDS.clear()
    char_tfidf._TOKENS.clear()
    got: dict[int, list[np.ndarray]] = {}

    def work(k: int) -> None:
        got[k] = []
        for _ in range(5):
            m = char_wb_tfidf(sets[k])
            assert m is not None
            got[k].append((m @ m.T).toarray())

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(len(sets))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a worker did not finish within 120 s"
    for k, texts in enumerate(sets):
        want = _sklearn(texts)[1]
        gram = (want @ want.T).toarray()
        assert all(np.abs(g - gram).max() <= 1e-12 for g in got[k])


# ------------------------------------------------------------------ regen, definitionally


def _definitional(by_session: dict[int, list[str]]) -> list[tuple[int, float]]:
    """scikit-learn's vectors, the whole cosine matrix, a loop over questions."""
    items = sorted((s, qs) for s, qs in by_session.items() if qs)
    texts = [q for _, qs in items for q in qs]
    sess = [s for s, qs in items for _ in qs]
    if not texts:
        return []
    try:
        vecs = l2_normalise(_sklearn(texts)[1].toarray())
    except ValueError:  # empty vocabulary
        vecs = np.zeros((len(texts), 1))
    cos = vecs @ vecs.T
    out = []
    for i, s in enumerate(sess):
        earlier = [j for j, t in enumerate(sess) if t < s]
        if earlier:
            out.append((s, float(min(1.0, max(cos[i, j] for j in earlier)))))
    return out


def _runs(rng: np.random.Generator) -> list[dict[int, list[str]]]:
    words = ["press", "luther", "church", "printing", "Bible", "reform", "city", "naïve"]
    pool = [" ".join(rng.choice(words, size=int(rng.integers(1, 7)))) + "?" for _ in range(30)]
    runs: list[dict[int, list[str]]] = [
        {1: ["only one question"]},  # one question: nothing counted
        {1: ["a"], 2: []},
        {1: ["", " "], 2: ["", "x"], 3: ["x", "press"]},  # blanks: cosine 0
        {1: ["", " "], 2: ["\t"]},  # empty vocabulary
        {2: ODD[:5], 4: ODD[5:12], 7: ODD[12:]},
        {1: ["the same question?"], 2: ["the same question?", "the same question?"]},
    ]
    for _ in range(25):  # reuse of a small pool: many duplicates and near-duplicates
        runs.append(
            {
                s: [str(rng.choice(pool)) for _ in range(int(rng.integers(0, 8)))]
                for s in range(1, int(rng.integers(2, 7)))
            }
        )
    return runs


def _run(i: int, by: dict[int, list[str]]) -> RunData:
    return RunData(
        config="C+cur",
        run_id=f"r{i}",
        sessions=[RunSession(session=s, questions=qs) for s, qs in sorted(by.items())],
    )


@pytest.mark.parametrize("cells", [similarity.CELLS, 1])  # one tile; a tile per question pair
def test_regen_equals_the_definition(cells: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(similarity, "CELLS", cells)
    emb = similarity.DEFAULT_EMBEDDER
    runs = _runs(np.random.default_rng(11))
    similarity._cached_maxima.cache_clear()
    dups = seen = 0
    for i, by in enumerate(runs):
        want = _definitional(by)
        got = question_maxima(by, emb)
        assert [s for s, _ in got] == [s for s, _ in want]
        assert (
            np.abs(np.array([m for _, m in got]) - [m for _, m in want]).max(initial=0.0) <= 1e-12
        )
        assert [m >= DUP_THRESHOLD for _, m in got] == [m >= DUP_THRESHOLD for _, m in want]
        run = _run(i, by)
        mean, share = regen_mean(run), regen_dup_share(run)
        if want:
            assert mean is not None and share is not None
            assert abs(mean - float(np.mean([m for _, m in want]))) <= 1e-12
            assert share == dup_share_of(want)  # the same counts, so exactly equal
        else:
            assert mean is None and share is None
        dups += sum(m >= DUP_THRESHOLD for _, m in want)
        seen += len(want)
    pooled = pooled_dup_share([_run(i, by) for i, by in enumerate(runs)])
    assert (pooled.duplicates, pooled.questions) == (dups, seen)
    assert 0 < dups < seen  # the data exercise both sides of the threshold


def test_blocks_bounded_and_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    words = ["press", "luther", "church", "printing", "bible", "reform", "city", "guild"]
    by = {
        s: [" ".join(rng.choice(words, size=int(rng.integers(2, 9)))) for _ in range(40)]
        for s in range(1, 6)
    }
    emb = similarity.DEFAULT_EMBEDDER
    want = np.array(_definitional(by))
    got = np.array(question_maxima(by, emb))
    assert got.shape == want.shape == (160, 2)
    assert np.abs(got - want).max() <= 1e-12
    sessions = np.repeat(np.arange(1, 6), 40)
    first = np.searchsorted(sessions, sessions, side="left")
    plan = list(similarity._blocks(first, 7))
    assert [lo for lo, _, _ in plan] == [40] + [hi for _, hi, _ in plan[:-1]]  # contiguous
    assert plan[-1][1] == 200 and all(hi - lo <= 7 for lo, hi, _ in plan)
    assert all(w == first[hi - 1] for _, hi, w in plan)
    tiles: list[tuple[int, int]] = []
    real = similarity._dense

    def spy(vecs, lo, hi):  # type: ignore[no-untyped-def]
        out = real(vecs, lo, hi)
        tiles.append(out.shape)
        return out

    monkeypatch.setattr(similarity, "_dense", spy)
    monkeypatch.setattr(similarity, "CELLS", 1000)  # tiles of 9 rows (110 columns)
    small = np.array(question_maxima(by, emb))  # every tile small
    assert np.abs(small - want).max() <= 1e-12
    assert len(tiles) > 100 and max(r * c for r, c in tiles) <= 1000
