"""The CapacityBuffer requests (spa/controller/capacity.py) against a small fake of the API
server, and the reconciler's use of them: which version is discovered, one write per change,
nothing touched that the SPA does not control, no request at all for an SPA that orders no
capacity, and what capacity did for each window in status.windows. The real API server and
Karpenter: tests/integration/test_capacity_nodes.py."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.api import wire
from spa.api.incident import INDEFINITE, PAUSED_UNTIL_ANNOTATION
from spa.api.resources import CapacityMode
from spa.controller.capacity import (
    PLACEHOLDER_NAMESPACE,
    CapacityActuator,
    buffer_name,
    capacity_buffer_kind,
    placeholder_name,
)
from spa.controller.decide import Memory
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL
from spa.controller.permissions import Permission, PodAccess
from spa.controller.watches import cached_capacity
from spa.kube import (
    Conflict,
    ListResult,
    NamespaceTerminating,
    NotFound,
    PatchType,
    Resource,
    error_from_status,
)
from spa.runtime import FakeClock, Result, Store
from spa.schedule import format_instant
from tests.builders import namespace_terminating
from tests.client_double import UnexpectedRequests
from tests.unit.spa_model import KEY, OURS, Recorded, Server, at, autoscaler, schedule

BUFFERS = [{"name": "capacitybuffers", "kind": "CapacityBuffer", "namespaced": True}]
# The placeholder Deployment of shop/web, in the controller's namespace.
PLACEHOLDER = placeholder_name("shop", "web")


@dataclass
class Buffers(UnexpectedRequests):
    """The API server as far as CapacityBuffers go: `version` served (None: the group is not),
    the objects by name, and every request in order."""

    version: str | None = "v1beta1"
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Deployments by name: the scale target `web`, and the placeholders made.
    deployments: dict[str, dict[str, Any]] = field(default_factory=lambda: {"web": web()})
    requests: list[str] = field(default_factory=list)
    log: list[str] | None = None
    # ScheduledPodAutoscalers by name, as the API server has them (the caches may be behind).
    autoscalers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The namespace is being deleted: every create is refused (403, NamespaceTerminating).
    terminating: bool = False
    # Run once, just before the next DELETE is served: a write by somebody else between the
    # actuator's read and its delete.
    before_delete: Callable[[Buffers], None] | None = None
    _serial: int = 0

    def next_serial(self) -> str:
        """A new uid or resourceVersion, as the server gives one at each create or write."""
        self._serial += 1
        return str(self._serial)

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

    def _of(self, resource: Resource) -> dict[str, dict[str, Any]]:
        if resource.plural == "scheduledpodautoscalers":
            return self.autoscalers
        return self.deployments if resource.plural == "deployments" else self.objects

    async def get(
        self, resource: Resource, namespace: str | None, name: str, **_: Any
    ) -> dict[str, Any]:
        self._note(f"get {resource.plural}.{resource.version}")
        if name not in self._of(resource):
            raise NotFound(404, "NotFound", f"{name} not found")
        return copy.deepcopy(self._of(resource)[name])

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
        **_: Any,
    ) -> ListResult:
        self._note(f"list {resource.plural}.{resource.version}")
        assert resource.plural == "scheduledpodautoscalers"
        name = (field_selector or "").removeprefix("metadata.name=")
        items = [copy.deepcopy(self.autoscalers[name])] if name in self.autoscalers else []
        return ListResult(items=items, resource_version="1")

    async def create(
        self,
        resource: Resource,
        namespace: str | None,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        self._note(f"create {resource.plural}")
        assert field_manager == FIELD_MANAGER
        if self.terminating:
            refusal = namespace_terminating(
                resource=resource.plural, group=resource.group, name=body["metadata"]["name"]
            )
            raise error_from_status(403, json.dumps(refusal).encode(), resource=resource.plural)
        assert body["metadata"]["namespace"] == namespace
        stored = copy.deepcopy(dict(body))
        stored["metadata"]["uid"] = f"uid-{self.next_serial()}"
        stored["metadata"]["resourceVersion"] = self.next_serial()
        self._of(resource)[body["metadata"]["name"]] = stored
        return stored

    async def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        patch_type: PatchType,
        field_manager: str,
        **_: Any,
    ) -> dict[str, Any]:
        self._note(f"patch {resource.plural}")
        assert (patch_type, field_manager) == ("merge", FIELD_MANAGER)
        assert isinstance(body, Mapping)
        self._of(resource)[name]["spec"].update(body["spec"])
        self._of(resource)[name]["metadata"]["resourceVersion"] = self.next_serial()
        return self._of(resource)[name]

    async def delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        uid: str | None = None,
        resource_version: str | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        """The server's DELETE: 409 when a precondition does not hold, 404 when nothing has
        the name."""
        self._note(f"delete {resource.plural}")
        assert uid or resource_version, "a delete without a precondition"
        if self.before_delete is not None:
            write, self.before_delete = self.before_delete, None
            write(self)
        if name not in self._of(resource):
            raise NotFound(404, "NotFound", f"{name} not found")
        metadata = self._of(resource)[name]["metadata"]
        for precondition, value in (("uid", uid), ("resourceVersion", resource_version)):
            if value and value != metadata.get(precondition):
                raise Conflict(409, "Conflict", f"the {precondition} in the precondition differs")
        return self._of(resource).pop(name)


def requests(**quantities: str) -> dict[str, Any]:
    return {"requests": quantities}


def web() -> dict[str, Any]:
    """The scale target: two containers whose requests a placeholder pod sums."""
    return {
        "metadata": {"name": "web", "resourceVersion": "3"},
        "spec": {
            "replicas": 3,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                        },
                        {
                            "name": "side",
                            "resources": {"requests": {"cpu": "1", "memory": "512Mi"}},
                        },
                        {"name": "bare"},
                    ],
                    "nodeSelector": {"pool": "peak"},
                    "tolerations": [{"key": "peak", "operator": "Exists"}],
                    "serviceAccountName": "web",
                },
            },
        },
    }


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


def test_a_write_between_the_read_and_the_delete_does_not_stop_the_delete() -> None:
    """The Deployment controller updates a placeholder's status at each change of its pods,
    also between the actuator's GET and its DELETE: the delete still goes through, at once
    (its precondition is the uid, which no update changes), not into an error backoff."""
    kube, recorded = Buffers(version=None), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    hold(actuator, 2)

    def status_write(server: Buffers) -> None:
        placeholder = server.deployments[PLACEHOLDER]
        placeholder["status"] = {"replicas": 2, "unavailableReplicas": 2}
        placeholder["metadata"]["resourceVersion"] = server.next_serial()

    kube.before_delete = status_write
    held = hold(actuator, 0)
    assert (held.pods, held.mode) == (0, CapacityMode.Placeholder)
    assert PLACEHOLDER not in kube.deployments
    assert [reason for _, reason, _ in recorded.events] == ["CapacityCreated", "CapacityRemoved"]


def test_an_object_put_under_the_name_before_the_delete_is_not_deleted() -> None:
    """What the delete's precondition keeps: the buffer read is deleted by somebody and
    another object (not the SPA's) created under its name before the DELETE arrives. The
    DELETE names the uid read, so the new object stays, and the actuator takes the 409 for
    what it is, the object it meant to delete gone, not for an error."""
    theirs = {"metadata": {"name": buffer_name("web"), "uid": "theirs"}, "spec": {"replicas": 7}}
    kube, recorded = Buffers(), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    hold(actuator, 3)

    def replace(server: Buffers) -> None:
        server.objects[buffer_name("web")] = copy.deepcopy(theirs)

    kube.before_delete = replace
    held = hold(actuator, 0)
    assert (held.pods, held.mode, held.unsupported) == (0, CapacityMode.CapacityBuffer, None)
    assert kube.objects[buffer_name("web")] == theirs
    assert [reason for _, reason, _ in recorded.events] == ["CapacityCreated"]


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


def test_without_the_api_auto_holds_placeholders_and_discovery_is_asked_again_later() -> None:
    kube, clock = Buffers(version=None), FakeClock()
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=clock)
    held = hold(actuator, 3)
    assert (held.pods, held.mode) == (3, CapacityMode.Placeholder)
    assert PLACEHOLDER in kube.deployments
    hold(actuator, 3)
    assert kube.requests.count("discover autoscaling.x-k8s.io") == 1
    # Once served (a CRD installed later), the next look after a while finds it.
    clock.advance(301)
    kube.version = "v1beta1"
    assert hold(actuator, 3).mode is CapacityMode.CapacityBuffer


def test_a_forced_capacity_buffer_without_the_api_holds_nothing_and_says_so() -> None:
    kube = Buffers(version=None)
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=FakeClock())
    held = hold(actuator, 3, CapacityMode.CapacityBuffer)
    assert held.pods == 0
    assert held.unsupported == (
        "cannot hold node capacity for 3 pods: the CapacityBuffer CRD "
        "(capacitybuffers.autoscaling.x-k8s.io) is not installed: install it with Karpenter or "
        'cluster-autoscaler (docs/install.md, "Node autoscalers for capacity"); mode Auto would '
        "use placeholder pods"
    )
    assert kube.deployments.keys() == {"web"}


def test_placeholders_are_pause_pods_shaped_and_placed_like_the_targets() -> None:
    kube, recorded = Buffers(), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    held = hold(actuator, 3, CapacityMode.Placeholder)
    assert (held.pods, held.mode, held.unsupported) == (3, CapacityMode.Placeholder, None)
    # No CapacityBuffer asked for: the mode was chosen.
    assert not [r for r in kube.requests if "capacitybuffers" in r or "discover" in r]
    placeholder = kube.deployments[PLACEHOLDER]
    assert placeholder["spec"]["replicas"] == 3
    # In the controller's namespace, where no ownerReference can name the SPA: its labels do.
    assert placeholder["metadata"]["namespace"] == PLACEHOLDER_NAMESPACE
    assert "ownerReferences" not in placeholder["metadata"]
    assert placeholder["metadata"]["labels"] == {
        MANAGED_BY_LABEL: FIELD_MANAGER,
        "autoscaling.d-kuro.github.io/capacity-for-namespace": "shop",
        "autoscaling.d-kuro.github.io/capacity-for": "web",
    }
    pod = placeholder["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "scheduled-pod-autoscaler-capacity"
    # Pod Security `restricted`, which the controller's namespace enforces.
    assert pod["containers"] == [
        {
            "name": "pause",
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "1500m", "memory": str(1536 * 2**20)}},
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
            },
        }
    ]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65535,
        "runAsGroup": 65535,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert pod["nodeSelector"] == {"pool": "peak"}
    assert pod["tolerations"] == [{"key": "peak", "operator": "Exists"}]
    assert "serviceAccountName" not in pod
    # Its own labels only: no Service or selector of the target ever counts it.
    labels = placeholder["spec"]["template"]["metadata"]["labels"]
    assert "app" not in labels
    assert placeholder["spec"]["selector"]["matchLabels"] == labels
    hold(actuator, 1, CapacityMode.Placeholder)
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 1
    hold(actuator, 0, CapacityMode.Placeholder)
    assert kube.deployments.keys() == {"web"}
    assert [reason for _, reason, _ in recorded.events] == [
        "CapacityCreated",
        "CapacityResized",
        "CapacityRemoved",
    ]


def test_no_placeholder_for_a_kind_without_a_pod_template_to_copy() -> None:
    kube, recorded = Buffers(), Recorded()
    actuator = CapacityActuator(kube=kube, recorder=recorded, clock=FakeClock())
    held = asyncio.run(
        actuator.hold(
            spa(), ("argoproj.io/v1alpha1", "Rollout", "web"), pods=3, mode=CapacityMode.Placeholder
        )
    )
    assert held.pods == 0
    assert held.unsupported is not None
    assert "only a Deployment, StatefulSet or ReplicaSet" in held.unsupported
    assert [(kind, reason) for kind, reason, _ in recorded.events] == [("Warning", "Unsupported")]
    assert kube.deployments.keys() == {"web"}


def test_a_deployment_of_the_name_that_is_not_ours_is_never_scaled() -> None:
    theirs = {
        "metadata": {"name": PLACEHOLDER, "resourceVersion": "4"},
        "spec": {"replicas": 2},
    }
    kube = Buffers()
    kube.deployments[PLACEHOLDER] = copy.deepcopy(theirs)
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=FakeClock())
    for pods in (3, 0):
        assert hold(actuator, pods, CapacityMode.Placeholder).pods == 0
    assert kube.deployments[PLACEHOLDER] == theirs


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


def test_a_buffer_refused_in_a_namespace_being_deleted_leaves_the_autoscaler_alone() -> None:
    """The create is refused because the namespace is being deleted (403,
    NamespaceTerminating): not a refusal for the user to fix (no CapacityReady False with the
    server's message), but the SPA going with its namespace, left alone and counted
    (docs/operations.md, "Namespaces being deleted")."""

    def not_made() -> float:
        sample = REGISTRY.get_sample_value(
            "spa_namespace_terminating_writes_total", {"resource": "capacitybuffers"}
        )
        return sample or 0.0

    kube = Buffers()
    refused = Buffers(terminating=True)
    actuator = CapacityActuator(kube=refused, recorder=Recorded(), clock=FakeClock())
    with pytest.raises(NamespaceTerminating):
        hold(actuator, 3)
    obj = autoscaler()
    obj["spec"]["capacity"] = {"leadTime": "10m"}
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=3)
    server.capacity = CapacityActuator(kube=kube, recorder=server.recorded, clock=FakeClock())
    _, memory, _ = server.reconcile(at(9, 45))
    _, memory, _ = server.reconcile(at(9, 45), memory)
    assert server.autoscaler is not None
    status = copy.deepcopy(server.autoscaler["status"])
    events = list(server.recorded.events)
    before = not_made()
    kube.terminating = True
    reconciler = server.reconciler(at(9, 50), {KEY: memory})
    assert asyncio.run(reconciler.reconcile(KEY)) == Result()
    assert buffer_name("web") not in kube.objects
    assert server.autoscaler["status"] == status
    assert server.recorded.events == events
    assert not_made() - before == 1


def requested_pods() -> float | None:
    return REGISTRY.get_sample_value(
        "spa_capacity_requested_pods", {"namespace": "shop", "name": "web"}
    )


def test_the_metric_says_how_many_pods_the_autoscaler_holds_capacity_for() -> None:
    obj = autoscaler()
    obj["spec"]["capacity"] = {"leadTime": "10m"}
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=1)
    server.capacity = CapacityActuator(kube=Buffers(), recorder=server.recorded, clock=FakeClock())
    reconciled(server, at(9, 55))
    assert requested_pods() == 4
    server.target_replicas = 5
    reconciled(server, at(10))
    assert requested_pods() == 0
    # Without capacity on the SPA: no series at all.
    server.autoscaler = autoscaler()
    reconciled(server, at(10, 30))
    assert requested_pods() is None


def test_a_change_of_mode_removes_what_was_held_the_other_way() -> None:
    kube = Buffers(version=None)
    obj = autoscaler()
    obj["spec"]["capacity"] = {"leadTime": "20m"}
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=3)
    clock = FakeClock()
    server.capacity = CapacityActuator(kube=kube, recorder=server.recorded, clock=clock)
    reconciler = server.reconciler(at(9, 45), {})
    # Auto without the API: placeholders.
    asyncio.run(reconciler.reconcile("shop/web"))
    asyncio.run(reconciler.reconcile("shop/web"))
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    # The CapacityBuffer API appears; a later count finds it, and the placeholders go.
    kube.version = "v1beta1"
    clock.advance(301)
    server.target_replicas = 4
    asyncio.run(reconciler.reconcile("shop/web"))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 1
    assert PLACEHOLDER not in kube.deployments


# -- level-triggered: what the caches show -------------------------------------------------------


@dataclass
class Caches:
    """The caches of placeholder Deployments and CapacityBuffers as the manager's informers
    keep them: what `kube` holds with the controller's label, after `sync` (the watch)."""

    kube: Buffers
    placeholders: Store = field(default_factory=lambda: Store(transform=cached_capacity))
    buffers: Store = field(default_factory=lambda: Store(transform=cached_capacity))

    def sync(self) -> None:
        for store, objects in (
            (self.placeholders, self.kube.deployments),
            (self.buffers, self.kube.objects),
        ):
            for key in list(store.keys()):
                store.delete(key)
            for obj in objects.values():
                if (obj["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == FIELD_MANAGER:
                    store.upsert(copy.deepcopy(obj))

    def actuator(self, server: Server) -> CapacityActuator:
        """The actuator as the manager makes it where the CapacityBuffer API is served at the
        start: discovered before the first reconcile, its informer's cache `buffers`."""
        clock = FakeClock()
        kind = capacity_buffer_kind(
            self.kube, clock=clock, watch=lambda resource: LateInformer.listed(self.buffers)
        )
        asyncio.run(kind.served())
        return CapacityActuator(
            kube=self.kube,
            recorder=server.recorded,
            clock=clock,
            placeholders=self.placeholders,
            buffers=kind,
        )


def with_capacity(kube: Buffers, *, capacity: bool = True) -> tuple[Server, Caches]:
    obj = autoscaler()
    if capacity:
        obj["spec"]["capacity"] = {"leadTime": "10m"}
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=3)
    caches = Caches(kube)
    server.capacity = caches.actuator(server)
    return server, caches


def writes(kube: Buffers) -> list[str]:
    return [r for r in kube.requests if r.split()[0] in ("create", "patch", "delete")]


def test_a_buffer_left_by_a_stopped_process_goes_once_capacity_is_removed() -> None:
    kube = Buffers()
    server, caches = with_capacity(kube)
    reconciled(server, at(9, 55))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 2
    # The controller stops; `capacity` is removed; a new process starts with fresh caches.
    server, caches = with_capacity(kube, capacity=False)
    caches.sync()
    reconciled(server, at(9, 56))
    assert buffer_name("web") not in kube.objects
    assert writes(kube)[-1] == "delete capacitybuffers"
    # And then nothing more is asked.
    caches.sync()
    asked = len(kube.requests)
    reconciled(server, at(9, 57))
    assert len(kube.requests) == asked


@dataclass
class LateInformer:
    """The informer the manager starts for a CapacityBuffer API once served: its store,
    complete once `has_synced`."""

    store: Store
    synced: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def has_synced(self) -> bool:
        return self.synced.is_set()

    async def wait_synced(self) -> None:
        await self.synced.wait()

    @classmethod
    def listed(cls, store: Store) -> LateInformer:
        informer = cls(store)
        informer.synced.set()
        return informer


def test_a_capacity_buffer_api_served_after_the_start_is_cached_from_then_on() -> None:
    kube, clock = Buffers(version=None), FakeClock()
    caches = Caches(kube)
    started: list[Resource] = []
    late = LateInformer(caches.buffers)

    def watch_buffers(resource: Resource) -> LateInformer:
        started.append(resource)
        return late

    actuator = CapacityActuator(
        kube=kube,
        recorder=Recorded(),
        clock=clock,
        placeholders=caches.placeholders,
        buffers=capacity_buffer_kind(kube, clock=clock, watch=watch_buffers),
    )
    assert hold(actuator, 3).mode is CapacityMode.Placeholder
    caches.sync()
    assert actuator.cached(spa()) == {CapacityMode.Placeholder: 3}
    # The CRD is installed; the next look after a while finds it and starts its informer.
    clock.advance(301)
    kube.version = "v1beta1"
    assert hold(actuator, 3).mode is CapacityMode.CapacityBuffer
    assert [(r.version, r.plural) for r in started] == [("v1beta1", "capacitybuffers")]
    # Until it has listed, the caches cannot tell (the reconciler goes by what it wrote).
    assert actuator.cached(spa()) is None
    caches.sync()
    late.synced.set()
    assert actuator.cached(spa()) == {
        CapacityMode.CapacityBuffer: 3,
        CapacityMode.Placeholder: 3,
    }
    # A buffer deleted by hand now shows in what the caches say: it will be made again.
    del kube.objects[buffer_name("web")]
    caches.sync()
    assert actuator.cached(spa()) == {CapacityMode.Placeholder: 3}
    hold(actuator, 3)
    assert len(started) == 1


def test_a_buffer_deleted_by_hand_while_wanted_is_made_again() -> None:
    kube = Buffers()
    server, caches = with_capacity(kube)
    # One process throughout: what it wrote itself is not what it goes by.
    reconciler = server.reconciler(at(9, 55), {})
    asyncio.run(reconciler.reconcile("shop/web"))
    asyncio.run(reconciler.reconcile("shop/web"))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 2
    caches.sync()
    del kube.objects[buffer_name("web")]
    caches.sync()
    asyncio.run(reconciler.reconcile("shop/web"))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 2
    assert writes(kube) == ["create capacitybuffers", "create capacitybuffers"]


def test_a_buffer_edited_by_hand_is_put_back_and_one_that_matches_costs_no_request() -> None:
    kube = Buffers()
    server, caches = with_capacity(kube)
    reconciled(server, at(9, 55))
    caches.sync()
    asked = len(kube.requests)
    reconciled(server, at(9, 56))
    assert len(kube.requests) == asked
    kube.objects[buffer_name("web")]["spec"]["replicas"] = 9
    caches.sync()
    reconciled(server, at(9, 57))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 2
    assert writes(kube) == ["create capacitybuffers", "patch capacitybuffers"]


def test_a_cache_behind_the_last_write_costs_a_read_not_a_second_write() -> None:
    kube = Buffers()
    server, _ = with_capacity(kube)  # the caches never see the buffer
    reconciled(server, at(9, 55))
    reconciled(server, at(9, 56))
    assert writes(kube) == ["create capacitybuffers"]


def test_placeholders_left_while_a_buffer_is_wanted_go() -> None:
    kube = Buffers(version=None)
    server, caches = with_capacity(kube)
    reconciled(server, at(9, 55))
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    # A new process, with the CapacityBuffer API served now.
    kube.version = "v1beta1"
    server, caches = with_capacity(kube)
    caches.sync()
    reconciled(server, at(9, 56))
    assert kube.objects[buffer_name("web")]["spec"]["replicas"] == 2
    assert PLACEHOLDER not in kube.deployments


def not_ready() -> float | None:
    return REGISTRY.get_sample_value("spa_capacity_not_ready", {"namespace": "shop", "name": "web"})


def test_the_metric_says_when_capacity_is_not_ready_past_the_boundary() -> None:
    server, _ = with_capacity(Buffers())
    assert server.autoscaler is not None
    # The HPA controller, not the SPA, raises the target: it can be slow to.
    server.autoscaler["spec"]["scaleUpImmediately"] = False
    reconciled(server, at(9, 55))  # capacity held ahead of the boundary: as it should be
    assert not_ready() == 0
    reconciled(server, at(10))  # the HPA asks for 5; the target still runs 3
    assert not_ready() == 1
    server.target_replicas = 5
    reconciled(server, at(10, 1))
    assert not_ready() == 0
    server.autoscaler = autoscaler()  # `capacity` removed: no series
    reconciled(server, at(10, 2))
    assert not_ready() is None


# -- placeholders in the controller's namespace (docs/install.md, "Placeholder pods") ----------


def test_placeholder_names_carry_the_namespace_and_fit_a_dns_label() -> None:
    assert placeholder_name("shop", "web") == "shop-web-capacity"
    # Two SPAs of one name in two namespaces never share a placeholder.
    assert placeholder_name("shop", "web") != placeholder_name("payments", "web")
    longest = placeholder_name("n" * 63, "w" * 63)
    other = placeholder_name("n" * 63, "w" * 62 + "x")
    assert len(longest) <= 63
    assert longest.endswith("-capacity")
    assert longest != other


def test_pod_affinity_of_the_targets_namespace_is_kept_from_the_controllers() -> None:
    """Pod (anti-)affinity terms select pods of their own pod's namespace unless they name
    one: the placeholder, in another namespace, is given the target's."""
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    anywhere = {**term, "namespaceSelector": {}}
    named = {**term, "namespaces": ["data"]}
    target = web()
    target["spec"]["template"]["spec"]["affinity"] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term, anywhere]},
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": term},
                {"weight": 5, "podAffinityTerm": named},
            ]
        },
        "nodeAffinity": {"x": "kept as it is"},
    }
    kube = Buffers(deployments={"web": target})
    actuator = CapacityActuator(kube=kube, recorder=Recorded(), clock=FakeClock())
    hold(actuator, 1, CapacityMode.Placeholder)
    affinity = kube.deployments[PLACEHOLDER]["spec"]["template"]["spec"]["affinity"]
    assert affinity == {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {**term, "namespaces": ["shop"]},
                anywhere,
            ]
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {**term, "namespaces": ["shop"]}},
                {"weight": 5, "podAffinityTerm": named},
            ]
        },
        "nodeAffinity": {"x": "kept as it is"},
    }


