"""Two ledgers side by side (issue 26, item 6): the alignment and paired metrics of
``analysis/compare*.py`` and ``curiosity-tui compare A B`` (text and ``--json``), on the
repository's example ledgers (read only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.compare import Comparison, compare_paths
from curiosity_tui.analysis.compare_metrics import pair_runs
from curiosity_tui.analysis.compare_text import favours, format_comparison, signed
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.cli import main

LEDGERS = Path(__file__).resolve().parents[1] / "ledgers"
C_CUR = LEDGERS / "example-C+cur-pilot02"
C_NOCUR = LEDGERS / "example-C-cur-pilot02"
GRABE_01 = LEDGERS / "episode-grabe-pilot01"
GRABE_02 = LEDGERS / "episode-grabe-pilot02"
RELAY = LEDGERS / "example-relay-C+cur"
SHORT = LEDGERS / "real-gemma3-270m-C-cur-pilot02"  # three sessions


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Comparison:
    assert main(["compare", *args, "--json"]) == 0
    return Comparison.model_validate_json(capsys.readouterr().out)


def test_two_configurations_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    comp = _cli_json(capsys, str(C_CUR), str(C_NOCUR))
    assert (comp.a.config, comp.b.config) == ("C+cur", "C-cur")
    assert (comp.a.curator, comp.b.curator) == ("model", "none")
    assert comp.differ == ["config", "curator"]
    assert [s.session for s in comp.sessions] == [1, 2, 3, 4, 5]
    s3 = comp.sessions[2]
    # A's session 3: ANSWER on q3 blocked by its unmet requirements (pilot-02 binds closure)
    assert (s3.a.focus, s3.a.decision) == ("q3", "ANSWER")
    assert [(c.node, c.closed, c.unmet) for c in s3.a.closures] == [("q3", False, ["r1", "r2"])]
    assert s3.b.closures == [] and s3.b.decision == "PRESERVE"
    # NEW / CHG as the browser marks them after the session
    s1 = comp.sessions[0]
    assert [(m.node, m.mark) for m in s1.a.marks] == [
        ("q1", "changed"),
        ("q2", "new"),
        ("q3", "new"),
        ("q4", "new"),
    ]
    assert len(s1.a.facts) == 2 and all(f.node == "q1" for f in s1.a.facts)
    assert [(c.node, c.requirement, c.result) for c in comp.sessions[1].b.checks] == [
        ("q1", "r1", "not_satisfied")
    ]
    # the paired metrics are the registry's, each run's own value, difference B − A
    (run_a,) = load_runs([C_CUR])
    (run_b,) = load_runs([C_NOCUR])
    reg = default_registry()
    assert [m.name for m in comp.metrics] == reg.names()
    by_name = {m.name: m for m in comp.metrics}
    for name in ("facts_total", "max_depth", "closures_blocked", "preserve_share"):
        a, b = reg.get(name)(run_a), reg.get(name)(run_b)
        assert (by_name[name].a, by_name[name].b) == (a, b)
        assert by_name[name].difference == pytest.approx(b - a)  # type: ignore[operator]
    assert by_name["facts_total"].difference == -3
    assert by_name["tokens_per_requirement_satisfied"].difference is None  # undefined on both


def test_two_configurations_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(C_CUR), str(C_NOCUR), "--trees"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SCRIPTED PRACTICE")  # both runs had scripted replies
    assert "A  example-C+cur-pilot02 — C+cur · pilot-02 · curator model" in out
    assert "differ in: config, curator" in out
    assert "blocked q3 (unmet r1 r2)" in out
    assert "       NEW q2 open" in out and "       CHG q1 open" in out  # --trees
    line = next(x for x in out.splitlines() if x.startswith("facts_total "))
    assert line.split() == ["facts_total", "8.00", "5.00", "-3.00", "A"]


def test_two_contracts_show_the_same_replies_checked_differently(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pilot-01 marks r1 satisfied on the model's say-so; pilot-02 leaves it unchecked."""
    comp = _cli_json(capsys, str(GRABE_01), str(GRABE_02))
    assert comp.differ == ["contract"]
    s2 = comp.sessions[1]
    assert [(c.requirement, c.result) for c in s2.a.checks] == [("r1", "satisfied")]
    assert [(c.requirement, c.result) for c in s2.b.checks] == [("r1", "unchecked")]
    assert [m.node for m in s2.a.marks] == [m.node for m in s2.b.marks]  # same tree changes
    assert main(["compare", str(GRABE_01), str(GRABE_02), "--no-metrics"]) == 0
    out = capsys.readouterr().out
    assert "differ in: contract" in out and "paired metrics" not in out
    assert "check q1 r1: satisfied" in out and "check q1 r1: unchecked" in out


