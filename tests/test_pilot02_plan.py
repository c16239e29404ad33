"""docs/pilot-02.toml (issue 16, item 5): the report's §6 comparisons, each its own locked
comparison, lock as they are and run offline end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.analysis.plan import load_plan, parse_plan
from curiosity_tui.cli import main
from curiosity_tui.errors import InputError
from curiosity_tui.ledger import Ledger
from curiosity_tui.offline.scripted_server import ScriptedServer

PLAN = Path(__file__).resolve().parents[1] / "docs" / "pilot-02.toml"


def test_the_plan_names_each_comparison_with_its_own_closed_set() -> None:
    plan, _ = load_plan(PLAN)
    names = [c.name for c in plan.comparisons]
    assert names == ["evidence", "closure", "open-layer", "no-reselect", "harder-q1", "second-seed"]
    for c in plan.comparisons:
        assert set(c.rule.metrics) <= set(c.metrics)
    assert plan.arm("C-asserted").contract == "evidence=asserted,closure=binding+downgrade"
    assert plan.arm("C-optional").open_layer == "optional"
    assert plan.arm("C-noreselect").no_reselect is True
    assert plan.arm("C+cur").config == "C+cur"  # a plain configuration is its own arm


def test_a_comparison_that_opens_its_set_is_refused() -> None:
    text = PLAN.read_text(encoding="utf-8")
    with pytest.raises(InputError, match="comparisons.evidence: metrics"):
        parse_plan(
            text.replace('metrics = ["satisfied_verified_per_session"]', 'metrics = ["all"]', 1)
        )
    with pytest.raises(InputError, match="not in the plan"):
        parse_plan(
            text.replace('pairs = [["C+cur", "C-asserted"]]', 'pairs = [["C+cur", "C-nothing"]]')
        )
    with pytest.raises(InputError, match="shadows the configuration"):
        parse_plan(text.replace("[arms.C-binding]", "[arms.C-cur]"))
    with pytest.raises(InputError, match="no direction"):
        parse_plan(
            text.replace('metrics = ["closed_over_unmet"]', 'metrics = ["closures_blocked"]')
        )


@pytest.fixture(scope="module")
def pilot_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/pilot-02.toml locked and run offline, once for this module."""
    runs = tmp_path_factory.mktemp("p2") / "runs"
    chain = runs / "prereg.jsonl"
    assert main(["prereg", "lock", str(PLAN), "--stage", "before-runs", "--chain", str(chain)]) == 0
    assert (
        main(["pilot", "run", str(PLAN), "--out", str(runs), "--scripted", "--workers", "1"]) == 0
    )
    return runs


def _rater(pick: int) -> Any:
    """A scripted model rater for the pilot-02 scheme: quotes the item's first (or last) line of
    section 2 (or 1) verbatim, as q1 requires; categories by ``pick``."""

    def respond(kind: str, session: int, body: dict[str, Any]) -> dict[str, Any] | None:
        if kind != "rate":
            return None
        text = body["messages"][-1]["content"]
        parts = re.split(r"^=== .* ===$", text, flags=re.M)[1:]
        lines = [
            ln.strip() for part in parts[:2] for ln in part.splitlines() if len(ln.split()) >= 3
        ]
        line = lines[pick] if lines else ""
        grounds = "The third section works on this line and says more than was recorded."
        return {
            "q1": {
                "category": ["advanced", "repeated"][pick],
                "grounds": grounds,
                "quotes": [line],
            },
            "q2": {
                "category": "none",
                "grounds": "Nothing is stated as fact without a source.",
                "quotes": [],
            },
        }

    return respond


def test_it_locks_runs_offline_and_gives_a_verdict_per_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    chain = runs / "prereg.jsonl"
    assert main(["prereg", "lock", str(PLAN), "--stage", "before-runs", "--chain", str(chain)]) == 0
    assert (
        main(["pilot", "run", str(PLAN), "--out", str(runs), "--scripted", "--workers", "1"]) == 0
    )
    capsys.readouterr()
    with Ledger.open(runs / "C-optional-r0") as led:
        assert led.meta.config == "C+cur" and led.meta.open_layer == "optional"
        assert led.meta.options["arm"] == "C-optional" and led.last_session == 5
    with Ledger.open(runs / "C-unconditional-r1") as led:
        assert led.meta.contract == "evidence=verified,closure=unconditional"
    with Ledger.open(runs / "C-seed2-r0") as led:
        assert led.meta.seed.startswith("Why did cholera")
    assert main(["verdict", str(runs), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in rep["comparisons"]] == [
        "evidence",
        "closure",
        "open-layer",
        "no-reselect",
        "harder-q1",
        "second-seed",
    ]
    for c in rep["comparisons"]:
        assert c["verdict"]["outcome"] in ("met", "not_met", "undecided")
        assert c["verdict"]["lock"]["seq"] == 1
    pack = tmp_path / "packs" / "pilot-02"
    heads = [str(p) for p in sorted(runs.glob("C+cur-r*")) + sorted(runs.glob("B-armed+cur-r*"))]
    assert (
        main(
            ["pack", "build", *heads, "--scheme", "pilot-02", "--controls", "1", "--out", str(pack)]
        )
        == 0
    )
    assert (pack / "manifest.json").is_file()
    # two model raters, labelled as such, then agreement by rater group
    for name, pick in (("m1", 0), ("m2", -1)):
        with ScriptedServer(responder=_rater(pick)) as srv:
            rc = main(
                ["rate", str(pack), "--rater", f"model:{name}", "--model", name,
                 "--base-url", srv.base_url, "--api-key", "sk-test"]
            )  # fmt: skip
        assert rc == 0
    capsys.readouterr()
    assert main(["agreement", str(pack), "--json"]) == 0
    agreement = capsys.readouterr().out
    assert '"model"' in agreement and "model:m1" in agreement
    out = tmp_path / "report.md"
    assert main(["report", str(runs), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Comparison closure:" in text and "Comparison second-seed:" in text


async def test_the_analysis_screen_shows_each_comparison(pilot_runs: Path) -> None:
    from textual.widgets import Static

    from curiosity_tui.app.standalone import AnalysisApp

    app = AnalysisApp(pilot_runs)
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(400):
            await pilot.pause(0.05)
            if app.screen.query("#verdict-comparison-5"):
                break
        head = app.screen.query_one("#verdict-comparison-5", Static)
        assert "Comparison second-seed" in str(head.render())
