"""Bounded exponential backoff with jitter: the one rule for every retry loop of the runtime
(the work queue's per-key retries, the informers' reconnects, the API readiness probe).

Jitter spreads many clients recovering together so they do not retry in lockstep. It is taken
off the nominal delay, never added, so the nominal delay (0.5 s doubling to 5 min for the work
queue, 0.2 s doubling to 30 s for watches) is a bound the documentation can promise and a test
on a fake clock can advance to.
"""

from __future__ import annotations

import random

__all__ = ["Backoff", "exponential_delay"]


def exponential_delay(
    failures: int, *, initial: float, maximum: float, jitter: float, rng: random.Random
) -> float:
    """``initial * 2**failures``, at most ``maximum``, less up to ``jitter`` of itself at
    random."""
    nominal = min(maximum, initial * (2.0 ** min(failures, 62)))
    return nominal * (1.0 - jitter * rng.random())


class Backoff:
    """The delays of one retry loop: :func:`exponential_delay` of its failures so far."""

    def __init__(
        self,
        *,
        initial: float = 0.2,
        maximum: float = 30.0,
        jitter: float = 0.5,
        rng: random.Random | None = None,
    ) -> None:
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
        self._rng = rng or random.Random()
        self._failures = 0

    @property
    def failures(self) -> int:
        """Failures since the last :meth:`reset`."""
        return self._failures

    def next_delay(self) -> float:
        """Record a failure and return how long to wait before the next attempt."""
        delay = exponential_delay(
            self._failures,
            initial=self.initial,
            maximum=self.maximum,
            jitter=self.jitter,
            rng=self._rng,
        )
        self._failures += 1
        return delay

    def reset(self) -> None:
        """Forget the failures (after a success)."""
        self._failures = 0
