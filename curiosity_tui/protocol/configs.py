"""The six configurations of S5 / report §3, as data.

Naming trap: the spec's names say what is present — ``C+cur`` has a curator, ``C-cur`` has
none (the report's §3 writes "C−cur" with a minus sign). The report's §8 verification lines
use another scheme — "C-cur" *with* curator, "C-nocur" without. Only the spec's names are
accepted (plus the minus-sign spelling of §3); the §8 spellings are refused rather than
guessed, because "C-cur" would mean the opposite.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from curiosity_tui.errors import InputError

Arm = Literal["answer", "self-ask", "armed-self-ask", "protocol"]


class Configuration(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    arm: Arm
    store: bool  # a question store carried between sessions
    curator: bool  # a curator acts between sessions (model or human)
    protocol_package: bool  # tension, PRESERVE, forced focus, open layer
    family: Literal["A", "B", "store"]  # the pack-format family (report §3 residual leak)
    label: str
    description: str


CONFIGURATIONS: dict[str, Configuration] = {
    c.name: c
    for c in (
        Configuration(
            name="A",
            arm="answer",
            store=False,
            curator=False,
            protocol_package=False,
            family="A",
            label="answer",
            description="Answers the seed question; no store.",
        ),
        Configuration(
            name="B",
            arm="self-ask",
            store=False,
            curator=False,
            protocol_package=False,
            family="B",
            label="bare self-ask",
            description="Raises questions about the seed; carries nothing forward.",
        ),
        Configuration(
            name="B-armed+cur",
            arm="armed-self-ask",
            store=True,
            curator=True,
            protocol_package=False,
            family="store",
            label="self-ask + store, curator",
            description="Self-ask writing into the question store, with a curator between sessions.",
        ),
        Configuration(
            name="B-armed-cur",
            arm="armed-self-ask",
            store=True,
            curator=False,
            protocol_package=False,
            family="store",
            label="self-ask + store, no curator",
            description="Self-ask writing into the question store, no curator.",
        ),
        Configuration(
            name="C+cur",
            arm="protocol",
            store=True,
            curator=True,
            protocol_package=True,
            family="store",
            label="protocol, curator",
            description="The protocol package (forced focus, tension, PRESERVE, open layer) with a curator.",
        ),
        Configuration(
            name="C-cur",
            arm="protocol",
            store=True,
            curator=False,
            protocol_package=True,
            family="store",
            label="protocol, no curator",
            description="The protocol package without a curator.",
        ),
    )
}

CONFIG_NAMES: tuple[str, ...] = tuple(CONFIGURATIONS)


CuratorKind = Literal["model", "human", "none"]
CURATOR_KINDS: tuple[CuratorKind, ...] = ("model", "human", "none")

_REPORT_SPELLINGS = {"Barmed-cur", "Barmed-nocur", "C-nocur", "B-armed-nocur"}


def get_configuration(name: str) -> Configuration:
    """The configuration called ``name``; InputError naming the choices otherwise."""
    key = name.strip().replace("\u2212", "-")  # §3 writes C−cur with a minus sign
    try:
        return CONFIGURATIONS[key]
    except KeyError:
        hint = ""
        if key in _REPORT_SPELLINGS:
            hint = (
                " (that is the report's §8 spelling, where '-cur' means WITH a curator; "
                "here '+cur' is with a curator and '-cur' without)"
            )
        raise InputError(
            f"unknown configuration {name!r}; choose one of {', '.join(CONFIG_NAMES)}{hint}"
        ) from None


def resolve_curator(config: Configuration, requested: str) -> CuratorKind:
    """The curator kind a run of ``config`` gets when ``requested`` (model|human|none) is asked.

    A configuration without a curator always gets ``none`` (a run-wide default of ``model``
    does not apply to it); a ``+cur`` configuration refuses ``none``, which would silently
    turn it into its ``-cur`` twin.
    """
    if requested not in CURATOR_KINDS:
        raise InputError(f"unknown curator kind {requested!r}; choose model, human or none")
    if not config.curator:
        return "none"
    if requested == "none":
        twin = config.name.replace("+cur", "-cur")
        raise InputError(
            f"configuration {config.name} has a curator: choose --curator model or human "
            f"(for no curator run {twin})"
        )
    return requested
