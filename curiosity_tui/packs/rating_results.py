"""The rating results in the report (issue 28 item 8, decision 561), after the GRRAS items of
:mod:`curiosity_tui.packs.grras`: the pack scheme (which sessions an item shows), the
adjudication counts (blind: from the ratings and ``adjudication.jsonl``), and — once
``unblind`` has opened the key (the pack log says so) — the unblinded tables per arm, raw
(per rater group) and adjudicated side by side and labelled, and the control items' outcomes.

The report never opens the key itself: before ``unblind`` it says the key is closed, and it
reads the key (read-only, checked against the pack's recorded hash) only after the log holds
a ``key_opened`` entry. It looks for the key where ``pack build`` puts it: ``--key``, beside
the pack, or in a study's ``keys/`` folder (``study init``'s layout)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from curiosity_tui.packs.disagreement import AdjudicationState, adjudication_state
from curiosity_tui.packs.grras import md_table
from curiosity_tui.packs.pack import Pack, PackError, default_key_path, sha256_bytes
from curiosity_tui.packs.rating import rater_group
from curiosity_tui.packs.unblind import (
    ConfigTable,
    ControlResult,
    KeyedTables,
    keyed_tables,
    read_key,
)

__all__ = ["RatingResults", "find_key", "rating_results"]


@dataclass
class RatingResults:
    """The section's Markdown lines and, for figures, each question's per-arm run tables:
    (question, [(set label, table)]) with the raw sets first and the adjudicated set last."""

    lines: list[str]
    figures: list[tuple[str, list[tuple[str, ConfigTable]]]] = field(default_factory=list)
    scripted: bool = False


def find_key(pack: Pack, given: Sequence[Path] = ()) -> Path | None:
    """The pack's key among ``given`` and the places ``pack build`` writes it (beside the pack,
    under the manifest's key name, and a study's ``keys/``): the first whose sha256 is the one
    the pack recorded; None when none is at hand."""
    name = pack.manifest.key_name
    here = pack.path.resolve()
    places = [
        *given,
        default_key_path(here),
        here.parent / name,
        here.parent.parent / "keys" / name,
    ]
    for path in places:
        try:
            if sha256_bytes(Path(path).read_bytes()) == pack.manifest.key_sha256:
                return Path(path)
        except OSError:
            continue
    return None


def _scheme_lines(pack: Pack) -> list[str]:
    m = pack.manifest
    shown = m.sessions or "1,last"
    return [
        f"**Pack scheme.** Scheme `{pack.scheme.id}` (version {pack.scheme.version}, sha256 "
        f"{m.scheme_sha256[:12]}…); each item shows sessions `{shown}` of its run (first and "
        f"later output, the later session's input between them); {len(m.items)} items "
        f"including control items; expected raters: {', '.join(m.expected_raters) or 'any'} "
        f"(at least {m.min_raters})."
    ]


def _adjudication_lines(state: AdjudicationState) -> list[str]:
    if not state.complete:
        return [
            f"**Adjudication.** Ratings are incomplete ({state.reason}): disagreements are "
            f"counted once they are complete; {len(state.records)} adjudication record(s)."
        ]
    found = state.disagreements
    settled = [d for d in found if d.adjudication is not None]
    stale = [d for d in settled if d.stale]
    by_q: dict[str, int] = {}
    for d in found:
        by_q[d.question] = by_q.get(d.question, 0) + 1
    per_q = ", ".join(f"{q}: {n}" for q, n in by_q.items()) or "none"
    return [
        f"**Adjudication.** {len(found)} disagreement(s) (item × question; {per_q}); "
        f"{len(settled)} adjudicated by the coordinator before unblinding, "
        f"{len(found) - len(settled)} left split; {len(stale)} adjudicated against categories "
        f"a rater revised since; {len(state.records)} record(s) in adjudication.jsonl "
        "(`adjudication list --csv`). Adjudicated categories never enter agreement."
    ]


def _runs_table(q: str, sets: list[tuple[str, ConfigTable]]) -> list[str]:
    cats = [*sets[0][1].categories, "split"]
    rows: list[list[object]] = []
    for label, t in sets:
        for arm, row in t.by_run.items():
            rows.append([label, arm, *(row.get(c, 0) for c in cats), t.runs.get(arm, 0)])
    return [
        f"*{q}: runs per arm* (a run takes its raters' category when they agree, else "
        "`split`; the adjudicated set gives a split run the coordinator's category)",
        "",
        *md_table(["set", "arm", *cats, "runs"], rows),
        "",
    ]


def _control_lines(controls: list[ControlResult], groups: dict[str, str]) -> list[str]:
    if not controls:
        return ["**Control items.** The pack has none."]
    rows: list[list[object]] = []
    for c in controls:
        for qid, want in c.expected.items():
            got = {r: a.get(qid, "-") for r, a in sorted(c.ratings.items())}
            hits = sum(1 for v in got.values() if v == want)
            chosen = ", ".join(f"{r} ({groups.get(r, rater_group(r))})={v}" for r, v in got.items())
            rows.append([c.item, c.kind, qid, want, chosen or "no ratings", f"{hits}/{len(got)}"])
    return [
        "**Control items** (expected category → what each rater chose):",
        "",
        *md_table(["item", "kind", "question", "expected", "chosen", "as expected"], rows),
    ]


def _keyed_lines(pack: Pack, kt: KeyedTables, res: RatingResults) -> list[str]:
    lines = [
        "**Unblinded tables** (raw: the raters' latest categories, per rater group, never "
        "pooled; adjudicated: labelled, beside the raw ones, never mixed into them):",
        "",
    ]
    for q in pack.scheme.questions:
        sets = [(f"raw, {t.group} raters", t) for t in kt.tables if t.question == q.id]
        sets += [("adjudicated", t) for t in kt.adjudicated_tables if t.question == q.id]
        if not sets:
            continue
        lines += _runs_table(q.id, sets)
        res.figures.append((q.id, sets))
    return [*lines, *_control_lines(kt.controls, kt.rater_groups)]


def rating_results(packdir: str | Path, *, keys: Sequence[Path] = ()) -> RatingResults:
    """The rating results for one pack (see the module's docstring)."""
    pack = Pack.open(packdir)
    state = adjudication_state(pack)
    res = RatingResults(lines=[], scripted=pack.manifest.scripted)
    lines = _scheme_lines(pack) + [""] + _adjudication_lines(state) + [""]
    if state.key_opened is None:
        lines.append(
            "**Unblinded results.** The key is still closed: the tables per arm, the control "
            "items' outcomes and the adjudicated tables appear here once `unblind` has opened "
            "it (the report never opens it)."
        )
    elif (path := find_key(pack, keys)) is None:
        lines.append(
            f"**Unblinded results.** The key was opened (pack log seq {state.key_opened}) but "
            f"is not at hand: give `report --key` the file {pack.manifest.key_name}."
        )
    else:
        try:
            kt = keyed_tables(pack, read_key(pack, path))
        except PackError as err:
            lines.append(f"**Unblinded results.** Not shown: {err}.")
        else:
            lines.append(f"Unblinded with the key opened at pack log seq {state.key_opened}.")
            lines += ["", *_keyed_lines(pack, kt, res)]
    res.lines = [*lines, ""]
    return res
