"""Capacity at the boundary, on the real control plane with kwok's nodes and pods: immediate
scale-up through /scale (one JSON patch where the HPA's status says the target's count, the
read as fallback, a missing target remembered), the HPA-only path, lead time, targets that
cannot be scaled so, and the HPA status writes that wake no reconcile (docs/api.md
`scaleUpImmediately`, docs/schedules.md "Lead time" and "Immediate scale-up").

The controller runs in-process on a fake clock, as its ServiceAccount with only config/rbac's
permissions (so the least-privilege rules are what is tested). Its control plane is private:
kube-controller-manager syncs HPAs every 10 s, not the 1 s of the shared plane. With 1 s the
HPA controller would raise the target about as soon as the controller does, and a test could
not tell who did it; 10 s keeps that distinction clear and the HPA-only test short (a real
cluster's 15 s is what the benchmark measures). Its audit log records the controller's
requests (tests/testenv/audit.py), which is how the /scale requests are counted. The pods'
metrics cannot be read here (no metrics API), so the HPA controller only ever clamps the
target to minReplicas: it sets status.desiredReplicas when it does, and currentReplicas at
every sync.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, ApiError, Resource
from spa.runtime.metrics import RECONCILE_TOTAL
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule
from tests.integration.harness import (
    Kube,
    Running,
    admin,
    eventually,
    install_crds,
    running_controller,
    utc,
)
from tests.integration.processes import CONTROLLER_NAMESPACE
from tests.testenv import ControlPlane
from tests.testenv.audit import AuditLog, audit_policy, service_account_user
from tests.testenv.fixtures import private_control_plane

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
HPA_SYNC_SECONDS = 10
DEPLOYMENT = Resource("apps", "v1", "deployments", "Deployment", True)
FIELD_MANAGER = "scheduled-pod-autoscaler"
USER = service_account_user(CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler")


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    with private_control_plane(
        extra_controller_manager_args=[
            f"--horizontal-pod-autoscaler-sync-period={HPA_SYNC_SECONDS}s"
        ],
        audit_policy=audit_policy(users=[USER]),
    ) as started:
        install_crds(started)
        started.run_kubectl(
            "apply", "--server-side", "-k", str(REPO / "config" / "rbac"), check=True
        )
        yield started


@pytest.fixture(scope="module")
def controller_identity(plane: ControlPlane) -> Path:
    return plane.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False, expiration_seconds=7200
    )


@pytest.fixture
def kube(plane: ControlPlane) -> Iterator[Kube]:
    """tests/integration/conftest.py's `kube`, on this module's control plane."""
    with admin(plane) as client:
        yield client


@pytest.fixture
def namespace(plane: ControlPlane, request: pytest.FixtureRequest) -> str:
    name = f"cap-{request.node.name[5:30].replace('_', '-').strip('-')}-{secrets.token_hex(3)}"
    plane.run_kubectl("create", "namespace", name, check=True)
    return name


@pytest.fixture
async def controller(controller_identity: Path, namespace: str) -> AsyncIterator[Running]:
    async with running_controller(
        controller_identity, [namespace], start=utc("2026-11-16T11:00:00")
    ) as running:
        yield running


@pytest.fixture
def audit(plane: ControlPlane) -> AuditLog:
    assert plane.audit_log is not None
    return AuditLog(plane.audit_log)


def scale_requests(audit: AuditLog, namespace: str) -> list[tuple[str, int | None]]:
    """The controller's requests to Deployments' /scale in `namespace`: (verb, code), in the
    order the API server received them."""
    found = audit.select(user=USER, resource="deployments/scale", namespace=namespace)
    return [(event.verb, event.code) for event in sorted(found, key=lambda e: e.received)]


def reconciles() -> float:
    """How many reconciles this process's controllers ran (spa_reconcile_total)."""
    return sum(
        sample.value
        for metric in RECONCILE_TOTAL.collect()
        for sample in metric.samples
        if sample.name == "spa_reconcile_total"
    )


# The pods' requests: what kwok's nodes (tests/testenv/kwok.py) have room for.
REQUESTS = {"cpu": "50m", "memory": "32Mi"}


