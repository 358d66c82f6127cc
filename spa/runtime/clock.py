"""Time, injected: everything in the runtime that waits for a wall-clock instant goes through a
:class:`Clock`, so tests can move "now" across a schedule boundary without waiting for it.

Schedules are defined in wall-clock time, so the clock is the wall clock (epoch seconds), not a
monotonic one. :class:`SystemClock` re-checks the wall clock when a timer fires, so an NTP step
makes a timer late by at most one re-arm, never early.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "SystemClock", "TimerHandle"]


@runtime_checkable
class TimerHandle(Protocol):
    """What :meth:`Clock.call_at` returns: something that can be cancelled."""

    def cancel(self) -> None: ...


@runtime_checkable
class Clock(Protocol):
    """Wall-clock time and timers. All methods must be used from the event loop's thread."""

    def now(self) -> float:
        """Current time in epoch seconds."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never steps (any origin): for measuring elapsed time, which
        the wall clock cannot do when NTP or an operator steps it."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` on the loop once ``now() >= when``."""
        ...

    async def sleep_until(self, when: float) -> None:
        """Return once ``now() >= when`` (at once if that already holds)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return after ``seconds`` of this clock's time."""
        ...


async def _sleep_until_via_timer(clock: Clock, when: float) -> None:
    if clock.now() >= when:
        # Still yield, so a caller looping on sleep_until cannot starve the loop.
        await asyncio.sleep(0)
        return
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake() -> None:
        if not future.done():
            future.set_result(None)

    handle = clock.call_at(when, wake)
    try:
        await future
    finally:
        handle.cancel()


class _SystemTimer:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self._when = when
        self._callback = callback
        self._handle: asyncio.TimerHandle | None = None
        self._cancelled = False
        self._arm()

    def _arm(self) -> None:
        delay = max(0.0, self._when - time.time())
        self._handle = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        if self._cancelled:
            return
        if time.time() < self._when:
            # The wall clock was stepped back (or the loop's monotonic clock ran fast).
            self._arm()
            return
        self._callback()

    def cancel(self) -> None:
        self._cancelled = True
        if self._handle is not None:
            self._handle.cancel()


class SystemClock:
    """The real wall clock (``time.time``) with timers on the running event loop."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        return _SystemTimer(when, callback)

    async def sleep_until(self, when: float) -> None:
        await _sleep_until_via_timer(self, when)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class _FakeTimer:
    def __init__(self, clock: FakeClock, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False
        self._clock = clock

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self._clock._pending -= 1


class FakeClock:
    """A clock for tests that only moves when told to.

    :meth:`advance` and :meth:`set` run every timer that came due, in time order and
    synchronously, with ``now()`` set to each timer's own instant while it runs (so a callback
    that re-arms itself sees the time it was due). Tasks woken by a timer run when the test next
    yields to the loop (``await asyncio.sleep(0)``, or :meth:`settle`).
    """

    def __init__(self, start: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self._now = float(start)
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._sequence = itertools.count()
        self._pending = 0

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        # Fake time only moves forward and never steps: it serves as both.
        return self._now

    @property
    def pending_timers(self) -> int:
        """How many timers are armed (useful to assert a sleeper is really waiting)."""
        return self._pending

    def next_timer_at(self) -> float | None:
        """When the earliest armed timer is due, if any."""
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _FakeTimer(self, when, callback)
        self._pending += 1
        heapq.heappush(self._timers, (when, next(self._sequence), timer))
        return timer

    async def sleep_until(self, when: float) -> None:
        await _sleep_until_via_timer(self, when)

    async def sleep(self, seconds: float) -> None:
        await _sleep_until_via_timer(self, self._now + max(0.0, seconds))

    def set(self, when: float) -> None:
        """Move the clock to ``when`` (never backwards), firing timers due on the way."""
        if when < self._now:
            raise ValueError("FakeClock does not go backwards")
        while self._timers and self._timers[0][0] <= when:
            due, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            timer.cancel()  # fired timers no longer count as pending
            self._now = max(self._now, due)
            timer.callback()
        self._now = when

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds``, firing timers due on the way."""
        self.set(self._now + seconds)

    async def settle(self, rounds: int = 5) -> None:
        """Yield to the loop a few times so tasks woken by timers get to run."""
        for _ in range(rounds):
            await asyncio.sleep(0)
