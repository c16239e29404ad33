"""``pilot run`` with a human-curated arm (issue 28 item 4, decision 560): the plan's unattended
runs go first (model-curated and uncurated arms, over workers as before); then each run of an
arm with ``curator = "human"`` is hosted in the app's run monitor, one after another, exactly
as ``run LEDGER --curator human`` hosts one ledger: the curator screen opens between sessions
and "continue" starts the next. Quitting the app leaves the run resumable: the same
``pilot run`` resumes it (the unattended runs are already done and are not run again)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curiosity_tui.errors import InputError


def attended(specs: Sequence[Any]) -> list[Any]:
    """The runs a person curates (their ledgers' curator is ``human``)."""
    return [s for s in specs if s.meta.curator == "human"]


def unattended(specs: Sequence[Any]) -> list[Any]:
    return [s for s in specs if s.meta.curator != "human"]


def check_curator(plan: Any, specs: Sequence[Any], args: argparse.Namespace) -> str:
    """The curator's name (``--curator-name``, ``$CURIOSITY_CURATOR``, ``$USER``), refused
    before any run when an arm's ``curators`` list does not name them."""
    from curiosity_tui.cli.run_cmds import curator_name

    name = curator_name(args)
    for spec in specs:
        arm_name = spec.meta.options.get("arm")
        allowed = plan.arm(arm_name).curators if arm_name else None
        if allowed and name not in allowed:
            raise InputError(
                f"{args.plan}: arms.{arm_name}.curators = {allowed}: {name!r} may not curate "
                "it; pass --curator-name NAME (one of them)"
            )
    return name


def _announce(specs: Sequence[Any], name: str) -> None:
    arms: dict[str, int] = {}
    for s in specs:
        arm = str(s.meta.options.get("arm") or s.meta.config)
        arms[arm] = arms.get(arm, 0) + 1
    which = ", ".join(f"{a} ({n} run{'s' if n > 1 else ''})" for a, n in arms.items())
    print(f"human-curated: {which}; the app hosts each run for curator {name}")


def host_attended(
    args: argparse.Namespace, plan: Any, specs: Sequence[Any], name: str
) -> list[Any]:
    """Host each human-curated run in the app; stop at the first one left unfinished (the
    person quit: the rest wait for the next ``pilot run``). One RunResult per run hosted."""
    from curiosity_tui.cli import run_cmds

    if not specs:
        return []
    _announce(specs, name)
    results: list[Any] = []
    for spec in specs:
        res = _host_one(args, plan, spec, name, run_cmds)
        results.append(res)
        if res.failed or res.sessions_done < plan.sessions:
            break
    return results


def _host_one(args: argparse.Namespace, plan: Any, spec: Any, name: str, run_cmds: Any) -> Any:
    from curiosity_tui.cli.run_cmds import _closing, _embedder
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.runs.runner import RunResult
    from curiosity_tui.screens.monitor import RunRequest

    path: Path = args.out / spec.name
    Ledger.create(path, spec.meta, exist_ok=True).close()
    with run_cmds.model_client(args, plan.model) as client:  # refuse in one line, app closed
        caps = asyncio.run(_closing(client, run_cmds.probed(client, args)))
    req = RunRequest(
        ledger=path,
        sessions=plan.sessions,
        curator=name,
        client_factory=lambda: run_cmds.model_client(args, plan.model),
        embedder_factory=lambda client: _embedder(args, client, caps),
        endpoint=caps,
        overrides=run_cmds.call_overrides(args),
    )
    print(f"{spec.name}: opening the run monitor (curator {name})")
    run_cmds.host_run(req, name)
    if isinstance(req.result, RunResult):
        return RunResult(
            ledger=spec.name,
            sessions_done=req.result.sessions_done,
            failed=list(req.result.failed),
            wall_s=req.result.wall_s,
        )
    with Ledger.open(path) as led:
        done = led.last_session
    failed = [(done + 1, req.error)] if req.error else []
    return RunResult(ledger=spec.name, sessions_done=done, failed=failed)
