"""The pack commands end to end through the CLI entry point, and the shipped schemes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.errors import InputError
from curiosity_tui.offline.synthetic_ledgers import make_run_dir
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import BUILTIN_SCHEMES, Scheme, load_scheme


def _rate(pack: Path, rater: str, flip: int = -1) -> None:
    s = RatingSession(pack, rater)
    for k, item in enumerate(s.order):
        s.save(
            item,
            {
                "q1": {"category": "fresh" if k == flip else "built", "grounds": "g"},
                "q2": {"category": ["none", "some", "many"][k % 3], "grounds": "g"},
            },
        )


def test_cli_build_agreement_unblind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = make_run_dir(tmp_path / "runs", runs_per_config=1)
    pack = tmp_path / "pack"
    assert (
        main(
            [
                "pack",
                "build",
                str(runs),
                "--scheme",
                "pilot-01",
                "--out",
                str(pack),
                "--seed",
                "5",
                "--order",  # the ratings below are given by position: one order for both
                "fixed",
                "--json",
            ]
        )
        == 0
    )
    built = json.loads(capsys.readouterr().out)
    assert built["items"] == 6 and built["runs"] == 6 and Path(built["key"]).exists()

    assert main(["unblind", str(pack), "--by", "cy"]) == 4  # no ratings yet
    assert "incomplete" in capsys.readouterr().err

    _rate(pack, "ann")
    _rate(pack, "bob", flip=0)
    assert main(["agreement", str(pack), "--boot", "300", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    q1, q2 = rep["questions"]
    assert q2["fleiss_kappa"]["value"] == pytest.approx(1.0)
    assert q2["fleiss_kappa"]["interval"]["n_boot"] == 300
    assert q1["pairs"][0]["confusion"] == [[5, 1], [0, 0]]  # rows ann, columns bob
    assert q1["raw_agreement"]["value"] == pytest.approx(5 / 6)
    assert main(["agreement", str(pack), "--boot", "100"]) == 0
    text = capsys.readouterr().out
    assert "Fleiss' kappa" in text and "ann × bob" in text

    assert main(["unblind", str(pack), "--by", "cy"]) == 0
    out = capsys.readouterr().out
    assert "unblinded by human:cy" in out and "C+cur" in out
    log = [json.loads(x) for x in (pack / "log.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in log] == ["pack_built", "unblind_refused", "key_opened"]


def test_cli_forced_unblind_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = make_run_dir(tmp_path / "runs", runs_per_config=1, configs=("B-armed-cur", "C-cur"))
    pack = tmp_path / "pack"
    assert main(["pack", "build", str(runs), "--out", str(pack), "--raters", "ann,bob"]) == 0
    capsys.readouterr()
    _rate(pack, "ann")
    assert main(["unblind", str(pack), "--force", "--by", "cy", "--json"]) == 0
    captured = capsys.readouterr()
    rep = json.loads(captured.out)
    assert rep["forced"] is True and "--force" in captured.err


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rate", str(tmp_path / "nope"), "--rater", "ann"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("curiosity-tui: error:") and err.count("\n") == 1
    assert main(["pack", "build", str(tmp_path), "--out", str(tmp_path / "p")]) == 2
    assert "neither a ledger" in capsys.readouterr().err
    runs = make_run_dir(tmp_path / "runs", runs_per_config=1, configs=("A",))
    assert main(["pack", "build", str(runs), "--out", str(tmp_path / "p"), "--scheme", "nope"]) == 2
    assert "shipped scheme" in capsys.readouterr().err


def test_cli_leakcheck_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = make_run_dir(tmp_path / "runs", runs_per_config=2)
    pack = tmp_path / "pack"
    assert main(["pack", "build", str(runs), "--out", str(pack), "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["pack", "leakcheck", str(pack), "--permutations", "20", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [t["task"] for t in rep["tasks"]][:2] == ["families", "C-vs-B-armed"]


@pytest.mark.parametrize("name", BUILTIN_SCHEMES)
def test_shipped_schemes(name: str) -> None:
    s = load_scheme(name)
    assert s.id == name and len(s.sections) == 3
    if name == "support-audit":  # one nominal question on (requirement, passage) pairs
        [q] = s.questions
        assert q.category_ids == ["supports", "does-not", "partly"] and q.level == "nominal"
        assert q.grounds_required and not s.controls
        return
    q2 = s.question("q2")
    assert q2.category_ids == ["none", "some", "many"] and q2.max_quotes == 3
    assert all(q.grounds_required for q in s.questions)
    keys = [c.key for q in s.questions for c in q.categories]
    assert len(keys) == len(set(keys))


def test_pilot02_has_harder_q1_and_controls() -> None:
    s = load_scheme("pilot-02")
    assert "advance" in s.question("q1").prompt
    assert {c.kind for c in s.controls} == {"repetition", "unsupported-detail", "resolution"}
    assert s.question("q1").min_quotes == 1


def test_scheme_validation(tmp_path: Path) -> None:
    data = load_scheme("pilot-01").model_dump()
    data["questions"][1]["categories"][0]["key"] = "b"  # clashes with q1/built
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match="keys must be unique"):
        load_scheme(bad)
    data = load_scheme("pilot-01").model_dump()
    data["questions"][0]["categories"][0]["key"] = "BB"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match="one lower-case letter"):
        load_scheme(bad)
    good = tmp_path / "good.json"
    good.write_text(load_scheme("pilot-01").model_dump_json())
    assert isinstance(load_scheme(good), Scheme)
