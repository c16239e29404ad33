"""CSV exports (docs/csv.md): read back with the csv module; headers equal the documented
columns; the same rows as the printed tables; blind exports carry nothing from the key."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from curiosity_tui.analysis.aggregate import fmt
from curiosity_tui.analysis.metrics_csv import DIFFERENCE_COLUMNS, METRIC_COLUMNS
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import load_runs, write_run_file
from curiosity_tui.analysis.tables import build, format_tables
from curiosity_tui.cli import main
from curiosity_tui.csvfile import cell_text, csv_text
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.offline.synthetic_rundata import structural_run
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import default_key_path
from curiosity_tui.packs.pack_agreement import pack_agreement
from curiosity_tui.packs.pack_csv import AGREEMENT_COLUMNS, RATINGS_COLUMNS, UNBLIND_COLUMNS
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import all_ratings, unblind

DOC = Path(__file__).resolve().parents[1] / "docs" / "csv.md"

#: grounds a rater might type: comma, quotes, a newline, a formula, non-ASCII
NASTY = 'says "most", then, =HYPERLINK("x")\nsecond line — ünïcode'


def documented(section: str) -> list[str]:
    """The column names of one ``## section`` of docs/csv.md, in order."""
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/csv.md has no section {section!r}"
    rows = re.findall(r"^\| ([a-z_]+) \|", m.group(1), re.M)
    return [r for r in rows if r != "column"]


def read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)))


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    d = tmp_path / "runs"
    d.mkdir()
    figures = {"C+cur": (3, 4, 2), "B-armed+cur": (2, 2, 3), "C-cur": (1, 2, 2)}
    for cfg, depths in figures.items():
        for i, depth in enumerate(depths):
            r = structural_run(cfg, f"{cfg}-r{i}", depth=depth, worked=depth + i)
            write_run_file(r, d / f"{cfg}-r{i}.run.json")
    return d


@pytest.fixture
def rated_pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), out, seed=3)
    for rater in ("ann", "bob"):
        s = RatingSession(out, rater)
        for n, item in enumerate(s.order):
            quote = s.pack.items[item].sections[0].split("\n")[0][2:]
            s.save(
                item,
                {
                    "q1": {"category": "built" if n % 2 else "fresh", "grounds": NASTY},
                    "q2": {"category": "some", "grounds": "-1 is not a number", "quotes": [quote]},
                },
            )
    return out


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


# ------------------------------------------------------------------------------- cells


def test_cells_unrounded_missing_empty_and_formulas_defused() -> None:
    assert cell_text(2 / 3) == "0.6666666666666666" and float(cell_text(0.1)) == 0.1
    assert cell_text(None) == "" and cell_text(float("nan")) == ""
    assert cell_text(-0.25) == "-0.25" and cell_text(-3) == "-3"  # numbers never prefixed
    assert cell_text(True) == "true"
    for bad in ("=1+1", "+1", "-x", "@SUM(A1)", "\tx"):
        assert cell_text(bad) == "'" + bad
    assert cell_text("a=b") == "a=b"
    text = csv_text(["a", "b"], [[NASTY, 1.5]])
    assert read(text) == [{"a": NASTY, "b": "1.5"}]  # newline, quotes, comma survive
    with pytest.raises(ValueError, match="2 cells"):
        csv_text(["a"], [[1, 2]])


# ----------------------------------------------------------------------------- metrics


