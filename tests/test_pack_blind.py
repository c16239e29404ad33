"""A pack that is blind by construction (issue 12, item 3).

- a pilot-02 pack with controls: no control shares a section's text with another item;
- every arm's sections in one layout; node ids rewritten to the item's opaque labels;
- format alone does not leak: C and B-armed runs whose replies come from one shared pool
  of texts are not separated by the lexical check; a pack with one arm tagged by a word is;
- `pack build` prints the leak check; `--strict` refuses (and removes) a leaking pack."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import random
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main
from curiosity_tui.offline.demo import _TOPICS, DemoResponder
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack, collect_ledgers, material_from_ledger
from curiosity_tui.packs.leakcheck import leakcheck
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.schemes import load_scheme

LEDGERS = Path(__file__).resolve().parent.parent / "ledgers"
EXAMPLES = sorted(LEDGERS.glob("example-*-pilot02"))


def _task(rep: Any, name: str) -> Any:
    return next(t for t in rep.tasks if t.task == name)


def test_a_pilot02_pack_with_controls_reuses_no_items_text(tmp_path: Path) -> None:
    mats = [material_from_ledger(p) for p in EXAMPLES]
    res = build_pack(mats, load_scheme("pilot-02"), tmp_path / "p", seed=11, controls_per_kind=2)
    assert res.n_controls == 6, res.notes
    pack = Pack.open(res.packdir)
    key = json.loads(res.key_path.read_text())["items"]
    for iid, entry in key.items():
        if entry["kind"] != "control":
            continue
        mine = [s for s in pack.items[iid].sections if s.strip()]
        others = {s for j, it in pack.items.items() if j != iid for s in it.sections}
        assert not [s for s in mine if s in others], (entry["control"], iid)


def test_every_arm_has_one_layout_and_no_node_ids(tmp_path: Path) -> None:
    mats = [material_from_ledger(p) for p in EXAMPLES]
    assert any(re.search(r"\bq\d+ stays open", m.first_output) for m in mats)  # C's prose …
    res = build_pack(mats, load_scheme("pilot-02"), tmp_path / "p", seed=2)
    pack = Pack.open(res.packdir)
    for it in pack.items.values():
        for k in (0, 2):
            for line in it.sections[k].split("\n"):
                assert line[:2] in ("- ", "* ", "> "), line  # … is a note like self-ask's
        text = "\n".join(it.sections)
        assert not re.search(r"\bq[0-9]+\b", text), it.id
        s2_labels = set(re.findall(r"^- \((n[0-9]+)\) ", it.sections[1], flags=re.M))
        if s2_labels:  # one distinct label per node shown
            assert len(s2_labels) == it.sections[1].count("\n- ") + 1
    c = next(it for i, it in pack.items.items() if json.loads(res.key_path.read_text())
             ["items"][i]["config"] == "C+cur")  # fmt: skip
    # … and its node-status sentence ("q4 stays open") is left out (decision 410)
    assert c.sections[0].strip() and "stays open" not in "\n".join(c.sections)


class SharedPool(DemoResponder):
    """Both arms' replies drawn from one pool of texts, in the same amounts (self-ask also
    works on the seed, as the protocol's status line reports on its focus), so nothing but
    the protocol's own structure differs between them. Draws are keyed on the request and
    its repeat count, so the runs do not depend on the order calls arrive in."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed = seed
        self.counts: dict[str, int] = {}
        self.pool_lock = threading.Lock()
        self.rng = random.Random(seed)

    def _start(self, kind: str, text: str) -> None:
        key = hashlib.sha256(f"{self.seed}:{kind}:{text}".encode()).hexdigest()
        with self.pool_lock:
            n = self.counts.get(key, 0)
            self.counts[key] = n + 1
        self.rng = random.Random(f"{key}:{n}")

    def _two(self) -> tuple[str, str]:
        a, b = self.rng.sample(_TOPICS, 2)
        return a, b

    def _q(self) -> str:
        a, b = self._two()
        return f"How far did {a} matter for {b}?"

    def _fact(self) -> str:
        a, b = self._two()
        return f"The record links {a} with {b}."

    def _note(self, node: str) -> str:
        a, b = self._two()
        return f"{node}: {a} weighed against {b}."

    def _self_ask(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        self._start("self-ask", text)
        out = super()._self_ask(s, text, body)
        ids = re.findall(r"^\[\d+\] (q\d+) \|", text, flags=re.M)
        if "actions" in out:
            out["actions"] = [{"node": i, "action": "work", "note": ""} for i in ids[:2]]
        for q in out["questions"]:
            q["text"] = self._q()
        for f in out.get("facts", []):
            f["text"] = self._fact()
        for a in out.get("actions", []):
            a["note"] = self._note(a["node"])
        return out

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        self._start("deliverable", text)
        out = super()._deliverable(s, text, body)
        layer = out["open_layer"]
        focus = re.search(r"Focus this session: (q\d+):", text)
        node = focus.group(1) if focus else "q1"
        for q in [*layer["living_questions"], *out["new_questions"]]:
            q["text"] = self._q()
        for f in out["facts"]:
            f["text"] = self._fact()
        for a in out["actions"]:
            a["note"] = self._note(a["node"])
        layer["node_status"] = self._note(node)
        if out["answer"]:
            out["answer"] = self._note(node)
        return out


@pytest.fixture(scope="module")
def pooled_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from curiosity_tui.modelio.client import ModelClient
    from curiosity_tui.offline.scripted_server import ScriptedServer
    from curiosity_tui.runs.runner import plan_runs, run_pilot

    out = tmp_path_factory.mktemp("pooled")
    srv = ScriptedServer(responder=SharedPool(seed=12)).start()
    client = ModelClient(base_url=srv.base_url, api_key="sk-test", model="scripted",
                         retry_backoff_s=0.01)  # fmt: skip
    specs = plan_runs(
        seed="Did the printing press cause the Reformation?",
        configurations=["B-armed-cur", "C-cur"],
        runs=4,
        contract="pilot-02",
    )

    async def go():  # type: ignore[no-untyped-def]
        try:
            return await run_pilot(specs, out, client, sessions=5, concurrency=1)
        finally:
            await client.aclose()

    try:
        results = asyncio.run(go())
    finally:
        srv.stop()
    assert all(not r.failed for r in results)
    return out


def test_format_alone_does_not_leak(pooled_runs: Path, tmp_path: Path) -> None:
    mats = [material_from_ledger(p) for p in collect_ledgers([pooled_runs])]
    res = build_pack(mats, load_scheme("pilot-01"), tmp_path / "p", seed=5)
    rep = leakcheck(res.packdir, permutations=99)
    lex = _task(rep, "lexical: C vs B-armed")
    assert lex.classes == {"B-armed": 4, "C": 4}
    counts = _task(rep, "C-vs-B-armed")  # the count features, for the record
    print(f"\nshared pool, lexical C vs B-armed: accuracy {lex.accuracy:.2f}, p = {lex.p_value:.3f}"
          f"; count features: accuracy {counts.accuracy:.2f}, p = {counts.p_value:.3f}")  # fmt: skip
    assert lex.verdict.startswith("no evidence"), lex.verdict
    assert lex.p_value is not None and lex.p_value >= 0.05
    for t in rep.tasks:  # no wording task separates anything
        if t.features == "lexical" and t.accuracy is not None:
            assert not t.leaks, t.verdict


def _tagged(word: str) -> list[Any]:
    """Store-bearing runs, each worded apart, the C arm's sessions all carrying ``word``."""
    out = []
    for m in hand_made_materials(n_per_config=6, configs=("B-armed-cur", "C-cur")):
        n = int(m.run.rsplit("-", 1)[1])
        topic = _TOPICS[n % len(_TOPICS)]
        tag = f" {word}" if m.config == "C-cur" else ""
        out.append(dataclasses.replace(
            m,
            first_output=f"- What did {topic} change?{tag}\n* {m.first_output}",
            later_output=f"- How far did {topic} reach?{tag}\n> {m.later_output}",
        ))  # fmt: skip
    return out


def test_a_pack_with_one_arm_tagged_by_a_word_leaks(tmp_path: Path) -> None:
    res = build_pack(_tagged("zebra"), load_scheme("pilot-01"), tmp_path / "p", seed=5)
    rep = leakcheck(res.packdir, permutations=199)
    lex = _task(rep, "lexical: C vs B-armed")
    assert lex.verdict.startswith("LEAK"), lex.verdict
    assert lex.accuracy == 1.0 and lex.p_value is not None and lex.p_value < 0.05
    assert any(t.task == "lexical: C vs B-armed" for t in rep.refusing())
    untagged = build_pack(_tagged(""), load_scheme("pilot-01"), tmp_path / "q", seed=5)
    assert _task(leakcheck(untagged.packdir, permutations=99), "lexical: C vs B-armed").verdict \
        .startswith("no evidence")  # fmt: skip


def test_pack_build_prints_the_check_and_strict_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import curiosity_tui.packs.build as build_mod

    out = tmp_path / "p"
    args = ["pack", "build", *map(str, EXAMPLES[:2]), "--out", str(out), "--seed", "1",
            "--leak-permutations", "20"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "leak check (TF-IDF word 1–2-grams" in printed
    # --strict on a leaking pack: refused, nothing left behind
    monkeypatch.setattr(build_mod, "material_from_ledger", lambda p, **_: _TAGGED[Path(p).name])
    leaky = tmp_path / "leaky"
    for m in _tagged("zebra"):
        (leaky / m.run).mkdir(parents=True)
    _TAGGED.update({m.run: m for m in _tagged("zebra")})
    monkeypatch.setattr(
        "curiosity_tui.packs.build.collect_ledgers", lambda ps: sorted(leaky.iterdir())
    )
    strict = ["pack", "build", str(leaky), "--out", str(tmp_path / "s"), "--strict",
              "--seed", "1", "--leak-permutations", "49"]  # fmt: skip
    assert main(strict) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "refused under --strict and removed" in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "s.key.json").exists()


_TAGGED: dict[str, Any] = {}
