"""One BLAS thread for the numeric kernels (similarity, leak check, agreement bootstrap).

A dense product such as ``vecs @ vecs.T`` lets OpenBLAS start one thread per core; on a
machine that is already busy those threads oversubscribe the cores and a 0.9 s CPU job
takes 8 s of wall time. The kernels here are called once per command, so one thread is
what "uses the machine once" means. ``threadpoolctl`` ships with scikit-learn; when it is
missing the kernels run unchanged.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache, wraps
from typing import Any, ParamSpec, TypeVar

__all__ = ["one_blas_thread", "single_threaded"]

P = ParamSpec("P")
R = TypeVar("R")


@lru_cache(maxsize=1)
def _controller(n_modules: int) -> Any:
    """The loaded thread pools; rebuilt when an import may have loaded another library."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return None
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with BLAS (and OpenMP) limited to one thread."""
    controller = _controller(len(sys.modules))
    if controller is None:  # pragma: no cover - see _controller
        yield
        return
    with controller.limit(limits=1):
        yield


def single_threaded(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of :func:`one_blas_thread`."""

    @wraps(fn)
    def inner(*args: P.args, **kwargs: P.kwargs) -> R:
        with one_blas_thread():
            return fn(*args, **kwargs)

    return inner