def test_without_the_permission_placeholders_are_refused_naming_it_with_no_request() -> None:
    denied = (
        "the controller is not allowed to get deployments.apps in all namespaces: enable "
        "placeholder pods"
    )
    kube, recorded = Buffers(version=None), Recorded()
    actuator = CapacityActuator(
        kube=kube, recorder=recorded, clock=FakeClock(), placeholders_denied=denied
    )
    held = hold(actuator, 3)
    assert (held.pods, held.mode) == (0, None)
    assert held.unsupported == f"cannot hold node capacity with placeholder pods: {denied}"
    # The target's template is never asked for (the placeholder's own name is, to find one
    # left from before to delete).
    assert "get deployments.v1" in kube.requests
    assert kube.deployments.keys() == {"web"}
    assert not writes(kube)
    assert [(kind, reason) for kind, reason, _ in recorded.events] == [("Warning", "Unsupported")]


def test_the_placeholder_of_a_deleted_autoscaler_is_deleted_by_its_reconcile() -> None:
    """No ownerReference can cross namespaces: the reconcile of a key whose SPA is gone
    deletes its placeholder, found in the cache by its labels."""
    kube = Buffers(version=None)
    server, caches = with_capacity(kube)
    reconciled(server, at(9, 55))
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    caches.sync()
    server.autoscaler = None
    reconciled(server, at(9, 56))
    assert PLACEHOLDER not in kube.deployments
    assert writes(kube)[-1] == "delete deployments"
    # Gone from the cache too: nothing more is asked.
    caches.sync()
    asked = len(kube.requests)
    reconciled(server, at(9, 57))
    assert len(kube.requests) == asked


