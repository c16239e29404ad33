"""Tension, Δ, D and the decision, with hand-computed values (S5; report §2, §3)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from curiosity_tui.modelio.embedders import cosine_matrix
from curiosity_tui.protocol.tension import (
    DEFAULT_EPSILON,
    decide,
    delta,
    disagreement,
    tension,
)


def test_tension_hand_computed():
    # (0.3 + 5/5 + 8/8) / 3 = 2.3 / 3
    assert tension(0.3, 5, 8) == pytest.approx(2.3 / 3)
    # (0 + 2/5 + 4/8) / 3 = 0.9 / 3 = 0.3
    assert tension(0.0, 2, 4) == pytest.approx(0.3)
    assert tension(1.0, 0, 0) == pytest.approx(1 / 3)


def test_d_cancels_in_delta():
    # F 4 -> 2, U 6 -> 3: Δ = (-2/5 - 3/8) / 3 = -0.775 / 3
    want = (-2 / 5 - 3 / 8) / 3
    for d in (0.0, 0.123456789, 0.5, 1.0):
        assert delta(tension(d, 4, 6), tension(d, 2, 3)) == pytest.approx(want, abs=1e-12)


def test_delta_equal_to_minus_epsilon_answers():
    # F 5 -> 4, U 8 -> 6: Δ = (-1/5 - 2/8) / 3 = -0.45 / 3 = -0.15 exactly
    # (un-rounded float arithmetic gives -0.1499999999999999 or -0.15000000000000002)
    for d in (0.0, 0.3, 0.7):
        dlt = delta(tension(d, 5, 8), tension(d, 4, 6))
        assert dlt == -0.15
        assert decide(dlt, 0.15) == "ANSWER"
    assert decide(-0.15, 0.15) == "ANSWER"
    assert decide(-0.15000001, 0.15) == "PRESERVE"
    assert decide(-0.1499999, 0.15) == "ANSWER"
    assert decide(0.2, 0.15) == "ANSWER"
    assert DEFAULT_EPSILON == 0.15
    assert decide(-0.16) == "PRESERVE"


def test_report_example_answers():
    # §5: "Δ = −0.0667, above the threshold": F 5 -> 4, U unchanged: -1/5/3 = -0.0667
    dlt = delta(tension(0.4, 5, 8), tension(0.4, 4, 8))
    assert dlt == pytest.approx(-0.0667, abs=5e-5)
    assert decide(dlt, 0.15) == "ANSWER"


@pytest.mark.parametrize("eps", [0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40])
def test_decision_matches_exact_arithmetic_everywhere(eps):
    e = Fraction(str(eps))
    for d in (0.0, 0.3, 1 / 3, 0.77):
        for fb, ub, fa, ua in itertools.product(range(6), range(9), range(6), range(9)):
            if fa > fb or ua > ub:
                continue
            exact = (Fraction(fa - fb, 5) + Fraction(ua - ub, 8)) / 3
            want = "PRESERVE" if exact < -e else "ANSWER"
            got = decide(delta(tension(d, fb, ub), tension(d, fa, ua)), eps)
            assert got == want, (d, fb, ub, fa, ua, eps)


def test_delta_has_no_negative_zero():
    z = delta(tension(0.3, 2, 2), tension(0.3, 2, 2))
    assert z == 0.0 and math.copysign(1.0, z) == 1.0


def test_disagreement_hand_computed():
    # pairwise cosines 0.9, 0.6, 0.3 -> mean 0.6 -> D = 0.4
    sims = [[1.0, 0.9, 0.6], [0.9, 1.0, 0.3], [0.6, 0.3, 1.0]]
    assert disagreement(sims) == pytest.approx(0.4)
    # identical candidates: D = 0
    assert disagreement([[1.0] * 3] * 3) == 0.0
    # negative cosines (endpoint embeddings) clip to 1
    assert disagreement([[1.0, -0.5], [-0.5, 1.0]]) == 1.0
    assert disagreement([[1.0]]) == 0.0


def test_disagreement_from_vectors():
    import numpy as np

    c30, s30 = math.cos(math.pi / 6), math.sin(math.pi / 6)
    v = np.array([[1.0, 0.0], [c30, s30], [0.0, 1.0]])
    # cosines: a.b = .866, a.c = 0, b.c = .5 -> mean .4553 -> D = .5447
    assert disagreement(cosine_matrix(v, v)) == pytest.approx(1 - (c30 + 0.0 + 0.5) / 3)
