"""SVG figures for ``report`` with the optional ``plots`` extra (matplotlib; decision 209).

- the ε sweep curve: preservation rate against ε, one line per configuration, the
  recorded ε marked;
- per-run values per configuration for one metric: every run a dot, the mean a bar with
  its 95% bootstrap interval (runs resampled);
- open life of questions: the Kaplan–Meier step curve per configuration, censored marked.

No pyplot and no global backend: each figure is a ``matplotlib.figure.Figure`` drawn on its
own Agg/SVG canvas, so importing this never changes anyone's matplotlib state. Output is
deterministic (fixed ``svg.hashsalt``, no date in the metadata): the same data gives the same
bytes. Every series carries an SVG id (``sweep-CONFIG``, ``runs-CONFIG``, ``mean-CONFIG``,
``survival-CONFIG``, ``censored-CONFIG``)
so tests and readers can find it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curiosity_tui.analysis.report_tables import ConfigSpread
from curiosity_tui.analysis.sweep import SweepResult
from curiosity_tui.packs.unblind import ConfigTable

if TYPE_CHECKING:
    from curiosity_tui.analysis.survival_config import ConfigSurvival

__all__ = ["INSTALL_HINT", "available", "per_run_svg", "rating_svg", "survival_svg", "sweep_svg"]

INSTALL_HINT = "pip install 'curiosity-tui[plots]'"
_SALT = "curiosity-tui"


def available() -> bool:
    """Is matplotlib importable (the ``plots`` extra installed)?"""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _save(fig: Any, path: Path) -> Path:
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": _SALT, "svg.fonttype": "none"}):
        fig.savefig(path, format="svg", metadata={"Date": None})
    return path


def sweep_svg(results: Sequence[SweepResult], path: Path) -> Path:
    """Preservation rate against ε, one line (with a marker per threshold) per sweep."""
    fig = _figure(6.0, 3.6)
    ax = fig.add_subplot()
    recorded: set[float] = set()
    for res in results:
        pts = [(r.epsilon, r.rate) for r in res.rows if r.rate is not None]
        (line,) = ax.plot(
            [e for e, _ in pts], [v for _, v in pts], marker="o", label=f"{res.label} (n={res.n})"
        )
        line.set_gid(f"sweep-{res.label}")
        recorded.update(res.recorded_epsilons)
    for e in sorted(recorded):
        ax.axvline(e, linestyle=":", color="grey", gid=f"recorded-{e:g}")
    ax.set_xlabel("ε (PRESERVE iff Δ < −ε)")
    ax.set_ylabel("preservation rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("ε sweep: recorded Δ re-classified (not runs at each ε)", fontsize=9)
    ax.legend(fontsize=8)
    return _save(fig, path)


def per_run_svg(metric: str, spreads: Sequence[ConfigSpread], path: Path) -> Path:
    """Per-run values (dots) and the mean with its interval (bar) per configuration."""
    fig = _figure(max(3.0, 1.3 * len(spreads) + 1.5), 3.6)
    ax = fig.add_subplot()
    for x, s in enumerate(spreads):
        k = len(s.values)
        offsets = [0.0] if k == 1 else [-0.15 + 0.3 * i / (k - 1) for i in range(k)]
        ax.plot(
            [x + o for o in offsets[:k]],
            s.values,
            linestyle="none",
            marker="o",
            alpha=0.6,
            color="tab:blue",
            gid=f"runs-{s.config}",
        )
        if s.mean is None:
            continue
        lo = max(0.0, s.mean - s.ci_low) if s.ci_low is not None else 0.0
        hi = max(0.0, s.ci_high - s.mean) if s.ci_high is not None else 0.0
        bar = ax.errorbar([x + 0.3], [s.mean], yerr=[[lo], [hi]], fmt="s", color="black", capsize=4)
        bar.lines[0].set_gid(f"mean-{s.config}")
        if s.ci_low is not None:
            bar.lines[2][0].set_gid(f"interval-{s.config}")
    ax.set_xticks(range(len(spreads)), [s.config for s in spreads], fontsize=8)
    ax.set_xlim(-0.6, len(spreads) - 0.4)
    ax.set_ylabel(metric)
    ax.set_title(f"{metric}: runs (dots), mean and 95% interval (bar)", fontsize=9)
    return _save(fig, path)


def rating_svg(question: str, sets: Sequence[tuple[str, ConfigTable]], path: Path) -> Path:
    """One question's unblinded runs per arm (decision 561): a panel per set (the raw sets
    per rater group, then the adjudicated set, labelled in its title), each arm a bar stacked
    by category (and ``split``). Every segment carries the id ``rating-SET-ARM-CATEGORY``."""
    fig = _figure(max(4.0, 3.2 * len(sets)), 3.6)
    axes = fig.subplots(1, len(sets), squeeze=False, sharey=True)[0]
    for ax, (label, t) in zip(axes, sets, strict=True):
        arms = list(t.by_run)
        cats = [*t.categories, "split"]
        bottom = [0] * len(arms)
        for cat in cats:
            heights = [t.by_run[a].get(cat, 0) for a in arms]
            bars = ax.bar(range(len(arms)), heights, bottom=bottom, label=cat)
            for arm, bar in zip(arms, bars, strict=True):
                bar.set_gid(f"rating-{label.split(',')[0]}-{arm}-{cat}")
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        ax.set_xticks(range(len(arms)), arms, fontsize=8)
        ax.set_title(label, fontsize=9)
    axes[0].set_ylabel("runs")
    axes[-1].legend(fontsize=7)
    fig.suptitle(f"{question}: runs per arm by category (raw and adjudicated apart)", fontsize=9)
    return _save(fig, path)


def survival_svg(found: Sequence[ConfigSurvival], path: Path) -> Path:
    """Kaplan–Meier open-life curves, one step line per configuration (S = 1 before the first
    session time), a ``+`` where questions were censored, the 0.5 line the median reads off."""
    fig = _figure(6.0, 3.6)
    ax = fig.add_subplot()
    for c in found:
        xs = [0] + [r.time for r in c.table]
        ys = [1.0] + [r.survival for r in c.table]
        (line,) = ax.step(
            xs, ys, where="post", label=f"{c.config} (runs {c.runs}, q {c.questions})"
        )
        line.set_gid(f"survival-{c.config}")
        cens = [(r.time, r.survival) for r in c.table if r.censored]
        if cens:
            ax.plot(
                [t for t, _ in cens],
                [s for _, s in cens],
                linestyle="none",
                marker="+",
                markersize=9,
                color=line.get_color(),
                gid=f"censored-{c.config}",
            )
    ax.axhline(0.5, linestyle=":", color="grey", gid="median-line")
    ax.set_xlabel("sessions since the question was created")
    ax.set_ylabel("S(t): share still open")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Open life of questions: Kaplan–Meier, + censored", fontsize=9)
    if found:
        ax.legend(fontsize=8)
    return _save(fig, path)
