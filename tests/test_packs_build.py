"""Pack build from real ledgers: blinding, layout, key, controls, label stripping."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from curiosity_tui.offline.synthetic_ledgers import hand_made_materials, make_run_dir
from curiosity_tui.packs.build import (
    CONFIGS,
    build_pack,
    collect_ledgers,
    material_from_ledger,
    neutral_input,
    strip_labels,
)
from curiosity_tui.packs.pack import Pack, PackError, default_key_path, sha256_bytes
from curiosity_tui.packs.schemes import load_scheme

# Words that would tell a rater which arm produced an item, or that are field / queue labels.
FORBIDDEN = [
    *CONFIGS[2:],
    "B-armed",
    "self-ask",
    "curator",
    "protocol",
    "status:",
    "pulse",
    "parent:",
    "question:",
    "facts (last",
    "return condition",
    "required facts",
    "required actions",
    "closure test",
    "preserved",
    "[checked",
    "[unchecked]",
    "[waived]",
    "queue",
    "QUESTION LEDGER",
    "living questions",
    "<PRESERVE>",
    "PRESERVE",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("runs") / "runs", runs_per_config=3)


@pytest.fixture(scope="module")
def built(runs: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("p") / "pack1"
    mats = [material_from_ledger(p) for p in collect_ledgers([runs])]
    return build_pack(mats, load_scheme("pilot-01"), out, seed=42), mats


def _rater_visible_text(packdir: Path) -> str:
    """Everything a rater's tools could read: every file inside the pack directory."""
    return "\n".join(p.read_text() for p in sorted(packdir.rglob("*")) if p.is_file())


def test_pack_has_no_configuration_field_or_queue_label(built) -> None:  # type: ignore[no-untyped-def]
    res, _ = built
    pack = Pack.open(res.packdir)
    item_text = "\n".join(s for it in pack.items.values() for s in it.sections)
    for word in FORBIDDEN:
        assert word.lower() not in item_text.lower(), word
    assert not re.search(r"\bq\d+\b", item_text)  # no node ids
    assert not re.search(r"\(s\d+\)", item_text)  # no session tags
    assert not re.search(r"(?m)^\s*[?=] ", item_text)  # no return-condition lines
    everything = _rater_visible_text(res.packdir)
    for word in CONFIGS[2:]:
        assert word not in everything
    for run in {m.run for m in built[1]}:
        assert run not in everything  # run names only in the key
    assert '"seed"' not in everything


def test_layout_is_uniform_and_no_store_arms_have_empty_input(built) -> None:  # type: ignore[no-untyped-def]
    res, mats = built
    pack = Pack.open(res.packdir)
    key = json.loads(res.key_path.read_text())
    assert len(pack.order) == 18 and all(len(it.sections) == 3 for it in pack.items.values())
    for item_id, it in pack.items.items():
        config = key["items"][item_id]["config"]
        if config in ("A", "B"):
            assert it.sections[1] == ""
        else:
            assert it.sections[1].startswith("- ")
        assert it.sections[0] and it.sections[2]


def test_key_outside_pack_with_hash_in_manifest(built) -> None:  # type: ignore[no-untyped-def]
    res, _ = built
    assert res.key_path == default_key_path(res.packdir)
    assert not res.key_path.resolve().is_relative_to(res.packdir.resolve())
    assert sha256_bytes(res.key_path.read_bytes()) == res.manifest.key_sha256
    key = json.loads(res.key_path.read_text())
    assert set(key["items"]) == set(Pack.open(res.packdir).order)
    assert key["seed"] == 42
    assert res.key_path.stat().st_mode & 0o777 == 0o600
    assert (res.packdir / "items.jsonl").stat().st_mode & 0o777 == 0o644
    assert {e["config"] for e in key["items"].values()} == set(CONFIGS)


def test_items_are_shuffled_under_opaque_ids(runs: Path, tmp_path: Path) -> None:
    mats = [material_from_ledger(p) for p in collect_ledgers([runs])]
    a = build_pack(mats, load_scheme("pilot-01"), tmp_path / "a", seed=1)
    b = build_pack(mats, load_scheme("pilot-01"), tmp_path / "b", seed=2)
    ka = json.loads(a.key_path.read_text())["items"]
    kb = json.loads(b.key_path.read_text())["items"]
    runs_a = [ka[i]["run"] for i in Pack.open(a.packdir).order]
    runs_b = [kb[i]["run"] for i in Pack.open(b.packdir).order]
    assert runs_a != runs_b and sorted(runs_a) == sorted(runs_b)
    assert runs_a != [m.run for m in mats]
    assert all(re.fullmatch(r"i[0-9a-f]{8}", i) for i in ka)
    again = build_pack(mats, load_scheme("pilot-01"), tmp_path / "c", seed=1)
    assert Pack.open(again.packdir).items == Pack.open(a.packdir).items  # seed → same pack


