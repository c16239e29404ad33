"""Evidence records and the match check (S4): only a passage that occurs in the cited source
(after whitespace and quote normalisation) is verified, and only verified evidence raises a
required fact to satisfied under pilot-02."""

from __future__ import annotations

import asyncio
import unicodedata
from pathlib import Path
from typing import Any, cast

import pytest

from curiosity_tui.contract.audit import audit
from curiosity_tui.contract.evidence import (
    MATCH_METHOD,
    match_passage,
    normalise,
    normalise_with_map,
)
from curiosity_tui.contract.rules import PILOT_01, PILOT_02
from curiosity_tui.contract.sources import add_source
from curiosity_tui.contract.transitions import record_check
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.events import ReturnConditionSet
from curiosity_tui.ledger.models import ContractName
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.runs.runner import run_ledger

SOURCE = (
    "Printing in the Empire, 1517\u20131520\n\n"
    "Between 1518 and 1520 the presses of Nuremberg and Augsburg issued more\n"
    "Reformation pamphlets than Wittenberg\u2019s;  Luther\u2019s own \u201cSermon on Indulgence and Grace\u201d\n"
    "went through  twenty-two editions in three years.\n"
)
VERBATIM = (
    "the presses of Nuremberg and Augsburg issued more Reformation pamphlets than "
    "Wittenberg's; Luther's own \"Sermon on Indulgence and Grace\" went through twenty-two editions"
)


def _ledger(tmp_path: Path, contract: str = "pilot-02") -> tuple[Ledger, str]:
    path = tmp_path / "l"
    led = Ledger.create(
        path,
        RunMeta(
            name="l",
            seed="Did print cause the Reformation?",
            config="C-cur",
            contract=cast(ContractName, contract),
        ),
    )
    src = tmp_path / "printing.txt"
    src.write_text(SOURCE, encoding="utf-8")
    sid = add_source(led, src, title="Printing in the Empire").source_id
    with led.batch(1, marker="batch_committed", label="setup") as b:
        b.emit(
            ReturnConditionSet(
                required_facts=[
                    {
                        "id": "r1",
                        "text": "Share of pamphlets by city, 1517-1520.",
                        "status": "unchecked",
                        "checked": None,
                    }
                ]
            ),
            node="q1",
            actor="model",
        )
    return led, sid


def _check(led: Ledger, contract: Any = PILOT_02, **kw: Any) -> Any:
    with led.batch(2, marker="batch_committed", label="check") as b:
        return record_check(
            b,
            contract,
            "q1",
            "r1",
            satisfied=kw.pop("satisfied", True),
            evidence_text="The source says so.",
            **kw,
        )


def _r1(led: Ledger) -> dict[str, Any]:
    return led.raw_nodes()["q1"]["return_condition"]["required_facts"][0]


# ----------------------------------------------------------------------------- the match check


def test_normalisation_collapses_whitespace_and_straightens_quotes() -> None:
    assert normalise("  \u201cA\u00a0 b\u201d\n\tc \u2018d\u2019  ") == "\"A b\" c 'd'"
    text, index = normalise_with_map("a  \u201cb\u201d")
    assert text == 'a "b"' and index == [0, 1, 3, 4, 5]


def test_verbatim_passage_with_other_whitespace_and_quotes_matches_at_original_offset() -> None:
    out = match_passage(VERBATIM, SOURCE)
    assert out.ok and out.reason == ""
    assert out.offset == SOURCE.index("the presses of Nuremberg")


def test_offset_is_in_the_original_text_even_when_it_is_not_nfc() -> None:
    # decomposed accents before the passage: an offset into the NFC form would be off by 3
    src = (
        unicodedata.normalize("NFD", "Caf\u00e9 Z\u00fcrich soci\u00e9t\u00e9. ")
        + "The printers of Nuremberg produced most pamphlets."
    )
    out = match_passage("The printers of Nuremberg produced", src)
    assert out.ok and src[out.offset :].startswith("The printers")
    # and a composed passage matches decomposed source text, offset at its first character
    out = match_passage("Z\u00fcrich soci\u00e9t\u00e9. The printers", src)
    assert out.ok and src[out.offset :].startswith("Zu\u0308rich")


@pytest.mark.parametrize(
    ("passage", "reason"),
    [
        # one word differs
        (VERBATIM.replace("Augsburg", "Basel"), "does not occur"),
        # case is not normalised: the check is verbatim
        (VERBATIM.upper(), "does not occur"),
        # dashes are not quotes
        ("Printing in the Empire, 1517-1520", "does not occur"),
        ("Nuremberg", "too short"),
        ("   ", "too short"),
    ],
)
def test_passage_that_does_not_occur_is_not_matched(passage: str, reason: str) -> None:
    out = match_passage(passage, SOURCE)
    assert not out.ok and out.offset is None and reason in out.reason


