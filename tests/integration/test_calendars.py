"""Shared calendars on the real control plane (docs/schedules.md, "Shared calendars"): a
Schedule with `mode: Only` on a ClusterCalendar applies on the calendar's dates alone; editing
the calendar re-reconciles the Schedule's ScheduledPodAutoscaler without touching the Schedule;
a reference to a missing calendar says so in the Schedule's status, and the calendar's creation
makes the Schedule apply, with no edit. The controller runs in-process on a fake clock
(Monday 2026-11-16 11:00 UTC at the start)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from spa.controller.resources import CALENDARS, CLUSTER_CALENDARS, SCHEDULES
from tests.builders import DAILY_NOON, autoscaler, calendar, schedule
from tests.integration.harness import Kube, Running, condition_becomes, eventually, utc

pytestmark = pytest.mark.integration


@pytest.fixture
def cluster_calendar(kube: Kube, namespace: str) -> Iterator[str]:
    """The name of a ClusterCalendar of this test alone (cluster-scoped: the namespace is not
    deleted with it), deleted afterwards."""
    name = f"peak-{namespace}"[:63]
    yield name
    kube.delete(CLUSTER_CALENDARS, None, name)


def peak_schedule(namespace: str, references: list[dict[str, Any]]) -> dict[str, Any]:
    """Daily 12:00-13:00 UTC raising `web` to 5/20, on the calendars' terms."""
    return schedule(
        name="peak",
        namespace=namespace,
        minReplicas=5,
        maxReplicas=20,
        calendars=references,
        **DAILY_NOON,
    )


async def bounds_become(kube: Kube, namespace: str, expected: tuple[int, int]) -> None:
    await eventually(lambda: kube.bounds(namespace, "web") == expected, what=f"bounds {expected}")


async def test_an_only_calendar_applies_on_its_dates_and_an_edit_applies_at_once(
    controller: Running, kube: Kube, namespace: str, cluster_calendar: str
) -> None:
    kube.create(calendar(name=cluster_calendar, dates=["2026-11-17"]))
    kube.create(autoscaler(name="web", namespace=namespace))
    created = kube.create(
        peak_schedule(
            namespace, [{"kind": "ClusterCalendar", "name": cluster_calendar, "mode": "Only"}]
        )
    )
    await bounds_become(kube, namespace, (3, 10))
    # Monday 16 is not on the calendar: the next window is Tuesday's.
    status = await condition_becomes(kube, SCHEDULES, namespace, "peak", "Available")
    assert status["nextTransitionTime"] == "2026-11-17T12:00:00Z"

    controller.clock.set(utc("2026-11-16T12:30:00"))
    await asyncio.sleep(0.3)
    assert kube.bounds(namespace, "web") == (3, 10), "applied on a date not on the calendar"

    # Today added to the calendar: the window in progress applies, the Schedule untouched.
    kube.merge(
        CLUSTER_CALENDARS,
        None,
        cluster_calendar,
        {"spec": {"dates": ["2026-11-16", "2026-11-17"]}},
    )
    await bounds_become(kube, namespace, (5, 20))
    status = await condition_becomes(kube, SCHEDULES, namespace, "peak", "Progressing")
    assert status["nextTransitionTime"] == "2026-11-16T13:00:00Z"
    stored = kube.get(SCHEDULES, namespace, "peak")
    assert stored["metadata"]["generation"] == created["metadata"]["generation"]

    # And taken off again.
    kube.merge(
        CLUSTER_CALENDARS,
        None,
        cluster_calendar,
        {"spec": {"dates": ["2026-11-17"]}},
    )
    await bounds_become(kube, namespace, (3, 10))

    controller.clock.set(utc("2026-11-17T12:00:00"))
    await bounds_become(kube, namespace, (5, 20))
    controller.clock.set(utc("2026-11-17T13:00:00"))
    await bounds_become(kube, namespace, (3, 10))


async def test_a_missing_calendar_is_reported_until_it_is_created(
    controller: Running, kube: Kube, namespace: str, cluster_calendar: str
) -> None:
    controller.clock.set(utc("2026-11-16T12:30:00"))
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(
        peak_schedule(
            namespace, [{"kind": "ClusterCalendar", "name": cluster_calendar, "mode": "Only"}]
        )
    )
    status = await condition_becomes(kube, SCHEDULES, namespace, "peak", "Degraded")
    assert status["message"] == (
        f'spec.calendars[0]: ClusterCalendar "{cluster_calendar}" not found'
    )
    await bounds_become(kube, namespace, (3, 10))

    kube.create(calendar(name=cluster_calendar, dates=["2026-11-16"]))
    await bounds_become(kube, namespace, (5, 20))
    status = await condition_becomes(kube, SCHEDULES, namespace, "peak", "Progressing")
    assert "message" not in status or not status["message"]


async def test_a_namespaced_skip_calendar_is_read_in_the_schedules_namespace(
    controller: Running, kube: Kube, namespace: str
) -> None:
    controller.clock.set(utc("2026-11-16T12:30:00"))
    kube.create(calendar(name="freeze", namespace=namespace, dates=["2026-11-16"]))
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(peak_schedule(namespace, [{"name": "freeze"}]))
    status = await condition_becomes(kube, SCHEDULES, namespace, "peak", "Available")
    # Today is skipped: the next window is tomorrow's.
    assert status["nextTransitionTime"] == "2026-11-17T12:00:00Z"
    assert kube.bounds(namespace, "web") == (3, 10)

    kube.delete(CALENDARS, namespace, "freeze")
    status = await condition_becomes(kube, SCHEDULES, namespace, "peak", "Degraded")
    assert status["message"] == (
        f'spec.calendars[0]: Calendar "freeze" in namespace {namespace} not found'
    )
