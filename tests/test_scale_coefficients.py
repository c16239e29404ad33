"""Agreement for the scale a question has (issue 24, item 4; decision 425).

Each new coefficient is checked on 200 random rating sets with missing ratings against a
reference implementation — statsmodels (Cohen's weighted κ and its variance), krippendorff
(α ordinal) and, for Gwet's AC1/AC2 and Brennan–Prediger with their standard errors, a loop-
by-loop transcription of Gwet (2014) written here (irrCAC's Python port pins scipy==1.12.0 and
cannot sit in the test extra; the coefficients matched irrCAC 0.4.4 to 2e-15 on 200 random sets
when it was run beside them, decision 425) — and against published values.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from curiosity_tui.packs.coefficients import (
    brennan_prediger,
    cohen_weighted,
    gwet_ac,
    krippendorff_ordinal,
    pabak,
    weight_matrix,
)

TOL = 1e-9


def _random_sets(n_sets: int = 200, seed: int = 24):  # noqa: ANN202
    rng = np.random.default_rng(seed)
    for _ in range(n_sets):
        q = int(rng.integers(2, 6))
        raters = int(rng.integers(2, 6))
        items = int(rng.integers(4, 30))
        codes = rng.integers(0, q, (raters, items))
        codes[rng.random((raters, items)) < 0.2] = -1  # missing ratings
        yield q, codes


def _gwet_reference(codes: np.ndarray, q: int, w: np.ndarray, kind: str) -> tuple[float, float]:
    """Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., eqs. for AC1/AC2 (ch. 4) and
    Brennan–Prediger (ch. 2) with missing ratings, and their variance (ch. 5), item by item."""
    items = [[int(x) for x in codes[:, i] if x >= 0] for i in range(codes.shape[1])]
    items = [it for it in items if it]
    n = len(items)
    r = [[sum(1 for x in it if x == k) for k in range(q)] for it in items]
    ri = [sum(row) for row in r]
    rstar = [[sum(w[k][j] * row[j] for j in range(q)) for k in range(q)] for row in r]
    n2 = sum(1 for x in ri if x >= 2)
    pa_i = [
        sum(r[i][k] * (rstar[i][k] - 1) for k in range(q)) / (ri[i] * (ri[i] - 1))
        if ri[i] >= 2
        else 0.0
        for i in range(n)
    ]
    pa = sum(pa_i[i] for i in range(n) if ri[i] >= 2) / n2
    tw = sum(sum(row) for row in w)
    if kind == "bp":
        pe = tw / q**2
        coef = (pa - pe) / (1 - pe)
        per = [(n / n2) * (pa_i[i] - pe * (ri[i] >= 2)) / (1 - pe) for i in range(n)]
    else:
        pi = [sum(r[i][k] / ri[i] for i in range(n)) / n for k in range(q)]
        pe = tw / (q * (q - 1)) * sum(p * (1 - p) for p in pi)
        coef = (pa - pe) / (1 - pe)
        per = []
        for i in range(n):
            ac_i = (n / n2) * (pa_i[i] - pe * (ri[i] >= 2)) / (1 - pe)
            pe_i = tw / (q * (q - 1)) * sum(r[i][k] * (1 - pi[k]) for k in range(q)) / ri[i]
            per.append(ac_i - 2 * (1 - coef) * (pe_i - pe) / (1 - pe))
    var = sum((x - coef) ** 2 for x in per) / (n * (n - 1))
    return coef, var**0.5


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic"])
def test_gwet_and_brennan_prediger_match_the_reference_on_random_sets(weights: str) -> None:
    checked = 0
    for q, codes in _random_sets():
        if not ((codes >= 0).sum(axis=0) >= 2).any() or ((codes >= 0).sum(axis=0) > 0).sum() < 2:
            continue
        w = weight_matrix(q, weights).tolist()
        for fn, kind in ((gwet_ac, "ac"), (brennan_prediger, "bp")):
            got = fn(codes, q, weights)
            if got.value is None:
                continue
            want, se = _gwet_reference(codes, q, w, kind)
            assert got.value == pytest.approx(want, abs=TOL)
            assert got.se == pytest.approx(se, abs=TOL)
            checked += 1
    assert checked >= 350


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_cohen_matches_statsmodels_on_random_sets(weights: str) -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    checked = 0
    for q, codes in _random_sets():
        a, b = codes[0], codes[1]
        both = (a >= 0) & (b >= 0)
        got = cohen_weighted(a, b, q, weights)
        if both.sum() < 2 or got.value is None:
            continue
        table = np.bincount(a[both] * q + b[both], minlength=q * q).reshape(q, q)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = cohens_kappa(table, wt=weights)
        assert got.value == pytest.approx(ref.kappa, abs=TOL)
        assert got.se is not None and got.se**2 == pytest.approx(max(ref.var_kappa, 0), abs=TOL)
        checked += 1
    assert checked >= 150


def test_ordinal_alpha_matches_krippendorff_on_random_sets() -> None:
    import krippendorff

    checked = 0
    for q, codes in _random_sets():
        got = krippendorff_ordinal(codes, q)
        data = np.where(codes < 0, np.nan, codes).astype(float)
        try:
            ref = krippendorff.alpha(
                reliability_data=data, level_of_measurement="ordinal", value_domain=list(range(q))
            )
        except ValueError:
            assert got.value is None
            continue
        if got.value is None:
            continue
        assert got.value == pytest.approx(ref, abs=TOL)
        checked += 1
    assert checked >= 150


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers x 12 units
# example (values 1-5, blanks missing); the same data is Gwet (2014)'s raw_4raters example.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _k2011() -> np.ndarray:
    return np.array([[-1 if v is None else v - 1 for v in row] for row in K2011])


def test_published_values() -> None:
    codes = _k2011()
    # Krippendorff (2011), p. 4-5: alpha ordinal = 0.815
    assert round(krippendorff_ordinal(codes, 5).value or 0, 3) == 0.815
    # Gwet (2014), Handbook, 4th ed., as printed in irrCAC 0.4.4's documentation (raw.py):
    # AC1 0.77544, SE 0.14295, pa 0.81818, pe 0.19032, 95% interval (0.46081, 1)
    ac1 = gwet_ac(codes, 5)
    assert (round(ac1.value or 0, 5), round(ac1.se or 0, 5)) == (0.77544, 0.14295)
    assert (round(ac1.p_a or 0, 5), round(ac1.p_e or 0, 5)) == (0.81818, 0.19032)
    assert (round(ac1.ci_low or 0, 5), ac1.ci_high) == (0.46081, 1.0)
    # Gwet (2014)'s 3x3 abstractors table (13, 0, 0 / 0, 20, 7 / 0, 4, 56), irrCAC table.py:
    # AC1 0.84933 (pa 0.89, pe 0.26992); AC2 quadratic 0.94024 (pa 0.9725, pe 0.53985)
    table = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    pairs = [(k, j) for k in range(3) for j in range(3) for _ in range(table[k][j])]
    two = np.array(pairs).T
    assert round(gwet_ac(two, 3).value or 0, 5) == 0.84933
    ac2 = gwet_ac(two, 3, "quadratic")
    assert (round(ac2.value or 0, 5), round(ac2.p_e or 0, 5)) == (0.94024, 0.53985)


def test_pabak_prevalence_and_bias_by_hand_and_undefined_cases() -> None:
    # 2x2: a=40 both yes, d=10 both no, b=5, c=15 (n=70): p_o = 50/70
    a = np.array([0] * 40 + [0] * 5 + [1] * 15 + [1] * 10)
    b = np.array([0] * 40 + [1] * 5 + [0] * 15 + [1] * 10)
    pab, pi, bi = pabak(a, b, 2)
    assert pab.value == pytest.approx(2 * 50 / 70 - 1)
    assert pi.value == pytest.approx(30 / 70) and bi.value == pytest.approx(10 / 70)
    _, pi3, _ = pabak(np.array([0, 1, 2]), np.array([0, 1, 1]), 3)
    assert pi3.value is None and "two categories" in (pi3.undefined_reason or "")
    one = np.zeros((3, 5), dtype=int)  # every rating in one category
    assert krippendorff_ordinal(one, 3).value is None
    assert "0/0" in (krippendorff_ordinal(one, 3).undefined_reason or "")
    assert cohen_weighted(np.array([0, 0]), np.array([0, 0]), 3).value is None
    assert gwet_ac(np.full((2, 4), -1), 3).undefined_reason == "no item has two or more ratings"


def test_pilot01_q2_is_ordinal_and_agreement_reports_its_coefficients(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.cli import main
    from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
    from curiosity_tui.packs.build import build_pack
    from curiosity_tui.packs.pack_agreement import format_agreement, pack_agreement
    from curiosity_tui.packs.rating import RatingSession
    from curiosity_tui.packs.schemes import load_scheme

    scheme = load_scheme("pilot-01")
    assert [q.level for q in scheme.questions] == ["nominal", "ordinal"]
    assert scheme.question("q2").category_ids == ["none", "some", "many"]  # lowest first
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(), scheme, pack, seed=11)
    for rater, shift in (("ann", 0), ("bob", 1)):
        s = RatingSession(pack, rater)
        for k, item in enumerate(s.order):
            s.save(
                item,
                {
                    "q1": {"category": "built", "grounds": "g"},
                    "q2": {
                        "category": ["none", "some", "many"][(k + shift * (k % 2)) % 3],
                        "grounds": "g",
                    },
                },
            )
    rep = pack_agreement(pack, n_boot=50)
    q1, q2 = rep.questions
    assert q1.level == "nominal" and sorted(q1.coefficients) == ["brennan_prediger", "gwet_ac1"]
    assert q2.level == "ordinal" and "krippendorff_alpha_ordinal" in q2.coefficients
    assert q2.coefficients["gwet_ac2_quadratic"].se is not None
    pair = q2.pairs[0]
    assert {"cohen_kappa_linear", "cohen_kappa_quadratic", "pabak"} <= set(pair.coefficients)
    assert pair.coefficients["prevalence_index"].value is None  # three categories
    text = format_agreement(rep)
    assert "q2 · group human · ordinal" in text and "Gwet AC2 (quadratic)" in text
    assert "Cohen's kappa (linear)" in text and "SE " in text
    out = tmp_path / "agreement.csv"
    assert main(["agreement", str(pack), "--csv", str(out), "--boot", "50"]) == 0, (
        capsys.readouterr()
    )
    body = out.read_text()
    assert "krippendorff_alpha_ordinal" in body and ",ordinal," in body


def test_bootstrap_replicate_of_the_whole_sample_is_the_estimate_and_intervals_cover() -> None:
    """The cluster sums a bootstrap replicate is built from give, unresampled, the point
    estimate itself (so each replicate is the coefficient on its resample)."""
    from curiosity_tui.packs.scale_bootstrap import _item_columns, _replicates, scale_intervals

    for q, codes in _random_sets(60, seed=3):
        counts = np.stack([(codes == k).sum(axis=0) for k in range(q)], axis=1).astype(float)
        rated = counts.sum(axis=1) > 0
        if (counts[rated].sum(axis=1) >= 2).sum() < 2:
            continue
        cols, weightings = _item_columns(counts[rated], q, "ordinal")
        whole = _replicates(cols.sum(axis=0)[None, :], q, weightings, "ordinal")
        for w in ("identity", "linear", "quadratic"):
            name = "gwet_ac1" if w == "identity" else f"gwet_ac2_{w}"
            want = gwet_ac(codes, q, w).value
            if want is not None:
                assert whole[name][0] == pytest.approx(want, abs=TOL)
            bp = brennan_prediger(codes, q, w).value
            key = "brennan_prediger" if w == "identity" else f"brennan_prediger_{w}"
            assert whole[key][0] == pytest.approx(bp, abs=TOL)
        alpha = krippendorff_ordinal(codes, q).value
        if alpha is not None:
            assert whole["krippendorff_alpha_ordinal"][0] == pytest.approx(alpha, abs=TOL)
    codes = _k2011()
    iv, (pair,) = scale_intervals(
        codes, 5, "ordinal", list(range(12)), n_boot=500, seed=1, pairs=[(codes[1], codes[3])]
    )
    assert pair["pabak"].low is not None and "cohen_kappa_quadratic" in pair
    ac1 = gwet_ac(codes, 5).value or 0
    assert iv["gwet_ac1"].low < ac1 < iv["gwet_ac1"].high and iv["gwet_ac1"].n_boot == 500
    assert "krippendorff_alpha_ordinal" in iv and "gwet_ac2_quadratic" in iv


def test_pair_bootstrap_replicate_of_the_whole_sample_is_the_estimate() -> None:
    from curiosity_tui.packs.scale_bootstrap import _pair_replicates, scale_intervals

    checked = 0
    for q, codes in _random_sets(60, seed=9):
        a, b = codes[0], codes[1]
        both = (a >= 0) & (b >= 0)
        if both.sum() < 2:
            continue
        table = np.bincount(a[both] * q + b[both], minlength=q * q).reshape(1, q, q)
        whole = _pair_replicates(table.astype(float), q, "ordinal")
        assert whole["pabak"][0] == pytest.approx(pabak(a, b, q)[0].value, abs=TOL)
        for w in ("linear", "quadratic"):
            want = cohen_weighted(a, b, q, w).value
            if want is not None:
                assert whole[f"cohen_kappa_{w}"][0] == pytest.approx(want, abs=TOL)
                checked += 1
        _, (iv,) = scale_intervals(
            codes, q, "ordinal", list(range(len(a))), n_boot=200, seed=2, pairs=[(a, b)]
        )
        assert iv["pabak"].n_boot == 200 and iv["pabak"].low is not None
    assert checked >= 60
