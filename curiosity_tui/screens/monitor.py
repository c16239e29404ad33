"""The run monitor: a run's sessions execute in a thread worker (its own asyncio loop, so
model calls and journal fsyncs never block the UI) with progress — session, calls made,
completion tokens, elapsed — and notifications when a session commits or fails. With a human
curator the run pauses between sessions on the curator screen until "continue".

Quitting mid-run cancels the run's task: a session is written as one batch or not at all, and
curator actions are one batch each, so the ledger stays consistent and the same command
resumes the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Header, RichLog, Static

from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean

HumanDone = Callable[[bool | None], None]


def _settle(fut: asyncio.Future[None]) -> None:
    """Resolve ``fut`` unless it is already done (a resume may arrive twice)."""
    if not fut.done():
        fut.set_result(None)


def human_session_hook(
    call_in_app: Callable[..., Any], open_session: Callable[[Any, int, str, HumanDone], None]
) -> Callable[[Any, int, str], Awaitable[bool]]:
    """A ``HumanSessionHook`` for a runner on its own thread and loop: ``call_in_app``
    (``app.call_from_thread``) runs ``open_session(led, t, person, done)`` in the app, which
    pushes the human session screen; the hook returns what ``done`` is given (True: the
    person committed session t; False: they left it, the draft kept)."""

    async def hook(led: Any, t: int, person: str) -> bool:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[bool] = loop.create_future()

        def done(committed: bool | None) -> None:
            def settle() -> None:
                if not fut.done():
                    fut.set_result(bool(committed))

            loop.call_soon_threadsafe(settle)

        call_in_app(open_session, led, t, person, done)
        return await fut

    return hook


def curator_label(req: RunRequest) -> str:
    """ "curator human:ann", or "curator model" / "no curator" (a relay need have none)."""
    if req.curator_kind == "human":
        return f"curator human:{req.curator}"
    return "no curator" if req.curator_kind == "none" else f"curator {req.curator_kind}"


@dataclass
class RunRequest:
    """What to run: ``sessions`` is the total the run should reach (it resumes)."""

    ledger: Path
    sessions: int
    curator: str  # the human curator's name (actor human:<name>)
    client_factory: Callable[[], contextlib.AbstractContextManager[Any]]
    embedder_factory: Callable[[Any], Any] | None = None
    #: the endpoint probe's record (modelio/endpoint.py): applied to the client, stored in the
    #: journal before the first session
    endpoint: Any = None
    #: SessionSettings fields from the command line (--cap, --schema-dialect, --context-window)
    overrides: dict[str, Any] = field(default_factory=dict)
    result: Any = None  # the runner's RunResult once finished
    error: str | None = None
    cancelled: bool = False
    #: a relay (runs/relay.py RelayPlan): each session to its mind; then the clients come
    #: from ``relay_clients_factory`` (a dict model key -> client) and ``client_factory`` is unused
    relay: Any = None
    relay_clients_factory: Callable[[], contextlib.AbstractContextManager[Any]] | None = None
    #: the ledger's curator kind (human, model, none): the header names a person only for human
    curator_kind: str = "human"
    #: the probe's record per relay model key (applied to its client, stored before its sessions)
    relay_endpoints: dict[str, Any] = field(default_factory=dict)
    #: a person's session of the relay: ``await hook(ledger, t, name) -> bool`` (runner.py
    #: HumanSessionHook); the app's human-session screen supplies it
    human_hook: Any = None


@dataclass
class Counters:
    calls: int = 0
    tokens: int = 0
    session_calls: int = 0
    session_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class CountingClient:
    """Wraps a model client to count calls and completion tokens as they finish."""

    def __init__(self, inner: Any, counters: Counters, on_call: Callable[[], None]) -> None:
        self._inner = inner
        self._counters = counters
        self._on_call = on_call

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in ("complete", "structured", "embed"):
            return attr

        async def counted(*args: Any, **kwargs: Any) -> Any:
            out = await attr(*args, **kwargs)
            tokens = 0
            for part in out if isinstance(out, tuple) else (out,):
                tokens += int(getattr(part, "completion_tokens", 0) or 0)
            with self._counters.lock:
                self._counters.calls += 1
                self._counters.tokens += tokens
                self._counters.session_calls += 1
                self._counters.session_tokens += tokens
            self._on_call()
            return out

        return counted


class RunMonitorScreen(AppScreen):
    HELP_TITLE = "Run monitor"
    HELP = (
        "Sessions of a run, executing in the background. With a human curator the run stops "
        "between sessions on the curator screen. Quitting mid-run leaves the ledger consistent; "
        "run the same command again to resume."
    )
    DEFAULT_CSS = """
    RunMonitorScreen #run-progress { height: auto; padding: 0 1; background: $boost; }
    RunMonitorScreen RichLog { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [
        Binding("b", "browse", "Browse ledger", id="monitor.browse"),
        Binding("ctrl+x", "stop", "Stop run", id="monitor.stop"),
        Binding("escape", "back", "Workspace", id="monitor.back"),
    ]

    def __init__(self, run: RunRequest) -> None:
        super().__init__()
        self.request = run
        self.counters = Counters()
        self.session = 0
        self.phase = "starting"
        self.t0 = time.perf_counter()
        self.finished = False
        self.t_end: float | None = None
        self._run_loop: asyncio.AbstractEventLoop | None = None
        self._run_task: asyncio.Task[Any] | None = None
        self._run_wait: asyncio.Future[None] | None = None
        #: the screen has been unmounted (the app closing): the run's thread calls nothing more
        self.gone = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="run-progress")
        yield RichLog(id="run-log", wrap=True, markup=False, highlight=False)
        yield Footer()

    def on_mount(self) -> None:
        if not self.is_attached:  # the app is exiting as this screen mounts: its widgets
            return  # may already be going, and nothing is left to show (issue 25)
        self.title = f"run · {self.request.ledger.name}"
        self._paint()
        self.set_interval(0.5, self._paint)
        self.runner()

    # -- display ----------------------------------------------------------------------
    def log_line(self, text: str, style: str = "") -> None:
        self.query_one(RichLog).write(Text(clean(text), style=style))

    def _paint(self) -> None:
        c = self.counters
        elapsed = (self.t_end or time.perf_counter()) - self.t0
        t = Text(end="")
        t.append(f"{self.request.ledger.name}", style="bold")
        t.append(
            f"  ·  target {self.request.sessions} sessions  ·  {curator_label(self.request)}\n"
        )
        t.append(f"session {self.session or '-'}  ", style="bold")
        t.append(f"{self.phase:<22}", style="yellow" if not self.finished else "green")
        t.append(
            f"  calls {c.session_calls} (run {c.calls})  ·  tokens {c.session_tokens} "
            f"(run {c.tokens})  ·  elapsed {elapsed:.1f}s"
        )
        self.query_one("#run-progress", Static).update(t)

    def _progress(self, p: Any) -> None:
        self.session = p.session
        if p.phase == "session":
            self.phase = "running"
            with self.counters.lock:
                self.counters.session_calls = 0
                self.counters.session_tokens = 0
            self.log_line(f"session {p.session}: started")
        elif p.phase == "committed":
            self.phase = "committed"
            self.log_line(
                f"session {p.session}: committed — {p.calls} calls, {p.tokens} completion tokens, "
                + (f"{p.session_s:.1f}s, " if p.session_s is not None else "")
                + f"{p.elapsed_s:.1f}s into the run",
                "green",
            )
            self.notify(f"Session {p.session} committed ({p.calls} calls, {p.tokens} tokens)")
        elif p.phase == "failed":
            self.phase = "failed"
            self.log_line(f"session {p.session}: FAILED — {p.detail}", "bold red")
            self.notify(
                f"Session {p.session} failed: {p.detail}. Run the same command again to resume.",
                severity="error",
                timeout=10,
            )
        elif p.phase == "curator":
            self.phase = "curator"
            self.log_line(f"after session {p.session}: curator")
        elif p.phase == "done" and self.phase != "failed":
            self.phase = "done"
        self._paint()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No "Stop run" in the footer once the run is over."""
        return not (action == "stop" and self.finished)

    def _finished(self, message: str, error: bool) -> None:
        self.finished = True
        self.refresh_bindings()
        self.t_end = time.perf_counter()
        if self.phase not in ("failed",):
            self.phase = "stopped" if self.request.cancelled else ("error" if error else "done")
        self.log_line(message, "bold red" if error else "bold green")
        self.notify(message, severity="error" if error else "information")
        self._paint()

    # -- the run --------------------------------------------------------------------
    def _here(self) -> bool:
        """The screen can still be drawn on: not unmounted, and the app not exiting.
        ``is_attached`` turns False the moment ``App.exit`` is called, before any screen is
        taken down; a call from the run's thread can reach the app in between, or while
        the screen's widgets are being removed, when every query fails."""
        return not self.gone and self.is_attached

    def _if_here(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the app, unless the screen has gone meanwhile (checked in the
        app's thread, where it cannot change under the call)."""
        return fn(*args) if self._here() else None

    def from_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Every call the run's thread makes into the app: dropped once the screen is gone
        or the app is exiting (the quit or the unmount cancels the run)."""
        if self.gone:
            return None
        try:
            return self.app.call_from_thread(self._if_here, fn, *args)
        except RuntimeError:  # the app stopped between the check and the call
            return None

    @work(thread=True, exclusive=True, group="run")
    def runner(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # noqa: BLE001 - report any failure on screen
            if isinstance(err, asyncio.CancelledError) or self.request.cancelled:
                self.from_thread(
                    self._finished,
                    "Run stopped; the ledger is consistent. Run the same command again to resume.",
                    False,
                )
                return
            self.request.error = f"{type(err).__name__}: {err}"
            self.from_thread(self._finished, f"Run failed: {self.request.error}", True)
            return
        res = self.request.result
        if res is None:
            return
        if res.failed:
            t, reason = res.failed[0]
            from curiosity_tui.protocol.stop_advice import resume_advice

            advice = resume_advice(reason)
            msg = f"Stopped at session {t}: {reason}. {advice[0].upper()}{advice[1:]}."
            self.from_thread(self._finished, msg, True)
        else:
            self.from_thread(
                self._finished, f"Run complete: {res.sessions_done} session(s) committed.", False
            )

    async def _main(self) -> None:
        from curiosity_tui.ledger.ledger import Ledger
        from curiosity_tui.runs.runner import run_ledger

        self._run_loop = asyncio.get_running_loop()

        call = self.from_thread

        def on_progress(p: Any) -> None:
            call(self._progress, p)

        def on_call() -> None:
            call(self._paint)

        async def hook(led: Ledger, after: int) -> None:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._run_wait = fut

            def resume() -> None:
                assert self._run_loop is not None
                self._run_loop.call_soon_threadsafe(_settle, fut)

            call(self._open_curator, led, after, resume)
            await fut
            self._run_wait = None

        if self.request.relay is not None:
            await self._relay_main(hook, on_progress, on_call)
            return
        with (
            self.request.client_factory() as inner,
            Ledger.open(self.request.ledger, write=True) as led,
        ):
            if led.recovered:
                call(self.log_line, f"{led.recovered}", "yellow")
            if self.request.endpoint is not None:
                from curiosity_tui.modelio.endpoint import apply_capabilities

                apply_capabilities(inner, self.request.endpoint)
            client = CountingClient(inner, self.counters, on_call)
            embedder = (
                self.request.embedder_factory(inner) if self.request.embedder_factory else None
            )
            self._run_task = asyncio.current_task()
            try:
                self.request.result = await run_ledger(
                    led,
                    client,  # type: ignore[arg-type]
                    sessions=self.request.sessions,
                    embedder=embedder,
                    curator_hook=hook,
                    progress=on_progress,
                    endpoint=self.request.endpoint,
                    overrides=self.request.overrides,
                )
            finally:
                close = getattr(inner, "aclose", None)
                if close is not None:
                    with contextlib.suppress(Exception):
                        await close()

    async def _relay_main(self, hook: Any, on_progress: Any, on_call: Any) -> None:
        """A relay (run --relay): one client per model, a person's sessions to ``human_hook``."""
        from curiosity_tui.ledger.ledger import Ledger
        from curiosity_tui.modelio.endpoint import apply_capabilities
        from curiosity_tui.runs.relay_runner import RelayMinds, run_relay

        req = self.request
        assert req.relay_clients_factory is not None
        with req.relay_clients_factory() as inner, Ledger.open(req.ledger, write=True) as led:
            for key, caps in req.relay_endpoints.items():
                apply_capabilities(inner[key], caps)
            clients = {k: CountingClient(c, self.counters, on_call) for k, c in inner.items()}
            minds = RelayMinds(
                plan=req.relay,
                clients=clients,  # type: ignore[arg-type]
                endpoints=req.relay_endpoints,
                # a person's session opens the human session screen unless a hook was given
                human_hook=req.human_hook or self.human_session_hook(),
            )
            self._run_task = asyncio.current_task()
            try:
                req.result = await run_relay(
                    led,
                    minds,
                    sessions=req.sessions,
                    embedder=req.embedder_factory(inner) if req.embedder_factory else None,
                    curator_hook=hook,
                    progress=on_progress,
                    overrides=req.overrides,
                )
            finally:
                for c in inner.values():
                    with contextlib.suppress(Exception):
                        await c.aclose()

    def _open_curator(self, led: Any, after: int, resume: Callable[[], None]) -> None:
        self.phase = "curator (waiting for you)"
        self._paint()
        self.notify(f"Session {after} done: your turn to curate.", title="Curator")
        self.nav.open_curator(led, after, f"human:{self.request.curator}", resume)

    def human_session_hook(self) -> Callable[[Any, int, str], Awaitable[bool]]:
        """The runner's ``HumanSessionHook``: the human session screen, opened from here."""
        return human_session_hook(self.from_thread, self._open_human_session)

    def _open_human_session(
        self, led: Any, t: int, person: str, done: Callable[[bool | None], None]
    ) -> None:
        self.phase = f"session {t}: human:{person} (waiting for you)"
        self._paint()
        self.notify(f"Session {t} is yours, {person}.", title="Human session")
        self.nav.open_human_session(led, t, person, done)

    def cancel(self) -> None:
        """Stop the run at once (uncommitted work of the current session is discarded)."""
        if self.finished or self._run_loop is None or self._run_task is None:
            return
        self.request.cancelled = True
        loop, task = self._run_loop, self._run_task
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(task.cancel)

    def on_unmount(self) -> None:
        """The screen leaves on any path (quit, a test's app closing, an error): stop the run,
        so its thread never waits on for a curator or a person that a closed app cannot show
        (issue 25 item 11: a failing test left the run waiting and pytest never exited)."""
        self.gone = True
        self.cancel()

    # -- actions ----------------------------------------------------------------------
    def action_stop(self) -> None:
        if self.finished:
            self.notify("The run has finished.")
            return
        self.cancel()
        self.log_line("stopping: the current session's uncommitted work is discarded", "yellow")

    def action_browse(self) -> None:
        self.nav.open_ledger(self.request.ledger)

    def action_back(self) -> None:
        if not self.finished:
            self.notify("The run is still going; ctrl+x stops it, q quits (the run can resume).")
            return
        self.dismiss()
