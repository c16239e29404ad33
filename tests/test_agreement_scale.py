"""Agreement at scale (issue 14.7): one set of replicates per question, no scikit-learn in
the κ path, and the same figures as the per-statistic functions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from curiosity_tui.packs.agreement import (
    bootstrap_by_cluster,
    bootstrap_cohen,
    cohen_kappa,
    confusion_matrix,
    question_agreement,
)
from curiosity_tui.packs.bootstrap import bootstrap_question
from curiosity_tui.packs.statistics import codes_to_counts

CATS = ["none", "some", "many"]


def _ratings(
    seed: int, n_items: int, n_raters: int, missing: float
) -> tuple[list[str], dict[str, dict[str, str]], np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=n_items)
    codes = np.where(
        rng.random((n_raters, n_items)) < 0.7, truth, rng.integers(0, 3, (n_raters, n_items))
    )
    codes[rng.random(codes.shape) < missing] = -1
    items = [f"i{i}" for i in range(n_items)]
    ratings = {
        f"r{r}": {items[i]: CATS[c] for i, c in enumerate(codes[r]) if c >= 0}
        for r in range(n_raters)
    }
    return items, ratings, codes


def test_pair_figures_match_sklearn_and_the_label_functions() -> None:
    items, ratings, _ = _ratings(1, 120, 4, 0.2)
    qa = question_agreement("q", CATS, ratings, items, n_boot=50)
    assert len(qa.pairs) == 6
    for pair in qa.pairs:
        a = [ratings[pair.rater_a].get(i) for i in items]
        b = [ratings[pair.rater_b].get(i) for i in items]
        both = [(x, y) for x, y in zip(a, b, strict=True) if x and y]
        want = cohen_kappa_score([x for x, _ in both], [y for _, y in both], labels=CATS)
        assert pair.cohen_kappa.value == pytest.approx(want, abs=1e-12)
        assert pair.cohen_kappa.n_items == len(both) == pair.n_items
        assert pair.cohen_kappa.n_dropped == len(items) - len(both)
        assert pair.confusion == confusion_matrix(a, b, CATS)
        assert pair.raw_agreement.value == pytest.approx(sum(x == y for x, y in both) / len(both))


def test_cohen_drops_labels_outside_the_given_list_as_sklearn_does() -> None:
    a = ["x", "y", "z", "x", "y", "x", "q"]
    b = ["x", "y", "x", "x", "z", "y", "x"]
    est = cohen_kappa(a, b, labels=["x", "y", "z"])
    assert est.value == pytest.approx(cohen_kappa_score(a, b, labels=["x", "y", "z"]))
    assert est.n_items == 6 and est.n_dropped == 1


def test_question_intervals_share_the_pooled_replicates() -> None:
    """The pooled intervals of the joint bootstrap are those of bootstrap_by_cluster."""
    _, _, codes = _ratings(2, 200, 5, 0.15)
    clusters = [i // 2 for i in range(200)]
    pooled, pairs = bootstrap_question(codes, 3, clusters, [(0, 1), (2, 4)], n_boot=800, seed=9)
    alone = bootstrap_by_cluster(codes_to_counts(codes, 3), clusters, n_boot=800, seed=9)
    assert pooled == alone
    assert len(pairs) == 2 and all(iv.low is not None for iv in pairs)


def test_without_missing_ratings_a_pair_interval_is_bootstrap_cohen() -> None:
    """With every item rated by everyone the question's clusters are the pair's, so one set
    of replicates gives exactly the pair's own interval."""
    _, _, codes = _ratings(3, 150, 3, 0.0)
    clusters = [i // 3 for i in range(150)]
    _, pairs = bootstrap_question(codes, 3, clusters, [(0, 1), (1, 2)], n_boot=600, seed=4)
    assert pairs[0] == bootstrap_cohen(codes[0], codes[1], 3, clusters, n_boot=600, seed=4)
    assert pairs[1] == bootstrap_cohen(codes[1], codes[2], 3, clusters, n_boot=600, seed=4)


def test_question_agreement_intervals_bracket_the_estimates() -> None:
    items, ratings, _ = _ratings(5, 300, 5, 0.1)
    clusters = {it: f"run{i // 2}" for i, it in enumerate(items)}
    qa = question_agreement("q", CATS, ratings, items, clusters, n_boot=2000, seed=1)
    assert qa.n_clusters == 150
    for est in [qa.raw_agreement, qa.fleiss_kappa, qa.krippendorff_alpha] + [
        p.cohen_kappa for p in qa.pairs
    ]:
        assert est.interval is not None and est.interval.n_boot == 2000
        assert est.interval.low < est.value < est.interval.high


def test_no_pairable_item_leaves_every_interval_undefined() -> None:
    codes = np.array([[0, -1, 1], [-1, 2, -1]])
    pooled, pairs = bootstrap_question(codes, 3, [0, 1, 2], [(0, 1)], n_boot=20)
    assert all(iv.low is None and iv.undefined_reason for iv in [*pooled.values(), *pairs])
    assert set(pooled) == {"raw_agreement", "fleiss_kappa", "krippendorff_alpha"}
