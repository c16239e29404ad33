"""Agreement statistics: published values, cross-checks, undefined cases, bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curiosity_tui.packs.agreement import (
    AgreementDataError,
    bootstrap_by_cluster,
    bootstrap_cohen,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    krippendorff_alpha,
    question_agreement,
    raw_agreement,
)

# Fleiss' κ worked example (Wikipedia, "Fleiss' kappa"): 10 subjects, 14 raters, 5 categories.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_wikipedia_example() -> None:
    est = fleiss_kappa(WIKIPEDIA_FLEISS)
    assert est.value == pytest.approx(0.210, abs=5e-4)
    assert est.n_items == 10 and est.n_dropped == 0
    # P-bar and P-e of the worked example
    assert raw_agreement(WIKIPEDIA_FLEISS).value == pytest.approx(0.378, abs=5e-4)


def test_fleiss_matches_statsmodels_on_random_tables() -> None:
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    rng = np.random.default_rng(20261201)
    checked = 0
    for _ in range(150):
        n_items = int(rng.integers(2, 40))
        n_raters = int(rng.integers(2, 9))
        k = int(rng.integers(2, 6))
        labels = rng.integers(0, k, size=(n_items, n_raters))
        counts = np.stack([(labels == c).sum(axis=1) for c in range(k)], axis=1)
        ours = fleiss_kappa(counts)
        theirs = float(sm_fleiss(counts))
        if not ours.defined:
            assert math.isnan(theirs) or not math.isfinite(theirs)
            continue
        assert ours.value == pytest.approx(theirs, abs=1e-10)
        checked += 1
    assert checked >= 100


def test_alpha_matches_krippendorff_package_on_random_tables() -> None:
    import krippendorff

    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(150):
        n_raters = int(rng.integers(2, 7))
        n_items = int(rng.integers(3, 40))
        k = int(rng.integers(2, 5))
        data = rng.integers(0, k, size=(n_raters, n_items)).astype(float)
        data[rng.random(data.shape) < rng.uniform(0, 0.4)] = np.nan
        ours = krippendorff_alpha([[None if np.isnan(v) else int(v) for v in row] for row in data])
        try:
            theirs = float(
                krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
            )
        except ValueError:  # the package refuses a one-value domain
            assert not ours.defined
            continue
        if not ours.defined:
            assert not math.isfinite(theirs)
            continue
        assert ours.value == pytest.approx(theirs, abs=1e-9)
        checked += 1
    assert checked >= 100


def test_alpha_accepts_string_labels_and_nan() -> None:
    data = [["a", "b", None, "a"], ["a", "b", "b", float("nan")], ["a", "a", "b", "a"]]
    est = krippendorff_alpha(data)
    assert est.defined and est.n_items == 4
    num = [[0, 1, None, 0], [0, 1, 1, None], [0, 0, 1, 0]]
    assert krippendorff_alpha(num).value == pytest.approx(est.value)


def test_cohen_matches_sklearn_and_closed_form() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(3)
    for _ in range(100):
        n = int(rng.integers(5, 60))
        a = rng.choice(["x", "y", "z"], size=n).tolist()
        b = [v if rng.random() < 0.6 else rng.choice(["x", "y", "z"]) for v in a]
        est = cohen_kappa(a, b)
        if len(set(a) | set(b)) == 1:
            assert not est.defined
            continue
        assert est.value == pytest.approx(cohen_kappa_score(a, b))
    # textbook 2×2: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → κ = 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b).value == pytest.approx(0.4)


@pytest.mark.parametrize(
    "call",
    [
        lambda: cohen_kappa(["a", "a", "a"], ["a", "a", "a"]),
        lambda: fleiss_kappa([[3, 0], [3, 0], [3, 0]]),
        lambda: krippendorff_alpha([["a", "a"], ["a", "a"]]),
        lambda: cohen_kappa([None, "a"], ["b", None]),
        lambda: fleiss_kappa([[1, 0], [0, 1]]),
        lambda: krippendorff_alpha([["a", None], [None, "b"]]),
        lambda: fleiss_kappa(np.zeros((0, 3))),
    ],
)
def test_undefined_is_reported_with_reason_never_one(call) -> None:  # type: ignore[no-untyped-def]
    est = call()
    assert est.value is None
    assert est.undefined_reason
    assert "undefined" in est.format()


def test_fleiss_drops_items_with_fewer_than_two_ratings_and_says_so() -> None:
    est = fleiss_kappa([[2, 0], [0, 2], [1, 0], [1, 1]])
    assert est.n_items == 3 and est.n_dropped == 1
    assert est.value == pytest.approx(fleiss_kappa([[2, 0], [0, 2], [1, 1]]).value)


def test_fleiss_missing_ratings_equals_alpha_style_counts() -> None:
    # With unequal numbers of ratings the value is still finite and within [-1, 1].
    est = fleiss_kappa([[3, 0], [0, 2], [1, 1], [2, 1]])
    assert est.defined and -1 <= est.value <= 1


def test_bad_tables_raise_data_error() -> None:
    with pytest.raises(AgreementDataError):
        fleiss_kappa([1, 2, 3])
    with pytest.raises(AgreementDataError):
        fleiss_kappa([[1, -1]])
    with pytest.raises(AgreementDataError):
        fleiss_kappa([[1.5, 1]])
    with pytest.raises(AgreementDataError):
        cohen_kappa(["a"], ["a", "b"])
    with pytest.raises(AgreementDataError):
        krippendorff_alpha([["a", "b"], ["a"]])


def test_confusion_matrix_orders_by_labels() -> None:
    conf = confusion_matrix(["a", "b", "b", None], ["a", "a", "b", "b"], ["b", "a"])
    assert conf == [[1, 1], [0, 1]]


def test_bootstrap_is_seeded_and_brackets_estimate() -> None:
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 3, size=200)
    labels = np.stack(
        [np.where(rng.random(200) < 0.7, truth, rng.integers(0, 3, 200)) for _ in range(3)]
    )
    counts = np.stack([(labels == c).sum(axis=0) for c in range(3)], axis=1)
    one = bootstrap_by_cluster(counts, n_boot=2000, seed=5)
    two = bootstrap_by_cluster(counts, n_boot=2000, seed=5)
    assert one == two
    point = fleiss_kappa(counts).value
    assert one["fleiss_kappa"].low < point < one["fleiss_kappa"].high
    assert one["krippendorff_alpha"].low < krippendorff_alpha(labels.tolist()).value
    assert bootstrap_by_cluster(counts, n_boot=2000, seed=6) != one


def test_bootstrap_resamples_runs_not_ratings() -> None:
    """Duplicating every run's item (two items of one run) must not narrow the interval
    the way treating them as independent would."""
    rng = np.random.default_rng(2)
    truth = rng.integers(0, 2, size=40)
    labels = np.stack([np.where(rng.random(40) < 0.75, truth, 1 - truth) for _ in range(2)])
    counts = np.stack([(labels == c).sum(axis=0) for c in range(2)], axis=1)
    doubled = np.concatenate([counts, counts])
    runs = list(range(40)) * 2
    by_run = bootstrap_by_cluster(doubled, runs, n_boot=4000, seed=1)["fleiss_kappa"]
    naive = bootstrap_by_cluster(doubled, None, n_boot=4000, seed=1)["fleiss_kappa"]
    single = bootstrap_by_cluster(counts, None, n_boot=4000, seed=1)["fleiss_kappa"]
    width = lambda iv: iv.high - iv.low  # noqa: E731
    assert width(by_run) == pytest.approx(width(single), rel=0.15)
    assert width(naive) < 0.85 * width(by_run)


def test_bootstrap_counts_undefined_replicates() -> None:
    # Almost everything in one category: many replicates have chance agreement 1.
    counts = [[2, 0]] * 9 + [[1, 1]]
    iv = bootstrap_by_cluster(counts, n_boot=1000, seed=0)["fleiss_kappa"]
    assert iv.n_undefined > 0
    all_one = bootstrap_by_cluster([[2, 0]] * 5, n_boot=100, seed=0)["fleiss_kappa"]
    assert all_one.low is None and all_one.undefined_reason


def test_bootstrap_cohen_interval() -> None:
    a = [0, 1, 0, 1, 0, 1, 1, 0, 0, 1] * 5
    b = [0, 1, 0, 0, 0, 1, 1, 1, 0, 1] * 5
    iv = bootstrap_cohen(a, b, 2, n_boot=2000, seed=3)
    point = cohen_kappa(a, b).value
    assert iv.low < point < iv.high


def test_question_agreement_three_raters_with_missing() -> None:
    items = ["i1", "i2", "i3", "i4"]
    ratings = {
        "ann": {"i1": "none", "i2": "some", "i3": "many", "i4": "many"},
        "bob": {"i1": "none", "i2": "some", "i3": "many"},
        "cy": {"i1": "none", "i2": "many", "i4": "many"},
    }
    qa = question_agreement("q2", ["none", "some", "many"], ratings, items, n_boot=500)
    assert qa.raters == ["ann", "bob", "cy"]
    assert len(qa.pairs) == 3
    ab = qa.pairs[0]
    assert (ab.rater_a, ab.rater_b, ab.n_items) == ("ann", "bob", 3)
    assert ab.raw_agreement.value == 1.0
    assert ab.confusion == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert qa.category_counts["bob"] == {"none": 1, "some": 1, "many": 1}
    assert qa.fleiss_kappa.defined and qa.fleiss_kappa.interval is not None
    with pytest.raises(AgreementDataError):
        question_agreement("q", ["a"], {"r": {"i1": "zzz"}}, ["i1"], n_boot=10)


def test_question_agreement_saturated_question_is_undefined() -> None:
    items = ["i1", "i2", "i3"]
    ratings = {r: {i: "built" for i in items} for r in ("ann", "bob")}
    qa = question_agreement("q1", ["built", "fresh"], ratings, items, n_boot=100)
    assert qa.raw_agreement.value == 1.0
    assert qa.fleiss_kappa.value is None and "one category" in qa.fleiss_kappa.undefined_reason
    assert qa.krippendorff_alpha.value is None
    assert qa.pairs[0].cohen_kappa.value is None
