"""Every CSV export keeps each column's documented type, also where the column is empty
(issue 28 item 8; decision 562): read back with the csv module, every non-empty cell parses as
the type docs/csv.md gives its column and no cell spells a missing value (``None``, ``nan``);
read with pandas (the test extra) under those types, every column has its type — a column with
no values at all included (it read as float64 without them)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from curiosity_tui.analysis.rundata import write_run_file
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials, make_run
from curiosity_tui.offline.synthetic_rundata import structural_run
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme

DOC = Path(__file__).resolve().parents[1] / "docs" / "csv.md"
PANDAS = {"integer": "Int64", "number": "Float64", "boolean": "boolean", "text": "string"}


def documented_types(section: str) -> dict[str, str]:
    """column → type from the ``| column | type | meaning |`` table of one section."""
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, section
    return dict(re.findall(r"^\| ([a-z_]+) \| (integer|number|boolean|text) \|", m.group(1), re.M))


def _conforms(kind: str, cell: str) -> bool:
    if cell == "" or kind == "text":
        return True
    if kind == "boolean":
        return cell in ("true", "false")
    try:
        (int if kind == "integer" else float)(cell)
    except ValueError:
        return False
    return cell.lower() not in ("nan", "inf", "-inf")


def check(path: Path, section: str) -> list[dict[str, str]]:
    """The file read back both ways against the documented types; its rows."""
    types = documented_types(section)
    text = path.read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    assert reader.fieldnames == list(types), section  # every column has a documented type
    rows = list(reader)
    for n, row in enumerate(rows, start=2):
        for col, cell in row.items():
            assert cell not in ("None", "nan", "NaN", "null"), f"{section} line {n} {col}"
            assert _conforms(types[col], cell), f"{section} line {n}: {col}={cell!r}"
    try:
        import pandas as pd
    except ImportError:  # the test extra brings it; the csv module's reading still ran
        return rows
    frame = pd.read_csv(
        path,
        dtype={c: PANDAS[t] for c, t in types.items()},
        keep_default_na=False,
        na_values=[""],
        true_values=["true"],
        false_values=["false"],
    )
    assert {c: str(frame[c].dtype) for c in types} == {
        c: str(pd.api.types.pandas_dtype(PANDAS[t])) for c, t in types.items()
    }, section
    return rows


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("csv-types")
    runs = root / "runs"
    runs.mkdir()
    for cfg, depths in {"C+cur": (3, 4), "B-armed+cur": (2, 2)}.items():
        for i, depth in enumerate(depths):
            r = structural_run(cfg, f"{cfg}-r{i}", depth=depth, worked=depth + i)
            write_run_file(r, runs / f"{cfg}-r{i}.run.json")
    for cfg in ("C+cur", "C-cur"):
        make_run(root / "ledgers" / cfg, cfg, seed=3, sessions=4)
    pack = root / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), pack, seed=3,
               expected_raters=["ann", "bob"])  # fmt: skip
    for rater in ("ann", "bob"):
        s = RatingSession(pack, rater)
        for n, item in enumerate(s.order[: 4 if rater == "bob" else None]):  # bob: 2 unrated
            s.save(item, {"q1": {"category": "built" if n % 2 else "fresh", "grounds": "g"},
                          "q2": {"category": "none", "grounds": "-1 is text"}})  # fmt: skip
    return root


def _cli(*argv: str) -> None:
    assert main(list(argv)) == 0, argv


def test_metrics_exports_keep_their_types(made: Path) -> None:
    out = made / "out"
    out.mkdir(exist_ok=True)
    _cli("metrics", str(made / "runs"), "--csv", str(out / "m.csv"),
         "--csv-differences", str(out / "d.csv"), "--survival-csv", str(out / "s-empty.csv"))  # fmt: skip
    assert check(out / "m.csv", "metrics --csv")
    assert any(r["ci_low"] == "" for r in check(out / "d.csv", "metrics --csv-differences"))
    assert check(out / "s-empty.csv", "metrics --survival-csv") == []  # header only: still typed
    _cli("metrics", str(made / "ledgers"), "--survival-csv", str(out / "s.csv"))
    rows = check(out / "s.csv", "metrics --survival-csv")
    assert rows and any(r["returned"] == "" for r in rows)


def test_pack_exports_keep_their_types_with_empty_columns(made: Path, tmp_path: Path) -> None:
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(made / "pack", pack)
    shutil.copy(made / "pack.key.json", tmp_path / "pack.key.json")
    _cli("agreement", str(pack), "--boot", "20", "--csv", str(tmp_path / "a.csv"))
    assert check(tmp_path / "a.csv", "agreement --csv")
    _cli("ratings", "export", str(pack), "--csv", str(tmp_path / "r.csv"))
    unrated = [r for r in check(tmp_path / "r.csv", "ratings export --csv") if r["revision"] == ""]
    assert unrated and all(r["n_quotes"] == "" and r["seconds_on_item"] == "" for r in unrated)
    # no adjudication yet: five of its columns are empty in every row, and keep their types
    _cli("adjudication", "list", str(pack), "--csv", str(tmp_path / "j.csv"))
    # (bob left two items unrated: the pack is incomplete and lists no disagreement: header only)
    assert check(tmp_path / "j.csv", "adjudication list --csv") == []
    _cli("unblind", str(pack), "--by", "cy", "--force", "--csv", str(tmp_path / "u.csv"))
    assert any(r["category"] == "" for r in check(tmp_path / "u.csv", "unblind --csv"))


def test_an_adjudication_list_with_nothing_adjudicated_keeps_its_types(
    made: Path, tmp_path: Path
) -> None:
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(made / "pack", pack)
    s = RatingSession(pack, "bob")
    for item in s.order[4:]:
        s.save(item, {"q1": {"category": "built", "grounds": "g"},
                      "q2": {"category": "none", "grounds": "g"}})  # fmt: skip
    _cli("adjudication", "list", str(pack), "--csv", str(tmp_path / "j.csv"))
    rows = check(tmp_path / "j.csv", "adjudication list --csv")
    assert rows and all(r["seq"] == "" and r["adjudicated"] == "" for r in rows)
    assert {r["stale"] for r in rows} == {"false"}
