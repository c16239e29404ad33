"""The four-component and pre-amendment pieces, and the setting's parsing, with the worked
examples of docs/protocol.md ("Tension settings") computed by hand."""

from __future__ import annotations

import math

import pytest

from curiosity_tui.errors import InputError
from curiosity_tui.protocol.tension import decide, delta, disagreement, tension
from curiosity_tui.protocol.tension_measures import (
    cluster_entropy,
    cluster_labels,
    disagreement_among,
    four_tension,
    standing,
)
from curiosity_tui.protocol.tension_options import (
    TensionOptions,
    TensionWeights,
    parse_sessions,
    parse_weights,
    tension_options,
    with_tension,
)

SIMS = [[1.0, 0.9, 0.3], [0.9, 1.0, 0.2], [0.3, 0.2, 1.0]]


def test_four_component_worked_example() -> None:
    labels = cluster_labels(SIMS, 0.8)
    assert labels == [0, 0, 2]
    h = cluster_entropy(labels)
    assert h == pytest.approx(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)) / math.log(3))
    assert h == pytest.approx(0.5794, abs=1e-4)
    d = disagreement(SIMS)
    assert d == pytest.approx(1 - (0.9 + 0.3 + 0.2) / 3)
    left = standing(labels, 0)
    assert left == [0, 1]
    assert disagreement_among(SIMS, left) == pytest.approx(0.1)
    assert cluster_entropy([labels[i] for i in left], 3) == 0.0
    w = TensionWeights()
    before = four_tension(w, d, h, 4, 6)
    after = four_tension(w, 0.1, 0.0, 3, 5)
    assert before == pytest.approx(0.25 * (d + h + 0.8 + 0.75))
    assert after == pytest.approx(0.33125)
    dlt = delta(before, after)
    assert dlt == pytest.approx(-0.3344, abs=1e-4) and decide(dlt) == "PRESERVE"
    # the pilot's proxy on the same judgements answers
    as_run = delta(tension(d, 4, 6), tension(d, 3, 5))
    assert as_run == pytest.approx(-0.108333, abs=1e-6) and decide(as_run) == "ANSWER"


def test_entropy_bounds_and_clusters() -> None:
    assert cluster_entropy([0, 1, 2]) == 1.0  # every candidate its own answer
    assert cluster_entropy([0, 0, 0]) == 0.0
    assert cluster_entropy([]) == 0.0
    assert cluster_labels(SIMS, 0.1) == [0, 0, 0]  # single linkage joins all
    assert cluster_labels(SIMS, 0.95) == [0, 1, 2]
    assert disagreement_among(SIMS, [2]) == 0.0


def test_pre_amendment_worked_example() -> None:
    dlt = delta(tension(0.1, 5, 8), tension(0.7, 5, 8))
    assert dlt == pytest.approx(0.2) and decide(dlt) == "ANSWER"


def test_setting_default_is_not_recorded() -> None:
    assert with_tension({"a": 1}, TensionOptions()) == {"a": 1}
    assert tension_options({}) == TensionOptions()
    four = TensionOptions(measure="four-component", service_sessions=(3, 1))
    recorded = with_tension({}, four)["tension"]
    assert recorded["weights"] == {"D": 0.25, "H": 0.25, "F": 0.25, "U": 0.25}
    assert recorded["service_sessions"] == [1, 3]
    assert tension_options({"tension": recorded}).kind(3) == "service"
    assert tension_options({"tension": recorded}).kind(2) == "research"


def test_setting_refuses_bad_values() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        TensionWeights(D=0.5, H=0.5, F=0.5, U=0.0)
    with pytest.raises(ValueError, match="only to tension"):
        TensionOptions(measure="as-run", weights=TensionWeights())
    with pytest.raises(InputError, match="options.tension"):
        tension_options({"tension": {"measure": "post-hoc"}})
    assert parse_sessions("2,4-5", flag="--s") == (2, 4, 5)
    for bad in ("0", "x", "3-2", "2,2"):
        with pytest.raises(InputError, match="--s"):
            parse_sessions(bad, flag="--s")
    assert parse_weights("D=0.4,H=0.2,F=0.2,U=0.2", flag="--w").D == 0.4
    with pytest.raises(InputError, match="sum to 1"):
        parse_weights("D=1", flag="--w")
