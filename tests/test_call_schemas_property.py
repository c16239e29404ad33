"""Every reply the schema we send allows passes our rules (issue 27 item 2).

For every call kind, in every dialect, replies are drawn from the emitted JSON schema by an
independent sampler (tests/schema_sampler.py, which knows only JSON-schema keywords) and each
must pass ``CallSpec.check``, 1,000 draws per call kind, dialect and case, with the
duplicate-prone cases (one listed id, one requirement, one live node) among the cases.

A rule a dialect cannot say is named here (:data:`CHECKED_AFTER`) and documented as "checked
after the reply" (docs/model-io.md): every draw passes all the other rules, and the test shows
the named rule is the only one a draw can break.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import replace

import pytest

from curiosity_tui.modelio.call_schemas import DIALECTS, CallSpec
from curiosity_tui.protocol.call_specs import (
    armed_self_ask_spec,
    checker_spec,
    curator_spec,
    deliverable_spec,
    judge_after_spec,
    judge_before_spec,
    judge_relist_spec,
    self_ask_spec,
    support_judge_spec,
)
from curiosity_tui.protocol.schemas import (
    JudgeAfterResponse,
    JudgeBeforeResponse,
)
from tests.schema_sampler import sample

DRAWS = 1000
SOURCE = "a" * 64


def _before(framings: int, dependencies: int) -> JudgeBeforeResponse:
    return JudgeBeforeResponse(
        framings=[f"f{i}" for i in range(framings)],
        dependencies=[f"d{i}" for i in range(dependencies)],
    )


def _deliverable(**kw: object) -> CallSpec:
    base: dict[str, object] = dict(
        node_ids=["q0", "q1", "q2"],
        focus_id="q1",
        requirement_ids=["q1.f1", "q1.f2"],
        open_layer_min=1,
        checks_in_deliverable=True,
        downgrades_allowed=True,
        preserve=False,
        source_ids=[SOURCE],
    )
    base.update(kw)
    return deliverable_spec(**base)  # type: ignore[arg-type]


CASES: dict[str, tuple[str, CallSpec]] = {
    "judge-before": ("judge-before", judge_before_spec()),
    "judge-after-none": ("judge-after", judge_after_spec(_before(0, 0))),
    "judge-after-one-id": ("judge-after", judge_after_spec(_before(1, 0))),
    "judge-after-one-dependency": ("judge-after", judge_after_spec(_before(0, 1))),
    "judge-after-all": ("judge-after", judge_after_spec(_before(5, 8))),
    # tension = "pre-amendment" (issue 26): framings, dependencies, follow-ups listed anew
    "judge-after-relist": ("judge-after", judge_relist_spec()),
    "checker-one-requirement": ("checker", checker_spec("q1.f1", [SOURCE])),
    "checker-no-source": ("checker", checker_spec("q1.f1", [])),
    "deliverable-pilot-01-compulsory": ("deliverable", _deliverable()),
    "deliverable-pilot-02-optional": (
        "deliverable",
        _deliverable(open_layer_min=0, checks_in_deliverable=False, preserve=True),
    ),
    "deliverable-one-live-node-one-requirement": (
        "deliverable",
        _deliverable(node_ids=["q1"], live_ids=["q1"], requirement_ids=["q1.f1"]),
    ),
    "deliverable-nothing-to-name": (
        "deliverable",
        _deliverable(node_ids=["q1"], live_ids=[], requirement_ids=[], source_ids=[]),
    ),
    "self-ask": ("self-ask", self_ask_spec()),
    "armed-self-ask-one-node": ("self-ask", armed_self_ask_spec(["q1"], [SOURCE], ["q1"])),
    "armed-self-ask-nothing-live": ("self-ask", armed_self_ask_spec(["q1"], [], [])),
    "curator-one-live-node": ("curator", curator_spec(["q1", "q2"], ["q1"])),
    "curator-nothing-live": ("curator", curator_spec(["q1"], [])),
    "support-judge": ("support-judge", support_judge_spec()),
}

#: (case, dialect) -> the enforced rules that dialect cannot say, by path: "checked after the
#: reply"; a break gets the call's one repair turn (docs/model-io.md, "Checked after the
#: reply"). One: a compulsory living question's text, at least 8 characters and not blank:
#: strict has no lengths, and neither dialect can say "not only spaces" without ``pattern``.
CHECKED_AFTER: dict[tuple[str, str], list[str]] = {
    (case, dialect): ["open_layer.living_questions[].text"]
    for case in (
        "deliverable-pilot-01-compulsory",
        "deliverable-one-live-node-one-requirement",
        "deliverable-nothing-to-name",
    )
    for dialect in DIALECTS
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_reply_the_schema_allows_passes_the_rules(case: str, dialect: str) -> None:
    kind, spec = CASES[case]
    schema = spec.json_schema(dialect)  # type: ignore[arg-type]
    after = spec.checked_after(dialect)  # type: ignore[arg-type]
    assert [r.path for r in after] == CHECKED_AFTER.get((case, dialect), []), kind
    said = CallSpec(spec.model, tuple(r for r in spec.rules if r not in after))
    # every bound on a list, guidance too, holds in both dialects (strict: slots; issue 27)
    counts = tuple(replace(r, enforced=True) for r in spec.rules if r.max_items is not None)
    bounded = CallSpec(
        spec.model, tuple(replace(r, one_of=None, max_length=None, min_length=None) for r in counts)
    )
    broken: Counter[str] = Counter()
    for seed in range(DRAWS):
        value = sample(schema, random.Random(f"{case}|{dialect}|{seed}"))
        reply = spec.reply_model(dialect).model_validate_json(json.dumps(value))  # type: ignore[arg-type]
        said.check(reply)  # every rule the schema says holds, on every draw
        bounded.check(reply)
        spec.record(reply)  # and the reply translates into its stored record
        try:
            spec.check(reply)
        except ValueError as err:
            broken.update(p.split(":")[0] for p in str(err).split("; ") if ":" in p)
    # what breaks at all is only the named rule (the sampler draws blank text often)
    named = [_where(r.path) for r in after]
    assert [b for b in broken if not any(n.fullmatch(b) for n in named)] == [], broken
    if after:
        assert broken, "the sampler never drew what the dialect cannot say"


def _where(path: str) -> re.Pattern[str]:
    """Where a problem under rule ``path`` is reported (a slot key or a list index per ``[]``)."""
    return re.compile(re.escape(path).replace(r"\[\]", r"(\.[^.]+|\[\d+\])"))


@pytest.mark.parametrize("n", [0, 1, 3, 5])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_judge_after_record_pairs_exactly_the_listed_ids(n: int, dialect: str) -> None:
    """The duplicate the issue saw (``['D1', 'D1']``) cannot be said in the keyed shape, and the
    stored record lists each listed id exactly once, as the old validator demanded."""
    before = _before(n, max(0, n - 1))
    spec = judge_after_spec(before)
    schema = spec.json_schema(dialect)  # type: ignore[arg-type]
    for seed in range(200):
        reply = spec.reply_model(dialect).model_validate(sample(schema, random.Random(seed)))  # type: ignore[arg-type]
        stored = spec.record(reply)
        assert isinstance(stored, JudgeAfterResponse)
        assert sorted(i.id for i in stored.framings) == [f"F{i}" for i in range(1, n + 1)]
        assert len(stored.dependencies) == len(before.dependencies)
