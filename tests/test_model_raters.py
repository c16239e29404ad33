"""Model raters (issue 16 item 3): a scripted server rates a pack through the human scheme and
validators; a quote not in the item is repaired or recorded missing; no request ever carries
another rater's work or anything from the key."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.scripted_server import Reply, ScriptedServer
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.model_rater import RATE_KIND, clean_endpoint, rate_pack, rating_messages
from curiosity_tui.packs.pack import Pack, default_key_path
from curiosity_tui.packs.rating import (
    RaterNameError,
    RatingSession,
    rated_items,
    rater_group,
    read_ratings,
    validate_rater_name,
)
from curiosity_tui.packs.schemes import load_scheme

GOOD_QUOTE = "Nuremberg produced roughly 40-50% of the earliest pamphlets."
BAD_QUOTE = "Nuremberg printed every pamphlet of the decade."  # not in any item


def reply(category: str = "built", quote: str | None = GOOD_QUOTE) -> dict[str, Any]:
    return {
        "q1": {"category": category, "grounds": "section 3 continues section 2", "quotes": []},
        "q2": {
            "category": "some",
            "grounds": "one figure without a source",
            "quotes": [quote] if quote else [],
        },
    }


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=7)
    return out


def _client(srv: ScriptedServer) -> ModelClient:
    return ModelClient(
        base_url=srv.base_url, api_key="sk-test-key", model="scripted", retry_backoff_s=0.01
    )


def _rate(pack: Path, srv: ScriptedServer, rater: str = "model:m1", **kw: Any) -> Any:
    async def go() -> Any:
        async with _client(srv) as client:
            return await rate_pack(RatingSession(pack, rater), client, **kw)

    return asyncio.run(go())


def test_model_rater_names_and_groups() -> None:
    assert validate_rater_name("model:qwen-7b") == "model:qwen-7b"
    assert rater_group("model:qwen-7b") == "model" and rater_group("ann") == "human"
    for bad in ("model:", "model:a/b", "model:model:x", "ann:x", "model:x\n", "Model:x"):
        with pytest.raises(RaterNameError):
            validate_rater_name(bad)


def test_clean_endpoint_drops_credentials() -> None:
    assert clean_endpoint("http://u:secret@host:8080/v1?key=k#f") == "http://host:8080/v1"
    assert clean_endpoint("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert clean_endpoint(None) is None


def test_a_scripted_server_rates_the_pack_in_item_order(pack: Path) -> None:
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        run = _rate(pack, srv, concurrency=3)
        kinds = {r.kind for r in srv.requests}
        url = srv.base_url
    order = Pack.open(pack).order
    assert kinds == {RATE_KIND}
    assert run.rated == order and run.missing == {} and run.repaired == 0
    recs = read_ratings(pack / "ratings" / "model:m1.jsonl")
    assert [r.item for r in recs] == order  # written in pack order, whatever finished first
    first = recs[0]
    assert first.rater == "model:m1" and first.answers["q2"].quotes == [GOOD_QUOTE]
    assert first.by_model is not None and first.by_model.model == "scripted"
    assert first.by_model.endpoint == url and first.by_model.calls == 1
    raw = (pack / "ratings" / "model:m1.jsonl").read_text()
    assert "sk-test-key" not in raw
    # a second run has nothing left to do
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv2:
        again = _rate(pack, srv2)
        assert srv2.requests == []
    assert again.attempted == []


def _attempts_responder(bad_for: dict[int, int]) -> Any:
    """Session n (the item's place) gets ``bad_for[n]`` replies quoting BAD_QUOTE first."""
    seen: dict[int, int] = {}

    def respond(kind: str, session: int, body: dict[str, Any]) -> dict[str, Any]:
        seen[session] = seen.get(session, 0) + 1
        return reply(quote=BAD_QUOTE if seen[session] <= bad_for.get(session, 0) else GOOD_QUOTE)

    return respond


def test_a_quote_not_in_the_item_is_repaired_or_recorded_missing(pack: Path) -> None:
    order = Pack.open(pack).order
    with ScriptedServer(responder=_attempts_responder({1: 1, 2: 5})) as srv:
        run = _rate(pack, srv, concurrency=2)
        repairs = [r for r in srv.requests if r.session == 1]
    # item 1: the repair turn names the problem, the second reply is stored
    assert len(repairs) == 2
    repair_text = json.dumps(repairs[1].body["messages"][-1])
    assert "not verbatim in the item" in repair_text
    assert run.repaired == 1 and order[0] in run.rated
    # item 2: two bad replies, a missing rating with the reason
    assert list(run.missing) == [order[1]] and "not verbatim" in run.missing[order[1]]
    recs = read_ratings(pack / "ratings" / "model:m1.jsonl")
    miss = next(r for r in recs if r.item == order[1])
    assert miss.answers == {} and miss.missing and miss.by_model and miss.by_model.calls == 2
    assert miss.by_model.code == "schema_violation"
    assert order[1] not in rated_items(recs)
    # a later run rates only the missing item, as a new revision
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv2:
        again = _rate(pack, srv2)
        assert {r.session for r in srv2.requests} == {2}
    assert again.rated == [order[1]]
    recs = read_ratings(pack / "ratings" / "model:m1.jsonl")
    assert [r.revision for r in recs if r.item == order[1]] == [0, 1]
    assert rated_items(recs)[order[1]].answers["q2"].quotes == [GOOD_QUOTE]


def test_a_server_failure_is_a_missing_rating_not_a_crash(pack: Path) -> None:
    with ScriptedServer(
        responder=lambda k, s, b: Reply(fault="http_501") if s == 3 else reply()
    ) as srv:
        run = _rate(pack, srv)
    order = Pack.open(pack).order
    assert list(run.missing) == [order[2]] and len(run.rated) == len(order) - 1
    assert "501" in run.missing[order[2]]


def _human_ratings(pack: Path) -> dict[str, str]:
    """Two humans rate every item with distinctive grounds; returns grounds → rater."""
    marks = {}
    for rater, cat in (("ann", "fresh"), ("bob", "built")):
        s = RatingSession(pack, rater)
        for k, item in enumerate(s.order):
            g = f"{rater}-grounds-zq{k}x"
            marks[g] = rater
            s.save(
                item,
                {
                    "q1": {"category": cat, "grounds": g},
                    "q2": {"category": "many", "grounds": g, "quotes": [GOOD_QUOTE]},
                },
            )
    return marks


def _requests_of_a_run(pack: Path) -> list[str]:
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        _rate(pack, srv, concurrency=1)
        out = []
        for r in sorted(srv.requests, key=lambda r: r.session or 0):
            headers = {k: v for k, v in r.headers.items() if k.startswith("x-curiosity")}
            out.append(json.dumps({"body": r.body, "headers": headers}, sort_keys=True))
    return out


def test_no_model_request_carries_another_raters_work_or_the_key(
    pack: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(pack, bare)
    shutil.copy(default_key_path(pack), default_key_path(bare))
    marks = _human_ratings(pack)
    key = json.loads(default_key_path(pack).read_text())
    with_others = _requests_of_a_run(pack)
    # the requests are the same with and without other raters' files beside them
    assert with_others == _requests_of_a_run(bare)
    every = "\n".join(with_others)
    assert not any(g in every for g in marks)
    assert "ann" not in every and "bob" not in every
    forbidden = {key["pack_id"]} | {
        v
        for entry in key["items"].values()
        for f, v in entry.items()
        if f in ("run", "ledger", "config", "base_item") and isinstance(v, str) and len(v) > 2
    }
    forbidden |= {Path(e["ledger"]).name for e in key["items"].values()}
    assert len(forbidden) > 6  # run names, ledgers, configurations, the pack id
    leaked = sorted(f for f in forbidden if f in every)
    assert leaked == []
    # and the input is only the scheme and the item, exactly
    s = RatingSession(pack, "model:probe")
    first = json.loads(with_others[0])["body"]["messages"]
    assert first == rating_messages(s.scheme, s.pack.item(s.order[0]))


def test_the_model_rater_never_opens_the_key_or_another_raters_file(
    pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins
    import io
    import os

    _human_ratings(pack)
    key = default_key_path(pack)
    opened: list[str] = []
    real = (builtins.open, io.open, os.open)

    def spy(i: int) -> Any:
        def f(file: Any, *a: Any, **k: Any) -> Any:
            opened.append(str(file))
            return real[i](file, *a, **k)

        return f

    monkeypatch.setattr(builtins, "open", spy(0))
    monkeypatch.setattr(io, "open", spy(1))
    monkeypatch.setattr(os, "open", spy(2))
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        _rate(pack, srv)
    mine = [p for p in opened if str(pack) in p or str(key) in p]
    assert mine, "the spies saw nothing"
    assert not any(p.endswith(".key.json") for p in opened)
    assert not any(p.endswith(("ann.jsonl", "bob.jsonl")) for p in opened)


def test_only_model_raters_rate_with_a_model(pack: Path) -> None:
    from curiosity_tui.packs.rating import RatingError

    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        with pytest.raises(RatingError, match="not a model rater"):
            _rate(pack, srv, rater="ann")
        assert srv.requests == []


def test_cli_rate_with_a_model(pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from curiosity_tui.cli import main

    with ScriptedServer(responder=_attempts_responder({2: 9})) as srv:
        argv = ["rate", str(pack), "--rater", "model:m1", "--model", "scripted",
                "--base-url", srv.base_url, "--api-key", "sk-cli-key"]  # fmt: skip
        assert main(argv) == 1  # an item stayed missing: not a success (issue 27 item 7)
        kinds = {r.kind for r in srv.requests}
    out, err = capsys.readouterr()
    assert err.startswith("rate: 1 of ") and "item(s) still missing (first: " in err
    assert len(err.strip().splitlines()) == 1
    order = Pack.open(pack).order
    assert kinds == {"probe", "probe-sampling", RATE_KIND}
    assert f"{len(order) - 1} rated" in out and "1 missing" in out and f"missing {order[1]}" in out
    assert f"  {order[0]}: rated\n  {order[1]}: missing\n" in out
    assert "sk-cli-key" not in (pack / "ratings" / "model:m1.jsonl").read_text()
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        assert main([*argv[:-4], "--base-url", srv.base_url, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["attempted"] == [order[1]] and again["rated"] == [order[1]]
    assert again["missing"] == {}
    # a human name with --model, or a model name without it: one line, nothing stored
    assert main(["rate", str(pack), "--rater", "ann", "--model", "m"]) == 2
    assert "model:NAME" in capsys.readouterr().err
    assert main(["rate", str(pack), "--rater", "model:m2"]) == 2
    assert "pass --model" in capsys.readouterr().err
    assert (
        main(["rate", str(pack), "--rater", "model:m2", "--model", "m", "--concurrency", "0"]) == 2
    )
    assert "--concurrency 0: must be a whole number from 1" in capsys.readouterr().err
    assert not (pack / "ratings" / "ann.jsonl").exists()
    assert not (pack / "ratings" / "model:m2.jsonl").exists()


def _mixed_pack(pack: Path) -> list[str]:
    """ann and bob (humans), model:m1 on every item, model:m2 missing the second item."""
    _human_ratings(pack)
    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        _rate(pack, srv, rater="model:m1")
    with ScriptedServer(responder=_attempts_responder({2: 9})) as srv:
        _rate(pack, srv, rater="model:m2")
    return Pack.open(pack).order


def test_agreement_reports_human_model_and_cross_groups_never_pooled(pack: Path) -> None:
    from curiosity_tui.packs.pack_agreement import format_agreement, pack_agreement

    order = _mixed_pack(pack)
    rep = pack_agreement(pack, n_boot=50)
    assert rep.groups == {"human": ["ann", "bob"], "model": ["model:m1", "model:m2"]}
    assert [(qa.question, qa.group) for qa in rep.questions] == [
        (q, g) for q in ("q1", "q2") for g in ("human", "model", "human-model")
    ]
    human, model, cross = rep.questions[:3]
    assert human.raters == ["ann", "bob"] and model.raters == ["model:m1", "model:m2"]
    assert [(p.rater_a, p.rater_b) for p in human.pairs] == [("ann", "bob")]
    assert human.pairs[0].group == "human" and human.pairs[0].cohen_kappa.value is not None
    assert {p.group for p in cross.pairs} == {"human-model"} and len(cross.pairs) == 4
    assert cross.fleiss_kappa.value is None and "pool" in (
        cross.fleiss_kappa.undefined_reason or ""
    )
    # ann always "fresh", bob and the models always "built" on q1
    by_pair = {(p.rater_a, p.rater_b): p for p in cross.pairs}
    assert by_pair[("ann", "model:m1")].raw_agreement.value == 0.0
    assert by_pair[("bob", "model:m1")].raw_agreement.value == 1.0
    # m2's missing rating is missing, not a category
    m1m2 = model.pairs[0]
    assert m1m2.n_items == len(order) - 1
    assert sum(model.category_counts["model:m2"].values()) == len(order) - 1
    assert not rep.pooled
    text = format_agreement(rep)
    rows = [ln for ln in text.splitlines() if "kappa" in ln or "raw agreement" in ln]
    assert rows and all(ln.strip().startswith("[") for ln in rows)
    assert "never pooled" in text and "[pooled]" not in text
    pooled = pack_agreement(pack, n_boot=50, pool_groups=True)
    assert pooled.pooled and [qa.group for qa in pooled.questions][:4] == [
        "human",
        "model",
        "human-model",
        "pooled",
    ]
    assert "POOLED" in format_agreement(pooled)


def test_unblind_tables_are_per_group(pack: Path) -> None:
    from curiosity_tui.packs.unblind import unblind
    from curiosity_tui.packs.unblind_text import format_unblind

    order = _mixed_pack(pack)
    rep = unblind(pack, by="human:cy", force=True)  # model:m2 has a missing rating
    assert rep.forced and "model:m2" in rep.completeness.reason
    assert rep.rater_groups["model:m1"] == "model" and rep.rater_groups["ann"] == "human"
    q1 = {t.group: t for t in rep.tables if t.question == "q1"}
    assert set(q1) == {"human", "model"}
    n_real = sum(1 for it in rep.items if it.kind == "run")
    assert sum(sum(r.values()) for r in q1["human"].by_rating.values()) == 2 * n_real
    assert sum(r["fresh"] for r in q1["human"].by_rating.values()) == n_real  # ann only
    assert sum(r["fresh"] for r in q1["model"].by_rating.values()) == 0
    assert sum(sum(r.values()) for r in q1["model"].by_rating.values()) == 2 * n_real - (
        1 if rep.items[1].kind == "run" else 0
    )
    text = format_unblind(rep)
    assert "q1 — model raters" in text and "q1 — human raters" in text
    assert len(order) == len(rep.items)


def test_a_server_without_json_schema_gets_json_object(pack: Path) -> None:
    with ScriptedServer(
        responder=lambda kind, session, body: reply(), supports_json_schema=False
    ) as srv:
        run = _rate(pack, srv, concurrency=2)
        formats = {(r.body.get("response_format") or {}).get("type") for r in srv.requests}
    assert run.rated == Pack.open(pack).order
    assert "json_object" in formats
    recs = read_ratings(pack / "ratings" / "model:m1.jsonl")
    assert {r.by_model.response_format for r in recs if r.by_model} == {"json_object"}


def test_items_are_rated_concurrently_bounded_and_written_in_order(pack: Path) -> None:
    import threading

    third_arrived = threading.Event()
    second_in_flight = threading.Event()
    lock = threading.Lock()
    active = [0, 0, 0]  # now, most at once, arrived

    def respond(kind: str, session: int, body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            active[0] += 1
            active[1] = max(active[:2])
            active[2] += 1
            first = active[2] == 1
            if active[2] >= 2:
                second_in_flight.set()
        if session == 3:
            third_arrived.set()
        # the first request held until a second arrives: two in flight unless the rater
        # sends one at a time (whichever item a loaded machine sends first)
        if first:
            second_in_flight.wait(timeout=60)
        if session == 1:  # item 1 answers only once item 3 was sent: 2 finished first
            third_arrived.wait(timeout=60)
        with lock:
            active[0] -= 1
        return reply()

    with ScriptedServer(responder=respond) as srv:
        _rate(pack, srv, concurrency=2)
    assert third_arrived.is_set() and active[1] == 2
    recs = read_ratings(pack / "ratings" / "model:m1.jsonl")
    assert [r.item for r in recs] == Pack.open(pack).order


def test_a_refusal_is_missing_and_its_text_is_shown_safely(pack: Path) -> None:
    from curiosity_tui.packs.model_rater import format_model_run

    nasty = "I will not \x1b[2J rate\nthis"
    with ScriptedServer(
        responder=lambda k, s, b: Reply(fault="refusal", reply=nasty) if s == 1 else reply()
    ) as srv:
        run = _rate(pack, srv)
    first = Pack.open(pack).order[0]
    assert list(run.missing) == [first] and "refused" in run.missing[first]
    text = format_model_run(run)
    assert "\x1b" not in text and f"missing {first}: " in text
    assert len([ln for ln in text.splitlines() if first in ln]) == 1


def test_a_model_rater_is_sampled_as_a_measurement_and_says_so(pack: Path) -> None:
    """Issue 23.1: rating calls send the rater group's values (temperature 0) and a seed from
    the rater and the item's place; each rating record keeps what its call was sent with."""
    from curiosity_tui.modelio.sampling import call_seed

    with ScriptedServer(responder=lambda kind, session, body: reply()) as srv:
        _rate(pack, srv)
        sent = [r for r in srv.requests if r.kind == RATE_KIND]
    assert sent and all((r.body["temperature"], r.body["top_p"]) == (0.0, 1.0) for r in sent)
    places = {int(r.headers["x-curiosity-session"]): r.body["seed"] for r in sent}
    assert places == {n: call_seed(0, "model:m1", n, RATE_KIND) for n in places}
    records = [json.loads(line) for line in (pack / "ratings" / "model:m1.jsonl").open()]
    kept = {r["by_model"]["sampling"]["seed"] for r in records}
    assert kept == set(places.values())
