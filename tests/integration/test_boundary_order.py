"""When a whole fleet is due at one boundary, every HPA is written before any status.

With a throttled client (or a busy API server) each write waits its turn; the HPAs are what
scales the workloads, so they go first and the statuses follow (docs/architecture.md, "The
data flow of one event").
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from spa.controller.manager import Manager
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import RequestRecord, connect
from spa.runtime import FakeClock
from tests.integration.harness import Kube, create_noon_fleet, eventually, utc

pytestmark = pytest.mark.integration

FLEET = [f"app-{index}" for index in range(6)]


async def test_all_due_hpas_are_patched_before_any_status(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    create_noon_fleet(kube, namespace, FLEET)
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    clock = FakeClock(utc("2026-11-16T11:00:00"))
    # One worker: the order of the requests is the order of the work.
    manager = Manager(
        client=client,
        namespaces=[namespace],
        clock=clock,
        workers=1,
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
        writes: list[str] = []
        lock = threading.Lock()

        def record(request: RequestRecord) -> None:
            if request.verb in ("create", "patch", "update", "delete"):
                with lock:
                    writes.append(f"{request.verb} {request.resource}")

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
        hpa = [i for i, write in enumerate(seen) if write == "patch horizontalpodautoscalers"]
        others = [i for i, write in enumerate(seen) if write != "patch horizontalpodautoscalers"]
        assert len(hpa) == len(FLEET), seen
        assert others, seen
        assert max(hpa) < min(others), seen
    finally:
        manager.stop()
        await asyncio.wait_for(task, timeout=20)
        await client.close()
