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
from tests.builders import DAILY_NOON, calendar, schedule
from tests.integration.harness import InNamespace, Kube, Running, utc

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


async def test_an_only_calendar_applies_on_its_dates_and_an_edit_applies_at_once(
    controller: Running, kube: Kube, namespace: str, cluster_calendar: str, objects: InNamespace
) -> None:
    kube.create(calendar(name=cluster_calendar, dates=["2026-11-17"]))
    objects.autoscaler()
    created = kube.create(
        peak_schedule(
            namespace, [{"kind": "ClusterCalendar", "name": cluster_calendar, "mode": "Only"}]
        )
    )
    await objects.bounds_become((3, 10))
    # Monday 16 is not on the calendar: the next window is Tuesday's.
    status = await objects.schedule_condition_becomes("Available", name="peak")
    assert status["nextTransitionTime"] == "2026-11-17T12:00:00Z"

    controller.clock.set(utc("2026-11-16T12:30:00"))
    await asyncio.sleep(0.3)
    assert objects.bounds() == (3, 10), "applied on a date not on the calendar"

    # Today added to the calendar: the window in progress applies, the Schedule untouched.
    kube.merge(
        CLUSTER_CALENDARS,
        None,
        cluster_calendar,
        {"spec": {"dates": ["2026-11-16", "2026-11-17"]}},
    )
    await objects.bounds_become((5, 20))
    status = await objects.schedule_condition_becomes("Progressing", name="peak")
    assert status["nextTransitionTime"] == "2026-11-16T13:00:00Z"
    stored = objects.get(SCHEDULES, "peak")
    assert stored["metadata"]["generation"] == created["metadata"]["generation"]

    # And taken off again.
    kube.merge(
        CLUSTER_CALENDARS,
        None,
        cluster_calendar,
        {"spec": {"dates": ["2026-11-17"]}},
    )
    await objects.bounds_become((3, 10))

    controller.clock.set(utc("2026-11-17T12:00:00"))
    await objects.bounds_become((5, 20))
    controller.clock.set(utc("2026-11-17T13:00:00"))
    await objects.bounds_become((3, 10))


async def test_a_missing_calendar_is_reported_until_it_is_created(
    controller: Running, kube: Kube, namespace: str, cluster_calendar: str, objects: InNamespace
) -> None:
    controller.clock.set(utc("2026-11-16T12:30:00"))
    objects.autoscaler()
    kube.create(
        peak_schedule(
            namespace, [{"kind": "ClusterCalendar", "name": cluster_calendar, "mode": "Only"}]
        )
    )
    status = await objects.schedule_condition_becomes("Degraded", name="peak")
    assert status["message"] == (
        f'spec.calendars[0]: ClusterCalendar "{cluster_calendar}" not found'
    )
    await objects.bounds_become((3, 10))

    kube.create(calendar(name=cluster_calendar, dates=["2026-11-16"]))
    await objects.bounds_become((5, 20))
    status = await objects.schedule_condition_becomes("Progressing", name="peak")
    assert "message" not in status or not status["message"]


async def test_a_namespaced_skip_calendar_is_read_in_the_schedules_namespace(
    controller: Running, kube: Kube, namespace: str, objects: InNamespace
) -> None:
    controller.clock.set(utc("2026-11-16T12:30:00"))
    kube.create(calendar(name="freeze", namespace=namespace, dates=["2026-11-16"]))
    objects.autoscaler()
    kube.create(peak_schedule(namespace, [{"name": "freeze"}]))
    status = await objects.schedule_condition_becomes("Available", name="peak")
    # Today is skipped: the next window is tomorrow's.
    assert status["nextTransitionTime"] == "2026-11-17T12:00:00Z"
    assert objects.bounds() == (3, 10)

    objects.delete(CALENDARS, "freeze")
    status = await objects.schedule_condition_becomes("Degraded", name="peak")
    assert status["message"] == (
        f'spec.calendars[0]: Calendar "freeze" in namespace {namespace} not found'
    )
