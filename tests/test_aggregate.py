"""Per run, then mean over runs; differences with a run-resampling bootstrap interval."""

from __future__ import annotations

import numpy as np
import pytest

from curiosity_tui.analysis.aggregate import (
    aggregate,
    aggregate_metric,
    bootstrap_interval,
    difference,
    group_by_config,
)
from curiosity_tui.offline.synthetic_rundata import structural_run


def _runs(config: str, depths: list[int]) -> list:
    return [structural_run(config, f"r{i}", depth=d, worked=d) for i, d in enumerate(depths)]


def test_mean_over_runs_keeps_per_run_values() -> None:
    runs = _runs("C+cur", [3, 3, 3]) + _runs("B-armed+cur", [2, 2, 3])
    table = aggregate(runs, ["max_depth"])
    b = table["B-armed+cur"]["max_depth"]
    assert b.value == pytest.approx(7 / 3)
    assert [v.value for v in b.per_run] == [2.0, 2.0, 3.0]
    assert [v.run_id for v in b.per_run] == ["r0", "r1", "r2"]
    assert b.n == 3 and b.n_missing == 0
    assert table["C+cur"]["max_depth"].value == 3.0
    assert list(group_by_config(runs)) == ["C+cur", "B-armed+cur"]


def test_median_and_undefined_values() -> None:
    runs = _runs("C+cur", [1, 2, 9])
    assert aggregate_metric(runs, "max_depth", "C+cur", aggregation="median").value == 2.0
    # preserve_share has no decisions in these runs: undefined, not zero
    agg = aggregate_metric(runs, "preserve_share", "C+cur")
    assert agg.value is None and agg.n == 0 and agg.n_missing == 3


def test_difference_with_interval_is_seeded_and_brackets_the_difference() -> None:
    a = aggregate_metric(_runs("C-cur", [6, 6, 7, 5]), "max_depth", "C-cur")
    b = aggregate_metric(_runs("B-armed-cur", [2, 3, 3, 2]), "max_depth", "B-armed-cur")
    d1 = difference(a, b, seed=7)
    d2 = difference(a, b, seed=7)
    assert d1 == d2
    assert d1.diff == pytest.approx(6.0 - 2.5)
    assert d1.ci_low is not None and d1.ci_high is not None and d1.diff is not None
    assert d1.ci_low <= d1.diff <= d1.ci_high
    # bootstrap range can never exceed the extreme resamples
    assert d1.ci_low >= 5 - 3 and d1.ci_high <= 7 - 2
    assert "understates" in d1.note  # only four runs a side


def test_no_interval_when_a_side_has_fewer_than_two_runs() -> None:
    a = aggregate_metric(_runs("C+cur", [3]), "max_depth", "C+cur")
    b = aggregate_metric(_runs("B-armed+cur", [2, 2, 3]), "max_depth", "B-armed+cur")
    d = difference(a, b)
    assert d.diff == pytest.approx(3 - 7 / 3)
    assert d.ci_low is None and d.ci_high is None
    assert "no interval: C+cur has n=1" in d.note


def test_vectorised_bootstrap_matches_a_plain_loop() -> None:
    a, b = [1.0, 4.0, 2.0], [0.0, 1.0, 5.0, 2.0]
    lo, hi = bootstrap_interval(a, b, n_boot=500, seed=3)
    rng = np.random.default_rng(3)
    ia = rng.integers(0, 3, size=(500, 3))
    ib = rng.integers(0, 4, size=(500, 4))
    diffs = [np.mean(np.take(a, ia[k])) - np.mean(np.take(b, ib[k])) for k in range(500)]
    assert (lo, hi) == pytest.approx(tuple(np.quantile(diffs, [0.025, 0.975])))


def test_each_side_is_its_own_seeded_stream() -> None:
    from curiosity_tui.analysis.aggregate import boot_centres

    a = aggregate_metric(_runs("C+cur", [3, 3, 4]), "max_depth", "C+cur")
    b = aggregate_metric(_runs("B-armed+cur", [2, 2, 3]), "max_depth", "B-armed+cur")
    c = aggregate_metric(_runs("C-cur", [1, 2, 2]), "max_depth", "C-cur")
    d1 = difference(a, b)
    boot_centres.cache_clear()
    assert difference(a, b) == d1  # reproducible without the cache
    # the C+cur side is the same draw in every comparison it enters
    ca = boot_centres((3.0, 3.0, 4.0), "C+cur", 10_000, 20240601, "mean")
    assert ca is boot_centres((3.0, 3.0, 4.0), "C+cur", 10_000, 20240601, "mean")
    cc = boot_centres((1.0, 2.0, 2.0), "C-cur", 10_000, 20240601, "mean")
    lo, hi = np.quantile(ca - cc, [0.025, 0.975])
    d2 = difference(a, c)
    assert (d2.ci_low, d2.ci_high) == pytest.approx((lo, hi))


@pytest.mark.parametrize("cells", [1 << 19, 0])  # the shared draw is cached; too big to keep
def test_boot_centres_equal_a_fresh_draw_per_metric(
    cells: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curiosity_tui.analysis import aggregate
    from curiosity_tui.analysis.aggregate import boot_centres, side_seed

    monkeypatch.setattr(aggregate, "_INDEX_CELLS", cells)
    boot_centres.cache_clear()
    aggregate._cached_index.cache_clear()
    rng = np.random.default_rng(2)
    for how in ("mean", "median"):
        for values in (tuple(rng.random(7)), tuple(rng.integers(0, 9, 7).astype(float))):
            got = boot_centres(values, "C+cur", 2_000, 99, how)  # type: ignore[arg-type]
            idx = np.random.default_rng(side_seed(99, "C+cur")).integers(0, 7, size=(2_000, 7))
            x = np.asarray(values)[idx]
            want = np.median(x, axis=1) if how == "median" else x.mean(axis=1)
            assert np.array_equal(got, want)  # bit for bit: the same draw, the same sums
    assert aggregate._cached_index.cache_info().currsize == (1 if cells else 0)