def replicas(kube: Kube, namespace: str, name: str) -> tuple[int, int]:
    """The Deployment's (spec.replicas, status.readyReplicas)."""
    deployment_object = kube.get(DEPLOYMENT, namespace, name)
    status = deployment_object.get("status") or {}
    return deployment_object["spec"]["replicas"], status.get("readyReplicas") or 0


def scale_writers(kube: Kube, namespace: str, name: str) -> set[str]:
    """The field managers that wrote the Deployment's replicas through /scale."""
    fields = kube.get(DEPLOYMENT, namespace, name)["metadata"].get("managedFields") or []
    return {entry["manager"] for entry in fields if entry.get("subresource") == "scale"}


def events(kube: Kube, namespace: str, reason: str) -> list[dict[str, Any]]:
    return [event for event in kube.events(namespace) if event.get("reason") == reason]


def scale_up_condition(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    conditions = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name).get("conditions") or []
    return next((c for c in conditions if c["type"] == "ImmediateScaleUp"), None)


async def hpa_synced_once(kube: Kube, namespace: str, name: str) -> None:
    """Wait until the HPA controller has processed the HPA once (it writes its conditions).
    It processes each HPA once per sync period from then on, so a boundary right after this
    leaves almost a whole period before its next look."""
    await eventually(
        lambda: (kube.hpa(namespace, name).get("status") or {}).get("conditions"),
        within=3 * HPA_SYNC_SECONDS,
        what="the HPA controller's first sync",
    )


async def test_immediate_scale_up_raises_at_the_boundary_and_the_hpa_keeps_it(
    kube: Kube, namespace: str, controller: Running
) -> None:
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(
            name="web", namespace=namespace, replicas=2, start_delay="1s", requests=REQUESTS
        ),
    )
    kube.create(autoscaler(name="web", namespace=namespace, minReplicas=2))
    kube.create(schedule(name="web-noon", namespace=namespace, minReplicas=6, **DAILY_NOON))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")
    await hpa_synced_once(kube, namespace, "web")

    controller.clock.set(utc("2026-11-16T12:00:00"))
    began = time.monotonic()
    await eventually(lambda: replicas(kube, namespace, "web")[0] == 6, within=8, what="6 wanted")
    raised_after = time.monotonic() - began
    # Well within the HPA controller's sync period: the controller raised it, through /scale.
    assert raised_after < HPA_SYNC_SECONDS - 2, raised_after
    assert FIELD_MANAGER in scale_writers(kube, namespace, "web")
    await eventually(lambda: replicas(kube, namespace, "web") == (6, 6), what="6 ready")
    [scaled] = await eventually(lambda: events(kube, namespace, "ScaledUp"), what="ScaledUp")
    assert scaled["type"] == "Normal"
    assert "from 2 to 6 replicas" in scaled["message"]
    condition = await eventually(lambda: scale_up_condition(kube, namespace, "web"))
    assert (condition["status"], condition["reason"]) == ("True", "ScaledUp")

    # The HPA controller keeps it (its next sync sees replicas within the new bounds).
    await asyncio.sleep(HPA_SYNC_SECONDS + 2)
    assert replicas(kube, namespace, "web") == (6, 6)

    # The end of the window lowers the HPA's bound only; the target is never scaled down.
    controller.clock.set(utc("2026-11-16T13:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA back to 2/10")
    await asyncio.sleep(HPA_SYNC_SECONDS + 2)
    assert replicas(kube, namespace, "web") == (6, 6)
    assert len(events(kube, namespace, "ScaledUp")) == 1


async def test_no_write_when_the_target_already_has_enough(
    kube: Kube, namespace: str, controller: Running
) -> None:
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(
            name="big", namespace=namespace, replicas=8, start_delay="1s", requests=REQUESTS
        ),
    )
    kube.create(autoscaler(name="big", namespace=namespace, minReplicas=2))
    kube.create(
        schedule(name="big-noon", namespace=namespace, target="big", minReplicas=6, **DAILY_NOON)
    )
    await eventually(lambda: kube.bounds(namespace, "big") == (2, 10), what="HPA 2/10")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: kube.bounds(namespace, "big") == (6, 10), what="HPA 6/10")
    await asyncio.sleep(2)
    assert replicas(kube, namespace, "big")[0] == 8
    assert FIELD_MANAGER not in scale_writers(kube, namespace, "big")
    assert events(kube, namespace, "ScaledUp") == []