def test_a_placeholder_is_kept_while_the_api_server_still_has_its_autoscaler() -> None:
    """The cache may be behind (a relist after a 410), or the key's SPA owned by another shard
    (docs/runtime.md, "Shards"): the API server, not the cache, says the SPA is gone."""
    kube = Buffers(version=None)
    server, caches = with_capacity(kube)
    reconciled(server, at(9, 55))
    caches.sync()
    kube.autoscalers["web"] = autoscaler()
    server.autoscaler = None
    reconciled(server, at(9, 56))
    assert PLACEHOLDER in kube.deployments
    assert "list scheduledpodautoscalers.v1" in kube.requests
    assert "delete deployments" not in writes(kube)


def test_a_placeholder_another_autoscaler_is_named_on_is_not_released() -> None:
    kube = Buffers(version=None)
    server, caches = with_capacity(kube)
    reconciled(server, at(9, 55))
    kube.deployments[PLACEHOLDER]["metadata"]["labels"][
        "autoscaling.d-kuro.github.io/capacity-for"
    ] = "other"
    caches.sync()
    server.autoscaler = None
    reconciled(server, at(9, 56))
    assert PLACEHOLDER in kube.deployments


# -- what node capacity did for each window (docs/api.md, "status.windows") ---------------------
# The entry made when capacity is held at the capacity lead's start (`capacityHeldAt`, no
# `raisedAt`, no read of the target), `nodesReadyAt` when every placeholder pod is Ready,
# `capacityReleasedAt` at the handover, and `capacity.leadTime: Auto` learned from them
# (docs/schedules.md, "Auto lead times"), on a stepped clock.

