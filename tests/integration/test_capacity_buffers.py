"""CapacityBuffers held level-triggered (docs/schedules.md, "Node capacity") on a private
control plane that serves the CapacityBuffer API from Karpenter v1.15.0's CRD, with no
Karpenter running: what is tested is the controller's side (the version discovered, the
label-selected informer of buffers with config/rbac's permissions, an event on a buffer waking
its SPA), not nodes (tests/integration/test_capacity_nodes.py). A private plane, because a
served CapacityBuffer API would turn mode Auto into buffers for the other tests of the shared
plane. The controller runs in-process as its ServiceAccount, on a stepped clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from spa.controller.capacity import (
    CAPACITY_BUFFER_GROUP,
    CAPACITY_BUFFER_KIND,
    CAPACITY_BUFFER_PLURAL,
    DEPLOYMENTS,
    buffer_name,
    placeholder_name,
)
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import NotFound, Resource, connect_blocking
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule
from tests.integration.harness import REPO, Kube, eventually, install_crds, running_controller, utc
from tests.testenv.binaries import find_karpenter
from tests.testenv.controlplane import ControlPlane

pytestmark = pytest.mark.integration

SA_NAMESPACE = "scheduled-pod-autoscaler"
# The option that grants the read of the targets' pod templates placeholders copy.
PLACEHOLDERS = REPO / "config" / "components" / "placeholders" / "placeholders.yaml"
SA_NAME = "scheduled-pod-autoscaler"
NAMESPACE = "shop"
BUFFERS = Resource(
    CAPACITY_BUFFER_GROUP, "v1beta1", CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_KIND, True
)


def _held(kube: Kube, resource: Resource) -> dict[str, Any] | None:
    """`web`'s CapacityBuffer (BUFFERS) or placeholder Deployment (DEPLOYMENTS, in the
    controller's namespace: docs/install.md, "Placeholder pods"), if any."""
    try:
        if resource is DEPLOYMENTS:
            return kube.get(resource, SA_NAMESPACE, placeholder_name(NAMESPACE, "web"))
        return kube.get(resource, NAMESPACE, buffer_name("web"))
    except NotFound:
        return None


def _buffer(kube: Kube) -> dict[str, Any] | None:
    return _held(kube, BUFFERS)


def _replicas(kube: Kube, wanted: int) -> Callable[[], bool]:
    def check() -> bool:
        found = _buffer(kube)
        return found is not None and found["spec"].get("replicas") == wanted

    return check


def _capacity_buffer_crd() -> Path:
    """Karpenter's build holds the CapacityBuffer CRD: `make test-karpenter` runs these tests,
    as `make test` on a fresh machine has no Karpenter build."""
    return next(
        path for path in find_karpenter().crds if path.name.endswith("_capacitybuffers.yaml")
    )


def _apply_crd(plane: ControlPlane, crd: Path) -> None:
    plane.run_kubectl("apply", "--server-side", "-f", str(crd), check=True)
    plane.run_kubectl(
        "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s", check=True
    )


@contextmanager
def _shop(plane: ControlPlane) -> Iterator[tuple[Path, Kube, int]]:
    """The SPA `web` with a 30-minute capacity lead before its noon window (4 replicas), as
    its ServiceAccount's kubeconfig, an admin's Kube, and the pods the lead wants."""
    install_crds(plane)
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
        yield kubeconfig, kube, 4 - replicas
    finally:
        client.close()


async def _made_again_when_deleted(kube: Kube) -> None:
    """Delete the buffer by hand while it is wanted: made again, with no clock step and no
    edit (the informer's event wakes the SPA)."""
    first = _buffer(kube)
    assert first is not None
    kube.delete(BUFFERS, NAMESPACE, buffer_name("web"))

    def made_again() -> bool:
        found = _buffer(kube)
        return found is not None and found["metadata"]["uid"] != first["metadata"]["uid"]

    await eventually(made_again, what="the CapacityBuffer made again")


@pytest.mark.karpenter
async def test_buffers_are_put_right_from_what_the_cache_shows(
    control_plane_factory: Callable[..., ControlPlane],
) -> None:
    crd = _capacity_buffer_crd()
    plane = control_plane_factory()
    _apply_crd(plane, crd)
    with _shop(plane) as (kubeconfig, kube, wanted):
        async with running_controller(kubeconfig, [NAMESPACE], start=utc("2026-11-16T11:30:00")):
            await eventually(_replicas(kube, wanted), what="the CapacityBuffer")
            await _made_again_when_deleted(kube)
            # Resized by hand: put back.
            kube.merge(BUFFERS, NAMESPACE, buffer_name("web"), {"spec": {"replicas": 9}})
            await eventually(_replicas(kube, wanted), what="the CapacityBuffer resized back")
        # No controller runs while `capacity` is removed; the next one deletes the buffer.
        kube.merge(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, "web", {"spec": {"capacity": None}})
        async with running_controller(kubeconfig, [NAMESPACE], start=utc("2026-11-16T11:31:00")):
            await eventually(lambda: _buffer(kube) is None, what="the CapacityBuffer deleted")


@pytest.mark.karpenter
async def test_a_crd_installed_after_the_start_is_watched_from_then_on(
    control_plane_factory: Callable[..., ControlPlane],
) -> None:
    # Before, such a buffer was cached only from the next start: deleted by hand, it came
    # back only at the next change of the count.
    crd = _capacity_buffer_crd()
    plane = control_plane_factory()
    with _shop(plane) as (kubeconfig, kube, wanted):
        # Placeholders are an install option (docs/install.md, "Placeholder pods"): granted.
        plane.run_kubectl("apply", "--server-side", "-f", str(PLACEHOLDERS), check=True)
        async with running_controller(
            kubeconfig, [NAMESPACE], start=utc("2026-11-16T11:30:00"), discovery_interval=0.5
        ):
            # No CapacityBuffer API: mode Auto holds the lead's capacity with placeholder pods.
            await eventually(lambda: _held(kube, DEPLOYMENTS) is not None, what="the placeholder")
            _apply_crd(plane, crd)
            # Asked by the SPA's next reconcile once the discovery interval (half a second
            # here, a minute by default) has passed, never between boundaries on its own
            # (docs/runtime.md, "Optional kinds"): a user's edit wakes the SPA.
            edits = iter(range(1_000))

            def woken_into_a_buffer() -> bool:
                label = {"metadata": {"labels": {"edit": str(next(edits))}}}
                kube.merge(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, "web", label)
                return _replicas(kube, wanted)()

            await eventually(woken_into_a_buffer, what="the CapacityBuffer")
            await eventually(lambda: _held(kube, DEPLOYMENTS) is None, what="the placeholder gone")
            await _made_again_when_deleted(kube)
