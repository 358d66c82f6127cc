"""Fault 1: every connection to the API server (watches and requests alike) is reset every few
seconds by the TCP proxy, for about a minute, while windows start and end on the fake clock."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import pytest

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from tests.builders import schedule
from tests.integration.harness import (
    Kube,
    create_noon_fleet,
    eventually,
    running_controller,
    utc,
)
from tests.reliability.common import (
    MONDAY_11,
    Requests,
    bounds_of,
    hpa_writes,
    report,
    sample,
    ticking,
)

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

NAMES = [f"web-{i}" for i in range(8)]

# (instant, expected bounds of every HPA, expected active schedules), in time order.
STEPS: list[tuple[str, tuple[int, int], list[str]]] = [
    ("2026-11-16T12:00:00", (5, 20), ["noon"]),
    ("2026-11-16T12:30:00", (5, 30), ["long", "noon"]),
    ("2026-11-16T13:00:00", (3, 30), ["long"]),
    ("2026-11-16T13:15:00", (8, 30), ["long", "once"]),
    ("2026-11-16T13:45:00", (3, 30), ["long"]),
    ("2026-11-16T14:00:00", (3, 10), []),
    ("2026-11-17T12:00:00", (5, 20), ["noon"]),
    ("2026-11-17T13:00:00", (3, 10), []),
]


class Cutter:
    """Resets every proxied connection at random intervals of `low`..`high` seconds."""

    def __init__(self, proxy: Any, low: float = 1.5, high: float = 4.0) -> None:
        self.proxy = proxy
        self.low, self.high = low, high
        self.cuts = 0
        self.connections_reset = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        rng = random.Random(6)
        while not self._stop.wait(rng.uniform(self.low, self.high)):
            self.connections_reset += self.proxy.cut()
            self.cuts += 1

    def __enter__(self) -> Cutter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def expected_active(kube: Kube, namespace: str, active: list[str]) -> bool:
    return all(
        kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("activeSchedules")
        == [f"{name}-{schedule}" for schedule in active]
        for name in NAMES
    )


async def test_windows_apply_while_connections_are_cut_every_few_seconds(
    apiserver_proxy: Any, kube: Kube, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    create_noon_fleet(kube, namespace, NAMES)
    for name in NAMES:
        kube.create(
            schedule(
                name=f"{name}-long",
                namespace=namespace,
                target=name,
                type="Weekly",
                startDayOfWeek="Monday",
                endDayOfWeek="Monday",
                startTime="12:30",
                endTime="14:00",
                maxReplicas=30,
            )
        )
        kube.create(
            schedule(
                name=f"{name}-once",
                namespace=namespace,
                target=name,
                type="OneShot",
                startTime="2026-11-16T13:15",
                endTime="2026-11-16T13:45",
                minReplicas=8,
            )
        )
    requests = Requests()
    async with running_controller(
        apiserver_proxy.kubeconfig, [namespace], start=utc(MONDAY_11)
    ) as running:
        running.manager.client.add_request_hook(requests.hook)
        async with ticking(running.clock) as clock:
            await eventually(
                lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
                within=30,
                what="HPAs at base",
            )
            # Statuses are written on the pass after the HPA write: once they are there, every
            # create has been counted.
            await eventually(
                lambda: (
                    expected_active(kube, namespace, [])
                    and all(
                        kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("minReplicas")
                        == 3
                        for name in NAMES
                    )
                ),
                within=30,
                what="statuses at base",
            )
            writes_before = hpa_writes()
            restarts_before = sample(
                "spa_watch_restarts_total", resource=str(SCHEDULED_POD_AUTOSCALERS), reason="error"
            )
            lags: list[float] = []
            began = time.monotonic()
            with Cutter(apiserver_proxy.proxy) as cutter:
                for instant, bounds, active in STEPS:
                    clock.set(utc(instant))
                    jumped = time.monotonic()
                    await eventually(
                        lambda bounds=bounds: (
                            bounds_of(kube, namespace) == dict.fromkeys(NAMES, bounds)
                        ),
                        within=60,
                        what=f"bounds {bounds} at {instant}",
                    )
                    lags.append(time.monotonic() - jumped)
                    await eventually(
                        lambda active=active: expected_active(kube, namespace, active),
                        within=60,
                        what=f"activeSchedules {active} at {instant}",
                    )
                    # Stay in the window a while so that several cuts land inside it.
                    await asyncio.sleep(max(0.0, 5.0 - (time.monotonic() - jumped)))
            duration = time.monotonic() - began
            writes = hpa_writes()
            patches = writes["patch"] - writes_before["patch"]
            failed = sum(1 for r in requests.records if r[3] == 0)
            # A patch whose answer was cut (no status line, or a body cut short) is not
            # counted as a write, yet it may have landed: then the retry finds the HPA
            # already right and sends nothing.
            unanswered_patches = sum(
                1
                for record in caplog.records
                if "API server unreachable (PATCH /apis/autoscaling/v2/" in record.getMessage()
            )
            restarts = (
                sample(
                    "spa_watch_restarts_total",
                    resource=str(SCHEDULED_POD_AUTOSCALERS),
                    reason="error",
                )
                - restarts_before
            )
            report(
                "watch cuts",
                seconds=duration,
                cuts=cutter.cuts,
                connections_reset=cutter.connections_reset,
                spa_watch_restarts=restarts,
                transitions=len(STEPS),
                max_lag_s=max(lags),
                mean_lag_s=sum(lags) / len(lags),
                hpa_patches=patches,
                failed_requests=failed,
                unanswered_patches=unanswered_patches,
            )
            assert cutter.cuts >= 10
            assert restarts >= 3, "the cuts did not reach the SPA watch"
            assert writes["create"] == writes_before["create"]
            # Every transition of every HPA applied (the bounds above); a write is repeated
            # only when its answer was lost, and missing from the count only then too.
            expected = len(STEPS) * len(NAMES)
            assert expected - unanswered_patches <= patches <= expected + unanswered_patches
