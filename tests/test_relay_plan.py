"""The relay plan: parsing, refusals in one line naming file and key, endpoint hosts without
secrets, and a pilot plan's [relay] (every run relayed between two scripted models)."""

from __future__ import annotations

from pathlib import Path

import pytest
from relay_fixtures import two_servers

from curiosity_tui.analysis.plan import PlanError, parse_plan
from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.runs.relay import RelayError, endpoint_host, load_relay

PLAN = """\
name = "relay-pilot"
configurations = ["C+cur", "B-armed+cur"]
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "model-a"
epsilon = 0.15
metrics = ["relay_drift_step_mean", "relay_survival_share", "max_depth"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["relay_survival_share"]

[relay]
sessions = ["model:A", "model:B"]
[relay.models.A]
base_url = "{a}"
model = "model-a"
[relay.models.B]
base_url = "{b}"
model = "model-b"
"""


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://user:secret@127.0.0.1:8080/v1?key=abc", "http://127.0.0.1:8080"),
        ("https://api.example.org/v1", "https://api.example.org"),
        ("http://[::1]:9000/v1", "http://[::1]:9000"),
        ("not a url", None),
    ],
)
def test_endpoint_host_keeps_no_secret(url: str, host: str | None) -> None:
    assert endpoint_host(url) == host


def test_relay_file_round_trip_and_cycle(tmp_path: Path) -> None:
    p = tmp_path / "relay.toml"
    p.write_text(
        'sessions = ["model:A", "human:ana"]\ncycle = true\n'
        '[models.A]\nbase_url = "http://127.0.0.1:8080/v1"\nmodel = "gemma"\n'
        'api_key_env = "MY_KEY"\n',
        encoding="utf-8",
    )
    plan = load_relay(p)
    assert [plan.item_for(t) for t in (1, 2, 3)] == [("model", "A"), ("human", "ana")] + [
        ("model", "A")
    ]
    m = plan.mind_for(3)
    assert (m.kind, m.name, m.endpoint) == ("model", "gemma", "http://127.0.0.1:8080")
    assert plan.humans(4) == [2, 4]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('sessions = ["model:A"]\n', "no [models.A]"),
        (
            'sessions = ["human:a b"]\n',
            "sessions.item 1" if False else "model:<key> or human:<name>",
        ),
        ("sessions = []\n", "sessions"),
        ('sessions = ["human:ana"]\nextra = 1\n', "unknown key"),
        (
            'sessions = ["human:ana"]\n[models.A]\nbase_url = "http://h/v1"\nmodel = "m"\n',
            "no session takes it",
        ),
        (
            'sessions = ["model:A"]\n[models.A]\nbase_url = "http://h/v1"\nmodel = "m"\n'
            'api_key_env = "sk-123 secret"\n',
            "must name an environment variable",
        ),
        ('sessions = ["model:A"\n', "not valid TOML"),
    ],
)
def test_bad_relay_files_are_one_line(tmp_path: Path, text: str, needle: str) -> None:
    p = tmp_path / "relay.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(RelayError) as err:
        load_relay(p)
    msg = str(err.value)
    assert needle in msg and str(p) in msg and "\n" not in msg


def test_a_pilot_plan_with_a_relay_is_checked() -> None:
    ok = parse_plan(PLAN.format(a="http://127.0.0.1:1/v1", b="http://127.0.0.1:2/v1"))
    assert ok.relay is not None and ok.relay.model_keys() == ["A", "B"]
    bad = PLAN.replace('"B-armed+cur"]\nruns', '"B-armed+cur", "A"]\nruns')
    with pytest.raises(PlanError, match="no store"):
        parse_plan(bad.format(a="http://127.0.0.1:1/v1", b="http://127.0.0.1:2/v1"))
    human = PLAN.replace('sessions = ["model:A", "model:B"]', 'sessions = ["model:A", "human:x"]')
    human = human.replace('[relay.models.B]\nbase_url = "{b}"\nmodel = "model-b"\n', "")
    with pytest.raises(PlanError, match="a pilot runs unattended"):
        parse_plan(human.format(a="http://127.0.0.1:1/v1"))
    short = PLAN.replace("sessions = 2\n", "sessions = 3\n", 1)
    with pytest.raises(PlanError, match="list more"):
        parse_plan(short.format(a="http://127.0.0.1:1/v1", b="http://127.0.0.1:2/v1"))


def test_pilot_run_relays_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with two_servers() as (a, b):
        plan = tmp_path / "plan.toml"
        plan.write_text(PLAN.format(a=a.base_url, b=b.base_url), encoding="utf-8")
        out = tmp_path / "out"
        rc = main(
            ["pilot", "run", str(plan), "--out", str(out), "--unregistered", "--workers", "1"]
        )
    assert rc == 0, capsys.readouterr()
    for name in ("C+cur-r0", "B-armed+cur-r0"):
        assert verify(out / name).ok
        with Ledger.open(out / name) as led:
            assert [r.mind.name for r in led.session_records() if r.mind] == ["model-a", "model-b"]
