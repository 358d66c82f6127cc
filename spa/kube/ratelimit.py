"""Client-side request throttling (a token bucket), the way client-go's ``--kube-api-qps``/
``--kube-api-burst`` protect the API server from a busy controller.

Also lets benchmarks run the controller under realistic throttling.
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["TokenBucket"]


class TokenBucket:
    """Token bucket: ``qps`` tokens per second, at most ``burst`` saved up.

    :meth:`wait` (on the event loop) and :meth:`acquire` (blocking, thread-safe) reserve a
    token first and then sleep, so concurrent callers queue up fairly instead of all waking
    at once.
    """

    def __init__(self, *, qps: float, burst: int) -> None:
        if qps <= 0:
            raise ValueError("qps must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._updated = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take one token; return how many seconds the caller must wait before using it."""
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.qps)
            self._updated = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def wait(self) -> float:
        """Wait on the event loop until a token is available; return the seconds waited."""
        wait = self.reserve()
        if wait > 0:
            await asyncio.sleep(wait)
        return wait

    def acquire(self) -> float:
        """Block until a token is available; return the seconds waited."""
        wait = self.reserve()
        if wait > 0:
            time.sleep(wait)
        return wait
