"""cross_domain_share: deterministic lexicon domains over node-parent edges."""

from __future__ import annotations

import pytest

from curiosity_tui.analysis.domains import (
    DEFAULT_LEXICON,
    METHOD,
    UNASSIGNED,
    assign_domain,
    cross_domain_edges,
)
from curiosity_tui.analysis.registry import get
from curiosity_tui.analysis.rundata import RunData, RunNode


def test_assignment_is_deterministic_with_first_listed_tie_break() -> None:
    assert assign_domain("Did the printing press cause the Reformation?") == "technology"
    assert assign_domain("How did merchants finance print shops?") == "economy"
    # one politics hit (princes), one religion hit (Luther): religion is listed first
    assert list(DEFAULT_LEXICON).index("religion") < list(DEFAULT_LEXICON).index("politics")
    assert assign_domain("Why did princes protect Luther?") == "religion"
    assert assign_domain("Is this a question?") == UNASSIGNED


def _run(*nodes: tuple[str, str | None, str]) -> RunData:
    return RunData(
        config="C+cur",
        run_id="r0",
        nodes={nid: RunNode(id=nid, parent=p, text=t) for nid, p, t in nodes},
    )


def test_share_over_assigned_edges_hand_computed() -> None:
    run = _run(
        ("q1", None, "Did the printing press cause the Reformation?"),  # technology
        ("q2", "q1", "Did printers sell more presses?"),  # technology: same domain
        ("q3", "q1", "Which merchants traded in books at fairs?"),  # economy: cross
        ("q4", "q3", "What else?"),  # unassigned: edge left out
        ("q5", "q9", "Papal indulgences and the church"),  # parent not in snapshot: no edge
    )
    e = cross_domain_edges(run)
    assert (e.edges, e.assigned, e.cross) == (3, 2, 1)
    assert e.share == 0.5
    assert e.domains["q3"] == "economy" and e.domains["q4"] == UNASSIGNED
    assert get("cross_domain_share")(run) == 0.5
    assert get("cross_domain_share")(_run(("q1", None, "x"))) is None


def test_method_is_recorded_in_the_definition() -> None:
    m = get("cross_domain_share")
    assert METHOD in m.definition and "sha256" in METHOD
    custom: dict[str, tuple[str, ...]] = {"a": ("alpha",), "b": ("beta",)}
    e = cross_domain_edges(_run(("q1", None, "alpha"), ("q2", "q1", "beta")), custom)
    assert e.share == pytest.approx(1.0) and e.method.startswith("lexicon sha256")
