"""Fault 7: the API server answers a share of requests with 500, 429 (with Retry-After) or not
at all (the client times out), through the TLS-terminating fault proxy (tests/testenv/
httpfaults.py). The controller authenticates as its own ServiceAccount with the project's
RBAC, whose bearer token passes the proxy.

What must hold: windows are still applied (convergence), failed keys back off (bounded
request rate, no busy loop), and a 429's Retry-After is respected.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.harness import (
    Kube,
    create_noon_fleet,
    eventually,
    running_controller,
    utc,
)
from tests.reliability.common import (
    MONDAY_11,
    bounds_of,
    gaps_after_429,
    report,
    same_write,
    sample,
    ticking,
)
from tests.testenv.httpfaults import Faults, HTTPFaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

NAMES = [f"web-{i}" for i in range(6)]
FAULT_SECONDS = 40.0
FAULTS = Faults(
    error_500=0.15, throttle_429=0.10, timeout=0.02, retry_after=2, hold=60.0, timeout_next=1
)


def most_sends_of_one_write_in_a_second(requests: list[Any]) -> tuple[int, str]:
    """The largest number of times one write (see `same_write`) was sent within one second,
    and that write."""
    sends: dict[tuple[str, str, str], list[float]] = {}
    for request in requests:
        if request.method != "GET":
            sends.setdefault(same_write(request), []).append(request.at)
    most, which = 0, ""
    for (method, path, name), times in sends.items():
        times.sort()
        start = 0
        for end, moment in enumerate(times):
            while moment - times[start] >= 1.0:
                start += 1
            if end - start + 1 > most:
                most, which = end - start + 1, f"{method} {path} {name}".rstrip()
    return most, which


async def test_converges_with_bounded_retries_under_500_429_and_timeouts(
    fault_proxy: HTTPFaultProxy, proxied_service_account: Path, kube: Kube, namespace: str
) -> None:
    create_noon_fleet(kube, namespace, NAMES)
    async with (
        running_controller(proxied_service_account, [namespace], start=utc(MONDAY_11)) as running,
        ticking(running.clock) as clock,
    ):
        await eventually(
            lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
            within=30,
            what="HPAs at base",
        )
        await asyncio.sleep(2)
        quiet_began = time.monotonic()
        await asyncio.sleep(5)
        quiet = fault_proxy.requests(quiet_began)
        errors_before = sample(
            "spa_reconcile_total", controller="scheduledpodautoscaler", result="error"
        )
        fault_proxy.set_faults(FAULTS)
        began = time.monotonic()
        steps = [
            ("2026-11-16T12:00:00", (5, 20)),
            ("2026-11-16T13:00:00", (3, 10)),
            ("2026-11-17T12:00:00", (5, 20)),
        ]
        lags = []
        for instant, bounds in steps:
            clock.set(utc(instant))
            jumped = time.monotonic()
            await eventually(
                lambda bounds=bounds: bounds_of(kube, namespace) == dict.fromkeys(NAMES, bounds),
                within=90,
                what=f"bounds {bounds} at {instant} under API errors",
            )
            lags.append(time.monotonic() - jumped)
        await asyncio.sleep(max(0.0, FAULT_SECONDS - (time.monotonic() - began)))
        ended = time.monotonic()
        fault_proxy.set_faults(Faults())
        errors = (
            sample("spa_reconcile_total", controller="scheduledpodautoscaler", result="error")
            - errors_before
        )
        during = fault_proxy.requests(began, ended)
        outcomes = {
            outcome: sum(1 for r in during if r.outcome == outcome)
            for outcome in ("forwarded", "500", "429", "timeout")
        }
        per_second: dict[int, int] = {}
        for request in during:
            per_second[int(request.at - began)] = per_second.get(int(request.at - began), 0) + 1
        gaps = gaps_after_429(during)
        early = [gap for gap in gaps if gap < FAULTS.retry_after - 0.2]
        report(
            "API errors",
            fault_seconds=ended - began,
            requests=len(during),
            rate_per_s=len(during) / (ended - began),
            peak_per_s=max(per_second.values()),
            quiet_rate_per_s=len(quiet) / 5.0,
            reconcile_errors=errors,
            max_lag_s=max(lags),
            retries_after_429=len(gaps),
            retried_before_retry_after=len(early),
            **outcomes,
        )
        assert outcomes["500"] > 0
        assert outcomes["429"] > 0
        assert outcomes["timeout"] > 0
        assert errors > 0
        # No busy loop: 6 SPAs with 3 transitions need a few dozen requests; retries with
        # backoff add some. A loop without backoff would send hundreds per second.
        assert len(during) / (ended - began) < 10
        assert max(per_second.values()) < 40
        # The work queue waits at least Retry-After before retrying a throttled key, but a
        # watch event for the same key queues it earlier, as in client-go: here the HPA
        # controller updates each HPA's status every second (its sync period in the test
        # environment), so a failing HPA patch is also retried on those events, on top of the
        # backoff retries from 0.5 s. That is up to about 5 sends of one write in a second;
        # a tight loop would send dozens (one per request latency, ~10 ms).
        most, which = most_sends_of_one_write_in_a_second(during)
        assert most <= 8, (which, gaps)
        # And after the faults everything is (still) right.
        await eventually(
            lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (5, 20)),
            within=30,
            what="final bounds",
        )
