#!/usr/bin/env python3
"""Regenerate the example workspace: ledgers/ (and packs/ when the pack builder is present).

Every ledger is built through the real runner against the built-in scripted model server, never
as hand-written JSON. "Scripted" is recorded in each run's metadata (``options.scripted``) and
shown by the app and the pack manifest; the texts themselves carry no label:

- example-<config>-pilot02: one five-session run of each of the six configurations, replies
  drawn per run, session and call kind from the research bank (offline/research.py);
- episode-grabe-pilot01 / -pilot02 and episode-suppression-pilot01 / -pilot02: the report's two
  §5 episodes replayed under both contracts;
- evidence-pilot02: a C-cur run with the example source added, whose return conditions ask for
  what the source states, so checks cite its passages verbatim and evidence is verified;
- example-relay-C+cur: a five-session C+cur relay between two scripted models, A -> B -> A ->
  B -> A (offline/relay_demo.py); each session record names its mind.

Usage: python scripts/build_examples.py [--out WORKSPACE] [--relay-only]   (default: repo root)
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curiosity_tui.contract.sources import add_source  # noqa: E402
from curiosity_tui.ledger import Ledger, RunMeta, verify  # noqa: E402
from curiosity_tui.modelio.client import ModelClient  # noqa: E402
from curiosity_tui.offline.demo import DemoResponder  # noqa: E402
from curiosity_tui.offline.episodes import EPISODES  # noqa: E402
from curiosity_tui.offline.relay_demo import run_scripted_relay  # noqa: E402
from curiosity_tui.offline.research import ResearchResponder  # noqa: E402
from curiosity_tui.offline.scripted_server import ScriptedServer  # noqa: E402
from curiosity_tui.protocol.configs import CONFIG_NAMES, get_configuration  # noqa: E402
from curiosity_tui.runs.runner import run_ledger  # noqa: E402

SEED = "Did the printing press cause the Reformation?"
SOURCE_TEXT = ROOT / "scripts" / "example_source.txt"


def _slug(name: str) -> str:
    return name


async def _run(
    path: Path,
    meta: RunMeta,
    responder: DemoResponder | ResearchResponder,
    sessions: int = 5,
    sources: list[Path] | None = None,
) -> None:
    with ScriptedServer(responder=responder) as srv:
        client = ModelClient(
            base_url=srv.base_url, api_key="scripted", model="scripted-demo", retry_backoff_s=0.05
        )
        led = Ledger.create(path, meta)
        try:
            for src in sources or []:
                add_source(
                    led,
                    src,
                    title=src.stem.replace("_", " "),
                    locator="scripts/" + src.name,
                    actor="system",
                )
            result = await run_ledger(led, client, sessions=sessions)
        finally:
            led.close()
        await client.aclose()
    if result.failed:
        raise SystemExit(
            f"{path.name}: session {result.failed[0][0]} failed: {result.failed[0][1]}"
        )


def meta_for(name: str, config: str, contract: str) -> RunMeta:
    cfg = get_configuration(config)
    return RunMeta(
        name=name,
        seed=SEED,
        config=config,
        contract=contract,  # type: ignore[arg-type]
        curator="model" if cfg.curator else "none",
        model="scripted-demo",
        options={"scripted": True, "planned_sessions": 5},
    )


RELAY_EXAMPLE = "example-relay-C+cur"


def build_relay_example(ledgers: Path) -> bool:
    """The relay example (replaced if present); True if it verifies."""
    path = ledgers / RELAY_EXAMPLE
    if path.exists():
        shutil.rmtree(path)
    meta = meta_for(RELAY_EXAMPLE, "C+cur", "pilot-02").model_copy(update={"model": "scripted-a"})
    result = asyncio.run(run_scripted_relay(path, meta, 5))
    report = verify(path)
    print(f"{path}: {report.summary()}")
    return report.ok and not result.failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT)
    ap.add_argument("--relay-only", action="store_true", help="rebuild only the relay example")
    args = ap.parse_args()
    ledgers = args.out / "ledgers"
    if args.relay_only:
        ledgers.mkdir(parents=True, exist_ok=True)
        return 0 if build_relay_example(ledgers) else 1
    if ledgers.exists():
        shutil.rmtree(ledgers)
    ledgers.mkdir(parents=True)
    jobs = []
    for config in CONFIG_NAMES:
        name = f"example-{_slug(config)}-pilot02"
        responder = ResearchResponder()
        jobs.append((ledgers / name, meta_for(name, config, "pilot-02"), responder, None))
    for episode, (responder_cls, config) in EPISODES.items():
        for contract in ("pilot-01", "pilot-02"):
            name = f"episode-{episode}-{contract.replace('-', '')}"
            replay = responder_cls(label="")
            jobs.append((ledgers / name, meta_for(name, config, contract), replay, None))
    jobs.append(
        (
            ledgers / "evidence-pilot02",
            meta_for("evidence-pilot02", "C-cur", "pilot-02"),
            ResearchResponder(supported_only=True),
            [SOURCE_TEXT],
        )
    )
    for path, meta, responder, sources in jobs:
        asyncio.run(_run(path, meta, responder, sources=sources))
        report = verify(path)
        print(f"{path.relative_to(args.out)}: {report.summary()}")
        if not report.ok:
            return 1
    if not build_relay_example(ledgers):
        return 1
    packs = args.out / "packs"
    if packs.exists():
        shutil.rmtree(packs)
    from curiosity_tui.cli import main as cli

    examples = [str(ledgers / f"example-{_slug(c)}-pilot02") for c in CONFIG_NAMES]
    for scheme in ("pilot-01", "pilot-02"):
        code = cli(
            [
                "pack",
                "build",
                *examples,
                "--scheme",
                scheme,
                "--out",
                str(packs / f"example-{scheme}"),
                "--seed",
                "7",
            ]
        )
        if code:
            return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
