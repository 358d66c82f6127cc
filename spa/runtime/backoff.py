"""Bounded exponential backoff with jitter, for loops that retry the API server (informers,
leader election) so that many clients recovering together do not retry in lockstep."""

from __future__ import annotations

import random

__all__ = ["Backoff"]


class Backoff:
    """``initial`` doubling per failure up to ``maximum``; each delay is drawn uniformly from
    ``[delay * (1 - jitter), delay]`` so that the bound holds and retries spread out."""

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
        delay = min(self.maximum, self.initial * (2.0 ** min(self._failures, 62)))
        self._failures += 1
        return delay * (1.0 - self.jitter * self._rng.random())

    def reset(self) -> None:
        """Forget the failures (after a success)."""
        self._failures = 0
