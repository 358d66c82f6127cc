"""Some writes before the others, across every worker: the capacity of a fleet before its
statuses.

Why: at a boundary a whole fleet is due at once; the writes that scale workloads (an HPA, a
target's ``/scale``) are what the boundary is for, and a status or an Event written while one
of them waits only delays it. The work queue already hands the second passes (the statuses)
out behind every key due at the same instant (:class:`spa.runtime.Result`'s
``back_of_queue``), but with several workers a worker that takes a second pass may send its
status while another worker's last HPA write is still in flight, sharing the API server with
it. A worker about to send the later writes therefore waits until no urgent write is in
flight (docs/architecture.md, "Capacity first").

Bounded: the wait ends after ``longest`` seconds whatever is in flight, so a slow or hanging
urgent write (an API server that stopped answering one request) delays the statuses by that
much at most and never stops them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from spa.runtime.clock import Clock

__all__ = ["UrgentWrites"]


class UrgentWrites:
    """Counts the urgent writes in flight; lets the other writes wait until there are none.

    :param clock: the clock ``longest`` is measured on.
    :param longest: the longest (seconds) :meth:`settled` waits.
    """

    def __init__(self, *, clock: Clock, longest: float = 10.0) -> None:
        self._clock = clock
        self._longest = longest
        self._in_flight = 0
        self._none = asyncio.Event()
        self._none.set()

    @property
    def in_flight(self) -> int:
        """Urgent writes being made now."""
        return self._in_flight

    @contextlib.asynccontextmanager
    async def urgent(self) -> AsyncIterator[None]:
        """Mark the write made inside as urgent."""
        self._in_flight += 1
        self._none.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._none.set()

    async def settled(self) -> bool:
        """Return once no urgent write is in flight, or after ``longest`` seconds; whether none
        was left."""
        if self._in_flight == 0:
            return True
        none = asyncio.ensure_future(self._none.wait())
        timeout = asyncio.ensure_future(self._clock.sleep(self._longest))
        try:
            await asyncio.wait((none, timeout), return_when=asyncio.FIRST_COMPLETED)
        finally:
            none.cancel()
            timeout.cancel()
        return self._in_flight == 0
