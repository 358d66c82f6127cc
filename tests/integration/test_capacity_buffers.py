"""CapacityBuffers held level-triggered (docs/schedules.md, "Node capacity") on a private
control plane that serves the CapacityBuffer API from Karpenter v1.15.0's CRD, with no
Karpenter running: what is tested is the controller's side (the version discovered, the
label-selected informer of buffers with config/rbac's permissions, an event on a buffer waking
its SPA), not nodes (tests/integration/test_capacity_nodes.py). A private plane, because a
served CapacityBuffer API would turn mode Auto into buffers for the other tests of the shared
plane. The controller runs in-process as its ServiceAccount, on a stepped clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spa.controller.capacity import (
    CAPACITY_BUFFER_GROUP,
    CAPACITY_BUFFER_KIND,
    CAPACITY_BUFFER_PLURAL,
    DEPLOYMENTS,
    buffer_name,
)
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import NotFound, Resource, connect_blocking
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule
from tests.integration.harness import REPO, Kube, eventually, install_crds, running_controller, utc
from tests.testenv.binaries import find_karpenter
from tests.testenv.controlplane import ControlPlane

pytestmark = pytest.mark.integration

SA_NAMESPACE = "scheduled-pod-autoscaler"
SA_NAME = "scheduled-pod-autoscaler"
NAMESPACE = "shop"
BUFFERS = Resource(
    CAPACITY_BUFFER_GROUP, "v1beta1", CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_KIND, True
)


def _buffer(kube: Kube) -> dict[str, Any] | None:
    try:
        return kube.get(BUFFERS, NAMESPACE, buffer_name("web"))
    except NotFound:
        return None


def _replicas(kube: Kube, wanted: int) -> Callable[[], bool]:
    def check() -> bool:
        found = _buffer(kube)
        return found is not None and found["spec"].get("replicas") == wanted

    return check


# Karpenter's build holds the CapacityBuffer CRD: `make test-karpenter` runs this test, as
# `make test` on a fresh machine has no Karpenter build.
@pytest.mark.karpenter
async def test_buffers_are_put_right_from_what_the_cache_shows(
    control_plane_factory: Callable[..., ControlPlane],
) -> None:
    crd = next(
        path for path in find_karpenter().crds if path.name.endswith("_capacitybuffers.yaml")
    )
    plane = control_plane_factory()
    install_crds(plane)
    plane.run_kubectl("apply", "--server-side", "-f", str(crd), check=True)
    plane.run_kubectl(
        "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s", check=True
    )
    plane.run_kubectl("apply", "--server-side", "-k", str(REPO / "config" / "rbac"), check=True)
    plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
    kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
    client = connect_blocking(kubeconfig=str(plane.kubeconfig))
    kube = Kube(client)
    try:
        client.create(DEPLOYMENTS, NAMESPACE, deployment(name="web", namespace=NAMESPACE))
        kube.create(
            autoscaler(name="web", namespace=NAMESPACE, minReplicas=1, capacity={"leadTime": "30m"})
        )
        kube.create(
            schedule(name="noon", namespace=NAMESPACE, target="web", **DAILY_NOON, minReplicas=4)
        )
        replicas = client.get(DEPLOYMENTS, NAMESPACE, "web")["spec"]["replicas"]
        wanted = 4 - replicas
        async with running_controller(kubeconfig, [NAMESPACE], start=utc("2026-11-16T11:30:00")):
            await eventually(_replicas(kube, wanted), what="the CapacityBuffer")
            first = _buffer(kube)
            assert first is not None
            # Deleted by hand while wanted: made again, with no clock step and no edit.
            kube.delete(BUFFERS, NAMESPACE, buffer_name("web"))

            def made_again() -> bool:
                found = _buffer(kube)
                return found is not None and found["metadata"]["uid"] != first["metadata"]["uid"]

            await eventually(made_again, what="the CapacityBuffer made again")
            # Resized by hand: put back.
            kube.merge(BUFFERS, NAMESPACE, buffer_name("web"), {"spec": {"replicas": 9}})
            await eventually(_replicas(kube, wanted), what="the CapacityBuffer resized back")
        # No controller runs while `capacity` is removed; the next one deletes the buffer.
        kube.merge(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, "web", {"spec": {"capacity": None}})
        async with running_controller(kubeconfig, [NAMESPACE], start=utc("2026-11-16T11:31:00")):
            await eventually(lambda: _buffer(kube) is None, what="the CapacityBuffer deleted")
    finally:
        client.close()
