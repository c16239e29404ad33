"""CLI commands for blind packs: ``pack build``, ``pack leakcheck``, ``rate``, ``agreement``,
``unblind``, ``ratings export``. Domain work lives in ``curiosity_tui.packs``; the rating app is imported only
inside ``rate``."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from curiosity_tui.cli import ratings_cmds
from curiosity_tui.cli.csv_args import add_csv_arg, csv_out
from curiosity_tui.errors import InputError

if TYPE_CHECKING:
    from curiosity_tui.packs.build import BuildResult, RunMaterial
    from curiosity_tui.packs.leakcheck import LeakReport
    from curiosity_tui.packs.model_rater import ModelRatingRun
    from curiosity_tui.packs.rating import RatingSession
    from curiosity_tui.packs.schemes import Scheme


def register(sub: argparse._SubParsersAction) -> None:
    """The pack commands: ``pack build`` / ``leakcheck`` / ``export``, ``rate``, ``agreement``,
    ``unblind`` and ``ratings``, one named step each."""
    pack = sub.add_parser("pack", help="build blind packs and check them for leaks")
    psub = pack.add_subparsers(dest="pack_command", metavar="PACK_COMMAND")
    pack.set_defaults(handler=lambda args: (pack.print_help(), 2)[1])
    _register_pack_build(psub)
    _register_leakcheck(psub)
    _register_add_rater(psub)
    ratings_cmds.register_export(psub)
    _register_rate(sub)
    _register_agreement(sub)
    _register_unblind(sub)
    _register_ratings(sub)


def _register_pack_build(psub: argparse._SubParsersAction) -> None:
    """``pack build``: a blind pack from runs, then its leak check."""
    b = psub.add_parser(
        "build",
        help="build a blind pack from runs (ledgers or directories of ledgers)",
        description=(
            "Each run's sessions 1 and 5 become one item of three unnamed sections; the key "
            "(item → run, configuration) is written outside the pack, its sha256 in the manifest."
        ),
    )
    b.add_argument("runs", nargs="+", metavar="RUN_DIR_OR_LEDGER")
    b.add_argument(
        "--scheme",
        default=None,
        help="pilot-01, pilot-02, support-audit (one item per verified passage: does it "
        "establish its requirement?) or a scheme JSON file (default: the study plan's [pack] "
        "scheme when the runs are in a study folder, else pilot-01)",
    )
    b.add_argument("--out", required=True, type=Path, metavar="PACKDIR")
    b.add_argument("--seed", type=int, default=None, help="shuffle seed (kept in the key only)")
    b.add_argument(
        "--sessions",
        default=None,
        metavar="FIRST,LATER",
        help="the two sessions each item shows: numbers, 'first' or 'last' (default: the study "
        "plan's [pack] sessions, else 1,last: the first and the run's planned last session)",
    )
    b.add_argument(
        "--order",
        choices=("per-rater", "fixed"),
        default="per-rater",
        help="each rater sees the items in an order of their own (seeded by the pack and the "
        "rater's name; default), or every rater one fixed order",
    )
    b.add_argument(
        "--key-out",
        type=Path,
        default=None,
        help="where to write the key (default: PACKDIR/../NAME.key.json)",
    )
    b.add_argument("--raters", default="", help="expected raters, comma-separated (for unblind)")
    b.add_argument(
        "--min-raters", type=int, default=2, help="raters needed when --raters is not given"
    )
    b.add_argument(
        "--controls", type=int, default=1, help="control items per kind (schemes with controls)"
    )
    b.add_argument(
        "--control-runs",
        nargs="+",
        default=[],
        metavar="RUN_DIR_OR_LEDGER",
        help="runs kept out of the pack, used only to build control items",
    )
    b.add_argument(
        "--strict",
        action="store_true",
        help="refuse (and remove) the pack if the leak check finds a leak at p < 0.05 "
        "beyond the report's recorded family leak",
    )
    b.add_argument(
        "--leak-permutations",
        type=int,
        default=99,
        metavar="N",
        help="label permutations of the leak check run after the build (default 99)",
    )
    b.add_argument("--json", action="store_true")
    b.set_defaults(handler=_build)


def _register_leakcheck(psub: argparse._SubParsersAction) -> None:
    """``pack leakcheck``: can item format predict the configuration?"""
    lk = psub.add_parser(
        "leakcheck", help="can item format predict the configuration? (key holder only)"
    )
    lk.add_argument("packdir", type=Path, metavar="PACKDIR")
    lk.add_argument("--key", type=Path, default=None)
    lk.add_argument("--seed", type=int, default=0)
    lk.add_argument("--permutations", type=int, default=99)
    lk.add_argument("--json", action="store_true")
    lk.set_defaults(handler=_leakcheck)


def _register_add_rater(psub: argparse._SubParsersAction) -> None:
    """``pack add-rater``: one more expected rater, on the record (decision 406)."""
    ad = psub.add_parser(
        "add-rater", help="expect one more rater than the pack was built for (logged)"
    )
    ad.add_argument("packdir", type=Path, metavar="PACKDIR")
    ad.add_argument("rater", metavar="NAME")
    ad.add_argument("--by", required=True, help="who adds the rater (recorded in the pack log)")
    ad.set_defaults(handler=_add_rater)


def _register_rate(sub: argparse._SubParsersAction) -> None:
    """``rate``: a human in the terminal app, or a model rater with ``--model``."""
    r = sub.add_parser(
        "rate",
        help="rate a blind pack in the terminal app, or with --model as a model rater",
        description="A human rates in the terminal app. With --model, the model rates every "
        "item not yet rated through the same scheme and validators, as rater model:NAME.",
    )
    r.add_argument("packdir", type=Path, metavar="PACKDIR")
    r.add_argument(
        "--rater", required=True, metavar="NAME", help="NAME, or model:NAME with --model"
    )
    _model_rater_flags(r)
    r.set_defaults(handler=_rate)


def _register_agreement(sub: argparse._SubParsersAction) -> None:
    """``agreement``: agreement statistics on a pack's ratings."""
    a = sub.add_parser("agreement", help="agreement statistics on a pack's ratings")
    a.add_argument("packdir", type=Path, metavar="PACKDIR")
    a.add_argument("--json", action="store_true")
    a.add_argument("--boot", type=int, default=10_000, help="bootstrap samples (default 10000)")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--tui", action="store_true", help="show the agreement screen instead of text")
    a.add_argument(
        "--real-only",
        action="store_true",
        help="leave out control items (needs the key; only after unblind)",
    )
    a.add_argument("--key", type=Path, default=None)
    add_csv_arg(a, "one row per question × statistic (× rater pair)")
    a.add_argument(
        "--pool-groups",
        action="store_true",
        help="also report human and model raters pooled (rows labelled pooled)",
    )
    a.add_argument(
        "--min-seconds",
        type=float,
        default=None,
        metavar="S",
        help="list the ratings saved in less than S seconds on their item (timed ratings)",
    )
    a.set_defaults(handler=_agreement)