def test_metrics_csv_is_the_tables_rows(runs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli(["metrics", str(runs_dir), "--csv"], capsys)
    assert header(out) == list(METRIC_COLUMNS) == documented("metrics --csv")
    rows = read(out)
    reg = default_registry()
    doc = build(load_runs([runs_dir]), reg)
    assert len(rows) == len(reg.names()) * 9
    depth = {r["run"]: float(r["value"]) for r in rows if r["metric"] == "max_depth"}
    assert depth == {"C+cur-r0": 3.0, "C+cur-r1": 4.0, "C+cur-r2": 2.0, "B-armed+cur-r0": 2.0,
                     "B-armed+cur-r1": 2.0, "B-armed+cur-r2": 3.0, "C-cur-r0": 1.0,
                     "C-cur-r1": 2.0, "C-cur-r2": 2.0}  # fmt: skip
    # every mean the printed table shows is the mean of the CSV's values, and every per-run
    # line of the printed table lists exactly the CSV's values
    printed = format_tables(load_runs([runs_dir]), reg)
    for metric, by_config in doc.metrics.items():
        for config, agg in by_config.items():
            vals = [r["value"] for r in rows if (r["metric"], r["config"]) == (metric, config)]
            got = [float(v) for v in vals if v != ""]
            assert got == agg.values()  # exact: repr round-trips
            if got:
                assert agg.value is not None and sum(got) / len(got) == pytest.approx(agg.value)
        lines = printed.splitlines()
        at = next((i for i, ln in enumerate(lines) if f"  {metric} per run — " in ln), None)
        line = None
        if at is not None:  # a long per-run line wraps (issue 28): its continuation joined
            more = []
            for ln in lines[at + 1 :]:
                if not ln.startswith("      "):
                    break
                more.append(ln.strip())
            line = " ".join([lines[at], *more])
        if line is not None:
            for config in doc.configs:
                vals = [r["value"] for r in rows if (r["metric"], r["config"]) == (metric, config)]
                text = ", ".join(fmt(float(v)) if v else fmt(None) for v in vals)
                assert f"{config}: {text}" in line


def test_metrics_differences_csv(runs_dir: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    dest = tmp_path / "d.csv"
    out = _cli(["metrics", str(runs_dir), "--csv-differences", str(dest)], capsys)
    assert out.startswith(f"wrote {dest}: ")
    text = dest.read_text(encoding="utf-8")
    assert header(text) == list(DIFFERENCE_COLUMNS) == documented("metrics --csv-differences")
    rows = {(r["metric"], r["a"], r["b"]): r for r in read(text)}
    d = rows[("max_depth", "C+cur", "B-armed+cur")]
    assert float(d["diff"]) == pytest.approx(3.0 - 7 / 3)
    assert float(d["ci_low"]) <= float(d["diff"]) <= float(d["ci_high"])
    assert d["n_a"] == "3" and d["level"] == "0.95" and "understates" in d["note"]
    assert ("max_depth", "C-cur", "B-armed-cur") not in rows  # B-armed-cur is absent


def test_metrics_csv_bad_destination_is_one_line(runs_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(["metrics", str(runs_dir), "--csv", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and len(err.strip().splitlines()) == 1
    run_file = runs_dir / "C+cur-r0.run.json"
    before = run_file.read_bytes()
    assert main(["metrics", "--csv", str(run_file), str(runs_dir)]) == 2  # a mistyped --csv
    assert "not overwritten" in capsys.readouterr().err and run_file.read_bytes() == before
    assert main(["metrics", str(runs_dir), "--csv", "--csv-differences"]) == 2
    assert "both go to stdout" in capsys.readouterr().err


# ------------------------------------------------------------------------------- packs


def test_agreement_csv(rated_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli(["agreement", str(rated_pack), "--boot", "50", "--csv"], capsys)
    assert header(out) == list(AGREEMENT_COLUMNS) == documented("agreement --csv")
    rows = read(out)
    rep = pack_agreement(rated_pack, n_boot=50)
    by = {(r["question"], r["statistic"], r["rater_a"], r["rater_b"]): r for r in rows}
    # q1 (nominal): three all-rater rows, AC1 and Brennan–Prediger, the pair's two and its PABAK
    # with the two indices; q2 (ordinal) adds five all-rater and two pair rows (decision 425)
    assert len(rows) == (3 + 2 + 2 + 3) + (3 + 7 + 2 + 5)
    assert by[("q2", "gwet_ac2_quadratic", "", "")]["level"] == "ordinal"
    q1 = next(q for q in rep.questions if q.question == "q1")
    fleiss = by[("q1", "fleiss_kappa", "", "")]
    assert float(fleiss["value"]) == q1.fleiss_kappa.value
    assert q1.fleiss_kappa.interval is not None
    assert float(fleiss["ci_low"]) == q1.fleiss_kappa.interval.low
    assert fleiss["n_boot"] == "50" and fleiss["n_items"] == str(q1.fleiss_kappa.n_items)
    # the printed text shows the CSV's figures, rounded
    printed = _cli(["agreement", str(rated_pack), "--boot", "50"], capsys)
    lo, hi = float(fleiss["ci_low"]), float(fleiss["ci_high"])
    shown = f"Fleiss' kappa       {float(fleiss['value']):.3f} [{lo:.3f}, {hi:.3f}]"
    assert shown in printed.split("q2  (")[0]
    q2 = by[("q2", "cohen_kappa", "ann", "bob")]
    assert q2["value"] == "" and q2["undefined_reason"]  # all "some": undefined, said why
    assert float(by[("q2", "raw_agreement", "ann", "bob")]["value"]) == 1.0


def test_unblind_csv_counts_equal_the_tables(rated_pack: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    dest = tmp_path / "u.csv"
    _cli(["unblind", str(rated_pack), "--by", "cy", "--csv", str(dest)], capsys)
    text = dest.read_text(encoding="utf-8")
    assert header(text) == list(UNBLIND_COLUMNS) == documented("unblind --csv")
    rows = read(text)
    rep = unblind(rated_pack, by="human:cy")
    assert len(rows) == len(rep.items) * 2 * 2
    for t in rep.tables:
        for config, counts in t.by_rating.items():
            for cat, n in counts.items():
                got = [r for r in rows if (r["question"], r["config"], r["category"]) ==
                       (t.question, config, cat) and r["kind"] == "run"]  # fmt: skip
                assert len(got) == n
    key = json.loads(default_key_path(rated_pack).read_text())
    for r in rows:
        assert key["items"][r["item"]]["run"] == r["run"]


def test_ratings_export_is_blind_and_literal(rated_pack: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = _cli(["ratings", "export", str(rated_pack), "--csv"], capsys)
    assert header(out) == list(RATINGS_COLUMNS) == documented("ratings export --csv")
    rows = read(out)
    s = RatingSession(rated_pack, "ann")
    assert len(rows) == len(s.order) * 2 * 2
    stored = {rec.answers["q1"].grounds for rec in all_ratings(s.pack)["ann"]}
    assert len(stored) == 1 and '"most", then, =HYPERLINK' in next(iter(stored))
    q1 = [r for r in rows if r["question"] == "q1"]
    assert {r["grounds"] for r in q1} == stored  # rater text literally: commas, quotes
    q2 = [r for r in rows if r["question"] == "q2"]
    assert {r["grounds"] for r in q2} == {"'-1 is not a number"}  # formula start defused
    for r in q2:
        quotes = json.loads(r["quotes"])
        assert r["n_quotes"] == "1" and quotes[0] in s.pack.items[r["item"]].sections[0]
    # nothing from the key: no run id, ledger or configuration appears anywhere
    key = json.loads(default_key_path(rated_pack).read_text())
    secrets = {e["run"] for e in key["items"].values()} | {
        e["config"] for e in key["items"].values()
    }
    assert all(secret not in out for secret in secrets)
    # the same with the key moved away: the export never needed it
    default_key_path(rated_pack).rename(tmp_path / "elsewhere.json")
    assert _cli(["ratings", "export", str(rated_pack)], capsys) == out


def test_ratings_export_lists_unrated_as_empty(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), out, seed=1,
               expected_raters=["ann", "bob"])  # fmt: skip
    s = RatingSession(out, "ann")
    s.save(s.order[0], {"q1": {"category": "built", "grounds": "g"},
                        "q2": {"category": "none", "grounds": "g"}})  # fmt: skip
    rows = read(_cli(["ratings", "export", str(out)], capsys))
    bob = [r for r in rows if r["rater"] == "bob"]
    assert bob and all(r["category"] == r["revision"] == r["quotes"] == "" for r in bob)
    rated = [r for r in rows if r["rater"] == "ann" and r["item"] == s.order[0]]
    assert [r["category"] for r in rated] == ["built", "none"] and rated[0]["revision"] == "0"
    assert main(["ratings", "export", str(tmp_path / "nope")]) == 2
    assert "no such pack directory" in capsys.readouterr().err


def test_adjudication_csv(rated_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 28: adjudicated categories were in no CSV."""
    from curiosity_tui.packs.adjudication import append_adjudication
    from curiosity_tui.packs.disagreement import adjudication_state
    from curiosity_tui.packs.pack import Pack
    from curiosity_tui.packs.pack_csv import ADJUDICATION_COLUMNS

    # make ann and bob disagree on one item's q1, then adjudicate it
    s = RatingSession(rated_pack, "bob")
    first = s.order[0]
    s.save(first, {"q1": {"category": "built", "grounds": "on reflection, built"},
                   "q2": {"category": "none", "grounds": "no figures"}})  # fmt: skip
    state = adjudication_state(rated_pack)
    d = next(x for x in state.disagreements if x.item == first and x.question == "q1")
    append_adjudication(Pack.open(rated_pack), item=first, question="q1", category="fresh",
                        grounds="the item starts over", adjudicator="cat", raw=d.raw)  # fmt: skip
    out = _cli(["adjudication", "list", str(rated_pack), "--csv"], capsys)
    assert header(out) == list(ADJUDICATION_COLUMNS) == documented("adjudication list --csv")
    rows = read(out)
    assert len(rows) == len(adjudication_state(rated_pack).disagreements) >= 2
    done = next(r for r in rows if (r["item"], r["question"]) == (first, "q1"))
    assert done["adjudicated"] == "fresh" and done["adjudicator"] == "human:cat"
    assert json.loads(done["raw"]) == {"ann": "fresh", "bob": "built"}
    assert done["seq"] == "1" and done["stale"] == "false"
    assert done["grounds"] == "the item starts over"
    open_ = [r for r in rows if r is not done]
    assert all(r["adjudicated"] == "" and r["stale"] == "false" for r in open_)