DAY = 86400


def _window_server(kube: Buffers, **spec: Any) -> tuple[Server, Caches, Memory]:
    """shop/web, Daily 10:00-11:00 at minReplicas 5, its target at 3 replicas not Ready yet for
    the window (its pods labelled app=web, created at 9:00), node capacity by placeholder pods
    where no CapacityBuffer API is served."""
    obj = autoscaler()
    obj["spec"].update(spec)
    server = Server(
        obj,
        [schedule("peak", owner=OURS)],
        target_replicas=3,
        target_ready=3,
        target_selector={"matchLabels": {"app": "web"}},
        pods=[_pod(at(9), at(9)) for _ in range(3)],
    )
    caches = Caches(kube)
    server.capacity = caches.actuator(server)
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    return server, caches, memory


def _step(server: Server, caches: Caches, memory: Memory, instant: int) -> Memory:
    """One reconcile at `instant`, its caches caught up with the API server (the watch), and
    the pass after a write that ended it (an HPA write goes to the back of the queue)."""
    caches.sync()
    _, memory, _ = server.reconcile(instant, memory)
    caches.sync()
    _, memory, _ = server.reconcile(instant, memory)
    return memory


def _recorded(server: Server) -> list[dict[str, Any]]:
    assert server.autoscaler is not None
    return list(server.autoscaler.get("status", {}).get("windows") or [])