def _register_unblind(sub: argparse._SubParsersAction) -> None:
    """``unblind``: open the key once ratings are complete."""
    u = sub.add_parser(
        "unblind", help="open the key once ratings are complete; per-configuration tables"
    )
    u.add_argument("packdir", type=Path, metavar="PACKDIR")
    u.add_argument(
        "--force",
        action="store_true",
        help="open the key although ratings are incomplete (recorded)",
    )
    u.add_argument("--by", default=None, help="who is unblinding (default: the login name)")
    u.add_argument("--key", type=Path, default=None)
    u.add_argument("--json", action="store_true")
    add_csv_arg(u, "one row per item × question × rater, with run and configuration")
    u.set_defaults(handler=_unblind)


def _register_ratings(sub: argparse._SubParsersAction) -> None:
    rt = sub.add_parser(
        "ratings", help="export a pack's ratings (never the key); import a rater's file"
    )
    rsub = rt.add_subparsers(dest="ratings_command", metavar="ACTION")
    rt.set_defaults(handler=lambda args: (rt.print_help(), 2)[1])
    ex = rsub.add_parser(
        "export",
        help="every rater's latest rating of every item, one row per item × question × rater",
        description="CSV from the manifest and the ratings files only; the key is never read, "
        "so the export of a blind pack stays blind. Columns: docs/csv.md.",
    )
    ex.add_argument("packdir", type=Path, metavar="PACKDIR")
    add_csv_arg(ex, "one row per item × question × rater")
    ex.set_defaults(handler=_ratings_export)
    ratings_cmds.register_import(rsub)


