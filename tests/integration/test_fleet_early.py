"""A fleet sharing a boundary has its raises written ahead of it, on the real API server.

50 SPAs raised at 12:00 with a write time set slow (0.2 s each: 10 s of need, 15 s with the
margin): nothing moves before 11:59:45, every HPA is raised from then while the clock still
reads 11:59:45, the statuses say why, and at 12:00 the windows start as ever
(docs/schedules.md, "Raises ahead of a shared boundary").
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spa.controller.manager import Manager
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import connect
from spa.runtime import FakeClock
from tests.integration.harness import Kube, create_noon_fleet, eventually, utc

pytestmark = pytest.mark.integration

FLEET = [f"app-{index}" for index in range(50)]


def _raised_ahead(kube: Kube, namespace: str, name: str) -> tuple[str, str]:
    """The status and message of the SPA's RaisedAhead condition ("" without one)."""
    conditions = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("conditions") or []
    for condition in conditions:
        if condition.get("type") == "RaisedAhead":
            return str(condition.get("status")), str(condition.get("message"))
    return "", ""


async def test_a_fleets_raises_land_before_its_boundary(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    create_noon_fleet(kube, namespace, FLEET)
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    clock = FakeClock(utc("2026-11-16T11:00:00"))
    manager = Manager(
        client=client,
        namespaces=[namespace],
        clock=clock,
        resync_period=86400,
        metrics_address=None,
        probe_address=None,
        fleet_write_seconds=0.2,
    )
    task = asyncio.create_task(manager.run())
    try:

        def settled() -> bool:
            return all(
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("nextTransitionTime")
                == "2026-11-16T12:00:00Z"
                and kube.bounds(namespace, name) == (3, 10)
                for name in FLEET
            )

        await eventually(settled, within=60, what="all reconciled before the boundary")
        # One second before the fleet's start: nothing is raised.
        clock.set(utc("2026-11-16T11:59:44"))
        await asyncio.sleep(1.0)
        assert all(kube.bounds(namespace, name) == (3, 10) for name in FLEET)
        # From its start, every raise lands with the clock still before 12:00.
        clock.set(utc("2026-11-16T11:59:45"))

        def raised() -> bool:
            return all(kube.bounds(namespace, name) == (5, 20) for name in FLEET)

        await eventually(raised, within=60, what="the fleet raised ahead of 12:00")
        assert clock.now() < utc("2026-11-16T12:00:00")

        def explained() -> bool:
            return all(
                _raised_ahead(kube, namespace, name)
                == (
                    "True",
                    "raised ahead of 2026-11-16T12:00:00Z for a fleet of 50 SPAs at that "
                    "boundary: written from 2026-11-16T11:59:45Z",
                )
                for name in FLEET
            )

        await eventually(explained, within=60, what="the statuses say why")
        # The windows start at 12:00, as ever, and nothing is written to the HPAs again.
        clock.set(utc("2026-11-16T12:00:00"))

        def started() -> bool:
            return all(
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("activeSchedules")
                == [f"{name}-noon"]
                and _raised_ahead(kube, namespace, name)[0] == "False"
                for name in FLEET
            )

        await eventually(started, within=60, what="the windows started at 12:00")
        assert all(kube.bounds(namespace, name) == (5, 20) for name in FLEET)
    finally:
        manager.stop()
        await asyncio.wait_for(task, timeout=20)
        await client.close()
