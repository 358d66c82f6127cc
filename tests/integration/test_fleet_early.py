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
from prometheus_client import REGISTRY

from spa.controller.fleet import WRITE_RAISES_ANNOTATION, WRITE_SECONDS_ANNOTATION
from spa.controller.manager import LeaderElection, Manager
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.controller.shards import Shard, lease_prefix
from spa.kube import LEASE, connect
from spa.runtime import Clock, FakeClock, SystemClock
from tests.integration.harness import (
    Kube,
    create_noon_fleet,
    eventually,
    running_controller,
    utc,
)

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


async def test_the_write_time_a_leader_measured_is_the_next_leaders_start(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    """What the leader measured rides on its Lease (docs/schedules.md, "Raises ahead of a
    shared boundary"): a restarted or standby replica starts the next fleet from it, not from
    the default. The first leader's creates are measured (one worker: each is a burst) and
    written into the Lease (on the real clock: the injected one would time every write at 0 s);
    the next leader, whose first fleet depends on it alone (no write time set), starts 50 SPAs
    at 11:59:45 from an inherited 0.2 s per write."""
    create_noon_fleet(kube, namespace, FLEET)
    election = LeaderElection(namespace=namespace, name="spa-leader", retry_period=1.0)
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    clock = FakeClock(utc("2026-11-16T11:00:00"))

    def manager(clock: Clock) -> Manager:
        return Manager(
            client=client,
            namespaces=[namespace],
            clock=clock,
            workers=1,
            resync_period=86400,
            metrics_address=None,
            probe_address=None,
            leader_election=election,
        )

    def carried() -> str | None:
        lease = kube.client.get(LEASE, namespace, "spa-leader")
        annotations = lease["metadata"].get("annotations") or {}
        return annotations.get(WRITE_SECONDS_ANNOTATION)

    def settled() -> bool:
        return all(kube.bounds(namespace, name) == (3, 10) for name in FLEET)

    def created() -> bool:
        return all(kube.hpa(namespace, name) for name in FLEET)  # NotFound until then

    first = manager(SystemClock())
    task = asyncio.create_task(first.run())
    try:
        await eventually(created, within=60, what="the HPAs created by the first leader")
        measured = await eventually(carried, within=10, what="the write time on the Lease")
        assert measured is not None
        assert 0 < float(measured) < 1
    finally:
        first.stop()
        await asyncio.wait_for(task, timeout=20)
    # As if the API server had been slow for the last leader: 0.2 s per write.
    kube.client.patch(
        LEASE,
        namespace,
        "spa-leader",
        {"metadata": {"annotations": {WRITE_SECONDS_ANNOTATION: "0.200000"}}},
        patch_type="merge",
        field_manager="test",
    )
    second = manager(clock)
    task = asyncio.create_task(second.run())
    try:
        await eventually(
            lambda: second.ready and settled(), within=60, what="the second leader ready"
        )
        clock.set(utc("2026-11-16T11:59:44"))
        await asyncio.sleep(1.0)
        assert settled()
        clock.set(utc("2026-11-16T11:59:45"))
        await eventually(
            lambda: all(kube.bounds(namespace, name) == (5, 20) for name in FLEET),
            within=60,
            what="the fleet raised from the inherited write time",
        )
        assert clock.now() < utc("2026-11-16T12:00:00")
        assert _raised_ahead(kube, namespace, FLEET[0]) == (
            "True",
            "raised ahead of 2026-11-16T12:00:00Z for a fleet of 50 SPAs at that "
            "boundary: written from 2026-11-16T11:59:45Z",
        )
    finally:
        second.stop()
        await asyncio.wait_for(task, timeout=20)
        await client.close()


def _samples(name: str, **labels: str) -> float:
    """The sum of this process's samples of `name` whose labels include `labels`."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        for sample in metric.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


async def test_a_restarted_controller_keeps_the_raises_written_ahead(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    """A process that starts (a restart, or a standby taking the Lease) while a fleet is
    raised ahead of its boundary learns the fleet one reconcile at a time: its first
    reconciles see a fleet of a few SPAs, due later than now. They keep the raises the HPAs
    hold (docs/schedules.md, "Raises ahead of a shared boundary"): no HPA is lowered before
    12:00 and raised again, none is written at all."""
    create_noon_fleet(kube, namespace, FLEET)

    def bounds() -> dict[str, tuple[int, int]]:
        return {name: kube.bounds(namespace, name) for name in FLEET}

    async with running_controller(
        cluster.kubeconfig,
        [namespace],
        start=utc("2026-11-16T11:00:00"),
        fleet_write_seconds=0.2,  # 50 SPAs: 15 s ahead
    ) as first:
        await eventually(
            lambda: set(bounds().values()) == {(3, 10)}, within=60, what="the HPAs created"
        )
        first.clock.set(utc("2026-11-16T11:59:45"))
        await eventually(
            lambda: set(bounds().values()) == {(5, 20)}, within=60, what="raised ahead of 12:00"
        )
    # The HPA writes of this process (kube-controller-manager writes the HPAs' statuses).
    writes = _samples("spa_hpa_writes_total")
    reconciles = _samples("spa_reconcile_total")
    async with running_controller(
        cluster.kubeconfig,
        [namespace],
        start=utc("2026-11-16T11:59:50"),
        fleet_write_seconds=0.2,
    ):

        def all_reconciled() -> bool:
            return (
                _samples("spa_reconcile_total") - reconciles >= len(FLEET)
                and _samples("spa_workqueue_depth") == 0
            )

        await eventually(all_reconciled, within=60, what="every SPA reconciled after the restart")
        await asyncio.sleep(1.0)  # the keys woken at the fleet's start, once it is counted
        assert _samples("spa_hpa_writes_total") == writes
        assert bounds() == dict.fromkeys(FLEET, (5, 20))
        assert _raised_ahead(kube, namespace, FLEET[0])[0] == "True"


async def test_a_shard_writes_the_statuses_of_its_raises_ahead_at_the_boundary(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    """A shard cannot see the other shards' raises, so the statuses of the SPAs it raised
    ahead wait for their boundary (docs/schedules.md, "Raises ahead of a shared boundary"):
    none before 12:00, each at 12:00 saying the raise came early and why."""
    create_noon_fleet(kube, namespace, FLEET)
    async with running_controller(
        cluster.kubeconfig,
        [namespace],
        start=utc("2026-11-16T11:00:00"),
        fleet_write_seconds=0.2,
        shard=Shard.by_namespace(1, 0),  # a shard of one: every namespace is its own
    ) as running:
        await eventually(
            lambda: all(kube.bounds(namespace, name) == (3, 10) for name in FLEET),
            within=60,
            what="the HPAs created",
        )
        reconciles = _samples("spa_reconcile_total")
        running.clock.set(utc("2026-11-16T11:59:45"))

        def raised_and_passed() -> bool:
            # Each SPA's raise, then its statuses' pass: two reconciles each.
            return (
                all(kube.bounds(namespace, name) == (5, 20) for name in FLEET)
                and _samples("spa_reconcile_total") - reconciles >= 2 * len(FLEET)
                and _samples("spa_workqueue_depth") == 0
            )

        await eventually(raised_and_passed, within=60, what="the fleet raised ahead of 12:00")
        assert [_raised_ahead(kube, namespace, name) for name in FLEET] == [("", "")] * len(FLEET)
        running.clock.set(utc("2026-11-16T12:00:00"))

        def said_at_the_boundary() -> bool:
            return all(
                _raised_ahead(kube, namespace, name)
                == (
                    "False",
                    "its boundary came; the last raise ahead of one: raised ahead of "
                    "2026-11-16T12:00:00Z for a fleet of 50 SPAs at that boundary: written "
                    "from 2026-11-16T11:59:45Z",
                )
                and kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("activeSchedules")
                == [f"{name}-noon"]
                for name in FLEET
            )

        await eventually(said_at_the_boundary, within=60, what="the statuses at 12:00")


async def test_a_shard_plans_its_fleet_by_the_slower_pace_of_another_shards_lease(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    """The shards share the API server: a shard reads the other shards' Leases and plans by
    the slowest pace they carry (docs/runtime.md, "Shards"). Its own writes, on the injected
    clock, measure no time at all; the other shard's Lease says 0.2 s a raise over 5,000, so
    the shard starts its 50 SPAs at 11:59:45 (50 x 0.2 s x 1.5)."""
    create_noon_fleet(kube, namespace, FLEET)
    kube.client.create(
        LEASE,
        namespace,
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": "spa-leader-shard-other",
                "annotations": {
                    WRITE_SECONDS_ANNOTATION: "0.200000",
                    WRITE_RAISES_ANNOTATION: "5000",
                },
            },
            "spec": {"holderIdentity": "another-process", "leaseDurationSeconds": 15},
        },
    )
    shard = Shard.by_namespace(1, 0)
    election = LeaderElection(
        namespace=namespace,
        name=shard.lease_name("spa-leader"),
        retry_period=1.0,
        siblings_prefix=lease_prefix("spa-leader"),
    )
    async with running_controller(
        cluster.kubeconfig,
        [namespace],
        start=utc("2026-11-16T11:00:00"),
        leader_election=election,
        shard=shard,
    ) as running:
        await eventually(
            lambda: all(kube.bounds(namespace, name) == (3, 10) for name in FLEET),
            within=60,
            what="the HPAs created",
        )
        running.clock.set(utc("2026-11-16T11:59:44"))
        await asyncio.sleep(1.0)
        assert all(kube.bounds(namespace, name) == (3, 10) for name in FLEET)
        running.clock.set(utc("2026-11-16T11:59:45"))
        await eventually(
            lambda: all(kube.bounds(namespace, name) == (5, 20) for name in FLEET),
            within=60,
            what="the fleet raised from the other shard's pace",
        )
        assert running.clock.now() < utc("2026-11-16T12:00:00")
