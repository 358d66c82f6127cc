"""The controller's behaviour (docs/schedules.md, docs/architecture.md) against the real
control plane.

The controller runs in-process with a fake clock; the API server, the kube-controller-manager
(garbage collector, HPA controller) and the CRDs are real.
"""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from spa.controller.desired import FIELD_MANAGER
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, NotFound
from tests.builders import DAILY_NOON
from tests.integration.harness import (
    InNamespace,
    Kube,
    Running,
    eventually,
    running_controller,
    utc,
)

pytestmark = pytest.mark.integration


def ours(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The managedFields entries of the controller's field manager."""
    return [e for e in obj["metadata"].get("managedFields") or () if e["manager"] == FIELD_MANAGER]


def hpa_gone(objects: InNamespace, name: str = "web") -> bool:
    try:
        objects.hpa(name)
    except NotFound:
        return True
    return False


async def test_hpa_is_created_with_the_base_spec_and_owned(
    controller: Running, objects: InNamespace
) -> None:
    created = objects.autoscaler()
    hpa = await eventually(lambda: objects.hpa(), what="HPA")
    assert hpa["spec"]["minReplicas"] == 3
    assert hpa["spec"]["maxReplicas"] == 10
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
    }
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    [owner] = hpa["metadata"]["ownerReferences"]
    assert (owner["uid"], owner["controller"], owner["blockOwnerDeletion"]) == (
        created["metadata"]["uid"],
        True,
        True,
    )
    assert any(entry["manager"] == FIELD_MANAGER for entry in hpa["metadata"]["managedFields"])
    status = await eventually(
        lambda: objects.spa_status().get("condition") and objects.spa_status()
    )
    assert status["condition"] == "Available"
    assert (status["minReplicas"], status["maxReplicas"], status["activeSchedules"]) == (3, 10, [])
    assert status["observedGeneration"] == created["metadata"]["generation"]
    assert [c["type"] for c in status["conditions"]] == ["Ready"]


