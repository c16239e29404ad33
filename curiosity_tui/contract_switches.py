"""The contract's two switches (S13) and how a contract is named in run metadata.

- ``evidence = asserted | verified | supported``: may a check mark a requirement satisfied on
  the model's own statement (``asserted``), only with a verified evidence record
  (``verified``), or only with a verified record a judge the run admits said establishes the
  requirement (``supported``: a human, or the model judge the plan names; decision 520)?
- ``closure = unconditional | binding | binding+downgrade``: does an unmet requirement block
  closure, and is there a human-decided downgrade route?

A run's contract is stored as a string (decision 230): a preset's name (``pilot-01``,
``pilot-02``) when it was chosen by that name, else the canonical
``evidence=<e>,closure=<c>``. The combination of pilot-02's switches is pilot-02 in every
respect, so it is stored as ``pilot-02``; ``evidence=asserted,closure=unconditional`` is *not*
``pilot-01``: pilot-01 also keeps its as-run check placement (checks inside the deliverable),
while every switch combination checks through the checker calls with retrieval.

This module imports nothing from the rest of the package, so the ledger can validate the name.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from curiosity_tui.errors import InputError

Evidence = Literal["asserted", "verified", "supported"]
Closure = Literal["unconditional", "binding", "binding+downgrade"]
EVIDENCE_VALUES: tuple[str, ...] = get_args(Evidence)
CLOSURE_VALUES: tuple[str, ...] = get_args(Closure)


class ContractSwitches(BaseModel):
    """The two rule switches of a contract."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence: Evidence
    closure: Closure

    def canonical(self) -> str:
        return f"evidence={self.evidence},closure={self.closure}"


PRESET_SWITCHES: dict[str, ContractSwitches] = {
    "pilot-01": ContractSwitches(evidence="asserted", closure="unconditional"),
    "pilot-02": ContractSwitches(evidence="verified", closure="binding+downgrade"),
}

CHOICES_HELP = (
    "pilot-01, pilot-02, or evidence=asserted|verified|supported,closure=unconditional|binding|"
    "binding+downgrade"
)


def parse_switches(text: str) -> ContractSwitches:
    """``evidence=…,closure=…`` (either order, spaces allowed, both keys required)."""
    allowed = {"evidence": EVIDENCE_VALUES, "closure": CLOSURE_VALUES}
    values: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = (p.strip() for p in part.partition("="))
        if not eq or not key or not value:
            raise InputError(f"contract {text!r}: {part.strip()!r} is not key=value")
        if key not in allowed:
            raise InputError(f"contract {text!r}: unknown switch {key!r} (evidence, closure)")
        if key in values:
            raise InputError(f"contract {text!r}: switch {key!r} given twice")
        if value not in allowed[key]:
            raise InputError(
                f"contract {text!r}: {key}={value!r} is not one of {', '.join(allowed[key])}"
            )
        values[key] = value
    for key, choices in allowed.items():
        if key not in values:
            raise InputError(f"contract {text!r}: switch {key!r} is missing ({'|'.join(choices)})")
    return ContractSwitches.model_validate(values)


def canonical_name(text: str) -> str:
    """The stored form of a contract as given: a preset name stays; a combination becomes
    ``evidence=…,closure=…``, or ``pilot-02`` when it is exactly pilot-02's switches."""
    name = text.strip()
    if name in PRESET_SWITCHES:
        return name
    if "=" not in name:
        raise InputError(f"unknown contract {text!r}; choose {CHOICES_HELP}")
    sw = parse_switches(name)
    return "pilot-02" if sw == PRESET_SWITCHES["pilot-02"] else sw.canonical()


def switches_of(name: str) -> ContractSwitches:
    """The switches of a stored (or given) contract name."""
    canon = canonical_name(name)
    return PRESET_SWITCHES.get(canon) or parse_switches(canon)


def all_combinations() -> list[str]:
    """Every contract one can run: the two presets, then every other combination."""
    out = list(PRESET_SWITCHES)
    for e in EVIDENCE_VALUES:
        for c in CLOSURE_VALUES:
            name = canonical_name(f"evidence={e},closure={c}")
            if name not in out:
                out.append(name)
    return out


def contract_slug(name: str) -> str:
    """A file-name-safe short form: a preset's name, else ``<evidence>-<closure>``
    (``verified-binding``); used in run and demo folder names."""
    canon = canonical_name(name)
    if canon in PRESET_SWITCHES:
        return canon
    sw = parse_switches(canon)
    return f"{sw.evidence}-{sw.closure}"