def _model_rater_flags(r: argparse.ArgumentParser) -> None:
    g = r.add_argument_group("model rater (any OpenAI-compatible server)")
    g.add_argument("--model", default=None, help="the model that rates (rater model:NAME)")
    g.add_argument("--base-url", default=None, help="endpoint base URL (default: $OPENAI_BASE_URL)")
    g.add_argument(
        "--api-key", default=None, help="API key (default: $OPENAI_API_KEY); never stored"
    )
    g.add_argument("--concurrency", type=int, default=4, help="items rated at once (default 4)")
    g.add_argument(
        "--max-tokens", type=int, default=800, help="completion-token cap per rating (default 800)"
    )
    g.add_argument("--timeout", type=float, default=600.0, help="seconds per call (default 600)")
    g.add_argument("--max-retries", type=int, default=3, help="HTTP retries per call (default 3)")
    g.add_argument(
        "--response-format",
        choices=["auto", "json_schema", "json_object", "prompt"],
        default="auto",
        help="structured replies: auto (probe) or one fixed format",
    )
    g.add_argument("--json", action="store_true", help="print the run's summary as JSON")


def _print_json(model: object) -> None:
    from pydantic import BaseModel

    data = model.model_dump(mode="json") if isinstance(model, BaseModel) else model
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _build_support(args: argparse.Namespace, scheme: Scheme, raters: list[str]) -> int:
    """``pack build --scheme support-audit``: one item per verified passage (decision 520)."""
    from curiosity_tui.bounds import MAX_RATERS, check_count
    from curiosity_tui.packs.support_pack import build_support_pack, pairs_from_runs

    check_count(args.min_raters, flag="--min-raters", low=1, high=MAX_RATERS)
    res = build_support_pack(
        pairs_from_runs(args.runs),
        scheme,
        args.out,
        seed=args.seed,
        key_out=args.key_out,
        expected_raters=raters,
        min_raters=args.min_raters,
        order=args.order,
    )
    summary = {
        "pack": str(res.packdir),
        "pack_id": res.manifest.pack_id,
        "key": str(res.key_path),
        "key_sha256": res.manifest.key_sha256,
        "items": len(res.manifest.items),
        "runs": res.n_runs,
        "scheme": scheme.id,
        "notes": res.notes,
        "scripted": res.manifest.scripted,
    }
    if args.json:
        _print_json(summary)
        return 0
    print(
        f"built pack {res.manifest.pack_id} in {res.packdir}: {len(res.manifest.items)} "
        f"(requirement, passage) items from {res.n_runs} run(s), scheme {scheme.id}"
    )
    print(
        f"key: {res.key_path} (sha256 {res.manifest.key_sha256[:16]}…) — keep it away from raters"
    )
    for n in res.notes:
        print(f"note: {n}")
    return 0


def _study_of(runs: list[Path]) -> Path | None:
    """The study folder the first run lies in (or is), if any (decision 445)."""
    from curiosity_tui.analysis.study import is_study

    for p in runs[:1]:
        for folder in [p.resolve(), *p.resolve().parents]:
            if folder.is_dir() and is_study(folder):
                return folder
    return None


def _plan_pack_defaults(args: argparse.Namespace) -> None:
    """``--scheme`` and ``--sessions`` left unset follow the study plan's ``[pack]`` when the
    runs are in a study folder (the pack the plan was locked to produce), else pilot-01 and
    1,last; what was taken from the plan is said in one line."""
    if args.scheme is not None and args.sessions is not None:
        return
    study = _study_of([Path(r) for r in args.runs])
    pack = None
    if study is not None:
        from curiosity_tui.analysis.plan import PackPlan, PlanError, load_plan
        from curiosity_tui.analysis.study import PLAN_FILE

        try:
            plan, _ = load_plan(study / PLAN_FILE)
        except PlanError as err:
            raise InputError(f"{err} (pack build reads the study plan's [pack])") from None
        pack = plan.pack or PackPlan.model_validate({})
    taken = []
    if args.scheme is None:
        args.scheme = pack.scheme if pack else "pilot-01"
        if pack:
            taken.append(f"scheme {args.scheme}")
    if args.sessions is None:
        args.sessions = pack.sessions if pack else "1,last"
        if pack:
            taken.append(f"sessions {args.sessions}")
    if taken and study is not None:
        print(f"{' and '.join(taken)} from {study / 'plan.toml'} [pack]")


