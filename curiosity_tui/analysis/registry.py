"""The metric registry (S6): every metric a pre-registration may name.

Each :class:`Metric` carries a stable snake_case name (the report's own where it has
one), its definition in words (the report's wording where it has one), unit,
denominator, two flags the decision-rule language can check against
(``structural``; ``bookkeeping`` = return-condition bookkeeping) and the direction in
which a difference counts as "beats" (``higher_is_better``; ``None`` = no direction, such
a metric can be reported but never named in a rule). ``fn(run) -> float | None`` computes
the per-run value from a :class:`~curiosity_tui.analysis.rundata.RunData`; ``None`` means
"not defined for this run" (e.g. no decisions in an arm without tension evaluation).

Metrics register themselves with :func:`register`::

    @register("max_depth", definition="…", unit="nodes", denominator="per run",
              structural=True, higher_is_better=True)
    def max_depth(run: RunData) -> float: ...
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pydantic import BaseModel

from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.errors import InputError

MetricFn = Callable[[RunData], float | None]

NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


class UnknownMetricError(InputError):
    """A metric name that is not in the registry."""


class MetricInfo(BaseModel):
    """A metric's description without its function (for JSON output and plans)."""

    name: str
    definition: str
    unit: str
    denominator: str
    structural: bool
    bookkeeping: bool
    higher_is_better: bool | None
    group: str
    embedder: str | None = None


@dataclass(frozen=True)
class Metric:
    name: str
    definition: str
    unit: str
    denominator: str
    fn: MetricFn = field(repr=False, compare=False)
    structural: bool = False
    bookkeeping: bool = False
    higher_is_better: bool | None = None
    #: a table heading for grouping in printouts ("ledger", "progression", "facts", …)
    group: str = "other"
    #: the embedder behind a similarity figure (named wherever the figure is printed)
    embedder: str | None = None

    def __post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            raise ValueError(f"metric name {self.name!r} is not stable snake_case")

    def __call__(self, run: RunData) -> float | None:
        value = self.fn(run)
        return None if value is None else float(value)

    def info(self) -> MetricInfo:
        return MetricInfo(
            name=self.name,
            definition=self.definition,
            unit=self.unit,
            denominator=self.denominator,
            structural=self.structural,
            bookkeeping=self.bookkeeping,
            higher_is_better=self.higher_is_better,
            group=self.group,
            embedder=self.embedder,
        )


class Registry:
    """An ordered name → Metric mapping. Registration order is printing order."""

    def __init__(self) -> None:
        self._metrics: dict[str, Metric] = {}

    def add(self, metric: Metric) -> Metric:
        if metric.name in self._metrics:
            raise ValueError(f"metric {metric.name!r} is already registered")
        self._metrics[metric.name] = metric
        return metric

    def remove(self, name: str) -> None:
        self._metrics.pop(name, None)

    def register(
        self,
        name: str,
        *,
        definition: str,
        unit: str,
        denominator: str,
        structural: bool = False,
        bookkeeping: bool = False,
        higher_is_better: bool | None = None,
        group: str = "other",
        embedder: str | None = None,
    ) -> Callable[[MetricFn], MetricFn]:
        def deco(fn: MetricFn) -> MetricFn:
            self.add(
                Metric(
                    name=name,
                    definition=definition,
                    unit=unit,
                    denominator=denominator,
                    fn=fn,
                    structural=structural,
                    bookkeeping=bookkeeping,
                    higher_is_better=higher_is_better,
                    group=group,
                    embedder=embedder,
                )
            )
            return fn

        return deco

    def get(self, name: str) -> Metric:
        try:
            return self._metrics[name]
        except KeyError:
            raise UnknownMetricError(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._metrics), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return f"unknown metric {name!r}{hint}; `curiosity-tui metrics --list` names them all"

    def __contains__(self, name: object) -> bool:
        return name in self._metrics

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._ordered())

    def _ordered(self) -> list[Metric]:
        """Printing order, independent of which module happened to be imported first:
        group (GROUP_ORDER), then shipping module (METRIC_MODULES), then registration."""

        def rank(item: tuple[int, Metric]) -> tuple[int, int, int]:
            i, m = item
            g = GROUP_ORDER.index(m.group) if m.group in GROUP_ORDER else len(GROUP_ORDER)
            mod = getattr(m.fn, "__module__", "")
            k = METRIC_MODULES.index(mod) if mod in METRIC_MODULES else len(METRIC_MODULES)
            return (g, k, i)

        return [m for _, m in sorted(enumerate(self._metrics.values()), key=rank)]

    def __len__(self) -> int:
        return len(self._metrics)

    def names(self) -> list[str]:
        return [m.name for m in self._ordered()]

    def copy(self) -> Registry:
        new = Registry()
        new._metrics = dict(self._metrics)
        return new


#: Table headings, in printing order; other groups print after these.
GROUP_ORDER = (
    "ledger",
    "progression",
    "facts",
    "similarity",
    "bookkeeping",
    "tokens",
    "contract",
)

#: The registry every command uses; :func:`default_registry` fills it.
REGISTRY = Registry()

#: Modules whose import registers the shipped metrics.
METRIC_MODULES = (
    "curiosity_tui.analysis.metrics",
    "curiosity_tui.analysis.similarity",
    "curiosity_tui.analysis.domains",
    "curiosity_tui.analysis.contract_metrics",
    "curiosity_tui.analysis.attraction",
    "curiosity_tui.analysis.relay",
    "curiosity_tui.analysis.open_life",
    "curiosity_tui.analysis.return_latency",
    "curiosity_tui.analysis.tension_metrics",
)


def register(
    name: str,
    *,
    definition: str,
    unit: str,
    denominator: str,
    structural: bool = False,
    bookkeeping: bool = False,
    higher_is_better: bool | None = None,
    group: str = "other",
    embedder: str | None = None,
) -> Callable[[MetricFn], MetricFn]:
    """Decorator: add ``fn`` to :data:`REGISTRY` under ``name``."""
    return REGISTRY.register(
        name,
        definition=definition,
        unit=unit,
        denominator=denominator,
        structural=structural,
        bookkeeping=bookkeeping,
        higher_is_better=higher_is_better,
        group=group,
        embedder=embedder,
    )


def get(name: str) -> Metric:
    """The registered metric called ``name``; :class:`UnknownMetricError` otherwise."""
    return default_registry().get(name)


def default_registry() -> Registry:
    """:data:`REGISTRY` with the shipped metrics loaded."""
    for module in METRIC_MODULES:  # in this order: registration order is printing order
        importlib.import_module(module)
    return REGISTRY
