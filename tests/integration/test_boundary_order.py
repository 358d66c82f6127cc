"""When a whole fleet is due at one boundary, every HPA is written before any status.

With a throttled client (or a busy API server) each write waits its turn; the HPAs are what
scales the workloads, so they go first and the statuses follow (docs/architecture.md, "The
data flow of one event"). With several workers, no status or Event is even sent while the last
HPA write is still in flight (docs/architecture.md, "Capacity first").
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from spa.controller.manager import Manager
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import RequestRecord, connect
from spa.runtime import FakeClock
from tests.integration.harness import Kube, create_noon_fleet, eventually, utc

pytestmark = pytest.mark.integration

FLEET = [f"app-{index}" for index in range(6)]


@pytest.mark.parametrize("workers", [1, 4])
async def test_all_due_hpas_are_patched_before_any_status(
    cluster: Any, kube: Kube, namespace: str, workers: int
) -> None:
    create_noon_fleet(kube, namespace, FLEET)
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    clock = FakeClock(utc("2026-11-16T11:00:00"))
    # One worker: the order of the requests is the order of the work; four: the order of the
    # work alone would let a status go while another worker's HPA write is in flight.
    manager = Manager(
        client=client,
        namespaces=[namespace],
        clock=clock,
        workers=workers,
        resync_period=86400,
        metrics_address=None,
        probe_address=None,
    )
    task = asyncio.create_task(manager.run())
    try:

        def settled() -> bool:
            # Every write of the first reconciles done: the SPA status, then (written after it)
            # the Schedule's, so that none of them is still in flight when recording starts.
            for name in FLEET:
                for resource, object_name in (
                    (SCHEDULED_POD_AUTOSCALERS, name),
                    (SCHEDULES, f"{name}-noon"),
                ):
                    status = kube.status(resource, namespace, object_name)
                    if status.get("nextTransitionTime") != "2026-11-16T12:00:00Z":
                        return False
            return all(kube.bounds(namespace, name) == (3, 10) for name in FLEET)

        await eventually(settled, what="all reconciled before the boundary")
        # Each write with the time it was begun and the time it was done.
        writes: list[tuple[str, float, float]] = []
        lock = threading.Lock()

        def record(request: RequestRecord) -> None:
            if request.verb in ("create", "patch", "update", "delete"):
                done = time.monotonic()
                with lock:
                    writes.append(
                        (f"{request.verb} {request.resource}", done - request.duration, done)
                    )

        client.add_request_hook(record)
        clock.set(utc("2026-11-16T12:00:00"))

        def done() -> bool:
            return all(
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("activeSchedules")
                == [f"{name}-noon"]
                for name in FLEET
            ) and all(kube.bounds(namespace, name) == (5, 20) for name in FLEET)

        await eventually(done, what="the fleet's transition")
        with lock:
            seen = list(writes)
        hpa = [write for write in seen if write[0] == "patch horizontalpodautoscalers"]
        others = [write for write in seen if write[0] != "patch horizontalpodautoscalers"]
        assert len(hpa) == len(FLEET), seen
        assert {write[0] for write in others} >= {
            "patch scheduledpodautoscalers",
            "patch schedules",
            "create events",
        }, seen
        # Every other write begun after the last HPA write was done.
        assert max(done for _, _, done in hpa) <= min(begun for _, begun, _ in others), seen
    finally:
        manager.stop()
        await asyncio.wait_for(task, timeout=20)
        await client.close()