def _status(server: Server, field: str) -> Any:
    assert server.autoscaler is not None
    return server.autoscaler["status"].get(field)


def _pod(created: int, scheduled: int | None = None) -> dict[str, Any]:
    """A pod of web as the API server lists it: created at `created`, bound to a node at
    `scheduled` (None: Pending, kube-scheduler found no node with room)."""
    condition = (
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "lastTransitionTime": _time(created),
        }
        if scheduled is None
        else {"type": "PodScheduled", "status": "True", "lastTransitionTime": _time(scheduled)}
    )
    return {
        "metadata": {"name": f"web-{created}", "creationTimestamp": _time(created)},
        "spec": {} if scheduled is None else {"nodeName": "node-1"},
        "status": {"phase": "Pending", "conditions": [condition]},
    }


def _time(instant: int) -> str:
    return format_instant(instant)


def _stand(kube: Buffers) -> None:
    """Every placeholder pod scheduled and started: the Deployment controller's status write."""
    placeholder = kube.deployments[PLACEHOLDER]
    placeholder["status"] = {"readyReplicas": placeholder["spec"]["replicas"]}


def test_placeholder_capacity_is_recorded_per_window_and_its_lead_learned() -> None:
    kube = Buffers(version=None)
    server, caches, memory = _window_server(
        kube, leadTime="Auto", capacity={"leadTime": "Auto", "mode": "Placeholder"}
    )
    # Defaults: the pods' 2m, the capacity's 3m in all.
    assert _status(server, "capacityLeadTime")["explanation"] == "default 3m until measured"
    memory = _step(server, caches, memory, at(9, 56))
    assert _recorded(server) == []
    # The capacity lead starts at 9:57: two placeholder pods, and the window's entry.
    memory = _step(server, caches, memory, at(9, 57))
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    (entry,) = _recorded(server)
    assert entry["outcome"] == "Pending"
    assert entry["boundary"] == "2026-11-16T10:00:00Z"
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert entry["capacityLead"]["seconds"] == 180
    assert "raisedAt" not in entry
    assert "nodesReadyAt" not in entry
    # The target itself is not read before the raise (only its /scale, for the capacity).
    assert server.target_reads == 0
    # Some placeholder pods still Pending: nothing stands yet.
    kube.deployments[PLACEHOLDER]["status"] = {"readyReplicas": 1}
    memory = _step(server, caches, memory, at(9, 57) + 20)
    assert "nodesReadyAt" not in _recorded(server)[0]
    # 40 s after the order every placeholder pod is Ready: the nodes stand.
    _stand(kube)
    memory = _step(server, caches, memory, at(9, 57) + 40)
    (entry,) = _recorded(server)
    assert entry["nodesReadyAt"] == "2026-11-16T09:57:40Z"
    # A later status write changes nothing.
    memory = _step(server, caches, memory, at(9, 57) + 50)
    assert _recorded(server)[0]["nodesReadyAt"] == "2026-11-16T09:57:40Z"
    assert server.target_reads == 0
    # Handed over 5 s before the raise: the placeholders go, the capacity is released.
    memory = _step(server, caches, memory, at(9, 57) + 55)
    assert PLACEHOLDER not in kube.deployments
    (entry,) = _recorded(server)
    assert entry["capacityReleasedAt"] == "2026-11-16T09:57:55Z"
    assert "raisedAt" not in entry
    # The pod lead in force is still the default: a window without a pod measurement counts
    # for nothing.
    assert _status(server, "leadTime")["explanation"] == "default 2m until measured"
    # The raise at 9:58 fills raisedAt on the same entry; the target is read from then on.
    memory = _step(server, caches, memory, at(9, 58))
    (entry,) = _recorded(server)
    assert entry["raisedAt"] == "2026-11-16T09:58:00Z"
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert entry["outcome"] == "Pending"
    assert server.target_reads > 0
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 58) + 30)
    (entry,) = _recorded(server)
    assert (entry["outcome"], entry["readySeconds"]) == ("Early", -90)
    # Learned: the pods needed 30 s (+ 15 s), the nodes 40 s (+ 15 s) of head start.
    assert _status(server, "leadTime")["seconds"] == 45
    capacity_lead = _status(server, "capacityLeadTime")
    assert capacity_lead["seconds"] == 45 + 55
    assert capacity_lead["source"] == "Learned"
    assert capacity_lead["explanation"] == (
        "leadTime 45s + nodes learned: p90 of 1 window 40 s + 15 s"
    )
    # The nodes were measured standing: the pods are never listed for their wait.
    assert server.pod_lists == []
    # The next day's capacity is ordered 100 s before B, not at the default 3m.
    server.target_ready = 3
    server.target_replicas = 3
    memory = _step(server, caches, memory, at(11) + 60)
    memory = _step(server, caches, memory, DAY + at(9, 58) + 19)
    assert PLACEHOLDER not in kube.deployments
    memory = _step(server, caches, memory, DAY + at(9, 58) + 20)
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    assert _recorded(server)[0]["capacityHeldAt"] == "2026-11-17T09:58:20Z"


