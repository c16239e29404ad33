"""Completeness, the append-only pack log, forced and normal unblinding, tables, leak check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.offline.synthetic_ledgers import hand_made_materials, make_run_dir
from curiosity_tui.packs.build import build_pack, collect_ledgers, material_from_ledger
from curiosity_tui.packs.leakcheck import leakcheck
from curiosity_tui.packs.pack import Pack, PackError, default_key_path, sha256_bytes
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import PackLog, UnblindRefused, completeness, unblind


def _rate_all(pack: Path, rater: str, q1: str = "built", upto: int | None = None) -> None:
    s = RatingSession(pack, rater)
    for item in s.order[:upto]:
        s.save(
            item,
            {"q1": {"category": q1, "grounds": "g"}, "q2": {"category": "some", "grounds": "g"}},
        )


def _held() -> list:  # type: ignore[type-arg]
    """Runs kept out of the pack, worded apart from the pack's (whose items are all alike),
    as the controls' bases."""
    import dataclasses

    swap = {"pamphlets": "broadsheets", "reprints": "woodcuts", "Presses": "Printers"}
    out = []
    for m in hand_made_materials(configs=("B-armed+cur", "C+cur")):
        texts = [m.first_output, m.later_input, m.later_output]
        for a, b in swap.items():
            texts = [t.replace(a, b) for t in texts]
        out.append(dataclasses.replace(m, run=m.run + "-held", first_output=texts[0],
                                       later_input=texts[1], later_output=texts[2]))  # fmt: skip
    return out


def _line(s: RatingSession, item: str) -> str:
    """The first line of the item's section 1, without its marker: a verbatim quote."""
    return s.pack.items[item].sections[0].split("\n")[0][2:]


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), out, seed=3)
    return out


def test_refuses_until_complete_and_logs_refusal(pack: Path) -> None:
    _rate_all(pack, "ann")
    _rate_all(pack, "bob", upto=5)
    comp = completeness(Pack.open(pack))
    assert not comp.complete and comp.rated == {"ann": 12, "bob": 5}
    with pytest.raises(UnblindRefused, match="incomplete"):
        unblind(pack, by="human:cy")
    kinds = [e.kind for e in PackLog(pack).entries()]
    assert kinds == ["pack_built", "unblind_refused"]
    _rate_all(pack, "bob")
    rep = unblind(pack, by="human:cy")
    assert not rep.forced and rep.completeness.complete
    log = PackLog(pack).entries()
    assert log[-1].kind == "key_opened" and log[-1].data["forced"] is False
    # the log pins the ratings as they were when the key was opened
    for rater in ("ann", "bob"):
        path = pack / "ratings" / f"{rater}.jsonl"
        assert log[-1].data["files"][rater]["sha256"] == sha256_bytes(path.read_bytes())


def test_forced_unblind_is_recorded(pack: Path) -> None:
    _rate_all(pack, "ann", upto=2)
    rep = unblind(pack, by="human:cy", force=True)
    assert rep.forced
    entry = PackLog(pack).entries()[-1]
    assert entry.kind == "key_opened" and entry.actor == "human:cy"
    assert entry.data["forced"] is True and entry.data["missing"]["ann"]
    assert entry.ts and entry.seq == rep.log_seq


def test_tables_per_configuration(pack: Path) -> None:
    _rate_all(pack, "ann", q1="built")
    s = RatingSession(pack, "bob")
    key = json.loads(default_key_path(pack).read_text())["items"]
    for item in s.order:
        q1 = "fresh" if key[item]["config"] == "A" else "built"
        s.save(
            item,
            {"q1": {"category": q1, "grounds": "g"}, "q2": {"category": "many", "grounds": "g"}},
        )
    rep = unblind(pack, by="human:cy")
    q1 = next(t for t in rep.tables if t.question == "q1")
    assert q1.by_rating["A"] == {"built": 2, "fresh": 2}
    assert q1.by_run["A"] == {"built": 0, "fresh": 0, "split": 2}
    assert q1.by_run["C-cur"] == {"built": 2, "fresh": 0, "split": 0}
    assert q1.runs["B"] == 2
    q2 = next(t for t in rep.tables if t.question == "q2")
    assert q2.by_run["B"]["split"] == 2  # ann said some, bob many


def test_expected_raters_in_manifest(tmp_path: Path) -> None:
    out = tmp_path / "p"
    build_pack(
        hand_made_materials(), load_scheme("pilot-01"), out, expected_raters=["ann", "bob", "cy"]
    )
    _rate_all(out, "ann")
    _rate_all(out, "bob")
    comp = completeness(Pack.open(out))
    assert not comp.complete and "cy" in comp.reason
    _rate_all(out, "cy")
    assert completeness(Pack.open(out)).complete


