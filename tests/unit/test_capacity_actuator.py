"""The CapacityBuffer requests (spa/controller/capacity.py) against a small fake of the API
server, and the reconciler's use of them: which version is discovered, one write per change,
nothing touched that the SPA does not control, and no request at all for an SPA that orders no
capacity. The real API server and Karpenter: tests/integration/test_capacity_nodes.py."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spa.api import wire
from spa.api.resources import CapacityMode
from spa.controller.capacity import CapacityActuator, buffer_name
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL
from spa.kube import NotFound, PatchType, Resource
from spa.runtime import FakeClock
from tests.unit.spa_model import OURS, Recorded, Server, at, autoscaler, schedule

BUFFERS = [{"name": "capacitybuffers", "kind": "CapacityBuffer", "namespaced": True}]


@dataclass
class Buffers:
    """The API server as far as CapacityBuffers go: `version` served (None: the group is not),
    the objects by name, and every request in order."""

    version: str | None = "v1beta1"
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    log: list[str] | None = None

    def _note(self, request: str) -> None:
        self.requests.append(request)
        if self.log is not None:
            self.log.append(request)

    async def preferred_version(self, group: str) -> str | None:
        self._note(f"discover {group}")
        return self.version

    async def api_resources(self, group_version: str) -> Any:
        self._note(f"resources {group_version}")
        return BUFFERS if self.version and group_version.endswith(self.version) else []

    async def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]:
        self._note(f"get {resource.plural}.{resource.version}")
        if name not in self.objects:
            raise NotFound(404, "NotFound", f"{name} not found")
        return copy.deepcopy(self.objects[name])

    async def create(
        self,
        resource: Resource,
        namespace: str | None,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        self._note(f"create {resource.plural}")
        assert field_manager == FIELD_MANAGER
        stored = copy.deepcopy(dict(body))
        stored["metadata"]["resourceVersion"] = "1"
        self.objects[body["metadata"]["name"]] = stored
        return stored

    async def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any],
        *,
        patch_type: PatchType,
        field_manager: str,
    ) -> dict[str, Any]:
        self._note(f"patch {resource.plural}")
        assert (patch_type, field_manager) == ("merge", FIELD_MANAGER)
        self.objects[name]["spec"].update(body["spec"])
        return self.objects[name]

    async def delete(
        self, resource: Resource, namespace: str | None, name: str, *, resource_version: str | None
    ) -> dict[str, Any]:
        self._note(f"delete {resource.plural}")
        assert resource_version == self.objects[name]["metadata"]["resourceVersion"]
        return self.objects.pop(name)


def spa() -> wire.ScheduledPodAutoscaler:
    return wire.typed(wire.ScheduledPodAutoscaler, autoscaler())


TARGET = ("apps/v1", "Deployment", "web")


def hold(actuator: CapacityActuator, pods: int, mode: CapacityMode = CapacityMode.Auto) -> Any:
    return asyncio.run(actuator.hold(spa(), TARGET, pods=pods, mode=mode))


def test_the_buffer_is_created_in_the_served_version_owned_by_the_autoscaler() -> None:
    kube, recorded = Buffers(), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    held = hold(actuator, 3)
    assert (held.pods, held.mode, held.unsupported) == (3, CapacityMode.CapacityBuffer, None)
    stored = kube.objects[buffer_name("web")]
    assert stored["apiVersion"] == "autoscaling.x-k8s.io/v1beta1"
    assert stored["spec"] == {
        "scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"},
        "replicas": 3,
    }
    assert stored["metadata"]["ownerReferences"] == [OURS]
    assert stored["metadata"]["labels"] == {MANAGED_BY_LABEL: FIELD_MANAGER}
    assert [reason for _, reason, _ in recorded.events] == ["CapacityCreated"]


def test_an_older_served_version_is_used_as_discovered() -> None:
    kube = Buffers(version="v1alpha1")
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=FakeClock())
    hold(actuator, 1)
    assert kube.objects[buffer_name("web")]["apiVersion"] == "autoscaling.x-k8s.io/v1alpha1"


def test_one_write_per_change_and_a_delete_at_zero() -> None:
    kube, recorded = Buffers(), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    hold(actuator, 3)
    hold(actuator, 3)
    hold(actuator, 2)
    hold(actuator, 0)
    hold(actuator, 0)
    writes = [r for r in kube.requests if r.split()[0] in ("create", "patch", "delete")]
    assert writes == ["create capacitybuffers", "patch capacitybuffers", "delete capacitybuffers"]
    assert kube.objects == {}
    # Discovery was asked once, and its answer kept.
    assert kube.requests.count("discover autoscaling.x-k8s.io") == 1
    assert [reason for _, reason, _ in recorded.events] == [
        "CapacityCreated",
        "CapacityResized",
        "CapacityRemoved",
    ]


def test_a_buffer_the_autoscaler_does_not_control_is_left_alone() -> None:
    theirs = {
        "metadata": {"name": buffer_name("web"), "resourceVersion": "9"},
        "spec": {"replicas": 7},
    }
    kube, recorded = Buffers(objects={buffer_name("web"): copy.deepcopy(theirs)}), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    for pods in (3, 0):
        held = hold(actuator, pods)
        assert held.pods == 0
        assert "not controlled by this ScheduledPodAutoscaler" in held.unsupported
    assert kube.objects[buffer_name("web")] == theirs
    assert [(kind, reason) for kind, reason, _ in recorded.events] == [
        ("Warning", "CapacityNameTaken"),
        ("Warning", "CapacityNameTaken"),
    ]


def test_without_the_api_nothing_is_held_and_discovery_is_asked_again_later() -> None:
    kube, clock = Buffers(version=None), FakeClock()
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=clock)
    held = hold(actuator, 3)
    assert held.pods == 0
    assert "serves no CapacityBuffer" in held.unsupported
    hold(actuator, 3)
    assert kube.requests == ["discover autoscaling.x-k8s.io"]
    clock.advance(301)
    kube.version = "v1beta1"
    assert hold(actuator, 3).pods == 3


def test_the_placeholder_mode_holds_nothing_yet_and_says_so() -> None:
    kube = Buffers()
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=FakeClock())
    held = hold(actuator, 3, CapacityMode.Placeholder)
    assert held.pods == 0
    assert "placeholder" in held.unsupported
    assert kube.requests == []


# -- through the reconciler --------------------------------------------------------------------


def reconciled(server: Server, instant: int) -> None:
    _, memory, _ = server.reconcile(instant)
    server.reconcile(instant, memory)


def test_an_autoscaler_without_capacity_sends_no_capacity_request() -> None:
    kube = Buffers()
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=3)
    server.capacity = CapacityActuator(kube=kube, recorder=server.recorded, clock=FakeClock())
    for instant in (at(9, 55), at(10), at(11)):
        reconciled(server, instant)
    assert kube.requests == []
    assert server.autoscaler is not None
    conditions = server.autoscaler["status"]["conditions"]
    assert "CapacityReady" not in [c["type"] for c in conditions]


def test_the_buffer_follows_the_capacity_lead_and_comes_after_the_hpa_write() -> None:
    kube = Buffers(log=[])
    obj = autoscaler()
    obj["spec"]["capacity"] = {"leadTime": "10m"}
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=3)
    kube.log = server.writes
    server.capacity = CapacityActuator(kube=kube, recorder=server.recorded, clock=FakeClock())
    reconciled(server, at(9, 45))
    # Outside the capacity lead: asked once (a buffer left by a previous process?), none held.
    assert buffer_name("web") not in kube.objects
    reconciled(server, at(9, 50))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 2
    assert server.writes.index("create") < server.writes.index("create capacitybuffers")
    assert server.autoscaler is not None
    condition = next(
        c for c in server.autoscaler["status"]["conditions"] if c["type"] == "CapacityReady"
    )
    assert (condition["status"], condition["reason"]) == ("False", "BufferRequested")
    # The target raised to the window's minimum: the buffer goes.
    server.target_replicas = 5
    reconciled(server, at(10))
    assert buffer_name("web") not in kube.objects
    condition = next(
        c for c in server.autoscaler["status"]["conditions"] if c["type"] == "CapacityReady"
    )
    assert (condition["status"], condition["reason"]) == ("True", "PodsRequested")
