"""The support-audit pack (issue 26.3, decision 520): a blind pack of (requirement, passage)
pairs, one item per verified evidence record of the runs, so that raters judge — with the
``support-audit`` scheme's one nominal question: supports / does not / partly, with grounds —
whether a passage the match check verified establishes the requirement it was cited for, and
the rate of verified-but-unsupported evidence can be measured with κ (``agreement``).

Blind: an item shows the question, the required fact and the passage, node ids relabelled;
never the run, its configuration or contract, the checker's words, nor any support judgement
already recorded. The key (item → run, ledger, ``node/evidence``) goes outside the pack as for
every pack; items are shuffled under opaque ids.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from curiosity_tui.contract.support import verified_items
from curiosity_tui.packs.build import (
    BuildResult,
    _check_destination,
    _new_id,
    _seal,
    _write_or_undo,
    collect_ledgers,
)
from curiosity_tui.packs.controls import Staged
from curiosity_tui.packs.pack import KeyEntry, PackError, PackItem
from curiosity_tui.packs.schemes import Scheme
from curiosity_tui.packs.uniform import relabel

SCHEME_ID = "support-audit"


@dataclass(frozen=True)
class SupportPair:
    """One verified evidence record of a run: what a support-audit item shows, and its key."""

    run: str
    ledger: str
    config: str
    node: str
    evidence_id: str
    question: str
    requirement: str
    passage: str
    session: int
    scripted: bool = False


def pairs_from_ledger(path: str | Path) -> list[SupportPair]:
    """Every verified evidence record of a ledger whose requirement is still in force."""
    from curiosity_tui.ledger import Ledger

    p = Path(path)
    with Ledger.open(p) as led:
        meta = led.meta
        return [
            SupportPair(
                run=meta.name or p.name,
                ledger=str(p.resolve()),
                config=meta.config,
                node=i.node,
                evidence_id=i.evidence_id,
                question=i.node_text,
                requirement=i.requirement_text,
                passage=i.passage,
                session=i.session,
                scripted=bool(meta.options.get("scripted")),
            )
            for i in verified_items(led.raw_nodes())
        ]


def pairs_from_runs(paths: Sequence[str | Path]) -> list[SupportPair]:
    """The pairs of every ledger named (ledgers or folders of ledgers); refused when none
    has a verified passage."""
    pairs = [pair for p in collect_ledgers(paths) for pair in pairs_from_ledger(p)]
    if not pairs:
        raise PackError(
            "no verified evidence in the runs given: a support-audit pack pairs requirements "
            "with passages the match check verified"
        )
    return pairs


def build_support_pack(
    pairs: Sequence[SupportPair],
    scheme: Scheme,
    out: str | Path,
    *,
    seed: int | None = None,
    key_out: str | Path | None = None,
    expected_raters: Sequence[str] = (),
    min_raters: int = 2,
    order: str = "per-rater",
) -> BuildResult:
    """Write the pack (one item per pair, shuffled) and its key outside it."""
    if scheme.id != SCHEME_ID:
        raise PackError(
            f"a support-audit pack is rated with the {SCHEME_ID} scheme, not {scheme.id}"
        )
    if not pairs:
        raise PackError("no (requirement, passage) pairs given")
    packdir = Path(out)
    key_path = _check_destination(packdir, pairs, expected_raters, key_out)
    if seed is None:
        seed = secrets.randbits(31)
    rng = random.Random(seed)
    taken: set[str] = set()
    staged: list[Staged] = []
    for pair in pairs:
        iid = _new_id(rng, taken)
        sections = relabel([pair.question, pair.requirement, pair.passage], rng)
        entry = KeyEntry(
            item=iid,
            run=pair.run,
            ledger=pair.ledger,
            config=pair.config,
            sessions=[pair.session],
            evidence=f"{pair.node}/{pair.evidence_id}",
        )
        staged.append((PackItem(id=iid, sections=sections), entry))
    rng.shuffle(staged)
    key_bytes, ib, manifest = _seal(staged, scheme, seed, key_path, expected_raters, min_raters)
    manifest.scripted = any(p.scripted for p in pairs)
    manifest.order = "per-rater" if order == "per-rater" else "fixed"
    _write_or_undo(packdir, key_path, key_bytes, ib, manifest, 0)
    configs: dict[str, int] = {}
    for p in pairs:
        configs[p.config] = configs.get(p.config, 0) + 1
    return BuildResult(
        packdir=packdir,
        key_path=key_path,
        manifest=manifest,
        n_runs=len({p.ledger for p in pairs}),
        n_controls=0,
        configs=configs,
        notes=[f"{len(pairs)} (requirement, passage) pair(s); no control items"],
    )