async def test_with_scale_up_immediately_false_only_the_hpa_acts(
    kube: Kube, namespace: str, controller: Running
) -> None:
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(
            name="web", namespace=namespace, replicas=2, start_delay="1s", requests=REQUESTS
        ),
    )
    kube.create(
        autoscaler(name="web", namespace=namespace, minReplicas=2, scaleUpImmediately=False)
    )
    kube.create(schedule(name="web-noon", namespace=namespace, minReplicas=6, **DAILY_NOON))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")
    await hpa_synced_once(kube, namespace, "web")

    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (6, 10), what="HPA 6/10")
    # Nothing but the HPA controller raises it, at its next sync.
    await asyncio.sleep(2)
    assert replicas(kube, namespace, "web")[0] == 2
    await eventually(
        lambda: replicas(kube, namespace, "web")[0] == 6,
        within=HPA_SYNC_SECONDS + 5,
        what="the HPA controller's raise",
    )
    assert FIELD_MANAGER not in scale_writers(kube, namespace, "web")
    assert events(kube, namespace, "ScaledUp") == []
    assert scale_up_condition(kube, namespace, "web") is None


@pytest.mark.parametrize(
    ("target", "reason", "message"),
    [
        (
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "absent"},
            "TargetNotFound",
            "Deployment {namespace}/absent not found",
        ),
        (
            {"apiVersion": "apps/v1", "kind": "ControllerRevision", "name": "settings"},
            "NoScaleSubresource",
            "ControllerRevision (controllerrevisions.apps/v1) has no scale subresource",
        ),
    ],
)
async def test_a_target_that_cannot_be_scaled_degrades_with_a_message(
    kube: Kube,
    namespace: str,
    controller: Running,
    target: dict[str, str],
    reason: str,
    message: str,
) -> None:
    kube.create(autoscaler(name="odd", namespace=namespace, minReplicas=2, scaleTargetRef=target))
    kube.create(
        schedule(name="odd-noon", namespace=namespace, target="odd", minReplicas=6, **DAILY_NOON)
    )
    await eventually(lambda: kube.bounds(namespace, "odd") == (2, 10), what="HPA 2/10")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    # The HPA path still applies: the bounds follow the window.
    await eventually(lambda: kube.bounds(namespace, "odd") == (6, 10), what="HPA 6/10")
    condition = await eventually(lambda: scale_up_condition(kube, namespace, "odd"))
    assert condition["status"] == "False"
    assert condition["reason"] == reason
    assert condition["message"].startswith(message.format(namespace=namespace))
    assert "the HPA controller raises the target at its next sync instead" in condition["message"]
    # Events are sent in the background, after the status of the same final plan.
    [warning] = await eventually(lambda: events(kube, namespace, reason), what=reason)
    assert warning["type"] == "Warning"
    ready = next(
        c
        for c in kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "odd")["conditions"]
        if c["type"] == "Ready"
    )
    assert ready["status"] == "True"