def test_a_capacity_buffer_records_held_and_released_but_not_nodes_ready() -> None:
    """A CapacityBuffer's status says nothing of nodes: nodesReadyAt is not measured, and
    without a list of the pods (its selector not read here) the capacity lead stays at its
    default."""
    kube = Buffers()
    server, caches, memory = _window_server(kube, leadTime="1m", capacity={"leadTime": "Auto"})
    server.target_selector = None
    memory = _step(server, caches, memory, at(9, 57))
    (entry,) = _recorded(server)
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    memory = _step(server, caches, memory, at(9, 58))
    assert "capacityReleasedAt" not in _recorded(server)[0]
    # At the raise the target is scaled to the window's minimum: its pods take the capacity.
    memory = _step(server, caches, memory, at(9, 59))
    (entry,) = _recorded(server)
    assert entry["raisedAt"] == "2026-11-16T09:59:00Z"
    assert entry["capacityReleasedAt"] == "2026-11-16T09:59:00Z"
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 59) + 20)
    (entry,) = _recorded(server)
    assert entry["outcome"] == "Early"
    assert "nodesReadyAt" not in entry
    assert _status(server, "capacityLeadTime")["explanation"] == "default 3m until measured"


def _handed_over_unstood(kube: Buffers, **capacity: Any) -> tuple[Server, Caches, Memory]:
    """Placeholders ordered at 9:57 (capacity.leadTime Auto: the default 3m) that never
    stand, handed over 5 s before the raise at 9:59 (leadTime 1m); the window's two new pods,
    created a second after the raise, are Pending: no node has room yet."""
    server, caches, memory = _window_server(
        kube, leadTime="1m", capacity={"leadTime": "Auto", "mode": "Placeholder", **capacity}
    )
    memory = _step(server, caches, memory, at(9, 57))
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    memory = _step(server, caches, memory, at(9, 58) + 55)
    assert PLACEHOLDER not in kube.deployments
    memory = _step(server, caches, memory, at(9, 59))
    server.pods += [_pod(at(9, 59) + 1), _pod(at(9, 59) + 1)]
    memory = _step(server, caches, memory, at(9, 59) + 30)
    (entry,) = _recorded(server)
    assert (entry["outcome"], entry["capacityReleasedAt"]) == ("Pending", "2026-11-16T09:58:55Z")
    assert "nodesReadyAt" not in entry
    return server, caches, memory


