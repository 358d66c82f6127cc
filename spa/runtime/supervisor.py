"""Keeps the long-lived tasks of a process running, and says when one is not.

Why: an asyncio task that raises ends silently unless somebody awaits it. An informer whose
task died that way left its cache frozen while the process looked healthy, and the controller
acted on an ever older picture of the cluster. Here every long-lived task (the informers) runs
under a supervisor that awaits it: an unexpected exception, or a return before the supervisor
is closed, is logged with its traceback, counted in `spa_task_restarts_total`, and the task is
started again after the runtime's one backoff rule (docs/runtime.md, "Supervision"). While a
task waits to be restarted the supervisor is not healthy, and the process reports itself not
ready, so a crash loop is visible to the kubelet and to alerts, never silent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from spa.kube import KubeError
from spa.runtime import metrics
from spa.runtime.backoff import Backoff
from spa.runtime.clock import Clock, SystemClock

__all__ = ["Supervisor"]

log = logging.getLogger(__name__)

# A task that ran this long before failing is considered to have recovered in between: its
# next restart starts the backoff from the beginning again.
_STABLE_AFTER = 60.0


class Supervisor:
    """Runs named coroutines until :meth:`close`, restarting each one that fails."""

    def __init__(
        self, *, clock: Clock | None = None, initial: float = 1.0, maximum: float = 60.0
    ) -> None:
        self._clock = clock or SystemClock()
        self._initial = initial
        self._maximum = maximum
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._down: set[str] = set()
        self._closing = False

    @property
    def healthy(self) -> bool:
        """Every supervised task is running (none waits to be restarted after a failure)."""
        return not self._down

    @property
    def down(self) -> frozenset[str]:
        """The names of the tasks that failed and wait to be restarted."""
        return frozenset(self._down)

    def start(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """Run `run()` under supervision; `name` appears in logs and metrics."""
        if name in self._tasks:
            raise ValueError(f"a task named {name!r} is already supervised")
        self._tasks[name] = asyncio.create_task(self._keep(name, run), name=name)

    async def close(self) -> None:
        """Cancel every supervised task and wait for them to end."""
        self._closing = True
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
        self._down.clear()

    async def _keep(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        backoff = Backoff(initial=self._initial, maximum=self._maximum)
        while not self._closing:
            started = self._clock.monotonic()
            try:
                await run()
            except asyncio.CancelledError:
                raise
            except KubeError as error:  # an answer of the API server, or none: one line
                log.error("%s failed: %s", name, error)
            except Exception:  # a bug: its traceback
                log.exception("%s failed", name)
            else:
                if self._closing:
                    return
                log.error("%s ended without being stopped", name)
            if self._clock.monotonic() - started >= _STABLE_AFTER:
                backoff.reset()
            delay = backoff.next_delay()
            metrics.TASK_RESTARTS.labels(name).inc()
            self._down.add(name)
            log.warning("restarting %s in %.1fs", name, delay)
            try:
                await self._clock.sleep(delay)
            finally:
                self._down.discard(name)
