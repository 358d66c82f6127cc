"""A rate-limited, delaying work queue of object keys with client-go's guarantees.

Why a queue of keys rather than of events: the reconciler is level-triggered; it reads the
current state from the cache, so ten changes to one object collapse into one reconcile. The
guarantees (as client-go's ``workqueue``):

* a key is in the queue at most once (duplicates collapse);
* a key is never handed to two workers at once; a key added while it is being processed is
  queued again when the worker calls :meth:`WorkQueue.done`;
* :meth:`WorkQueue.add_at` / :meth:`~WorkQueue.add_after` delay a key on the injected
  :class:`~spa.runtime.clock.Clock`; if the key is already waiting, the earlier time wins;
* :meth:`WorkQueue.add_rate_limited` delays a key by a per-key exponential backoff that
  :meth:`WorkQueue.forget` resets.

Owned by the event loop; not thread-safe (call from the loop's thread only).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
from collections import deque

from spa.runtime import metrics
from spa.runtime.backoff import exponential_delay
from spa.runtime.clock import Clock, SystemClock, TimerHandle

__all__ = ["QueueShutDown", "WorkQueue"]

DEFAULT_BASE_DELAY = 0.5
DEFAULT_MAX_DELAY = 300.0


class QueueShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down: the worker should exit."""


class WorkQueue:
    """See the module docstring for the guarantees.

    :param name: label of the queue's metrics.
    :param base_delay: first rate-limited retry delay, doubled per failure of the same key.
    :param max_delay: cap of the rate-limited delay (5 min: a broken object is retried often
        enough to notice a fix, rarely enough not to load the API server).
    :param jitter: up to this fraction of the delay is taken off at random, so many keys
        failing together (API server down) do not retry in lockstep (spa/runtime/backoff.py).
    """

    def __init__(
        self,
        *,
        name: str = "default",
        clock: Clock | None = None,
        base_delay: float = DEFAULT_BASE_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
        jitter: float = 0.1,
        rng: random.Random | None = None,
    ) -> None:
        self.name = name
        self.clock: Clock = clock or SystemClock()
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._jitter = jitter
        self._rng = rng or random.Random()
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()  # needs processing (queued, or re-add while processing)
        self._processing: set[str] = set()
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shut_down = False
        # Delayed keys: earliest time per key, plus a heap with lazy deletion of superseded
        # entries; one clock timer is armed for the heap's head.
        self._waiting_until: dict[str, float] = {}
        self._waiting_heap: list[tuple[float, int, str]] = []
        self._sequence = itertools.count()
        self._timer: TimerHandle | None = None
        self._timer_at: float | None = None
        self._failures: dict[str, int] = {}
        self._depth = metrics.WORKQUEUE_DEPTH.labels(name)
        self._adds = metrics.WORKQUEUE_ADDS.labels(name)
        self._retries = metrics.WORKQUEUE_RETRIES.labels(name)

    # -- adding -------------------------------------------------------------------------------

    def add(self, key: str) -> None:
        """Queue ``key`` now (no-op if already queued; deferred if being processed)."""
        if self._shut_down or key in self._dirty:
            return
        self._adds.inc()
        self._dirty.add(key)
        if key in self._processing:
            return  # done() re-queues it
        self._queue.append(key)
        self._depth.set(len(self._queue))
        self._wake_one_getter()

    def add_at(self, key: str, when: float) -> None:
        """Queue ``key`` at absolute time ``when`` (clock epoch seconds); earlier wins."""
        if self._shut_down:
            return
        if when <= self.clock.now():
            self.add(key)
            return
        current = self._waiting_until.get(key)
        if current is not None and current <= when:
            return
        self._waiting_until[key] = when
        heapq.heappush(self._waiting_heap, (when, next(self._sequence), key))
        self._arm_timer()

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds of the clock's time."""
        self.add_at(key, self.clock.now() + delay)

    def add_rate_limited(self, key: str, *, at_least: float = 0.0) -> None:
        """Queue ``key`` after its backoff: ``base * 2**(failures)`` capped, less jitter, but
        not before ``at_least`` seconds (a server's ``Retry-After``)."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self._retries.inc()
        self.add_after(key, max(at_least, self.backoff_delay(failures)))

    def backoff_delay(self, failures: int) -> float:
        """The delay after ``failures`` earlier failures (0 for the first retry)."""
        return exponential_delay(
            failures,
            initial=self._base_delay,
            maximum=self._max_delay,
            jitter=self._jitter,
            rng=self._rng,
        )

    def forget(self, key: str) -> None:
        """Reset ``key``'s backoff (call after a successful reconcile)."""
        self._failures.pop(key, None)

    def num_requeues(self, key: str) -> int:
        """How many rate-limited re-adds ``key`` had since it was last forgotten."""
        return self._failures.get(key, 0)

    def waiting_until(self, key: str) -> float | None:
        """When ``key`` is due if it is waiting for a delayed add."""
        return self._waiting_until.get(key)

    # -- consuming ----------------------------------------------------------------------------

    async def get(self) -> str:
        """Wait for the next key and mark it processing; call :meth:`done` when finished.

        Raises :class:`QueueShutDown` once :meth:`shutdown` was called.
        """
        while not self._queue:
            if self._shut_down:
                raise QueueShutDown
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                # If we were picked to take a key, pass the wake-up on to another worker.
                if waiter.done() and not waiter.cancelled():
                    self._wake_one_getter()
                raise
            finally:
                if waiter in self._getters:
                    self._getters.remove(waiter)
        if self._shut_down:
            raise QueueShutDown
        key = self._queue.popleft()
        self._depth.set(len(self._queue))
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: str) -> None:
        """Mark ``key`` finished; if it was added meanwhile, queue it again."""
        self._processing.discard(key)
        if key in self._dirty and not self._shut_down:
            self._queue.append(key)
            self._depth.set(len(self._queue))
            self._wake_one_getter()

    def shutdown(self) -> None:
        """Stop handing out keys: every pending and future :meth:`get` raises QueueShutDown."""
        self._shut_down = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    @property
    def shutting_down(self) -> bool:
        """Whether :meth:`shutdown` was called."""
        return self._shut_down

    def __len__(self) -> int:
        """Keys ready to be handed out (not the delayed or the processing ones)."""
        return len(self._queue)

    @property
    def processing(self) -> frozenset[str]:
        """Keys handed out and not yet done."""
        return frozenset(self._processing)

    @property
    def waiting(self) -> int:
        """Keys waiting for a delayed add."""
        return len(self._waiting_until)

    # -- internals ----------------------------------------------------------------------------

    def _wake_one_getter(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _arm_timer(self) -> None:
        self._drop_superseded()
        if not self._waiting_heap:
            return
        head = self._waiting_heap[0][0]
        if self._timer is not None and self._timer_at is not None and self._timer_at <= head:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = head
        self._timer = self.clock.call_at(head, self._on_timer)

    def _drop_superseded(self) -> None:
        heap = self._waiting_heap
        while heap and self._waiting_until.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        now = self.clock.now()
        heap = self._waiting_heap
        while heap and heap[0][0] <= now:
            when, _, key = heapq.heappop(heap)
            if self._waiting_until.get(key) == when:
                del self._waiting_until[key]
                self.add(key)
        self._arm_timer()
