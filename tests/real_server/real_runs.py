"""One run as a user does it: ``ledger new``, ``run --base-url … --model …``, ``verify``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from real_cli import CliResult, run_cli
from real_figures import LedgerFigures, ledger_figures

SEED = (
    "Why did printed pamphlets spread the Reformation faster in some German cities than in others?"
)

# The dialect is the probe's unless a test names one: on llama-server json_schema is honoured and
# the dialect trial too, so "full" (a grammar with counts and lengths); "strict" says the same
# enforced rules by the replies' shapes (issue 27, decision 360).
#
# --timeout 1800: a one-slot CPU server answers one request at a time, and a small model may
# write to its cap; on a loaded 2-core machine one such call has taken more than the 600 s
# default.
#: the tier's small models run at the server's own temperature and top_p, stated on every call
#: (issue 23): at the protocol's temperature 0 for judges, SmolLM2-135M loops inside
#: judge-before's JSON until its cap (docs/decisions/380)
SERVER_FLAGS: tuple[str, ...] = (
    "--timeout",
    "1800",
    "--sampling",
    "temperature=server-default",
    "--sampling",
    "top_p=server-default",
)


@dataclass(frozen=True)
class RunOutcome:
    ledger: Path
    created: CliResult
    run: CliResult
    verify: CliResult
    figures: LedgerFigures

    def explain(self) -> str:
        failures = "\n".join(self.figures.failures)
        return f"{self.run.explain()}\nsession_failed reasons:\n{failures}\n{self.verify.explain()}"


RESUME_HINT = "run the same command again to resume"


def run_resuming(args: tuple[str, ...], *, cwd: Path, resumes: int) -> tuple[CliResult, int]:
    """``curiosity-tui ARGS``, run again (it resumes) up to ``resumes`` times while it stops
    with the CLI's own resume advice: a tiny model's reply cut at its cap fails a session, and
    the ledger stays consistent for the next try. Returns the last result and the re-runs."""
    run = run_cli(*args, cwd=cwd)
    done = 0
    while run.returncode != 0 and done < resumes and RESUME_HINT in run.stdout + run.stderr:
        done += 1
        print(f"real-server: resumed after: {run.stderr.strip().splitlines()[-1:]}")
        run = run_cli(*args, cwd=cwd)
    return run, done


def run_configuration(
    run_dir: Path,
    *,
    config: str,
    contract: str,
    sessions: int,
    base_url: str,
    model: str,
    extra: tuple[str, ...] = (),
    dialect: str | None = None,
    resumes: int = 0,
) -> RunOutcome:
    """Create a ledger for CONFIG under CONTRACT, run SESSIONS sessions (in ``dialect``, else the
    probe's), verify, record figures. ``resumes``: how many times a run that stopped with "run
    the same command again to resume" is run again, as its user would (recorded in results)."""
    ledger = run_dir / "ledger"
    created = run_cli(
        "ledger",
        "new",
        str(ledger),
        "--seed",
        SEED,
        "--config",
        config,
        "--contract",
        contract,
        cwd=run_dir,
    )
    assert created.returncode == 0, created.explain()
    run, resumed = run_resuming(
        (
            "run",
            str(ledger),
            "--sessions",
            str(sessions),
            "--base-url",
            base_url,
            "--model",
            model,
            *SERVER_FLAGS,
            *(("--schema-dialect", dialect) if dialect else ()),
            *extra,
        ),
        cwd=run_dir,
        resumes=resumes,
    )
    verify = run_cli("verify", str(ledger), cwd=run_dir)
    figures = ledger_figures(ledger)
    results = run_dir.parent.parent / "results.jsonl"
    entry = {
        "test": run_dir.name,
        "returncode": run.returncode,
        "resumed": resumed,
        "figures": figures.model_dump(),
    }
    with results.open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    return RunOutcome(ledger, created, run, verify, figures)


def assert_completed(outcome: RunOutcome, sessions: int) -> None:
    """The run committed every planned session and its ledger verifies."""
    assert outcome.run.returncode == 0, outcome.explain()
    assert outcome.figures.sessions_committed == sessions, outcome.explain()
    assert outcome.verify.returncode == 0, outcome.explain()
    assert "hash chain intact" in outcome.verify.stdout, outcome.explain()


def assert_protocol_records(outcome: RunOutcome) -> None:
    """A C run records, per session, its decision, its Δ and its dependency-check count."""
    figures = outcome.figures
    assert figures.decisions and all(d in ("ANSWER", "PRESERVE") for d in figures.decisions), (
        figures
    )
    assert all(isinstance(d, float) for d in figures.deltas), figures
    assert all(isinstance(n, int) and n >= 0 for n in figures.dependency_checks), figures
    assert figures.calls_by_kind.get("judge-after", 0) >= figures.sessions_committed, figures
