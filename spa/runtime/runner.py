"""The worker loop that turns queued keys into reconcile calls (controller-runtime's
``Controller``): N workers, per-key error backoff, requeue requests, and a slow periodic resync.

The reconciler is level-triggered: it gets only a key and reads current state itself, so the
runner never needs to know what changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from spa.kube import ApiError, ApiUnavailable, KubeError
from spa.runtime import metrics
from spa.runtime.backoff import Backoff
from spa.runtime.clock import Clock
from spa.runtime.logging import object_logger
from spa.runtime.store import split_key
from spa.runtime.workqueue import QueueShutDown, WorkQueue

__all__ = ["Controller", "Probe", "Reconcile", "Result"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Result:
    """What a successful reconcile asks for next.

    ``requeue_at`` (absolute epoch seconds on the queue's clock) is how a reconciler acts at a
    schedule boundary; ``requeue_after`` is relative. If both are given the earlier wins. An
    empty Result means "nothing to do until something changes".

    ``back_of_queue`` asks to run again now, but behind every key already queued, without
    backoff: for a reconcile that did the urgent part of its work and yields to the other keys
    before it does the rest. When many keys come due at one instant (a fleet at a schedule
    boundary), each key's urgent part is then done before any key's remainder, however many
    workers there are. It is a request of its own, not ``requeue_after=0``: a delay of 0 goes
    to the back of the queue only because the queue treats an instant already past as "now",
    which a reader (or a change of the queue) need not know. It combines with no other field.
    """

    requeue_at: float | None = None
    requeue_after: float | None = None
    # The reconcile did its part (statuses, events) but something it must keep trying failed
    # (a write the server refused): retry with the key's exponential backoff, as after an
    # error, instead of at a fixed pace. The backoff is reset only by a reconcile without it.
    retry: bool = False
    back_of_queue: bool = False

    def __post_init__(self) -> None:
        if self.back_of_queue and (
            self.requeue_at is not None or self.requeue_after is not None or self.retry
        ):
            raise ValueError("back_of_queue combines with no other field of Result")


Reconcile = Callable[[str], Awaitable[Result | None]]
"""``async reconcile(key) -> Result`` (returning ``None`` is the same as ``Result()``)."""

Probe = Callable[[], Awaitable[object]]
"""``async probe()``: returns if the API server is reachable and ready, raises otherwise."""


class Controller:
    """Runs ``workers`` concurrent reconciles fed by ``queue``.

    :param list_keys: returns every key that exists (usually ``informer.store.keys``); all of
        them are re-queued every ``resync_period`` seconds as a safety net against a missed
        timer or event. ``None`` disables the resync.
    :param probe: checks that the API server is back. With a probe, a key whose reconcile
        failed because the server could not be reached (:class:`~spa.kube.ApiUnavailable`) does
        not back off on its own: it waits, with every other such key, for one probe loop (every
        ``probe_backoff`` seconds, doubling) to see the server ready, and then all of them are
        retried at once. Recovery after an outage then takes seconds however long it lasted,
        and an outage costs one request per probe interval instead of one per key.
    :param reconcile_timeout: a reconcile still running after this many seconds is cancelled
        (its request in flight with it) and retried with the key's backoff, so one stuck call
        cannot hold a worker forever. Real time, like the HTTP timeouts it backs up.
    """

    def __init__(
        self,
        *,
        name: str,
        queue: WorkQueue,
        reconcile: Reconcile,
        workers: int = 2,
        list_keys: Callable[[], Iterable[str]] | None = None,
        resync_period: float | None = 600.0,
        clock: Clock | None = None,
        probe: Probe | None = None,
        probe_backoff: tuple[float, float] = (0.5, 2.0),
        reconcile_timeout: float | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.name = name
        self.queue = queue
        self._reconcile = reconcile
        self._workers = workers
        self._list_keys = list_keys
        self._resync_period = resync_period
        self._clock: Clock = clock or queue.clock
        self._duration = metrics.RECONCILE_DURATION.labels(name)
        # Every result's series exists from the start, at 0: a rate of errors is then 0 rather
        # than no data (the alerts and the dashboard of config/prometheus read it).
        for result in ("success", "requeue", "retry", "error"):
            metrics.RECONCILE_TOTAL.labels(name, result)
        self._probe = probe
        self._probe_backoff = probe_backoff
        self._reconcile_timeout = reconcile_timeout
        self._parked: set[str] = set()
        self._prober: asyncio.Task[None] | None = None

    async def run(self) -> None:
        """Run the workers (and the resync) until the queue is shut down or the task is
        cancelled; the queue is shut down on the way out."""
        resync: asyncio.Task[None] | None = None
        if self._list_keys is not None and self._resync_period:
            resync = asyncio.create_task(self._resync(), name=f"{self.name}-resync")
        try:
            async with asyncio.TaskGroup() as group:
                for index in range(self._workers):
                    group.create_task(self._worker(), name=f"{self.name}-worker-{index}")
        finally:
            self.queue.shutdown()
            for task in (resync, self._prober):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    def resync_now(self) -> None:
        """Queue every key returned by ``list_keys``."""
        if self._list_keys is None:
            return
        for key in self._list_keys():
            self.queue.add(key)

    async def _resync(self) -> None:
        assert self._resync_period is not None
        while True:
            await self._clock.sleep(self._resync_period)
            self.resync_now()

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except QueueShutDown:
                return
            try:
                await self.process(key)
            finally:
                self.queue.done(key)
            # A reconcile that needs no request never suspends, and `get` does not either
            # while keys wait: without this, a start on thousands of keys in sync holds the
            # event loop for as long as they take, and the Lease's renewal, the watches and
            # the probes wait behind them (a shard of 5,000 SPAs in sync lost its Lease so).
            await asyncio.sleep(0)

    async def process(self, key: str) -> None:
        """Reconcile one key and requeue it as asked (public so tests can drive one step)."""
        started = time.perf_counter()
        timeout = asyncio.timeout(self._reconcile_timeout)
        try:
            async with timeout:
                result = await self._reconcile(key) or Result()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            metrics.RECONCILE_TOTAL.labels(self.name, "error").inc()
            namespace, name = split_key(key)
            logger = object_logger(log, namespace, name, controller=self.name)
            if self._probe is not None and isinstance(error, ApiUnavailable):
                logger.warning(
                    "reconcile failed, API server unreachable (%s); retry once it is back", error
                )
                self._park(key)
                return
            retries = self.queue.num_requeues(key)
            if isinstance(error, KubeError):
                # An answer the API server may give (a conflict, a 404, a 429, a 5xx ...), or
                # none: one line that says which; a traceback would only say where we asked.
                logger.warning(
                    "reconcile failed: %s; retry %d with backoff", _said(error), retries + 1
                )
            elif isinstance(error, TimeoutError) and timeout.expired():
                logger.warning(
                    "reconcile took longer than %gs and was cancelled; retry %d with backoff",
                    self._reconcile_timeout,
                    retries + 1,
                )
            else:  # a bug: its traceback
                logger.exception("reconcile failed; retry %d with backoff", retries + 1)
            retry_after = error.retry_after if isinstance(error, ApiError) else None
            self.queue.add_rate_limited(key, at_least=retry_after or 0.0)
            return
        finally:
            self._duration.observe(time.perf_counter() - started)
        when = _earliest(result, self._clock.now())
        if result.retry:
            metrics.RECONCILE_TOTAL.labels(self.name, "retry").inc()
            self.queue.add_rate_limited(key)
            if when is not None:  # a transition due before the backoff ends is not delayed
                self.queue.add_at(key, when)
            return
        self.queue.forget(key)
        if result.back_of_queue:
            metrics.RECONCILE_TOTAL.labels(self.name, "requeue").inc()
            # The key is still processing: the queue marks it and appends it at done(), after
            # every key queued by then (nothing runs between this and the worker's done()).
            self.queue.add(key)
        elif when is None:
            metrics.RECONCILE_TOTAL.labels(self.name, "success").inc()
        else:
            metrics.RECONCILE_TOTAL.labels(self.name, "requeue").inc()
            self.queue.add_at(key, when)

    def _park(self, key: str) -> None:
        self._parked.add(key)
        if self._prober is None or self._prober.done():
            self._prober = asyncio.create_task(self._wait_for_api(), name=f"{self.name}-probe")

    async def _wait_for_api(self) -> None:
        """Probe until the API server answers, then retry every parked key."""
        assert self._probe is not None
        initial, maximum = self._probe_backoff
        backoff = Backoff(initial=initial, maximum=maximum)
        while True:
            await self._clock.sleep(backoff.next_delay())
            try:
                await self._probe()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.debug("API server still unavailable: %s", error)
                continue
            keys, self._parked = self._parked, set()
            log.info("API server is back; retrying %d keys", len(keys))
            for key in sorted(keys):
                self.queue.add(key)
            return


def _said(error: KubeError) -> str:
    """What the API server answered (or why it did not), on one line."""
    return " ".join(str(error).split()) or type(error).__name__


def _earliest(result: Result, now: float) -> float | None:
    candidates = [t for t in (result.requeue_at,) if t is not None]
    if result.requeue_after is not None:
        candidates.append(now + result.requeue_after)
    return min(candidates) if candidates else None