# ----------------------------------------------------------------------------- evidence records


def test_verified_passage_raises_requirement_and_records_the_match(tmp_path: Path) -> None:
    led, sid = _ledger(tmp_path)
    with led:
        out = _check(led, source_id=sid, passage=VERBATIM)
        assert out.verified and out.result == "satisfied"
        r1 = _r1(led)
        assert (r1["status"], r1["checked"]) == ("satisfied", 2)
        [ev] = led.raw_nodes()["q1"]["evidence"]
        assert ev["status"] == "verified" and ev["source_id"] == sid and ev["passage"] == VERBATIM
        match = ev["match"]
        assert match["offset"] == SOURCE.index("the presses of Nuremberg")
        assert led.source_text(sid)[match["offset"] :].startswith("the presses")
        assert match["method"] == MATCH_METHOD and match["checked_by"] == "system:match-check"
        assert match["checked_at"]
        evs = [e for e in led.events() if e.session == 2]
        assert [e.kind for e in evs[:3]] == [
            "evidence_added",
            "evidence_verified",
            "dependency_checked",
        ]
        assert evs[0].data["status"] == "proposed"  # always stored proposed first
        assert evs[1].actor == "system" and evs[2].data["evidence_id"] == ev["id"]
    assert verify(tmp_path / "l").ok


def test_passage_differing_by_one_word_is_proposed_with_reason(tmp_path: Path) -> None:
    led, sid = _ledger(tmp_path)
    with led:
        out = _check(led, source_id=sid, passage=VERBATIM.replace("twenty-two", "thirty-two"))
        assert not out.verified and out.result == "unchecked"
        [ev] = led.raw_nodes()["q1"]["evidence"]
        assert ev["status"] == "proposed" and ev["match"] is None
        assert ev["reason"] == "passage does not occur in the cited source"
        assert _r1(led)["status"] == "unchecked"
        assert "evidence_verified" not in [e.kind for e in led.events()]


def test_citing_a_source_that_does_not_exist_is_proposed(tmp_path: Path) -> None:
    led, sid = _ledger(tmp_path)
    with led:
        ghost = "0" * 64
        out = _check(led, source_id=ghost, passage=VERBATIM)
        assert not out.verified and out.result == "unchecked"
        [ev] = led.raw_nodes()["q1"]["evidence"]
        assert (
            ev["status"] == "proposed"
            and ghost in ev["reason"]
            and "does not exist" in ev["reason"]
        )
        # a 12-character prefix (as `sources list` prints) is not the id either
        _check(led, source_id=sid[:12], passage=VERBATIM)
        assert led.raw_nodes()["q1"]["evidence"][-1]["status"] == "proposed"
        assert _r1(led)["status"] == "unchecked"


def test_source_without_passage_or_passage_without_source_is_proposed(tmp_path: Path) -> None:
    led, sid = _ledger(tmp_path)
    with led:
        _check(led, source_id=sid, passage=None)
        _check(led, source_id=None, passage=VERBATIM)
        evs = led.raw_nodes()["q1"]["evidence"]
        assert [e["status"] for e in evs] == ["proposed", "proposed"]
        assert all("never verified" in e["reason"] for e in evs)
        assert _r1(led)["status"] == "unchecked"


def test_not_satisfied_without_citation_makes_no_evidence_record(tmp_path: Path) -> None:
    led, _ = _ledger(tmp_path)
    with led:
        out = _check(led, satisfied=False)
        assert out.evidence_id is None and out.result == "not_satisfied"
        assert led.raw_nodes()["q1"]["evidence"] == []


def test_pilot01_keeps_no_evidence_records_even_for_a_verbatim_passage(tmp_path: Path) -> None:
    """As run: the pilot had no retrieval and no evidence records; the claim decides."""
    led, sid = _ledger(tmp_path, "pilot-01")
    with led:
        out = _check(led, PILOT_01, source_id=sid, passage="not in the source at all, but claimed")
        assert out.result == "satisfied" and out.evidence_id is None
        assert led.raw_nodes()["q1"]["evidence"] == []


def test_altered_or_missing_source_file_leaves_evidence_proposed(tmp_path: Path) -> None:
    led, sid = _ledger(tmp_path)
    with led:
        stored = led.path / "sources" / f"{sid}.txt"
        stored.write_text(SOURCE + "\nAppended later.\n", encoding="utf-8")  # passage still occurs
        out = _check(led, source_id=sid, passage=VERBATIM)
        assert not out.verified and out.result == "unchecked"
        assert "no longer matches its sha256" in led.raw_nodes()["q1"]["evidence"][-1]["reason"]
        stored.unlink()
        out = _check(led, source_id=sid, passage=VERBATIM)
        assert not out.verified
        assert "cannot be read" in led.raw_nodes()["q1"]["evidence"][-1]["reason"]
        assert _r1(led)["status"] == "unchecked"