def _build(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.build import build_pack, collect_ledgers, material_from_ledger
    from curiosity_tui.packs.schemes import load_scheme
    from curiosity_tui.packs.session_pick import parse_session_pick

    _plan_pack_defaults(args)
    scheme = load_scheme(args.scheme)
    raters = [x.strip() for x in args.raters.split(",") if x.strip()]
    if scheme.id == "support-audit":
        return _build_support(args, scheme, raters)
    from curiosity_tui.bounds import MAX_CONTROLS, MAX_RATERS, check_count, check_permutations
    from curiosity_tui.packs.leakcheck import ALPHA

    check_count(args.min_raters, flag="--min-raters", low=1, high=MAX_RATERS)
    check_count(args.controls, flag="--controls", low=0, high=MAX_CONTROLS)
    # before anything is built: a count that cannot reach α makes --strict a gate that never shuts
    check_permutations(args.leak_permutations, flag="--leak-permutations", alpha=ALPHA)
    pick = parse_session_pick(args.sessions)
    materials = [material_from_ledger(p, sessions=pick) for p in collect_ledgers(args.runs)]
    held_out = [material_from_ledger(p, sessions=pick) for p in collect_ledgers(args.control_runs)]
    res = build_pack(
        materials,
        scheme,
        args.out,
        seed=args.seed,
        key_out=args.key_out,
        expected_raters=raters,
        min_raters=args.min_raters,
        controls_per_kind=args.controls,
        control_materials=held_out,
        sessions_spec=pick.spec(),
        order=args.order,
    )
    leaks = _leakcheck_after_build(res, strict=args.strict, permutations=args.leak_permutations)
    summary = {
        "pack": str(res.packdir),
        "pack_id": res.manifest.pack_id,
        "key": str(res.key_path),
        "key_sha256": res.manifest.key_sha256,
        "items": len(res.manifest.items),
        "runs": res.n_runs,
        "controls": res.n_controls,
        "configurations": res.configs,
        "scheme": scheme.id,
        "notes": res.notes,
        "leakcheck": leaks.model_dump(mode="json"),
        "scripted": res.manifest.scripted,
        "sessions": pick.spec(),
        "sessions_shown": _sessions_shown(materials),
    }
    if args.json:
        _print_json(summary)
        return 0
    print(
        f"built pack {res.manifest.pack_id} in {res.packdir}: {len(res.manifest.items)} items "
        f"({res.n_runs} runs, {res.n_controls} controls), scheme {scheme.id}"
    )
    print(
        "runs per configuration: " + ", ".join(f"{k} {v}" for k, v in sorted(res.configs.items()))
    )
    shown = _sessions_shown(materials)
    print(
        f"sessions shown ({pick.spec()}): "
        + ", ".join(f"{k} in {n} run(s)" for k, n in shown.items())
    )
    print(
        f"key: {res.key_path} (sha256 {res.manifest.key_sha256[:16]}…) — keep it away from raters"
    )
    if res.manifest.scripted:
        print("built from scripted runs (no model): practice material, recorded in the manifest")
    for n in res.notes:
        print(f"note: {n}")
    print(format_leaks(leaks, brief=True))
    return 0


def _sessions_shown(materials: list[RunMaterial]) -> dict[str, int]:
    """How many runs show each pair of sessions, e.g. {"1 and 5": 8, "1 and 3": 4}."""
    out: dict[str, int] = {}
    for m in materials:
        k = f"{m.sessions[0]} and {m.sessions[1]}"
        out[k] = out.get(k, 0) + 1
    return out


def _leakcheck_after_build(res: BuildResult, *, strict: bool, permutations: int) -> LeakReport:
    """Run the leak check on the new pack; under ``strict`` a leak removes the pack and its
    key (both were created by this build) and fails with one line."""
    import shutil

    from curiosity_tui.packs.leakcheck import leakcheck
    from curiosity_tui.packs.pack import PackError

    rep = leakcheck(res.packdir, key_path=res.key_path, permutations=permutations)
    bad = rep.refusing()
    if strict and bad:
        shutil.rmtree(res.packdir)
        res.key_path.unlink(missing_ok=True)
        first = bad[0]
        raise PackError(
            f"{res.packdir}: refused under --strict and removed: the leak check separates "
            f"{first.task} ({first.accuracy:.2f} accuracy against {first.chance:.2f} chance, "
            f"p = {first.p_value:.3f}); {len(bad)} leaking task(s)"
        )
    return rep


def _add_rater(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.rater_add import add_rater

    seq = add_rater(args.packdir, args.rater, by=args.by)
    print(f"{args.packdir}: rater {args.rater} added (pack log seq {seq})")
    return 0


def _leakcheck(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.leakcheck import leakcheck

    _refuse_export(args.packdir, "pack leakcheck")
    rep = leakcheck(args.packdir, key_path=args.key, seed=args.seed, permutations=args.permutations)
    if args.json:
        _print_json(rep)
        return 0
    print(format_leaks(rep))
    return 0


def format_leaks(rep: LeakReport, *, brief: bool = False) -> str:
    """The leak report as text; ``brief``: one line per testable task (for ``pack build``)."""
    if brief:
        lines = [f"leak check ({rep.lexical}; format counts):"]
        for t in rep.tasks:
            if t.accuracy is not None:
                mark = "LEAK" if t.leaks else "ok  "
                lines.append(
                    f"  {mark} {t.task}: accuracy {t.accuracy:.2f} vs chance {t.chance:.2f}, "
                    f"p = {t.p_value:.3f}{' (residual, recorded)' if t.residual else ''}"
                )
        untestable = sum(1 for t in rep.tasks if t.accuracy is None)
        if untestable:
            lines.append(f"  {untestable} task(s) not testable (a class with fewer than 2 items)")
        return "\n".join(lines)
    lines = [f"leak check of pack {rep.pack_id}: {rep.classifier}; lexical: {rep.lexical}"]
    for t in rep.tasks:
        classes = ", ".join(f"{k} {v}" for k, v in t.classes.items())
        lines.append(f"\n{t.task}: {t.description}\n  items: {t.n_items} ({classes})")
        if t.accuracy is not None:
            top = f"; strongest features: {', '.join(t.top_features)}" if t.top_features else ""
            lines.append(
                f"  accuracy {t.accuracy:.2f} vs chance {t.chance:.2f}, p = {t.p_value:.3f}, "
                f"{t.folds}-fold{top}"
            )
        lines.append(f"  {t.verdict}")
    return "\n".join(lines)


def _refuse_export(packdir: Path, command: str) -> None:
    """A rater's exported copy holds one rater's work: whole-pack commands refuse it."""
    from curiosity_tui.packs.pack import Pack

    Pack.open(packdir).refuse_export(command)


def _rate(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.rating import RatingSession, rater_group

    # Validate before starting the app so errors are one line on stderr.
    session = RatingSession(args.packdir, args.rater)
    if args.model is not None or rater_group(session.rater) == "model":
        return _rate_with_model(args, session)
    from curiosity_tui.app.standalone import RatingApp

    RatingApp(session.pack.path, session.rater).run()
    return 0


def _rate_with_model(args: argparse.Namespace, session: RatingSession) -> int:
    import asyncio

    from curiosity_tui.packs.model_rater import format_model_run
    from curiosity_tui.packs.rating import rater_group
    from curiosity_tui.textsafe import terminal_safe

    if rater_group(session.rater) != "model":
        raise InputError(
            f"--model rates as a model rater: name it model:NAME, not {session.rater!r}"
        )
    if not args.model:
        raise InputError(f"rater {session.rater!r} is a model rater: pass --model (and --base-url)")
    from curiosity_tui.bounds import MAX_CONCURRENCY, MAX_TOKENS, check_count

    check_count(args.concurrency, flag="--concurrency", low=1, high=MAX_CONCURRENCY)
    check_count(args.max_tokens, flag="--max-tokens", low=1, high=MAX_TOKENS)
    from curiosity_tui.bounds import check_call_numbers

    check_call_numbers(args)
    run = asyncio.run(_model_run(args, session))
    if args.json:
        _print_json(run)
    else:
        print(format_model_run(run))
    if run.missing:  # not a success: name how many stayed missing and the first reason
        why = " ".join(next(iter(run.missing.values())).split())
        print(
            terminal_safe(
                f"rate: {len(run.missing)} of {len(run.attempted)} item(s) still missing "
                f"(first: {why[:300]}); run the same command again to retry them"
            ),
            file=sys.stderr,
        )
        return 1
    return 0


async def _model_run(args: argparse.Namespace, session: RatingSession) -> ModelRatingRun:
    from curiosity_tui.modelio.client import ModelClient
    from curiosity_tui.modelio.endpoint import EndpointOptions, prepare_endpoint
    from curiosity_tui.packs.model_rater import rate_pack

    async with ModelClient(
        base_url=args.base_url,
        api_key=args.api_key,
        model=args.model,
        timeout_s=args.timeout,
        max_retries=args.max_retries,
        response_format=args.response_format,
    ) as client:
        caps = await prepare_endpoint(client, EndpointOptions(response_format=args.response_format))
        if not args.json:
            print(f"endpoint: {caps.summary()}")
        slots = client.server_slots
        limit = min(args.concurrency, slots) if slots else args.concurrency

        def progress(item: str, ok: bool) -> None:
            if not args.json:  # one line an item: a CPU model takes minutes over a pack
                print(f"  {item}: {'rated' if ok else 'missing'}", flush=True)

        return await rate_pack(
            session,
            client,
            concurrency=limit,
            max_tokens=args.max_tokens,
            progress=progress,
            dialect=caps.schema_dialect or "strict",
        )


def _agreement(args: argparse.Namespace) -> int:
    from curiosity_tui.bounds import MAX_BOOT, check_count, check_seed
    from curiosity_tui.packs.pack_agreement import format_agreement, pack_agreement

    check_count(args.boot, flag="--boot", low=10, high=MAX_BOOT)  # docs/errors.md, Numbers
    check_seed(args.seed)
    _refuse_export(args.packdir, "agreement")
    if args.tui:
        from curiosity_tui.app.standalone import AgreementApp
        from curiosity_tui.packs.pack import Pack

        Pack.open(args.packdir)  # fail with one line before the terminal is taken over
        AgreementApp(args.packdir, n_boot=args.boot, seed=args.seed).run()
        return 0
    rep = pack_agreement(
        args.packdir,
        n_boot=args.boot,
        seed=args.seed,
        real_only=args.real_only,
        key_path=args.key,
        pool_groups=args.pool_groups,
        min_seconds=args.min_seconds,
    )
    if args.csv is not None:
        from curiosity_tui.packs.pack_csv import AGREEMENT_COLUMNS, agreement_rows

        csv_out(args.csv, AGREEMENT_COLUMNS, agreement_rows(rep))
    elif args.json:
        _print_json(rep)
    else:
        print(format_agreement(rep))
    return 0


def _ratings_export(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.pack import Pack
    from curiosity_tui.packs.pack_csv import RATINGS_COLUMNS, ratings_rows

    pack = Pack.open(args.packdir)
    csv_out(args.csv or "-", RATINGS_COLUMNS, ratings_rows(pack))
    return 0


def _unblind(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.unblind import unblind
    from curiosity_tui.packs.unblind_text import format_unblind

    _refuse_export(args.packdir, "unblind")
    by = args.by or getpass.getuser()
    rep = unblind(args.packdir, by=f"human:{by}", force=args.force, key_path=args.key)
    if args.csv is not None:
        from curiosity_tui.packs.pack_csv import UNBLIND_COLUMNS, unblind_rows

        csv_out(args.csv, UNBLIND_COLUMNS, unblind_rows(rep))
    elif args.json:
        _print_json(rep)
    else:
        print(format_unblind(rep))
    if rep.forced:
        print(
            "warning: the key was opened with ratings incomplete (--force); recorded in the pack log",
            file=sys.stderr,
        )
    return 0
