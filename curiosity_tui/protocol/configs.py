"""The six configurations of S5 / report §3, as data."""

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


def get_configuration(name: str) -> Configuration:
    try:
        return CONFIGURATIONS[name]
    except KeyError:
        raise InputError(
            f"unknown configuration {name!r}; choose one of {', '.join(CONFIG_NAMES)}"
        ) from None