def _bound(server: Server, *seconds: int) -> None:
    """The window's new pods bound to the nodes that came, `seconds` after the raise."""
    server.pods[3:] = [_pod(at(9, 59) + 1, at(9, 59) + second) for second in seconds]


def test_the_pods_wait_for_nodes_is_measured_once_when_the_placeholders_did_not_stand() -> None:
    """The head start was too short for the nodes: nothing says when they stood, so the
    pods' wait for them is measured, by one list of the target's pods when the window is
    Ready, and the capacity lead learns the head start plus that wait (docs/schedules.md,
    "Auto lead times")."""
    kube = Buffers(version=None)
    server, caches, memory = _handed_over_unstood(kube)
    # Not while the window is being measured: a list of pods only once it is.
    assert server.pod_lists == []
    _bound(server, 41, 46)
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 59) + 50)
    (entry,) = _recorded(server)
    assert (entry["outcome"], entry["readySeconds"]) == ("Early", -10)
    # The longest wait: created 9:59:01, bound 9:59:46. The three pods from 9:00 were there
    # before the raise, and are not the window's.
    assert entry["podsWaitedSeconds"] == 45
    assert server.pod_lists == ["app=web"]
    # The nodes needed the head start (9:57 to 9:59) and the wait: 165 s, + 17 s (a tenth).
    capacity_lead = _status(server, "capacityLeadTime")
    assert (capacity_lead["seconds"], capacity_lead["source"]) == (60 + 182, "Learned")
    assert capacity_lead["explanation"] == (
        "leadTime 1m + nodes learned: p90 of 1 window 165 s + 17 s"
    )
    # No list again: not for this window, not between windows.
    server.target_ready = server.target_replicas = 3
    for instant in (at(10), at(10, 30), at(11) + 60, DAY + at(9)):
        memory = _step(server, caches, memory, instant)
    assert server.pod_lists == ["app=web"]
    # The next day's capacity is ordered 242 s before B, not at the default 3m.
    memory = _step(server, caches, memory, DAY + at(9, 55) + 57)
    assert PLACEHOLDER not in kube.deployments
    memory = _step(server, caches, memory, DAY + at(9, 55) + 58)
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2