def test_a_relay_names_its_minds_session_by_session(capsys: pytest.CaptureFixture[str]) -> None:
    comp = _cli_json(capsys, str(RELAY), str(C_CUR), "--no-metrics")
    assert "minds" in comp.differ and comp.b.minds == []
    assert [s.a.mind.split(" @")[0] for s in comp.sessions] == [  # type: ignore[union-attr]
        "model scripted-a",
        "model scripted-b",
        "model scripted-a",
        "model scripted-b",
        "model scripted-a",
    ]
    assert all(s.b.mind is None for s in comp.sessions)
    text = format_comparison(comp)
    assert "relay: model scripted-a" in text and "by model scripted-b" in text


def test_a_shorter_run_is_absent_where_it_ended() -> None:
    comp = compare_paths(SHORT, C_NOCUR, metrics=False)
    assert [s.session for s in comp.sessions] == [1, 2, 3, 4, 5]
    assert [s.a.state for s in comp.sessions] == ["committed"] * 3 + ["absent"] * 2
    assert comp.a.scripted is False
    text = format_comparison(comp)
    assert "no session (the run ended before it)" in text
    assert not text.startswith("SCRIPTED")  # one side came from a model: the mixed label
    assert text.startswith("MIXED")


def test_not_a_ledger_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["compare", str(C_CUR), str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tmp_path) in err and "not a ledger" in err
    assert main(["compare", str(tmp_path / "missing"), str(C_CUR), "--app"]) != 0
    assert "not a ledger" in capsys.readouterr().err


def test_model_text_is_printed_visibly_on_one_line() -> None:
    from curiosity_tui.analysis.compare_text import one_line

    assert one_line("a\x1b[31mred\nline [b]x[/b]") == "a␛[31mred line [b]x[/b]"
    assert len(one_line("x" * 200)) == 60


@pytest.mark.parametrize(
    ("hib", "d", "side"),
    [(True, 1.0, "B"), (True, -1.0, "A"), (False, 1.0, "A"), (None, 1.0, "—"), (True, 0.0, "—")],
)
def test_favours_follows_the_metrics_direction(hib: bool | None, d: float, side: str) -> None:
    assert favours(hib, d) == side


def test_signed_and_pairing_with_undefined_values() -> None:
    assert (signed(None), signed(0.0001), signed(-2.0)) == ("—", "0.00", "-2.00")
    (run,) = load_runs([C_CUR])
    paired = pair_runs(run, run)
    assert all(m.difference in (0, None) for m in paired)
    assert json.loads(paired[0].model_dump_json())["name"] == paired[0].name


def test_a_human_curated_run_beside_a_model_curated_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app_fixtures import build_example

    from curiosity_tui.ledger import Ledger
    from curiosity_tui.ledger.curation import archive, finish_curation, set_priority

    human = build_example(tmp_path / "human-curated")  # three sessions, curator human
    led = Ledger.open(human, write=True)
    try:
        set_priority(led, "q2", 1, "[b]first[/b] the regions", "human:ana")
        archive(led, "q3", "answered elsewhere", "human:ana")
        finish_curation(led)
    finally:
        led.close()
    comp = _cli_json(capsys, str(human), str(C_CUR), "--no-metrics")
    assert (comp.a.curator, comp.b.curator) == ("human", "model")
    after3 = comp.sessions[2].a
    assert [(c.node, c.actor, c.what) for c in after3.curator] == [
        ("q2", "human:ana", "priority 1"),
        ("q3", "human:ana", "→ archived"),
    ]
    assert after3.curator[0].reason == "[b]first[/b] the regions"
    assert ("q3", "changed") in [(m.node, m.mark) for m in after3.marks]  # the tree shows it
    assert [c.actor for c in comp.sessions[0].b.curator] == ["model-curator"] * 2
    assert comp.sessions[0].a.curator == []  # the fixture's sessions had no curator action
    assert main(["compare", str(human), str(C_CUR), "--no-metrics"]) == 0
    out = capsys.readouterr().out
    assert "curator human:ana: q2 priority 1, q3 → archived" in out
    assert "curator model-curator: q3 priority 1, q4 priority 2" in out


def test_a_failed_session_says_so_with_its_reason(tmp_path: Path) -> None:
    import shutil

    from curiosity_tui.ledger import Ledger, SessionRecord
    from curiosity_tui.ledger.event_data import SessionFailed

    copy = tmp_path / "stopped"
    shutil.copytree(C_NOCUR, copy, ignore=shutil.ignore_patterns("writer.lock"))
    led = Ledger.open(copy, write=True)
    try:
        rec = SessionRecord(session=6, status="failed", error="judge reply cut at its cap")
        with led.batch(6, marker="batch_committed", label="failed session") as b:
            b.emit(SessionFailed(reason=rec.error or "", record=rec.model_dump(mode="json")))
    finally:
        led.close()
    comp = compare_paths(copy, C_CUR, metrics=False)
    last = comp.sessions[-1]
    assert last.session == 6 and (last.a.state, last.b.state) == ("failed", "absent")
    assert last.a.reason == "judge reply cut at its cap"
    assert "failed: judge reply cut at its cap (nothing applied)" in format_comparison(comp)