def test_log_tampering_is_detected(pack: Path) -> None:
    _rate_all(pack, "ann")
    with pytest.raises(UnblindRefused):
        unblind(pack, by="human:cy")
    log = pack / "log.jsonl"
    log.write_text(log.read_text().replace("unblind_refused", "nothing_here"))
    with pytest.raises(PackError, match="chain broken"):
        PackLog(pack).entries()


def test_wrong_key_is_refused_and_logged(pack: Path, tmp_path: Path) -> None:
    _rate_all(pack, "ann")
    _rate_all(pack, "bob")
    fake = tmp_path / "fake.json"
    fake.write_text("{}")
    with pytest.raises(PackError, match="does not match"):
        unblind(pack, by="human:cy", key_path=fake)
    assert [e.kind for e in PackLog(pack).entries()][-2:] == ["key_opened", "key_rejected"]


def test_controls_reported_with_expectations(tmp_path: Path) -> None:
    out = tmp_path / "p2"
    build_pack(
        hand_made_materials(), load_scheme("pilot-02"), out, seed=4, control_materials=_held()
    )
    for rater in ("ann", "bob"):
        s = RatingSession(out, rater)
        for item in s.order:
            s.save(
                item,
                {
                    "q1": {"category": "repeated", "grounds": "g", "quotes": [_line(s, item)]},
                    "q2": {"category": "none", "grounds": "g"},
                },
            )
    rep = unblind(out, by="human:cy")
    kinds = sorted(c.kind for c in rep.controls)
    assert kinds == ["repetition", "resolution", "unsupported-detail"]
    rept = next(c for c in rep.controls if c.kind == "repetition")
    assert rept.expected == {"q1": "repeated", "q2": "none"}
    assert rept.ratings["ann"]["q1"] == "repeated"
    assert all(t.runs for t in rep.tables)  # controls are not counted as runs
    assert sum(next(iter(rep.tables)).runs.values()) == 6


def test_leakcheck_finds_the_family_leak_on_six_configurations(tmp_path: Path) -> None:
    runs = make_run_dir(tmp_path / "runs", runs_per_config=3)
    mats = [material_from_ledger(p) for p in collect_ledgers([runs])]
    res = build_pack(mats, load_scheme("pilot-01"), tmp_path / "pack", seed=9)
    rep = leakcheck(res.packdir, permutations=39)
    fam = next(t for t in rep.tasks if t.task == "families")
    assert fam.classes == {"A (single answer)": 3, "B (bare self-ask)": 3, "store-bearing": 12}
    assert fam.accuracy is not None and fam.chance is not None
    assert fam.accuracy > fam.chance and fam.verdict.startswith("LEAK")
    fmt = {t.task for t in rep.tasks if t.features == "format"}
    assert fmt == {"families", "C-vs-B-armed", "curator", "configurations"}


def test_leakcheck_no_signal_when_formats_match(tmp_path: Path) -> None:
    # Two store-bearing arms with identical text: nothing to find.
    mats = hand_made_materials(n_per_config=4, configs=("B-armed-cur", "C-cur"))
    res = build_pack(mats, load_scheme("pilot-01"), tmp_path / "pack", seed=1)
    rep = leakcheck(res.packdir, permutations=39)
    task = next(t for t in rep.tasks if t.task == "C-vs-B-armed")
    assert task.verdict.startswith("no evidence")
    fam = next(t for t in rep.tasks if t.task == "families")
    assert fam.verdict.startswith("not testable")


def test_key_found_by_name_beside_pack(tmp_path: Path) -> None:
    out = tmp_path / "p"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, key_out=tmp_path / "vault.json")
    _rate_all(out, "ann")
    _rate_all(out, "bob")
    assert unblind(out, by="human:cy").completeness.complete


def test_agreement_real_only_after_unblind(tmp_path: Path) -> None:
    from curiosity_tui.packs.pack_agreement import pack_agreement

    out = tmp_path / "p2"
    build_pack(
        hand_made_materials(), load_scheme("pilot-02"), out, seed=4, control_materials=_held()
    )
    for rater in ("ann", "bob"):
        s = RatingSession(out, rater)
        for item in s.order:
            s.save(
                item,
                {
                    "q1": {"category": "repeated", "grounds": "g", "quotes": [_line(s, item)]},
                    "q2": {"category": "none", "grounds": "g"},
                },
            )
    assert pack_agreement(out, n_boot=50).n_items == 9
    with pytest.raises(PackError, match="run `unblind` first"):
        pack_agreement(out, n_boot=50, real_only=True)
    unblind(out, by="human:cy")
    rep = pack_agreement(out, n_boot=50, real_only=True)
    assert rep.n_items == 6 and "controls left out" in rep.scope
