"""The HPA's newest fields on the real API server: per-HPA tolerance and scale to zero
(docs/schedules.md, "Newer HPA fields" and "Scale to zero").

Why against the real server: both are the server's to allow (a release, a feature gate), and
what matters is what it does with our HPA: stores the field, prunes it silently, refuses it.
The default plane has the default gates of its release (1.35: tolerance on, scale to zero
off); a private plane turns scale to zero on and tolerance off, so that one plane shows the
two other answers.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import ApiError, connect_blocking
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule
from tests.integration.harness import (
    Kube,
    Running,
    eventually,
    install_crds,
    running_controller,
    utc,
)
from tests.testenv import ControlPlane, kubernetes_version
from tests.testenv.fixtures import private_control_plane

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

# The API server's answer for a quantity is its canonical spelling: write these ones, and the
# stored HPA has them as written.
TOLERANCE = {"scaleUp": {"tolerance": "50m"}, "scaleDown": {"tolerance": "100m"}}
QUEUE_METRIC = {
    "type": "External",
    "external": {
        "metric": {"name": "queue_depth"},
        "target": {"type": "AverageValue", "averageValue": "30"},
    },
}
START = utc("2026-11-16T11:00:00")


def with_tolerance(name: str, namespace: str) -> dict[str, Any]:
    body = autoscaler(name=name, namespace=namespace)
    body["spec"]["horizontalPodAutoscalerSpec"]["behavior"] = copy.deepcopy(TOLERANCE)
    return body


def scaling_to_zero(name: str, namespace: str) -> dict[str, Any]:
    body = autoscaler(name=name, namespace=namespace, minReplicas=0)
    body["spec"]["horizontalPodAutoscalerSpec"]["metrics"] = [QUEUE_METRIC]
    return body


def hpa_writes() -> float:
    """The HPA writes of the in-process controllers so far (spa_hpa_writes_total, every
    operation, noop patches included: a loop of writes that change nothing shows here)."""
    return sum(
        REGISTRY.get_sample_value("spa_hpa_writes_total", {"operation": operation}) or 0.0
        for operation in ("create", "patch", "noop")
    )


def events_of(kube: Kube, namespace: str, reason: str) -> list[dict[str, Any]]:
    return [event for event in kube.events(namespace) if event.get("reason") == reason]


def ready_condition(kube: Kube, namespace: str, name: str) -> dict[str, Any]:
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name)
    return next((c for c in status.get("conditions") or () if c["type"] == "Ready"), {})


# -- the default plane: its release's default gates ----------------------------------------------


def default_minor() -> int:
    """The minor of the release in use ("v1.35.4": 35)."""
    return int(kubernetes_version().split(".")[1])


async def test_a_tolerance_passes_through_to_the_hpa(
    controller: Running, kube: Kube, namespace: str
) -> None:
    if default_minor() < 35:
        pytest.skip("HPAConfigurableTolerance is on by default from Kubernetes 1.35")
    kube.create(with_tolerance("web", namespace))
    hpa = await eventually(lambda: kube.hpa(namespace, "web"), what="HPA")
    behavior = hpa["spec"]["behavior"]
    assert (behavior["scaleUp"]["tolerance"], behavior["scaleDown"]["tolerance"]) == (
        "50m",
        "100m",
    )
    await eventually(lambda: ready_condition(kube, namespace, "web").get("status") == "True")
    assert events_of(kube, namespace, "HPAFieldDropped") == []


def test_a_negative_tolerance_is_refused_by_the_crd(kube: Kube, namespace: str) -> None:
    body = with_tolerance("web", namespace)
    body["spec"]["horizontalPodAutoscalerSpec"]["behavior"]["scaleDown"]["tolerance"] = "-0.1"
    with pytest.raises(ApiError) as refused:
        kube.create(body)
    assert refused.value.status == 422
    assert "behavior.scaleDown.tolerance must not be negative" in refused.value.message


def test_a_base_of_zero_without_an_object_or_external_metric_is_refused_by_the_crd(
    kube: Kube, namespace: str
) -> None:
    with pytest.raises(ApiError) as refused:
        kube.create(autoscaler(name="web", namespace=namespace, minReplicas=0))
    assert refused.value.status == 422
    assert "minReplicas must not be 0 without an Object or External metric" in (
        refused.value.message
    )


async def test_scale_to_zero_with_the_gate_off_is_refused_clearly(
    controller: Running, kube: Kube, namespace: str
) -> None:
    if default_minor() >= 37:
        pytest.skip("HPAScaleToZero is on by default from Kubernetes 1.37")
    kube.create(scaling_to_zero("web", namespace))
    ready = await eventually(
        lambda: (
            ready_condition(kube, namespace, "web").get("reason") == "HPARejected"
            and ready_condition(kube, namespace, "web")
        ),
        what="Ready HPARejected",
    )
    assert ready["status"] == "False"
    # The server's words name the field and the value.
    assert ready["message"].startswith("the API server rejected the HorizontalPodAutoscaler: ")
    assert "spec.minReplicas: Invalid value: 0" in ready["message"], ready["message"]
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    assert status["condition"] == "Degraded"
    [warning] = events_of(kube, namespace, "HPARejected")
    assert warning["type"] == "Warning"


# -- a plane with scale to zero on and tolerance off -----------------------------------------------

GATES = {"HPAScaleToZero": True, "HPAConfigurableTolerance": False}


@pytest.fixture(scope="module")
def gated() -> Iterator[ControlPlane]:
    if default_minor() < 33:
        pytest.skip("the HPAConfigurableTolerance gate exists from Kubernetes 1.33")
    with private_control_plane(feature_gates=GATES, nodes=0) as plane:
        install_crds(plane)
        yield plane


@pytest.fixture
def gated_kube(gated: ControlPlane) -> Iterator[Kube]:
    client = connect_blocking(kubeconfig=str(gated.kubeconfig))
    yield Kube(client)
    client.close()


def _namespace(plane: ControlPlane, name: str) -> str:
    plane.run_kubectl("create", "namespace", name, check=True)
    return name


async def test_scale_to_zero_with_the_gate_on_is_applied(
    gated: ControlPlane, gated_kube: Kube
) -> None:
    namespace = _namespace(gated, "zero")
    gated_kube.create(scaling_to_zero("consumer", namespace))
    gated_kube.create(
        schedule(
            name="consumer-noon",
            namespace=namespace,
            target="consumer",
            **DAILY_NOON,
            minReplicas=0,
            maxReplicas=4,
        )
    )
    async with running_controller(gated.kubeconfig, [namespace], start=START) as running:
        await eventually(lambda: gated_kube.bounds(namespace, "consumer") == (0, 10))
        await eventually(
            lambda: ready_condition(gated_kube, namespace, "consumer").get("status") == "True"
        )
        # The window of 0 applies too.
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: gated_kube.bounds(namespace, "consumer") == (0, 4))
    assert events_of(gated_kube, namespace, "HPARejected") == []


def _deployment_replicas(plane: ControlPlane, namespace: str, name: str) -> int:
    shown = plane.run_kubectl(
        "get", "deployment", name, "-n", namespace, "-o", "jsonpath={.spec.replicas}", check=True
    )
    return int(shown.stdout)


async def test_a_target_scaled_to_zero_is_raised_when_a_window_lifts_min_replicas(
    gated: ControlPlane, gated_kube: Kube
) -> None:
    # The HPA controller leaves a target at 0 replicas alone once minReplicas is above 0
    # ("scaling is disabled"), so only immediate scale-up brings it back at the window's start
    # (docs/schedules.md, "Scale to zero").
    namespace = _namespace(gated, "wake")
    target = deployment(name="consumer", namespace=namespace, replicas=0)
    gated.run_kubectl("apply", "-f", "-", input=json.dumps(target), check=True)
    gated_kube.create(scaling_to_zero("consumer", namespace))
    gated_kube.create(
        schedule(
            name="consumer-noon",
            namespace=namespace,
            target="consumer",
            **DAILY_NOON,
            minReplicas=3,
            maxReplicas=10,
        )
    )
    async with running_controller(gated.kubeconfig, [namespace], start=START) as running:
        await eventually(lambda: gated_kube.bounds(namespace, "consumer") == (0, 10))
        await eventually(
            lambda: ready_condition(gated_kube, namespace, "consumer").get("status") == "True"
        )
        assert _deployment_replicas(gated, namespace, "consumer") == 0
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: gated_kube.bounds(namespace, "consumer") == (3, 10))
        await eventually(
            lambda: _deployment_replicas(gated, namespace, "consumer") == 3,
            what="the target raised from 0",
        )
    [raised] = events_of(gated_kube, namespace, "ScaledUp")
    assert raised["message"].startswith("raised Deployment consumer from 0 to 3 replicas")


async def test_a_dropped_tolerance_is_warned_once_and_never_written_again(
    gated: ControlPlane, gated_kube: Kube
) -> None:
    namespace = _namespace(gated, "dropped")
    gated_kube.create(with_tolerance("web", namespace))
    gated_kube.create(
        schedule(
            name="web-noon",
            namespace=namespace,
            target="web",
            **DAILY_NOON,
            minReplicas=5,
            maxReplicas=20,
        )
    )
    before = hpa_writes()
    async with running_controller(gated.kubeconfig, [namespace], start=START) as running:
        hpa = await eventually(lambda: gated_kube.hpa(namespace, "web"), what="HPA")
        # Pruned silently by the server: stored without it, no refusal.
        assert "tolerance" not in (hpa["spec"]["behavior"].get("scaleUp") or {})
        assert "tolerance" not in (hpa["spec"]["behavior"].get("scaleDown") or {})
        [warning] = await eventually(
            lambda: events_of(gated_kube, namespace, "HPAFieldDropped"), what="the Warning"
        )
        assert warning["type"] == "Warning"
        assert warning["message"].startswith(
            "the API server stored the HorizontalPodAutoscaler without "
            "behavior.scaleUp.tolerance, behavior.scaleDown.tolerance: "
        )
        ready = ready_condition(gated_kube, namespace, "web")
        assert (ready["status"], ready["reason"]) == ("True", "Applied")
        assert hpa_writes() - before == 1  # the create
        # More reconciles: an edit of the SPA that leaves its spec, then a window's start.
        gated_kube.merge(
            SCHEDULED_POD_AUTOSCALERS, namespace, "web", {"metadata": {"labels": {"x": "y"}}}
        )
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: gated_kube.bounds(namespace, "web") == (5, 20))
        await eventually(
            lambda: (
                gated_kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get(
                    "activeSchedules"
                )
                == ["web-noon"]
            ),
            what="the window's status",
        )
        assert hpa_writes() - before == 2  # and the window's patch, nothing more
    [warning] = events_of(gated_kube, namespace, "HPAFieldDropped")
    assert warning.get("count", 1) == 1
    assert events_of(gated_kube, namespace, "HPANotConverging") == []