async def test_lead_time_makes_the_pods_ready_before_the_start(
    kube: Kube, namespace: str, controller: Running
) -> None:
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(
            name="web", namespace=namespace, replicas=2, start_delay="3s", requests=REQUESTS
        ),
    )
    kube.create(autoscaler(name="web", namespace=namespace, minReplicas=2, leadTime="10m"))
    kube.create(schedule(name="web-noon", namespace=namespace, minReplicas=5, **DAILY_NOON))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")
    status = await eventually(
        lambda: (
            kube.status(SCHEDULES, namespace, "web-noon").get("nextTransitionTime")
            and kube.status(SCHEDULES, namespace, "web-noon")
        )
    )
    assert status["nextTransitionTime"] == "2026-11-16T11:50:00Z"

    controller.clock.set(utc("2026-11-16T11:50:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (5, 10), what="HPA 5/10")
    await eventually(lambda: replicas(kube, namespace, "web") == (5, 5), within=30, what="5 ready")
    # All of it while the controller's clock still reads 11:50, ten minutes before the start.
    assert controller.clock.now() < utc("2026-11-16T12:00:00")
    schedule_status = kube.status(SCHEDULES, namespace, "web-noon")
    assert schedule_status["condition"] == "Progressing"
    assert schedule_status["nextTransitionTime"] == "2026-11-16T13:00:00Z"
    assert kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["activeSchedules"] == [
        "web-noon"
    ]
    assert kube.hpa(namespace, "web")["spec"]["minReplicas"] == 5


async def raised_by_the_hpa_controller(
    kube: Kube, namespace: str, controller: Running, name: str = "web"
) -> None:
    """A Deployment `name` of 1 replica under an SPA of minReplicas 2 and a Schedule of 6 at
    noon: the HPA controller raises it to 2, which its HPA's status.desiredReplicas says, in
    the controller's cache too."""
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(name=name, namespace=namespace, replicas=1, requests=REQUESTS),
    )
    kube.create(autoscaler(name=name, namespace=namespace, minReplicas=2))
    kube.create(
        schedule(name=f"{name}-noon", namespace=namespace, target=name, minReplicas=6, **DAILY_NOON)
    )
    await eventually(lambda: kube.bounds(namespace, name) == (2, 10), what="HPA 2/10")
    await eventually(
        lambda: replicas(kube, namespace, name)[0] == 2,
        within=3 * HPA_SYNC_SECONDS,
        what="the HPA controller's raise to minReplicas",
    )
    cached = controller.manager.informers[2].store

    def status_cached() -> bool:
        hpa = cached.get(f"{namespace}/{name}") or {}
        return (hpa.get("status") or {}).get("desiredReplicas") == 2

    await eventually(status_cached, within=3 * HPA_SYNC_SECONDS, what="desiredReplicas 2 cached")


async def test_a_failed_json_patch_test_of_a_scale_is_a_422(kube: Kube, namespace: str) -> None:
    # What the one-request scale-up relies on, asked of the real API server.
    kube.client.create(DEPLOYMENT, namespace, deployment(name="web", namespace=namespace))
    patch = [
        {"op": "test", "path": "/spec/replicas", "value": 4},
        {"op": "replace", "path": "/spec/replicas", "value": 6},
    ]
    with pytest.raises(ApiError) as failed:
        kube.client.patch(
            DEPLOYMENT,
            namespace,
            "web",
            patch,
            patch_type="json",
            subresource="scale",
            field_manager="test",
        )
    assert failed.value.status == 422
    assert replicas(kube, namespace, "web")[0] == 1  # neither operation was applied
    patch[0]["value"] = 1
    kube.client.patch(
        DEPLOYMENT,
        namespace,
        "web",
        patch,
        patch_type="json",
        subresource="scale",
        field_manager="test",
    )
    assert replicas(kube, namespace, "web")[0] == 6


async def test_immediate_scale_up_is_one_request_when_the_hpa_status_is_right(
    kube: Kube, namespace: str, controller: Running, audit: AuditLog
) -> None:
    await raised_by_the_hpa_controller(kube, namespace, controller)
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: replicas(kube, namespace, "web")[0] == 6, within=8, what="6 wanted")
    assert FIELD_MANAGER in scale_writers(kube, namespace, "web")
    [scaled] = await eventually(lambda: events(kube, namespace, "ScaledUp"), what="ScaledUp")
    assert "from 2 to 6 replicas" in scaled["message"]
    # One JSON patch, no read.
    assert scale_requests(audit, namespace) == [("patch", 200)]


async def test_a_target_scaled_since_the_hpa_said_is_read_then_patched(
    kube: Kube, namespace: str, controller: Running, audit: AuditLog
) -> None:
    await raised_by_the_hpa_controller(kube, namespace, controller)
    # Somebody scales the target to 3; without metrics the HPA controller keeps
    # desiredReplicas at 2 (only currentReplicas follows), so the test of 2 fails.
    kube.client.patch(
        DEPLOYMENT,
        namespace,
        "web",
        {"spec": {"replicas": 3}},
        patch_type="merge",
        subresource="scale",
        field_manager="somebody",
    )
    # Its 3 pods Ready first: while they start, the Deployment's status writes move the
    # Scale's resourceVersion so often that a busy machine (a whole suite beside it) can see
    # all SCALE_ATTEMPTS compare-and-swaps conflict, and the raise left to the HPA controller.
    await eventually(
        lambda: replicas(kube, namespace, "web") == (3, 3), within=30, what="3 replicas Ready"
    )
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: replicas(kube, namespace, "web")[0] == 6, within=8, what="6 wanted")
    [scaled] = await eventually(lambda: events(kube, namespace, "ScaledUp"), what="ScaledUp")
    assert "from 3 to 6 replicas" in scaled["message"]
    # The failed test (422), then today's read and compare-and-swap, read again after each
    # conflict: the Scale's resourceVersion is the Deployment's, which its own status writes
    # (the pods for 3 replicas starting) keep moving.
    requests = scale_requests(audit, namespace)
    assert requests[0] == ("patch", 422), requests
    assert requests[-2:] == [("get", 200), ("patch", 200)], requests
    assert set(requests[1:-2]) <= {("get", 200), ("patch", 409)}, requests


