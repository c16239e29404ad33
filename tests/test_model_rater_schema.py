"""The model rater's reply carries the scheme (issue 27 item 7): categories as enums and, per
question, the quote count as slots in every dialect (a question with no quotes has no slot),
each quote's least length in ``full``. On a schema-obedient server no reply is refused for its
count ("q1: 2 quotes given, at most 0 allowed" cannot be said any more); what stays missing
(quotes not copied from the item: no schema can say "verbatim") is named, and ``rate`` exits
non-zero saying how many and why."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from curiosity_tui.modelio.call_schemas import DIALECTS
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.model_rater import _answers_of, quote_choices, rating_schema, reply_model
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.rating import RatingError, validate_answers
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.protocol.schemas import strict_problems
from tests.schema_sampler import sample
from tests.schema_server import SchemaServer

DRAWS = 1000


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", ["pilot-01", "pilot-02"])
def test_every_rating_the_schema_allows_has_the_schemes_counts(name: str, dialect: str) -> None:
    """Drawn from the schema sent, every reply parses, has each question's category from its
    list and a quote count inside the scheme's bounds; the rules left are the ones checked
    after the reply (verbatim, words, distinct, grounds), named here."""
    scheme = load_scheme(name)
    schema = rating_schema(scheme, dialect)  # type: ignore[arg-type]
    assert strict_problems(schema) == []
    model = reply_model(scheme)
    for seed in range(DRAWS):
        value = sample(schema, random.Random(f"{name}|{dialect}|{seed}"))
        answers = _answers_of(model.model_validate_json(json.dumps(value)), scheme)
        for q in scheme.questions:
            a = answers[q.id]
            assert a.category in q.category_ids
            assert q.min_quotes <= len(a.quotes) <= q.max_quotes
            if dialect == "full":
                assert all(len(x) >= q.quote_min_chars for x in a.quotes)
    if dialect == "strict":
        assert "minLength" not in json.dumps(schema)
    for q in scheme.questions:  # one slot per allowed quote; the first min_quotes not null
        slots = schema["properties"][q.id]["properties"]["quotes"]["properties"]
        assert len(slots) == q.max_quotes
        assert [("anyOf" in s) for s in slots.values()] == [
            i >= q.min_quotes for i in range(q.max_quotes)
        ]


def test_rate_on_a_schema_obedient_server_names_what_stays_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.cli import main

    pack = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-02"), pack, seed=3)
    with SchemaServer("obedient", seed=5) as server:
        argv = ["rate", str(pack), "--rater", "model:obedient", "--model", "obedient",
                "--base-url", server.base_url, "--api-key", "k"]  # fmt: skip
        code = main(argv)
    out, err = capsys.readouterr()
    n = len(Pack.open(pack).order)
    assert "at most 0 allowed" not in out + err  # the count is said by the shape
    missing = out.count("  missing ")
    if missing:
        assert code == 1
        assert err.startswith(f"rate: {missing} of {n} item(s) still missing (first: ")
    else:
        assert code == 0 and err == ""
    assert f"{n - missing} rated" in out


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_rating_the_items_schema_allows_passes_the_human_validators(
    tmp_path: Path, dialect: str
) -> None:
    """Per item, each quote slot is an enum of the item's statements (verbatim and long enough
    by construction): drawn from the schema sent for that item, every reply passes the human
    validators but for the one rule no schema says, grounds required (the sampler draws blank
    grounds); the same statement in two slots counts once."""
    scheme = load_scheme("pilot-02")
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(), scheme, pack, seed=3)
    opened = Pack.open(pack)
    model = reply_model(scheme)
    broken: set[str] = set()
    offered = 0
    for item_id in opened.order:
        item = opened.item(item_id)
        schema = rating_schema(scheme, dialect, item)  # type: ignore[arg-type]
        offered += sum(len(quote_choices(q, item)) for q in scheme.questions if q.max_quotes)
        for seed in range(DRAWS // len(opened.order) + 1):
            value = sample(schema, random.Random(f"{item_id}|{dialect}|{seed}"))
            answers = _answers_of(model.model_validate_json(json.dumps(value)), scheme)
            try:
                validate_answers(scheme, item, answers)
            except RatingError as err:
                broken.add(str(err).split(": ", 1)[1])
    assert offered > 0  # the items do offer statements to quote
    assert broken <= {"grounds are required (one line)"}, broken
