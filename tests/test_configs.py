"""The six configurations as data (S5 table)."""

from __future__ import annotations

import pytest

from curiosity_tui.errors import InputError
from curiosity_tui.protocol.configs import (
    CONFIG_NAMES,
    CONFIGURATIONS,
    get_configuration,
    resolve_curator,
)


def test_the_table_of_s5():
    rows = {n: (c.store, c.curator, c.protocol_package, c.arm) for n, c in CONFIGURATIONS.items()}
    assert rows == {
        "A": (False, False, False, "answer"),
        "B": (False, False, False, "self-ask"),
        "B-armed+cur": (True, True, False, "armed-self-ask"),
        "B-armed-cur": (True, False, False, "armed-self-ask"),
        "C+cur": (True, True, True, "protocol"),
        "C-cur": (True, False, True, "protocol"),
    }
    assert CONFIG_NAMES == ("A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur")
    for c in CONFIGURATIONS.values():
        assert c.label and c.description


def test_lookup_and_unknown_names():
    assert get_configuration("C+cur").protocol_package
    assert get_configuration(" C\u2212cur ").name == "C-cur"  # §3's minus sign
    assert get_configuration("B-armed\u2212cur").name == "B-armed-cur"
    with pytest.raises(InputError, match=r"unknown configuration 'D'; choose one of A, B"):
        get_configuration("D")
    # the report's §8 spelling means the opposite: refused with an explanation
    with pytest.raises(InputError, match="WITH a curator"):
        get_configuration("C-nocur")


def test_configurations_are_frozen():
    with pytest.raises(ValueError):
        CONFIGURATIONS["A"].store = True  # type: ignore[misc]


def test_resolve_curator():
    assert resolve_curator(get_configuration("C+cur"), "model") == "model"
    assert resolve_curator(get_configuration("B-armed+cur"), "human") == "human"
    for name in ("A", "B", "B-armed-cur", "C-cur"):
        assert resolve_curator(get_configuration(name), "model") == "none"
    with pytest.raises(InputError, match="for no curator run C-cur"):
        resolve_curator(get_configuration("C+cur"), "none")
    with pytest.raises(InputError, match="unknown curator kind"):
        resolve_curator(get_configuration("C+cur"), "robot")
