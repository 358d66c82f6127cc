"""What users write and the API server does, on the real control plane (issue 9): Schedules
controlled by somebody else, the three deletion propagation policies with the real garbage
collector, HPA writes the server refuses (422, 403), the limit of Schedules per SPA, and Event
names of long object names. docs/architecture.md and docs/reliability.md state the rules.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from spa.controller.reconciler import MAX_SCHEDULES_PER_AUTOSCALER
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, NotFound, Resource
from tests.builders import DAILY_NOON, autoscaler, schedule
from tests.integration.harness import (
    Kube,
    Running,
    condition_becomes,
    eventually,
    utc,
)
from tests.reliability.common import ticking

pytestmark = pytest.mark.integration

CONFIG_MAP = Resource("", "v1", "configmaps", "ConfigMap", True)
RESOURCE_QUOTA = Resource("", "v1", "resourcequotas", "ResourceQuota", True)


def gone(kube: Kube, resource: Resource, namespace: str, name: str) -> bool:
    try:
        kube.get(resource, namespace, name)
    except NotFound:
        return True
    return False


def owners(kube: Kube, resource: Resource, namespace: str, name: str) -> list[dict[str, Any]]:
    return list(kube.get(resource, namespace, name)["metadata"].get("ownerReferences") or [])


def warned(kube: Kube, namespace: str, reason: str, name: str | None = None) -> bool:
    return any(
        event["reason"] == reason
        and event["type"] == "Warning"
        and (name is None or event["involvedObject"]["name"] == name)
        for event in kube.events(namespace)
    )


async def adopted(kube: Kube, namespace: str, name: str, spa: str) -> None:
    uid = kube.get(SCHEDULED_POD_AUTOSCALERS, namespace, spa)["metadata"]["uid"]
    await eventually(
        lambda: [o["uid"] for o in owners(kube, SCHEDULES, namespace, name)] == [uid],
        what=f"{name} adopted",
    )


# -- ownership --------------------------------------------------------------------------------


async def test_a_schedule_controlled_by_another_kind_is_left_alone_and_the_rest_applies(
    controller: Running, kube: Kube, namespace: str
) -> None:
    config_map = kube.client.create(
        CONFIG_MAP, namespace, {"metadata": {"name": "owner", "namespace": namespace}}
    )
    foreign_owner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": config_map["metadata"]["uid"],
        "controller": True,
    }
    kube.create(autoscaler(name="web", namespace=namespace))
    taken = schedule(name="taken", namespace=namespace, minReplicas=9, **DAILY_NOON)
    taken["metadata"]["ownerReferences"] = [foreign_owner]
    kube.create(taken)
    kube.create(schedule(name="good", namespace=namespace, minReplicas=4, **DAILY_NOON))
    controller.clock.set(utc("2026-11-16T12:00:00"))

    await eventually(lambda: kube.bounds(namespace, "web") == (4, 10), what="good applied")
    await condition_becomes(kube, SCHEDULES, namespace, "taken", "Degraded")
    # Reconciled before the SPA was in the cache, the Schedule is first Degraded for an SPA
    # "not found"; the SPA's own reconcile then says why it is left alone.
    await eventually(
        lambda: (
            "controlled by ConfigMap owner"
            in kube.status(SCHEDULES, namespace, "taken").get("message", "")
        ),
        what="taken Degraded for its foreign controller",
    )
    assert owners(kube, SCHEDULES, namespace, "taken") == [foreign_owner]
    await eventually(lambda: warned(kube, namespace, "ForeignController", "web"))
    spa_status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    assert spa_status["condition"] == "Available"
    assert spa_status["activeSchedules"] == ["good"]


# -- deletion ---------------------------------------------------------------------------------


async def _spa_with_schedule(kube: Kube, namespace: str) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(schedule(name="noon", namespace=namespace, minReplicas=5, **DAILY_NOON))
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="HPA")
    await adopted(kube, namespace, "noon", "web")


@pytest.mark.parametrize("policy", ["Foreground", "Background"])
async def test_deletion_collects_the_schedules_and_the_hpa(
    controller: Running, kube: Kube, namespace: str, policy: Literal["Foreground", "Background"]
) -> None:
    await _spa_with_schedule(kube, namespace)
    kube.client.delete(SCHEDULED_POD_AUTOSCALERS, namespace, "web", propagation_policy=policy)
    # Foreground: while the garbage collector deletes the dependents the SPA exists with a
    # deletionTimestamp, and the controller must not release its Schedules meanwhile.
    await eventually(
        lambda: (
            gone(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web")
            and gone(kube, SCHEDULES, namespace, "noon")
            and gone(kube, HPA_V2, namespace, "web")
        ),
        within=60,
        what="the SPA and its dependents deleted",
    )


async def test_orphan_deletion_keeps_the_dependents_and_a_new_spa_adopts_them(
    controller: Running, kube: Kube, namespace: str
) -> None:
    await _spa_with_schedule(kube, namespace)
    kube.client.delete(SCHEDULED_POD_AUTOSCALERS, namespace, "web", propagation_policy="Orphan")
    await eventually(
        lambda: gone(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web"), within=60, what="SPA"
    )
    # The garbage collector removed the ownerReferences; nobody deleted anything.
    assert owners(kube, SCHEDULES, namespace, "noon") == []
    assert owners(kube, HPA_V2, namespace, "web") == []
    await eventually(
        lambda: (
            kube.status(SCHEDULES, namespace, "noon").get("message")
            == f"ScheduledPodAutoscaler {namespace}/web not found"
        )
    )

    created = kube.create(autoscaler(name="web", namespace=namespace, minReplicas=2))
    uid = created["metadata"]["uid"]
    await eventually(
        lambda: [o["uid"] for o in owners(kube, HPA_V2, namespace, "web")] == [uid],
        what="the orphaned HPA adopted",
    )
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="new base")
    await adopted(kube, namespace, "noon", "web")


# -- writes the server refuses ----------------------------------------------------------------


async def test_an_hpa_spec_the_server_rejects_degrades_and_the_bounds_still_follow(
    controller: Running, kube: Kube, namespace: str
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(schedule(name="noon", namespace=namespace, minReplicas=5, **DAILY_NOON))
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="HPA")
    good_metrics = kube.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["spec"][
        "horizontalPodAutoscalerSpec"
    ]["metrics"]
    # The CRD's schema lets a metric without its source through; the HPA's validation does not.
    kube.merge(
        SCHEDULED_POD_AUTOSCALERS,
        namespace,
        "web",
        {"spec": {"horizontalPodAutoscalerSpec": {"metrics": [{"type": "Pods"}]}}},
    )
    status = await condition_becomes(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Degraded")
    assert "rejected the HorizontalPodAutoscaler" in status["conditions"][0]["message"]
    await eventually(lambda: warned(kube, namespace, "HPARejected", "web"))

    # A boundary while the spec is refused: min/maxReplicas still follow the Schedules.
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (5, 10), what="bounds at noon")

    kube.merge(
        SCHEDULED_POD_AUTOSCALERS,
        namespace,
        "web",
        {"spec": {"horizontalPodAutoscalerSpec": {"metrics": good_metrics}}},
    )
    await eventually(
        lambda: (
            kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("condition") == "Available"
        ),
        what="Available again",
    )
    assert kube.hpa(namespace, "web")["spec"]["metrics"] == good_metrics
    assert kube.bounds(namespace, "web") == (5, 10)


async def test_a_forbidden_hpa_create_degrades_and_is_retried_until_allowed(
    controller: Running, kube: Kube, namespace: str
) -> None:
    kube.client.create(
        RESOURCE_QUOTA,
        namespace,
        {
            "metadata": {"name": "no-hpas", "namespace": namespace},
            "spec": {"hard": {"count/horizontalpodautoscalers.autoscaling": "0"}},
        },
    )
    # Admission knows a quota for sure once the quota controller has counted it.
    await eventually(
        lambda: kube.get(RESOURCE_QUOTA, namespace, "no-hpas").get("status", {}).get("hard"),
        within=30,
        what="the quota counted",
    )
    async with ticking(controller.clock):
        kube.create(autoscaler(name="web", namespace=namespace))
        status = await condition_becomes(
            kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Degraded"
        )
        assert "forbade the HorizontalPodAutoscaler" in status["conditions"][0]["message"]
        await eventually(lambda: warned(kube, namespace, "HPARejected", "web"))
        kube.client.delete(RESOURCE_QUOTA, namespace, "no-hpas")
        await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA")
        await eventually(
            lambda: (
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("condition")
                == "Available"
            )
        )


# -- limits -----------------------------------------------------------------------------------


async def test_schedules_beyond_the_limit_are_degraded_and_ignored(
    controller: Running, kube: Kube, namespace: str
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    count = MAX_SCHEDULES_PER_AUTOSCALER + 1
    names = [f"s{index:03d}" for index in range(count)]
    for index, name in enumerate(names):
        # The newest (the last) asks for the most: it must not apply.
        kube.create(
            schedule(
                name=name,
                namespace=namespace,
                minReplicas=4 + index // 100,
                **DAILY_NOON,
            )
        )
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (4, 10), within=60, what="bounds")
    status = await condition_becomes(kube, SCHEDULES, namespace, names[-1], "Degraded", within=60)
    assert f"already has {MAX_SCHEDULES_PER_AUTOSCALER} Schedules" in status["message"]
    assert owners(kube, SCHEDULES, namespace, names[-1]) == []
    await eventually(lambda: warned(kube, namespace, "TooManySchedules", "web"))
    active = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["activeSchedules"]
    assert sorted(active) == names[:-1]


async def test_events_about_objects_with_the_longest_names_are_recorded(
    controller: Running, kube: Kube, namespace: str
) -> None:
    long_name = "z" * 253
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(schedule(name=long_name, namespace=namespace, timeZone="Asia/Tokio", **DAILY_NOON))
    event = await eventually(
        lambda: next(
            (
                e
                for e in kube.events(namespace)
                if e["involvedObject"]["name"] == long_name and e["reason"] == "InvalidSchedule"
            ),
            None,
        ),
        what="the Warning event of the long-named Schedule",
    )
    assert len(event["metadata"]["name"]) <= 253