@pytest.mark.parametrize("asked", [True, False], ids=["review-said-no", "list-refused"])
def test_without_the_grant_to_list_pods_their_wait_is_not_measured(asked: bool) -> None:
    """The start's access review said no (the default install): no list at all; or it could
    not be asked, and the API server refuses the one list. Either way the window is measured
    as before, without podsWaitedSeconds, and nothing fails."""
    kube = Buffers(version=None)
    server, caches, memory = _window_server(
        kube, leadTime="1m", capacity={"leadTime": "Auto", "mode": "Placeholder"}
    )
    if asked:
        server.pod_access = PodAccess((Permission("list", "pods", group=""),))
    else:
        server.pods_forbidden = True
    memory = _step(server, caches, memory, at(9, 57))
    memory = _step(server, caches, memory, at(9, 59))
    server.pods += [_pod(at(9, 59) + 1, at(9, 59) + 46)]
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 59) + 50)
    (entry,) = _recorded(server)
    assert entry["outcome"] == "Early"
    assert "podsWaitedSeconds" not in entry
    assert server.pod_lists == ([] if asked else ["app=web"])
    assert server.result is not None
    assert not server.result.retry
    assert _status(server, "capacityLeadTime")["explanation"] == "default 3m until measured"


def test_a_window_missed_with_its_pods_still_waiting_says_how_long_so_far() -> None:
    """At the window's end its pods are still Pending: they have waited from their creation
    until then, at least. A missed window is not learned from."""
    kube = Buffers(version=None)
    server, caches, memory = _handed_over_unstood(kube)
    server.target_created = 5
    memory = _step(server, caches, memory, at(11))
    (entry,) = _recorded(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "PodsPending")
    assert entry["podsWaitedSeconds"] == at(11) - (at(9, 59) + 1)
    assert server.pod_lists == ["app=web"]
    assert _status(server, "capacityLeadTime")["explanation"] == "default 3m until measured"


def test_a_capacity_buffers_pods_that_did_not_wait_say_the_head_start_was_enough() -> None:
    """With a CapacityBuffer nodesReadyAt is never measured, so the pods' wait is, where they
    may be listed; bound a second after their creation (kube-scheduler's own time, not a wait
    for nodes), they say the head start was enough, at most: learned without a margin, so
    the lead does not creep up window after window."""
    kube = Buffers()
    server, caches, memory = _window_server(kube, leadTime="1m", capacity={"leadTime": "Auto"})
    memory = _step(server, caches, memory, at(9, 57))
    memory = _step(server, caches, memory, at(9, 59))
    server.pods += [_pod(at(9, 59) + 1, at(9, 59) + 2) for _ in range(2)]
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 59) + 20)
    (entry,) = _recorded(server)
    assert (entry["outcome"], entry["podsWaitedSeconds"]) == ("Early", 1)
    assert "nodesReadyAt" not in entry
    capacity_lead = _status(server, "capacityLeadTime")
    assert (capacity_lead["seconds"], capacity_lead["source"]) == (180, "Learned")
    assert capacity_lead["explanation"] == "leadTime 1m + nodes learned: p90 of 1 window 120 s"


def test_a_window_whose_raise_comes_paused_keeps_its_capacity_times() -> None:
    kube = Buffers(version=None)
    server, caches, memory = _window_server(kube, leadTime="1m", capacity={"leadTime": "3m"})
    memory = _step(server, caches, memory, at(9, 57))
    assert _recorded(server)[0]["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert server.autoscaler is not None
    server.autoscaler["metadata"]["annotations"] = {PAUSED_UNTIL_ANNOTATION: INDEFINITE}
    memory = _step(server, caches, memory, at(9, 59))
    (entry,) = _recorded(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "Paused")
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert entry["capacityReleasedAt"] == "2026-11-16T09:59:00Z"
    assert "raisedAt" not in entry
    assert server.target_reads == 0


def test_an_entry_made_at_the_capacity_lead_goes_when_its_window_no_longer_starts() -> None:
    kube = Buffers(version=None)
    server, caches, memory = _window_server(kube, leadTime="1m", capacity={"leadTime": "3m"})
    memory = _step(server, caches, memory, at(9, 57))
    assert len(_recorded(server)) == 1
    # The Schedule is edited to start at noon: 10:00 is no window start any more.
    server.schedules[0]["spec"]["startTime"] = "12:00"
    server.schedules[0]["spec"]["endTime"] = "13:00"
    server.schedules[0]["metadata"]["generation"] = 2
    memory = _step(server, caches, memory, at(9, 58))
    assert _recorded(server) == []
    assert PLACEHOLDER not in kube.deployments
    assert server.target_reads == 0