async def test_a_missing_target_is_asked_for_once_until_it_appears(
    kube: Kube, namespace: str, controller: Running, audit: AuditLog
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace, minReplicas=2))
    for name, start, end in (
        ("a", "12:00", "12:10"),
        ("b", "12:20", "12:30"),
        ("c", "12:40", "12:50"),
    ):
        kube.create(
            schedule(
                name=name,
                namespace=namespace,
                minReplicas=6,
                type="Daily",
                startTime=start,
                endTime=end,
            )
        )
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")
    await hpa_synced_once(kube, namespace, "web")  # AbleToScale False: FailedGetScale

    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (6, 10), what="HPA 6/10")
    await eventually(lambda: events(kube, namespace, "TargetNotFound"), what="TargetNotFound")
    assert scale_requests(audit, namespace) == [("get", 404)]
    controller.clock.set(utc("2026-11-16T12:10:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")

    # The next raise, 20 minutes later: the HPA follows, the missing target is not asked for.
    controller.clock.set(utc("2026-11-16T12:20:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (6, 10), what="HPA 6/10")
    await eventually(
        lambda: (
            kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("activeSchedules") == ["b"]
        ),
        what="the statuses of 12:20",
    )
    assert scale_requests(audit, namespace) == [("get", 404)]
    assert len(events(kube, namespace, "TargetNotFound")) == 1
    controller.clock.set(utc("2026-11-16T12:30:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")

    # The Deployment appears; the HPA controller's next sync reads its Scale (AbleToScale
    # True) and clamps it to 2: the next raise asks for it again, in one request.
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(name="web", namespace=namespace, replicas=1, requests=REQUESTS),
    )
    cached = controller.manager.informers[2].store

    def able() -> bool:
        hpa = cached.get(f"{namespace}/web") or {}
        status = hpa.get("status") or {}
        return status.get("desiredReplicas") == 2 and any(
            c.get("type") == "AbleToScale" and c.get("status") == "True"
            for c in status.get("conditions") or ()
        )

    await eventually(able, within=3 * HPA_SYNC_SECONDS, what="AbleToScale True in the cache")
    controller.clock.set(utc("2026-11-16T12:40:00"))
    await eventually(lambda: replicas(kube, namespace, "web")[0] == 6, within=8, what="6 wanted")
    assert scale_requests(audit, namespace) == [("get", 404), ("patch", 200)]


async def test_an_hpa_status_write_wakes_no_reconcile(
    kube: Kube, namespace: str, controller: Running
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace, minReplicas=2))
    await eventually(lambda: kube.bounds(namespace, "web") == (2, 10), what="HPA 2/10")
    await eventually(
        lambda: kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("condition"),
        what="the SPA's status",
    )
    cached = controller.manager.informers[2].store
    await asyncio.sleep(1)
    before = reconciles()
    # A write of the HPA's status alone, as kube-controller-manager makes at its syncs.
    written = kube.client.patch(
        HPA_V2,
        namespace,
        "web",
        {"status": {"currentReplicas": 7, "desiredReplicas": 7}},
        patch_type="merge",
        subresource="status",
        field_manager="status-writer",
    )
    version = int(written["metadata"]["resourceVersion"])

    def in_the_cache() -> bool:
        hpa = cached.get(f"{namespace}/web") or {}
        return int((hpa.get("metadata") or {}).get("resourceVersion") or 0) >= version

    await eventually(in_the_cache, what="the status write in the cache")
    await asyncio.sleep(1)
    assert reconciles() == before
    # The control: a change of the HPA's metadata wakes its key.
    kube.merge(HPA_V2, namespace, "web", {"metadata": {"labels": {"team": "shop"}}})
    await eventually(lambda: reconciles() > before, what="a reconcile for the label")