# ----------------------------------------------------------------------------- through sessions


def test_sessions_hand_retrieved_passages_to_the_checker_and_verify_only_verbatim(
    tmp_path: Path,
) -> None:
    """pilot-02 end to end: the checker call receives retrieved passages with their source ids;
    a reply citing a source id that does not exist stays proposed, a verbatim (re-flowed,
    straight-quoted) passage is verified and satisfies the requirement."""
    example = Path(__file__).resolve().parents[1] / "scripts" / "example_source.txt"
    path = tmp_path / "run"
    meta = RunMeta(name="run", seed="Did print cause the Reformation?", config="C-cur")
    with Ledger.create(path, meta) as led:
        sid = add_source(led, example).source_id
    passage = (
        "Urban literacy in the German lands was higher than rural literacy,\n  and estimates "
        "for large imperial cities are commonly placed between one in ten"
    )

    def reply(source_id: str) -> dict[str, Any]:
        return {
            "fact_id": "r1",
            "satisfied": True,
            "evidence": "The note gives the estimate.",
            "source_id": source_id,
            "passage": passage,
        }

    script = Script(
        rules=[
            ScriptRule(kind="checker", session=2, reply=reply("f" * 64)),
            ScriptRule(kind="checker", session=3, reply=reply(sid)),
        ]
    )
    with ScriptedServer(script, responder=DemoResponder(preserve_sessions=(1, 2, 3))) as srv:

        async def go() -> None:
            client = ModelClient(
                base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
            )
            with Ledger.open(path, write=True) as led:
                res = await run_ledger(led, client, sessions=3)
            await client.aclose()
            assert not res.failed, res.failed

        asyncio.run(go())
        [req2] = srv.requests_of("checker")[:1]
        prompt = "\n".join(m["content"] for m in req2.body["messages"])
        assert f"[source {sid}]" in prompt and "literacy" in prompt
    with Ledger.open(path) as led:
        q1 = led.raw_nodes()["q1"]
        by_session = {e["session"]: e for e in q1["evidence"] if e["requirement"] == "r1"}
        assert by_session[2]["status"] == "proposed" and "does not exist" in by_session[2]["reason"]
        assert by_session[3]["status"] == "verified" and by_session[3]["source_id"] == sid
        offset = by_session[3]["match"]["offset"]
        assert led.source_text(sid)[offset:].startswith("Urban literacy in the German lands")
        r1 = q1["return_condition"]["required_facts"][0]
        # the session-3 revision retires the now verified-satisfied r1 — legitimately
        assert r1["id"] != "r1" or r1["status"] == "satisfied"
        checks = [
            (c["session"], c["claimed"], c["result"])
            for c in q1["checks"]
            if c["requirement"] == "r1"
        ]
        assert checks == [(2, "satisfied", "unchecked"), (3, "satisfied", "satisfied")]
        assert audit(led).findings == []
    assert verify(path).ok


def test_fast_match_agrees_with_the_normalised_search_on_random_texts() -> None:
    """The regex search over the original text must find exactly what searching the
    normalised text finds, at the original offset (seeded, 1200 cases)."""
    import random

    alphabet = [
        "a",
        "b",
        " ",
        "  ",
        "\n",
        "\u201c",
        "\u201d",
        '"',
        "'",
        "\u2019",
        ".",
        "(",
        "*",
        "\t",
        "\u00a0",
        "ab",
    ]
    rng = random.Random(7)
    compared = 0
    for _ in range(1200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 60)))
        a = rng.randint(0, len(text))
        b = rng.randint(a, len(text))
        passage = (
            text[a:b]
            if rng.random() < 0.7
            else "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 25)))
        )
        hay, index = normalise_with_map(text)
        needle = normalise(passage)
        if len(needle) < 12:
            continue
        pos = hay.find(needle)
        assert match_passage(passage, text).offset == (index[pos] if pos >= 0 else None)
        compared += 1
    assert compared > 200


def test_match_in_a_source_near_the_size_limit() -> None:
    body = "Printing in \u201cNuremberg\u201d  was\nbusy. " * 480_000  # ~18 MB of text
    src = body + "The closing sentence names Melchior Lotter."
    out = match_passage('sentence names "Melchior Lotter', src)
    assert not out.ok  # the closing quote is not in the source
    out = match_passage("The closing sentence names Melchior Lotter", src)
    assert out.ok and out.offset == len(body)
