"""Shared pieces of the fault-injection tests.

The controller runs in-process (the real Manager, informers, queue, reconciler and client) on a
FakeClock that a `Ticker` moves forward in real time, so that the runtime's own delays (the
rate-limited retries of the work queue use the queue's clock) pass as they would in
production, while a test can still jump the clock to a window boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import REGISTRY

from spa.kube import RequestRecord
from spa.runtime import FakeClock
from tests.integration.harness import Kube

MONDAY_11 = "2026-11-16T11:00:00"


@contextlib.asynccontextmanager
async def ticking(clock: FakeClock, step: float = 0.05) -> AsyncIterator[FakeClock]:
    """Move `clock` forward at real speed (in `step`s) while the block runs; a test may still
    `clock.set()` it ahead at any time."""
    loop = asyncio.get_running_loop()

    async def tick() -> None:
        last = loop.time()
        while True:
            await asyncio.sleep(step)
            now = loop.time()
            clock.advance(now - last)
            last = now

    task = asyncio.create_task(tick(), name="fake-clock-ticker")
    try:
        yield clock
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def sample(metric: str, /, **labels: str) -> float:
    """The current value of a metric of this process (0 if the series does not exist)."""
    return REGISTRY.get_sample_value(metric, labels) or 0.0


def hpa_writes() -> dict[str, float]:
    return {op: sample("spa_hpa_writes_total", operation=op) for op in ("create", "patch")}


def relists(resource: str) -> float:
    return sum(
        metric.value
        for family in REGISTRY.collect()
        if family.name == "spa_watch_relists"
        for metric in family.samples
        if metric.name.endswith("_total") and resource in str(metric.labels.values())
    )


@dataclass
class Requests:
    """Every request the controller's client sent: (monotonic time, verb, resource, code)."""

    records: list[tuple[float, str, str, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, record: RequestRecord) -> None:
        with self._lock:
            self.records.append((time.monotonic(), record.verb, record.resource, record.code))

    def between(self, start: float, end: float) -> list[tuple[float, str, str, int]]:
        with self._lock:
            return [r for r in self.records if start <= r[0] < end]

    def per_second_peak(self, start: float, end: float, *, exclude: Iterable[str] = ()) -> int:
        """The most requests in any one-second bucket of [start, end)."""
        skipped = set(exclude)
        buckets: dict[int, int] = {}
        for at, verb, _resource, _code in self.between(start, end):
            if verb not in skipped:
                buckets[int(at - start)] = buckets.get(int(at - start), 0) + 1
        return max(buckets.values(), default=0)


def most_attempts(seconds: float, *, initial: float, maximum: float) -> int:
    """The most attempts a retry loop of the runtime's backoff (spa/runtime/backoff.py: initial
    doubling to maximum, less up to half of each delay) can make in `seconds`, counting the first
    one: the bound docs/reliability.md's "no busy loop" promises, computed from the same rule."""
    attempts, elapsed, nominal = 1, 0.0, initial
    while True:
        elapsed += nominal / 2  # the shortest each delay can be
        if elapsed > seconds:
            return attempts
        attempts += 1
        nominal = min(maximum, nominal * 2)


def bounds_of(kube: Kube, namespace: str) -> dict[str, tuple[int, int]]:
    """min/max of every HPA in the namespace, by name."""
    from spa.kube import HPA_V2

    return {
        hpa["metadata"]["name"]: (hpa["spec"].get("minReplicas"), hpa["spec"]["maxReplicas"])
        for hpa in kube.client.list(HPA_V2, namespace=namespace).items
    }


def all_bounds(kube: Kube, namespace: str, names: Iterable[str], expected: tuple[int, int]) -> bool:
    current = bounds_of(kube, namespace)
    return all(current.get(name) == expected for name in names)


def report(test: str, **numbers: Any) -> None:
    """Print observed numbers (shown with `pytest -s`; docs/reliability.md quotes them)."""
    formatted = ", ".join(
        f"{key}={value:.2f}" if isinstance(value, float) else f"{key}={value}"
        for key, value in numbers.items()
    )
    print(f"\n[reliability] {test}: {formatted}", flush=True)


def same_write(request: Any) -> tuple[str, str, str]:
    """What makes two requests the same write: method, path and, for a create, the object's
    name (the Events of different SPAs are all POSTed to one path)."""
    return (request.method, request.path, request.name)


def gaps_after_429(requests: list[Any]) -> list[float]:
    """For each write answered 429, the time until the same write was sent again."""
    gaps = []
    for index, request in enumerate(requests):
        if request.outcome != "429" or request.method == "GET":
            continue
        for later in requests[index + 1 :]:
            if same_write(later) == same_write(request):
                gaps.append(later.at - request.at)
                break
    return gaps