async def test_window_applies_at_its_boundaries_and_returns_to_base(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    objects.schedule(name="noon", minReplicas=5, maxReplicas=20, **DAILY_NOON)
    await objects.bounds_become((3, 10))
    status = await eventually(
        lambda: objects.spa_status().get("nextTransitionTime") == "2026-11-16T12:00:00Z"
    )
    assert status
    await objects.schedule_condition_becomes("Available")

    controller.clock.set(utc("2026-11-16T11:59:59"))
    await asyncio.sleep(0.3)
    assert objects.bounds() == (3, 10), "changed before the boundary"

    controller.clock.set(utc("2026-11-16T12:00:00"))
    await objects.bounds_become((5, 20))
    await objects.schedule_condition_becomes("Progressing")
    spa_status = await eventually(
        lambda: (s := objects.spa_status()).get("activeSchedules") == ["noon"] and s
    )
    assert (spa_status["minReplicas"], spa_status["maxReplicas"]) == (5, 20)
    assert spa_status["nextTransitionTime"] == "2026-11-16T13:00:00Z"

    controller.clock.set(utc("2026-11-16T13:00:00"))
    await objects.bounds_become((3, 10))
    await objects.schedule_condition_becomes("Available")
    await eventually(lambda: objects.reasons() >= {"ScheduleStarted", "ScheduleEnded"})
    started = next(e for e in objects.events() if e["reason"] == "ScheduleStarted")
    assert started["message"] == "Schedule noon started: minReplicas 3 -> 5, maxReplicas 10 -> 20"


async def test_original_readme_timeline(
    cluster: Any, crds: None, namespace: str, objects: InNamespace
) -> None:
    """Three schedules one after another on Saturday 2020-10-31; the HPA returns to base between."""
    objects.autoscaler(name="nginx")
    objects.schedule(
        name="test-1",
        target="nginx",
        type="Weekly",
        startDayOfWeek="Saturday",
        endDayOfWeek="Saturday",
        startTime="20:10",
        endTime="20:15",
        minReplicas=1,
        maxReplicas=1,
    )
    objects.schedule(
        name="test-2",
        target="nginx",
        type="Daily",
        startTime="20:20",
        endTime="20:25",
        minReplicas=2,
        maxReplicas=2,
    )
    objects.schedule(
        name="test-3",
        target="nginx",
        type="OneShot",
        startTime="2020-10-31T20:30",
        endTime="2020-10-31T20:35",
        minReplicas=3,
        maxReplicas=3,
    )
    async with running_controller(
        cluster.kubeconfig, [namespace], start=utc("2020-10-31T20:00:00")
    ) as running:
        expected = [
            ("2020-10-31T20:10:00", (1, 1)),
            ("2020-10-31T20:15:00", (3, 10)),
            ("2020-10-31T20:20:00", (2, 2)),
            ("2020-10-31T20:25:00", (3, 10)),
            ("2020-10-31T20:30:00", (3, 3)),
            ("2020-10-31T20:35:00", (3, 10)),
        ]
        await objects.bounds_become((3, 10), name="nginx")
        for moment, bounds in expected:
            running.clock.set(utc(moment))
            await objects.bounds_become(bounds, name="nginx")
        await objects.schedule_condition_becomes("Completed", name="test-3")
        assert objects.schedule_status("test-3").get("nextTransitionTime") is None


async def test_overlapping_windows_take_the_highest_of_each_field(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    objects.schedule(name="floor", minReplicas=5, maxReplicas=10, **DAILY_NOON)
    objects.schedule(
        name="ceiling", maxReplicas=20, type="Daily", startTime="12:30", endTime="14:00"
    )
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await objects.bounds_become((5, 10))
    controller.clock.set(utc("2026-11-16T12:30:00"))
    await objects.bounds_become((5, 20))
    controller.clock.set(utc("2026-11-16T13:00:00"))
    await objects.bounds_become((3, 20))
    controller.clock.set(utc("2026-11-16T14:00:00"))
    await objects.bounds_become((3, 10))


async def test_min_above_max_raises_max_and_warns(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    objects.schedule(name="big", minReplicas=20, **DAILY_NOON)
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await objects.bounds_become((20, 20))
    events = await eventually(
        lambda: [e for e in objects.events() if e["reason"] == "MaxRaisedToMin"]
    )
    assert events[0]["type"] == "Warning"
    ready = next(c for c in objects.spa_status()["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "MaxRaisedToMin"


async def test_suspended_schedule_never_applies(controller: Running, objects: InNamespace) -> None:
    objects.autoscaler()
    objects.schedule(name="paused", minReplicas=9, suspend=True, **DAILY_NOON)
    controller.clock.set(utc("2026-11-16T12:30:00"))
    await objects.schedule_condition_becomes("Suspend", name="paused")
    assert objects.bounds() == (3, 10)


async def test_dst_boundary_in_new_york(
    cluster: Any, crds: None, namespace: str, objects: InNamespace
) -> None:
    """02:30 does not exist on 2026-03-08 in New York: the window starts at the jump, 07:00Z."""
    objects.autoscaler()
    objects.schedule(
        name="gap",
        type="Daily",
        startTime="02:30",
        endTime="04:00",
        timeZone="America/New_York",
        minReplicas=6,
    )
    async with running_controller(
        cluster.kubeconfig, [namespace], start=utc("2026-03-08T06:00:00")
    ) as running:
        await eventually(
            lambda: objects.spa_status().get("nextTransitionTime") == "2026-03-08T07:00:00Z"
        )
        running.clock.set(utc("2026-03-08T06:59:59"))
        await asyncio.sleep(0.3)
        assert objects.bounds() == (3, 10)
        running.clock.set(utc("2026-03-08T07:00:00"))
        await objects.bounds_become((6, 10))
        running.clock.set(utc("2026-03-08T08:00:00"))  # 04:00 EDT
        await objects.bounds_become((3, 10))


async def test_schedule_before_its_autoscaler_is_degraded_then_adopted(
    controller: Running, namespace: str, objects: InNamespace
) -> None:
    objects.schedule(
        name="early",
        target="later",
        minReplicas=4,
        type="Daily",
        startTime="10:00",
        endTime="12:00",
    )
    status = await objects.schedule_condition_becomes("Degraded", name="early")
    assert status["message"] == f"ScheduledPodAutoscaler {namespace}/later not found"
    created = objects.autoscaler(name="later")
    await objects.bounds_become((4, 10), name="later")
    owners = objects.get(SCHEDULES, "early")["metadata"]["ownerReferences"]
    assert [(o["kind"], o["uid"], o["controller"]) for o in owners] == [
        ("ScheduledPodAutoscaler", created["metadata"]["uid"], True)
    ]
    await objects.schedule_condition_becomes("Progressing", name="early")


async def test_retargeting_reparents_the_schedule(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler(name="a")
    b = objects.autoscaler(name="b")
    objects.schedule(
        name="moving", target="a", minReplicas=7, type="Daily", startTime="10:00", endTime="12:00"
    )
    await objects.bounds_become((7, 10), name="a")
    await objects.bounds_become((3, 10), name="b")
    objects.merge(SCHEDULES, "moving", {"spec": {"scaleTargetRef": {"name": "b"}}})
    await objects.bounds_become((7, 10), name="b")
    await objects.bounds_become((3, 10), name="a")
    owners = objects.get(SCHEDULES, "moving")["metadata"]["ownerReferences"]
    assert [o["uid"] for o in owners] == [b["metadata"]["uid"]]


async def test_manual_hpa_edit_and_deletion_are_reverted(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    await objects.bounds_become((3, 10))
    objects.merge(HPA_V2, "web", {"spec": {"minReplicas": 1, "maxReplicas": 2}})
    await objects.bounds_become((3, 10))
    uid = objects.hpa()["metadata"]["uid"]
    objects.delete(HPA_V2)
    recreated = await eventually(lambda: (h := objects.hpa())["metadata"]["uid"] != uid and h)
    assert recreated["spec"]["minReplicas"] == 3


async def test_autoscaler_spec_change_follows_with_active_window(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    objects.schedule(name="floor", minReplicas=5, type="Daily", startTime="10:00", endTime="12:00")
    await objects.bounds_become((5, 10))
    objects.merge(
        SCHEDULED_POD_AUTOSCALERS,
        "web",
        {"spec": {"horizontalPodAutoscalerSpec": {"maxReplicas": 30, "metrics": None}}},
    )
    await objects.bounds_become((5, 30))
    hpa = objects.hpa()
    # The base spec no longer has our metric; the API server's default (CPU 80%) is what is left.
    assert [m["resource"]["target"].get("averageUtilization") for m in hpa["spec"]["metrics"]] == [
        80
    ]


async def test_unowned_hpa_is_left_alone(
    controller: Running, kube: Kube, namespace: str, objects: InNamespace
) -> None:
    foreign = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"},
            "minReplicas": 1,
            "maxReplicas": 2,
        },
    }
    before = kube.create(foreign)
    objects.autoscaler()
    status = await objects.spa_condition_becomes("Degraded")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert "already exists and is not controlled by this ScheduledPodAutoscaler" in ready["message"]
    # Untouched by the controller. (Not its resourceVersion: the real HPA controller writes the
    # HPA's status, as its target does not exist. The harness's client creates objects under
    # the controller's field manager name, so its entry must be the creation's.)
    after = objects.hpa()
    assert (after["spec"], after["metadata"].get("labels")) == (before["spec"], None)
    assert "ownerReferences" not in after["metadata"]
    assert ours(after) == ours(before)
    await eventually(lambda: any(e["reason"] == "HPAConflict" for e in objects.events()))


async def test_deleting_the_autoscaler_collects_its_hpa(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    await objects.bounds_become((3, 10))
    objects.delete(SCHEDULED_POD_AUTOSCALERS)

    await eventually(lambda: hpa_gone(objects), within=60, what="HPA collected")


async def test_invalid_schedule_is_degraded_and_the_others_still_apply(
    controller: Running, objects: InNamespace
) -> None:
    objects.autoscaler()
    # An unknown zone passes the CRD's schema (zones are not listed there): the controller
    # judges it.
    objects.schedule(name="typo", minReplicas=9, timeZone="Asia/Tokio", **DAILY_NOON)
    objects.schedule(name="good", minReplicas=4, **DAILY_NOON)
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await objects.bounds_become((4, 10))
    status = await objects.schedule_condition_becomes("Degraded", name="typo")
    assert status["message"] == (
        "spec.timeZone: unknown time zone 'Asia/Tokio'; did you mean 'Asia/Tokyo'?"
    )
    await eventually(lambda: any(e["reason"] == "InvalidSchedule" for e in objects.events()))


async def test_same_name_in_two_namespaces_do_not_interfere(
    cluster: Any, crds: None, kube: Kube, namespace: str, objects: InNamespace
) -> None:
    other = f"{namespace}-b"
    kube.client.create(
        __import__("spa.kube", fromlist=["Resource"]).Resource(
            "", "v1", "namespaces", "Namespace", False
        ),
        None,
        {"metadata": {"name": other}},
    )
    try:
        objects.autoscaler()
        beside = InNamespace(kube, other)
        beside.autoscaler()
        objects.schedule(name="noon", minReplicas=8, **DAILY_NOON)
        async with running_controller(
            cluster.kubeconfig, [namespace, other], start=utc("2026-11-16T12:00:00")
        ):
            await objects.bounds_become((8, 10))
            await beside.bounds_become((3, 10))
            owners = objects.get(SCHEDULES, "noon")["metadata"]["ownerReferences"]
            assert (
                owners[0]["uid"] == objects.get(SCHEDULED_POD_AUTOSCALERS, "web")["metadata"]["uid"]
            )
    finally:
        kube.client.delete(
            __import__("spa.kube", fromlist=["Resource"]).Resource(
                "", "v1", "namespaces", "Namespace", False
            ),
            None,
            other,
        )


async def test_metrics_endpoint_reports_values(
    controller: Running, namespace: str, objects: InNamespace
) -> None:
    objects.autoscaler()
    objects.schedule(name="noon", minReplicas=5, **DAILY_NOON)
    # At base first, so that noon is a transition: a patch, with its lag measured.
    await objects.bounds_become((3, 10))
    await eventually(
        lambda: objects.spa_status().get("nextTransitionTime"),
        what="noon expected",
    )
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await objects.bounds_become((5, 10))
    url = f"http://127.0.0.1:{controller.manager.metrics_port}/metrics"

    def fetch() -> str:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode())

    async def scrape() -> str:
        # Off the loop: the in-process controller serves /metrics on this very loop.
        return await asyncio.to_thread(fetch)

    original = "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler"
    labels = f'{{name="web",namespace="{namespace}"}}'

    async def scraped_with_min() -> str | None:
        text = await scrape()
        return text if f"{original}_min_replicas{labels} 5.0" in text else None

    text = await eventually(scraped_with_min)
    assert f"{original}_max_replicas{labels} 10.0" in text
    assert (
        f'spa_schedule_active{{autoscaler="web",name="noon",namespace="{namespace}"}} 1.0' in text
    )
    assert "spa_boundary_lag_seconds_count" in text
    assert 'spa_hpa_writes_total{operation="patch"}' in text
    assert (
        f'spa_last_successful_reconcile_timestamp_seconds{{name="web",namespace="{namespace}"}}'
        in text
    )
    # The series read from the (compact) caches, kept of each object at ingest.
    assert f"spa_autoscaler_spec_min_replicas{labels} 3.0" in text
    assert f"spa_autoscaler_spec_max_replicas{labels} 10.0" in text
    condition = r'condition="\w+",'
    assert re.search(rf"spa_autoscaler_condition{{{condition}name=\"web\",", text)
    assert re.search(rf"spa_schedule_condition{{autoscaler=\"web\",{condition}name=\"noon\",", text)
    objects.delete(SCHEDULED_POD_AUTOSCALERS)

    async def series_removed() -> bool:
        return f'name="web",namespace="{namespace}"' not in await scrape()

    await eventually(series_removed, what="series removed")


async def test_probes(controller: Running) -> None:
    base = f"http://127.0.0.1:{controller.manager.probe_port}"

    def status(path: str) -> int:
        with urllib.request.urlopen(base + path, timeout=5) as response:
            return int(response.status)

    assert await asyncio.to_thread(status, "/healthz") == 200
    assert await asyncio.to_thread(status, "/readyz") == 200


async def test_a_crashed_informer_is_restarted_and_the_controller_not_ready_meanwhile(
    controller: Running, objects: InNamespace
) -> None:
    """An unexpected exception in an informer (a bug) is not a silent stop: the supervisor
    restarts it with backoff, /readyz fails until then, and the cache follows the cluster
    again afterwards (docs/runtime.md, "Supervision")."""
    base = f"http://127.0.0.1:{controller.manager.probe_port}"

    def readyz() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(base + "/readyz", timeout=5) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    informer = next(i for i in controller.manager.informers if i.resource == SCHEDULES)
    watch = informer._watch
    crashes = 3

    async def crashing_watch(scope: str | None) -> bool:
        nonlocal crashes
        if crashes:
            crashes -= 1
            raise RuntimeError("injected bug")
        return await watch(scope)

    async def watching() -> bool:
        return bool(informer._streams)

    # Only an open watch can be ended: right after the start (or under load) the informer may
    # still be waiting for the API server to answer its watch request, and closing the streams
    # then closes nothing, so its watch would run its whole timeout and never crash. Checked on
    # the loop, so nothing runs between the check, the patch and the close.
    await eventually(watching, within=30, what="the informer's watch open")
    informer._watch = crashing_watch  # type: ignore[method-assign]
    informer._close_streams()  # the open watch ends; the next one crashes

    async def not_ready() -> str | None:
        status, body = await asyncio.to_thread(readyz)
        return body if status == 503 else None

    async def ready() -> bool:
        return (await asyncio.to_thread(readyz))[0] == 200

    async def recovered() -> bool:
        # Each restart is healthy until its watch crashes again (the supervisor is down only
        # while it waits to restart), so ready can be seen between two crashes: recovered is
        # ready with every injected crash spent.
        return crashes == 0 and await ready()

    body = await eventually(not_ready, within=45, what="not ready")
    assert "restarting after a failure: informer schedules" in body
    await eventually(recovered, within=30, what="ready again after the last crash")
    objects.autoscaler()
    objects.schedule(
        name="now", type="Daily", startTime="10:00", endTime="12:00", minReplicas=5, maxReplicas=20
    )
    await objects.bounds_become((5, 20))


async def test_retargeting_to_a_missing_autoscaler_releases_the_schedule(
    controller: Running, namespace: str, objects: InNamespace
) -> None:
    """The Schedule is Degraded and no longer owned, so deleting its old SPA keeps it."""
    objects.autoscaler(name="a")
    objects.schedule(
        name="moving", target="a", minReplicas=7, type="Daily", startTime="10:00", endTime="12:00"
    )
    await objects.bounds_become((7, 10), name="a")
    objects.merge(SCHEDULES, "moving", {"spec": {"scaleTargetRef": {"name": "ghost"}}})
    status = await objects.schedule_condition_becomes("Degraded", name="moving")
    assert status["message"] == f"ScheduledPodAutoscaler {namespace}/ghost not found"
    await eventually(
        lambda: not objects.get(SCHEDULES, "moving")["metadata"].get("ownerReferences")
    )
    await objects.bounds_become((3, 10), name="a")
    objects.delete(SCHEDULED_POD_AUTOSCALERS, "a")
    await eventually(lambda: hpa_gone(objects, "a"), within=60, what="GC of a's HPA")
    # The garbage collector has processed a's dependents; the released Schedule is not one.
    assert objects.get(SCHEDULES, "moving")["spec"]["scaleTargetRef"]["name"] == "ghost"


async def test_a_holiday_skips_the_window_and_the_hpa_stays_at_its_base(
    cluster: Any, crds: None, namespace: str, objects: InNamespace
) -> None:
    """Thursday 2026-11-26 is Thanksgiving, a US public holiday: the noon window of a Schedule
    that skips holidays does not happen, and the next one is Friday's (docs/schedules.md)."""
    objects.autoscaler()
    objects.schedule(
        name="workdays", minReplicas=5, maxReplicas=20, holidays={"country": "US"}, **DAILY_NOON
    )
    # The same window without a calendar and without bounds: it shows the controller did act
    # at noon, and leaves the bounds to the other.
    objects.schedule(name="marker", **DAILY_NOON)
    async with running_controller(
        cluster.kubeconfig, [namespace], start=utc("2026-11-26T11:00:00")
    ) as running:
        await eventually(
            lambda: (
                objects.schedule_status("workdays").get("nextTransitionTime")
                == "2026-11-27T12:00:00Z"
            ),
            what="the next window on Friday",
        )
        running.clock.set(utc("2026-11-26T12:30:00"))
        status = await eventually(
            lambda: (s := objects.spa_status()).get("activeSchedules") == ["marker"] and s,
            what="only the marker active",
        )
        assert (status["minReplicas"], status["maxReplicas"]) == (3, 10)
        assert objects.bounds() == (3, 10)
        assert objects.schedule_status("workdays")["condition"] == "Available"
        running.clock.set(utc("2026-11-27T12:00:00"))
        await objects.bounds_become((5, 20))