def test_input_section_is_rendered_from_snapshot_after_session_4(runs: Path) -> None:
    from curiosity_tui.ledger import Ledger

    path = next(p for p in collect_ledgers([runs]) if p.name.startswith("Cplus"))
    mat = material_from_ledger(path)
    led = Ledger.open(path)
    try:
        nodes = led.snapshot(4)
        assert mat.later_input == neutral_input(nodes, 5)
        open_nodes = [(nid, n["text"]) for nid, n in nodes.items() if n["status"] == "open"]
        for nid, text in open_nodes:  # the id is rewritten to the item's label at build
            assert f"- ({nid}) {text}" in mat.later_input
        assert "[unchecked]" in led.rendering(5)  # the original rendering had the labels
    finally:
        led.close()


def test_pilot02_controls_flagged_only_in_key(runs: Path, tmp_path: Path) -> None:
    mats = [material_from_ledger(p) for p in collect_ledgers([runs])]
    res = build_pack(mats, load_scheme("pilot-02"), tmp_path / "p2", seed=5, controls_per_kind=2)
    assert res.n_controls == 6
    pack = Pack.open(res.packdir)
    key = json.loads(res.key_path.read_text())["items"]
    controls = {i: e for i, e in key.items() if e["kind"] == "control"}
    assert sorted(e["control"] for e in controls.values()) == sorted(
        ["repetition", "unsupported-detail", "resolution"] * 2
    )
    manifest = json.loads((res.packdir / "manifest.json").read_text())
    assert all(
        set(ref) == {"id", "cluster"} and ref["cluster"] == ref["id"] for ref in manifest["items"]
    )
    flat = lambda t: " ".join(t.replace("* ", " ").replace("- ", " ").split())  # noqa: E731
    for item_id, e in controls.items():
        it = pack.items[item_id]
        assert e["base_item"] in pack.items  # how it was made: in the key only
        others = {x for j, o in pack.items.items() if j != item_id for x in o.sections}
        assert not any(x in others for x in it.sections if x.strip())  # no text reused
        s3 = it.sections[2]
        new_lines = [ln for ln in s3.split("\n") if flat(ln) not in flat(it.sections[1])]
        if e["control"] == "repetition":
            assert new_lines == []  # every line restates section 2, nothing added
        elif e["control"] == "unsupported-detail":
            assert len(new_lines) == 2 and all(re.search(r"\d+%", ln) for ln in new_lines)
        else:
            assert len(new_lines) == 1
            quoted = re.search(r'"([^"]+)"', new_lines[0])
            assert quoted and flat(quoted.group(1)) in flat(it.sections[0])  # visible support


def test_refuses_existing_pack_and_key_inside_pack(tmp_path: Path) -> None:
    mats = hand_made_materials()
    out = tmp_path / "p"
    build_pack(mats, load_scheme("pilot-01"), out, seed=1)
    with pytest.raises(PackError, match="not empty"):
        build_pack(mats, load_scheme("pilot-01"), out, seed=1)
    with pytest.raises(PackError, match="inside the pack"):
        build_pack(mats, load_scheme("pilot-01"), tmp_path / "q", key_out=tmp_path / "q" / "k.json")
    with pytest.raises(PackError, match="already exists"):
        build_pack(mats, load_scheme("pilot-01"), tmp_path / "r", key_out=default_key_path(out))
    with pytest.raises(PackError, match="no runs"):
        build_pack([], load_scheme("pilot-01"), tmp_path / "s")


def test_custom_key_path(tmp_path: Path) -> None:
    res = build_pack(
        hand_made_materials(),
        load_scheme("pilot-01"),
        tmp_path / "p",
        key_out=tmp_path / "vault" / "k.json",
    )
    assert res.key_path.exists() and res.manifest.key_name == "k.json"


def test_collect_ledgers_errors(tmp_path: Path, runs: Path) -> None:
    with pytest.raises(PackError, match="neither a ledger"):
        collect_ledgers([tmp_path])
    one = next(iter(collect_ledgers([runs])))
    with pytest.raises(PackError, match="twice"):
        collect_ledgers([runs, one])


def test_incomplete_run_is_refused(tmp_path: Path) -> None:
    """A pick past the run is refused by name; the default pick (first, last) takes the
    run's own last session (decision 440)."""
    from curiosity_tui.offline.synthetic_ledgers import make_run
    from curiosity_tui.packs.session_pick import parse_session_pick

    p = make_run(tmp_path / "short", "C-cur", sessions=3)
    with pytest.raises(PackError, match="session 5 is past the run's 3 session"):
        material_from_ledger(p, sessions=parse_session_pick("1,5"))
    assert material_from_ledger(p).sessions == (1, 3)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Living questions:\n- Why now?", "- Why now?"),
        ("**Return condition:** a count of editions", "a count of editions"),
        ("Status: open", "open"),
        ("<PRESERVE>\nThe answer is withheld.", "The answer is withheld."),
        ("- r2: A count of editions [checked s3: satisfied]", "- A count of editions"),
        ("preserved candidates: 2\nText", "Text"),
        ("[1] q3 | status: open | pulse: 2 | parent: q1\nText", "Text"),
        ("Plain prose: with a colon stays.", "Plain prose: with a colon stays."),
        ("Ordinary text\n\n\n\nmore", "Ordinary text\n\nmore"),
        ("- a question\n* a fact\n? a required fact\n= closure test", "- a question\n* a fact"),
    ],
)
def test_strip_labels(raw: str, expected: str) -> None:
    assert strip_labels(raw) == expected
