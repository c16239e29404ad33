"""The workspace's first scan, made in a child process while the app starts (decision 285).

Opening the app on a workspace first imports Textual (~0.3 s) and then, in the scan worker,
the ledger stack (pydantic and the event models, ~0.3 s) before 50 ledgers can be summarised:
both on one interpreter, one after the other. ``curiosity-tui open`` therefore starts the
first scan in a child process (``python -P -m curiosity_tui.workspace_prescan ROOT``) before it
imports the app, so the import and the scan run on a second core while Textual loads; the
workspace screen's first scan takes the child's result instead of scanning itself.

The child prints the :class:`~curiosity_tui.workspace_scan.Workspace` as JSON
(:func:`~curiosity_tui.workspace_scan.workspace_json`); the parent checks every field's type
(:func:`~curiosity_tui.workspace_scan.workspace_from_json`) and uses the result only if the
child exited 0 within the wait and its output checks out. Anything else (no second core, a
child that failed, was killed or printed something else) falls back to the in-process scan,
so what the screen shows is the same either way. ``CURIOSITY_PRESCAN=0`` turns it off.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from curiosity_tui import workspace_scan

__all__ = ["Prescan", "main", "start", "take"]

WAIT_S = 20.0  # a first scan slower than this is made again in the app's process

_pending: Prescan | None = None
_lock = threading.Lock()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class Prescan:
    """A first scan of ``root`` running in a child process."""

    def __init__(self, root: Path, proc: subprocess.Popen[bytes]) -> None:
        self.root = root
        self._proc = proc

    def result(self, timeout: float = WAIT_S) -> workspace_scan.Workspace | None:
        """The child's workspace, or None (the caller scans itself); ends the child."""
        try:
            out, _ = self._proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.discard()
            return None
        if self._proc.returncode != 0:
            return None
        try:
            ws = workspace_scan.workspace_from_json(out)
        except ValueError:
            return None
        return ws if ws.root == self.root else None

    def discard(self) -> None:
        """Stop the child if it still runs (its result is not wanted)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def _child_env() -> dict[str, str]:
    """The environment, with this package's own folder first on the child's path."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    return env


def start(root: Path) -> Prescan | None:
    """Start the first scan of ``root`` in a child process (kept for :func:`take`); None when
    turned off, on a single core, or when the child cannot be started."""
    global _pending
    if os.environ.get("CURIOSITY_PRESCAN", "1") == "0" or _cores() < 2:
        return None
    root = Path(root).resolve()
    try:
        proc = subprocess.Popen(
            # -P: not the current folder first on the path (a folder named like this package
            # there would be imported instead); this package's own folder is (_child_env)
            [sys.executable, "-P", "-m", "curiosity_tui.workspace_prescan", str(root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_child_env(),
        )
    except OSError:
        return None
    pre = Prescan(root, proc)
    with _lock:
        if _pending is not None:
            _pending.discard()
        _pending = pre
    return pre


def take(root: Path) -> Prescan | None:
    """The pending first scan of ``root`` (once), or None; a scan of another root is ended."""
    global _pending
    with _lock:
        pre, _pending = _pending, None
    if pre is not None and pre.root != Path(root).resolve():
        pre.discard()
        return None
    return pre


def main(argv: list[str] | None = None) -> int:
    """The child: scan the workspace given and print it as JSON on stdout."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m curiosity_tui.workspace_prescan ROOT", file=sys.stderr)
        return 2
    sys.stdout.write(workspace_scan.workspace_json(workspace_scan.scan(Path(args[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
