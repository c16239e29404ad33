"""Bounds on user-supplied numbers: every count has a documented ceiling (docs/errors.md,
"Numbers"), every float must be finite and in range. Each check raises InputError with one
line naming the flag, the value and the allowed range (issue 25; decision 405).

The ceilings bound memory and time on a small machine: a bootstrap of ``--boot`` samples
holds an index matrix of ``boot × runs`` integers; each permutation of the leak check is a
cross-validated fit.
"""

from __future__ import annotations

import math
from typing import Any

from curiosity_tui.errors import InputError

#: bootstrap samples (``agreement --boot``, ``metrics``/``verdict`` intervals)
MAX_BOOT = 100_000
#: label permutations of the leak check (``pack leakcheck --permutations``,
#: ``pack build --leak-permutations``)
MAX_PERMUTATIONS = 20_000
#: random seeds: what numpy's generators take (a non-negative 64-bit integer)
MAX_SEED = 2**63 - 1
#: sessions a run may be asked for, and runs a plan may register
MAX_SESSIONS = 100_000
#: seconds per model call (``run --timeout``): a day
MAX_TIMEOUT_S = 86_400.0
#: a model's context window in tokens: no prompt of this project fits below the floor
MIN_CONTEXT_WINDOW = 512
MAX_CONTEXT_WINDOW = 100_000_000


def check_count(value: int, *, flag: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise InputError(f"{flag} {value}: must be a whole number from {low} to {high:,}")
    return value


def check_seed(value: int, *, flag: str = "--seed") -> int:
    return check_count(value, flag=flag, low=0, high=MAX_SEED)


def check_real(
    value: float, *, flag: str, low: float, high: float, low_open: bool = False
) -> float:
    """A finite float in [low, high] (or (low, high] with ``low_open``)."""
    ok = isinstance(value, int | float) and math.isfinite(value)
    if ok:
        ok = (value > low if low_open else value >= low) and value <= high
    if not ok:
        left = "(" if low_open else "["
        raise InputError(f"{flag} {value}: must be a finite number in {left}{low:g}, {high:g}]")
    return float(value)


def min_permutations(alpha: float) -> int:
    """The fewest label permutations whose smallest possible p-value, 1/(N+1), is below
    ``alpha``: with fewer the test can never find a leak."""
    n = max(1, math.floor(1 / alpha) - 1)
    while 1 / (n + 1) >= alpha:
        n += 1
    return n


def check_permutations(value: int, *, flag: str, alpha: float) -> int:
    """Refuse a permutation count that cannot reach ``alpha`` or passes the ceiling."""
    need = min_permutations(alpha)
    if type(value) is int and 1 <= value < need:
        raise InputError(
            f"{flag} {value}: the smallest p-value {value} permutations can give is "
            f"1/{value + 1} = {1 / (value + 1):.3f}, not below α = {alpha:g}; the leak check "
            f"needs at least {need}"
        )
    return check_count(value, flag=flag, low=need, high=MAX_PERMUTATIONS)


#: retries per model call
MAX_RETRIES = 100
#: worker processes of a pilot, and requests in flight
MAX_WORKERS = 64
MAX_CONCURRENCY = 256
#: raters a pack may require, control items per kind, tokens a model rater's reply may take
MAX_RATERS = 1_000
MAX_CONTROLS = 100
MAX_TOKENS = 1_000_000


def check_call_numbers(args: Any) -> None:
    """A model endpoint's numbers from the command line (``run``, ``rate --model``):
    ``--timeout``, ``--context-window``, ``--max-retries``, where the command has them."""
    timeout = getattr(args, "timeout", None)
    if timeout is not None:
        check_real(timeout, flag="--timeout", low=0.0, high=MAX_TIMEOUT_S, low_open=True)
    window = getattr(args, "context_window", None)
    if window is not None:
        check_count(
            window, flag="--context-window", low=MIN_CONTEXT_WINDOW, high=MAX_CONTEXT_WINDOW
        )
    retries = getattr(args, "max_retries", None)
    if retries is not None:
        check_count(retries, flag="--max-retries", low=0, high=MAX_RETRIES)
