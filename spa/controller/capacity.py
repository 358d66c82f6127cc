"""The requests of node capacity ahead of a window: one CapacityBuffer (or one placeholder
Deployment) per SPA, or none.

Why a module of its own: the buffer is the controller's only write of an object that is not
its own kind or the HPA, it needs a discovery of its own (the CapacityBuffer API is a CRD that
Karpenter or cluster-autoscaler installs, served as `v1beta1` from Karpenter v1.15.0 and
`v1alpha1` before: the version is asked of the server, never assumed), and its rules of
ownership differ from the HPA's (an object of that name that the SPA does not control is never
touched). How much capacity, and when, is the pure decision's (spa/controller/decide/capacity.py);
this module only makes the cluster hold it (docs/schedules.md, "Node capacity"). Where no
CapacityBuffer is served, it holds the capacity with a Deployment of pause pods shaped like the
target's pods, under a PriorityClass low enough that every real pod preempts them (the
chart creates it), in the controller's own namespace (docs/install.md, "Placeholder pods"): its
write access to Deployments is a Role of that namespace, and the placeholders of an SPA are
found by their labels, since an ownerReference cannot cross namespaces. It writes as the HPA's
writer does (spa/controller/writes.py: under the leadership fence, the refusals the user must
fix as `Refused`, Events only while it may write), through the same client interface
(:class:`spa.kube.Client`).

The HPA's writer composes it (spa/controller/actuator.py: one `Act` for the reconciler), and it
never imports that writer. What an SPA holds is read from the caches of the CapacityBuffers and
placeholder Deployments the controller labels (:meth:`CapacityActuator.cached`,
controller-runtime's `Owns`): the decision compares what it wants with what they show
(spa/controller/decide/holding.py), so that a buffer deleted or edited by
hand, or left by a process that has stopped, is put right at the SPA's next reconcile, which
an event on the object itself triggers (spa/controller/watches.py).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from spa.api import wire
from spa.api.resources import CapacityMode
from spa.controller.decide import CapacityHeld, Reason
from spa.controller.desired import (
    FIELD_MANAGER,
    MANAGED_BY_LABEL,
    controller_owner_uid,
    owner_reference,
)
from spa.controller.optional import DISCOVERY_INTERVAL, Cache, OptionalKind
from spa.controller.permissions import ENABLE
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.controller.writes import FencedRecorder, Recorder, Refused, brief, refusable
from spa.kube import ApiError, Client, Conflict, Discovery, NotFound, Resource
from spa.runtime import Clock, Store, WriteFence, bounded_name, object_logger, unfenced

__all__ = [
    "CAPACITY_BUFFER_GROUP",
    "CAPACITY_BUFFER_KIND",
    "CAPACITY_BUFFER_PLURAL",
    "DEPLOYMENTS",
    "PLACEHOLDER_IMAGE",
    "PLACEHOLDER_LABEL",
    "PLACEHOLDER_NAMESPACE",
    "PLACEHOLDER_NAMESPACE_LABEL",
    "PLACEHOLDER_PRIORITY_CLASS",
    "PLACEHOLDER_SELECTOR",
    "CapacityActuator",
    "buffer_name",
    "capacity_buffer_kind",
    "discover_buffer_resource",
    "placeholder_keys",
    "placeholder_name",
]

log = logging.getLogger(__name__)

CAPACITY_BUFFER_GROUP = "autoscaling.x-k8s.io"
CAPACITY_BUFFER_PLURAL = "capacitybuffers"
CAPACITY_BUFFER_KIND = "CapacityBuffer"
# How to get the CRD, said where it is missing (docs/install.md, "Node autoscalers for
# capacity").
CAPACITY_BUFFER_INSTALL = (
    "install it with Karpenter or cluster-autoscaler (docs/install.md, "
    '"Node autoscalers for capacity")'
)

# Placeholder pods (docs/schedules.md, "Node capacity"): the pause image, the PriorityClass the
# chart creates (value -5: at or above cluster-autoscaler's expendable cutoff of -10, so that
# node autoscalers provision for them, and below every workload's default of 0, so that real
# pods preempt them; preemptionPolicy Never), and the label that tells whose they are.
PLACEHOLDER_IMAGE = "registry.k8s.io/pause:3.10"
PLACEHOLDER_PRIORITY_CLASS = "scheduled-pod-autoscaler-capacity"
PLACEHOLDER_LABEL = "autoscaling.d-kuro.github.io/capacity-for"
# The namespace of the SPA a placeholder Deployment is for (the Deployment is in the
# controller's namespace): with PLACEHOLDER_LABEL, its SPA's key.
PLACEHOLDER_NAMESPACE_LABEL = "autoscaling.d-kuro.github.io/capacity-for-namespace"
# Where placeholder Deployments live unless `spa run --capacity-namespace` says otherwise: the
# install's namespace (docs/install.md, "Placeholder pods").
PLACEHOLDER_NAMESPACE = "scheduled-pod-autoscaler"
# A placeholder's name is at most a DNS label: it names its pods' ReplicaSet and pods too.
_PLACEHOLDER_NAME_MAX = 63
# The placeholder Deployments the controller caches: its label and the placeholder label (every
# Deployment it creates has both; no other Deployment of the cluster is cached).
PLACEHOLDER_SELECTOR = f"{MANAGED_BY_LABEL}={FIELD_MANAGER},{PLACEHOLDER_LABEL}"
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
# The kinds whose pod template a placeholder copies (spec.template), by (apiVersion, kind).
_TEMPLATED = {
    ("apps/v1", "Deployment"): DEPLOYMENTS,
    ("apps/v1", "StatefulSet"): Resource("apps", "v1", "statefulsets", "StatefulSet", True),
    ("apps/v1", "ReplicaSet"): Resource("apps", "v1", "replicasets", "ReplicaSet", True),
}
# What of the target's pod spec decides where its pods may run, copied to the placeholders.
_PLACEMENT = ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints")


def buffer_name(autoscaler_name: str) -> str:
    """The name of an SPA's CapacityBuffer (one per SPA)."""
    return f"{autoscaler_name}-capacity"


def placeholder_name(namespace: str, autoscaler_name: str) -> str:
    """The name of an SPA's placeholder Deployment in the controller's namespace:
    `<namespace>-<name>-capacity`, the SPAs of every namespace side by side, cut to 63
    characters with a hash of the whole where longer."""
    return bounded_name(f"{namespace}-{autoscaler_name}", "-capacity", limit=_PLACEHOLDER_NAME_MAX)


def placeholder_keys(obj: Mapping[str, Any]) -> list[str]:
    """The key of the SPA a placeholder Deployment is for, from its labels (none if it has
    not both)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    namespace, name = labels.get(PLACEHOLDER_NAMESPACE_LABEL), labels.get(PLACEHOLDER_LABEL)
    return [f"{namespace}/{name}"] if namespace and name else []


Held = CapacityHeld
"""What the cluster holds for an SPA after :meth:`CapacityActuator.hold` (the outcome the
decision reads)."""


async def discover_buffer_resource(kube: Discovery) -> Resource[str] | None:
    """The CapacityBuffer resource in the version the server prefers; None where it serves
    none (the version is discovered: v1alpha1 before Karpenter v1.15.0, v1beta1 from it)."""
    version = await kube.preferred_version(CAPACITY_BUFFER_GROUP)
    if version is None:
        return None
    served = await kube.api_resources(f"{CAPACITY_BUFFER_GROUP}/{version}")
    if not any(item.get("name") == CAPACITY_BUFFER_PLURAL for item in served):
        return None
    return Resource(
        CAPACITY_BUFFER_GROUP, version, CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_KIND, True
    )


def capacity_buffer_kind(
    kube: Discovery,
    *,
    clock: Clock,
    watch: Callable[[Resource], Cache] | None = None,
    interval: float = DISCOVERY_INTERVAL,
    on_complete: Callable[[OptionalKind], None] = lambda kind: None,
    polled: Callable[[], bool] = lambda: True,
) -> OptionalKind:
    """The CapacityBuffer kind, optional as the calendars are (docs/runtime.md, "Optional
    kinds"): discovered in the version the server prefers, watched by `watch` once served."""
    return OptionalKind(
        kind=CAPACITY_BUFFER_KIND,
        crd=f"{CAPACITY_BUFFER_PLURAL}.{CAPACITY_BUFFER_GROUP}",
        install=CAPACITY_BUFFER_INSTALL,
        discover=lambda: discover_buffer_resource(kube),
        clock=clock,
        watch=watch,
        interval=interval,
        on_complete=on_complete,
        polled=polled,
    )


class CapacityActuator:
    """Creates, resizes and deletes the CapacityBuffer, or the placeholder Deployment, of an
    SPA.

    :param placeholders: the cache of the placeholder Deployments (PLACEHOLDER_SELECTOR).
        Without it, :meth:`cached` knows nothing and the decision falls back on what this
        process held last.
    :param placeholder_namespace: where the placeholder Deployments are (the controller's
        namespace); `placeholders` caches that namespace.
    :param placeholders_denied: why placeholder pods may not be held (the permissions the
        controller lacks, asked at the start: spa/controller/permissions.py); None: they may,
        or it is not known (a refusal then says what is missing).
    :param buffers: the CapacityBuffer kind (:func:`capacity_buffer_kind`): whether the server
        serves it, and the cache of the buffers the controller labels (MANAGED_BY_SELECTOR)
        once it does, started when it is first found served, at the start or later (a CRD
        installed while the controller runs). None: a kind of its own, asked of `kube`,
        without a cache.
    """

    def __init__(
        self,
        *,
        kube: Client,
        recorder: Recorder,
        clock: Clock,
        fence: WriteFence = unfenced,
        placeholders: Store | None = None,
        placeholder_namespace: str = PLACEHOLDER_NAMESPACE,
        placeholders_denied: str | None = None,
        buffers: OptionalKind | None = None,
    ) -> None:
        self._kube = kube
        self._recorder = FencedRecorder(recorder, fence)
        self._clock = clock
        self._fence = fence
        self._placeholders = placeholders
        self._placeholder_namespace = placeholder_namespace
        self._placeholders_denied = placeholders_denied
        self._buffers = buffers or capacity_buffer_kind(kube, clock=clock)

    def cached(self, autoscaler: wire.ScheduledPodAutoscaler) -> dict[CapacityMode, int] | None:
        """What the caches show `autoscaler` holds: the pods' worth of its CapacityBuffer and
        of its placeholder Deployment, by mode, each only if it exists and the SPA controls
        it. None when the caches cannot tell: not wired, or a CapacityBuffer API served whose
        cache is not complete (not watched, or its informer has not listed yet)."""
        buffers = self._buffers.store
        if self._placeholders is None or (self._buffers.resource is not None and buffers is None):
            return None
        held: dict[CapacityMode, int] = {}
        for mode, store in (
            (CapacityMode.CapacityBuffer, buffers),
            (CapacityMode.Placeholder, self._placeholders),
        ):
            namespace, name = self._where(autoscaler, mode)
            obj = None if store is None else store.get(f"{namespace}/{name}")
            if obj is not None and self._controlled_by(obj, autoscaler, mode):
                held[mode] = int((obj.get("spec") or {}).get("replicas") or 0)
        return held

    def placeholders_ready(self, autoscaler: wire.ScheduledPodAutoscaler) -> int | None:
        """The Ready pods of the SPA's placeholder Deployment as its cache shows them (None:
        no cache, or no placeholder Deployment of the SPA's)."""
        if self._placeholders is None:
            return None
        namespace, name = self._where(autoscaler, CapacityMode.Placeholder)
        obj = self._placeholders.get(f"{namespace}/{name}")
        if obj is None or not self._controlled_by(obj, autoscaler, CapacityMode.Placeholder):
            return None
        ready = (obj.get("status") or {}).get("readyReplicas")
        return ready if isinstance(ready, int) else 0

    def _where(
        self, autoscaler: wire.ScheduledPodAutoscaler, mode: CapacityMode
    ) -> tuple[str, str]:
        """The namespace and name of the SPA's object of `mode`: its CapacityBuffer beside it,
        its placeholder Deployment in the controller's namespace."""
        metadata = autoscaler["metadata"]
        if mode is CapacityMode.Placeholder:
            return self._placeholder_namespace, placeholder_name(
                metadata["namespace"], metadata["name"]
            )
        return metadata["namespace"], buffer_name(metadata["name"])

    def _controlled_by(
        self, obj: Mapping[str, Any], autoscaler: wire.ScheduledPodAutoscaler, mode: CapacityMode
    ) -> bool:
        """Whether `obj` is the SPA's: a CapacityBuffer by its controller ownerReference, a
        placeholder Deployment (in the controller's namespace, where no ownerReference to the
        SPA can be) by the controller's labels naming the SPA."""
        if mode is not CapacityMode.Placeholder:
            return _controlled_by(obj, autoscaler)
        labels = (obj.get("metadata") or {}).get("labels") or {}
        metadata = autoscaler["metadata"]
        return labels.get(MANAGED_BY_LABEL) == FIELD_MANAGER and placeholder_keys(obj) == [
            f"{metadata['namespace']}/{metadata['name']}"
        ]

    def _orphan(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The cached placeholder Deployment labelled for the SPA `namespace/name` (None: none
        is cached, or the caches are not wired)."""
        if self._placeholders is None:
            return None
        placeholder = placeholder_name(namespace, name)
        obj = self._placeholders.get(f"{self._placeholder_namespace}/{placeholder}")
        labels = (obj or {}).get("metadata", {}).get("labels") or {}
        if (
            obj is None
            or labels.get(MANAGED_BY_LABEL) != FIELD_MANAGER
            or placeholder_keys(obj) != [f"{namespace}/{name}"]
        ):
            return None
        return obj

    def orphaned(self, namespace: str, name: str) -> bool:
        """Whether the caches show a placeholder Deployment of the SPA `namespace/name`
        (asked when the SPA is not cached: without a request)."""
        return self._orphan(namespace, name) is not None

    async def release(self, namespace: str, name: str) -> None:
        """Delete the placeholder Deployment of the SPA `namespace/name`, which no longer
        exists (its reconcile finds no SPA), if the cache shows one: what the garbage
        collector does for a CapacityBuffer through its ownerReference, which a placeholder in
        the controller's namespace cannot carry. No request when there is none."""
        obj = self._orphan(namespace, name)
        if obj is None:
            return
        placeholder = placeholder_name(namespace, name)
        # The cache says the SPA is gone; the API server decides. A cache behind (after a
        # 410), or a shard reconciling the key of an SPA another shard owns (docs/runtime.md,
        # "Shards"), must not delete capacity that is still wanted.
        # (A list by name, as the HPA's writer asks: the RBAC grants list, not get, on SPAs.)
        live = await self._kube.list(
            SCHEDULED_POD_AUTOSCALERS, namespace=namespace, field_selector=f"metadata.name={name}"
        )
        if live.items:
            return
        try:
            deleted = await self._fenced_delete(
                DEPLOYMENTS, self._placeholder_namespace, placeholder, obj
            )
        except Refused as refused:
            object_logger(log, namespace, name).warning(
                "could not delete Deployment %s/%s of a deleted SPA: %s",
                self._placeholder_namespace,
                placeholder,
                refused.message,
            )
            return
        if deleted:
            object_logger(log, namespace, name).info(
                "deleted Deployment %s/%s: its SPA is gone",
                self._placeholder_namespace,
                placeholder,
            )

    async def buffer_resource(self) -> Resource | None:
        """The CapacityBuffer resource in the version the server prefers; None where it serves
        none (asked again after a while, as every optional kind: the CRD may come later, and
        is then watched from that moment)."""
        return await self._buffers.served()

    @property
    def buffers_found(self) -> bool:
        """Whether discovery has found a CapacityBuffer API served (without asking again)."""
        return self._buffers.resource is not None

    async def hold(
        self,
        autoscaler: wire.ScheduledPodAutoscaler,
        target: tuple[str, str, str],
        *,
        pods: int,
        mode: CapacityMode,
    ) -> Held:
        """Make the cluster hold capacity for `pods` pods of `target` (apiVersion, kind, name)
        for `autoscaler`: create, resize or (at 0) delete its CapacityBuffer, or its
        placeholder Deployment where `mode` (Auto: by discovery) says so, each only when it
        would change."""
        namespace = autoscaler["metadata"]["namespace"]
        resource = None if mode is CapacityMode.Placeholder else await self.buffer_resource()
        if resource is None and mode is CapacityMode.CapacityBuffer:
            if pods == 0:
                return Held(0, None)
            return Held(
                0,
                None,
                f"cannot hold node capacity for {pods} pods: {self._buffers.missing}; mode Auto "
                "would use placeholder pods",
            )
        if resource is not None:
            return await self._converge(
                autoscaler, resource, CapacityMode.CapacityBuffer, pods, target
            )
        # Placeholder pods: by choice, or where no CapacityBuffer is served (mode Auto).
        template: dict[str, Any] | None = None
        if pods > 0:
            found = (
                f"cannot hold node capacity with placeholder pods: {self._placeholders_denied}"
                if self._placeholders_denied is not None
                else await self._target_template(namespace, target)
            )
            if isinstance(found, str):
                self._recorder.warning(autoscaler, Reason.CAPACITY_UNSUPPORTED, found)
                pods, unsupported = 0, found
            else:
                template, unsupported = found, None
            held = await self._converge(
                autoscaler, DEPLOYMENTS, CapacityMode.Placeholder, pods, target, template
            )
            if unsupported is not None:
                return Held(0, None, unsupported)
            return held
        return await self._converge(autoscaler, DEPLOYMENTS, CapacityMode.Placeholder, 0, target)

    async def _converge(
        self,
        autoscaler: wire.ScheduledPodAutoscaler,
        resource: Resource,
        mode: CapacityMode,
        pods: int,
        target: tuple[str, str, str],
        template: Mapping[str, Any] | None = None,
    ) -> Held:
        """Make the SPA's object of `resource` hold `pods` (none at 0): create, resize or
        delete it, each only when it would change, and never an object the SPA does not
        control."""
        metadata = autoscaler["metadata"]
        logger = object_logger(log, metadata["namespace"], metadata["name"])
        namespace, buffer = self._where(autoscaler, mode)
        what = (
            f"{resource.kind} {namespace}/{buffer}"
            if mode is CapacityMode.Placeholder
            else f"{resource.kind} {buffer}"
        )
        try:
            current: dict[str, Any] | None = await self._kube.get(resource, namespace, buffer)
        except ApiError as error:
            if isinstance(error, NotFound):
                current = None
            elif error.status == 403:
                # Not granted (docs/install.md, "Placeholder pods"): said on the SPA, no retry.
                return Held(0, None, f"cannot read {what}: {brief(error.message)}")
            else:
                raise
        if current is not None and not self._controlled_by(current, autoscaler, mode):
            message = (
                f"{what} exists and is not controlled by this ScheduledPodAutoscaler: left "
                "alone, no capacity ordered"
            )
            self._recorder.warning(autoscaler, Reason.CAPACITY_NAME_TAKEN, message)
            return Held(0, None, message)
        held = int(((current or {}).get("spec") or {}).get("replicas") or 0)
        try:
            if pods == 0:
                if current is not None:
                    if await self._fenced_delete(resource, namespace, buffer, current):
                        logger.info("deleted %s", what)
                        self._recorder.normal(
                            autoscaler,
                            Reason.CAPACITY_REMOVED,
                            f"deleted {what} (held {held} pods)",
                        )
                    else:
                        logger.info("%s was gone before our delete (deleted or replaced)", what)
                return Held(0, mode)
            if current is None:
                if template is None:
                    body = _buffer(resource, autoscaler, buffer, target, pods)
                else:
                    body = _placeholder(autoscaler, namespace, buffer, template, pods)
                await refusable(
                    self._fence,
                    self._kube.create,
                    resource,
                    namespace,
                    body,
                    field_manager=FIELD_MANAGER,
                )
                logger.info("created %s for %d pods", what, pods)
                self._recorder.normal(
                    autoscaler,
                    Reason.CAPACITY_CREATED,
                    f"created {what} for {pods} pods of {target[1]} {target[2]}",
                )
            elif held != pods:
                patch: dict[str, Any] = {"spec": {"replicas": pods}}
                if template is not None:
                    # The target's pods may have changed shape since: follow them.
                    patch = {
                        "spec": _placeholder(autoscaler, namespace, buffer, template, pods)["spec"]
                    }
                await refusable(
                    self._fence,
                    self._kube.patch,
                    resource,
                    namespace,
                    buffer,
                    patch,
                    patch_type="merge",
                    field_manager=FIELD_MANAGER,
                )
                logger.info("resized %s from %d to %d pods", what, held, pods)
                self._recorder.normal(
                    autoscaler,
                    Reason.CAPACITY_RESIZED,
                    f"resized {what} from {held} to {pods} pods",
                )
        except Refused as refused:
            return Held(0, None, f"the API server refused {what}: {refused.message}")
        return Held(pods, mode)

    async def _target_template(
        self, namespace: str, target: tuple[str, str, str]
    ) -> dict[str, Any] | str:
        """The pod template of the scale target, or why there is none to copy."""
        api_version, kind, name = target
        resource = _TEMPLATED.get((api_version, kind))
        if resource is None:
            return (
                f"cannot make placeholder pods for {kind} {name}: only a Deployment, StatefulSet "
                "or ReplicaSet (apps/v1) has a pod template to copy"
            )
        try:
            obj = await self._kube.get(resource, namespace, name)
        except NotFound:
            return f"cannot make placeholder pods: {kind} {namespace}/{name} not found"
        except ApiError as error:
            if error.status != 403:
                raise
            return (
                f"cannot read {kind} {name} for its pod template: {brief(error.message)} ({ENABLE})"
            )
        template = (obj.get("spec") or {}).get("template")
        if not isinstance(template, dict):
            return f"{kind} {name} has no pod template"
        return template

    async def _fenced_delete(
        self, resource: Resource, namespace: str, name: str, current: Mapping[str, Any]
    ) -> bool:
        """Delete `current`, the object just read and found controlled by the SPA, and only
        it: whether it was this call that deleted it.

        The precondition is its uid, not its resourceVersion (docs/schedules.md, "Node
        capacity"). The uid is what keeps the guarantee that matters, never to delete an
        object put under the name since the read (a user's, after the SPA's was deleted);
        the resourceVersion changes with every write, the Deployment controller's status
        updates included (at each change of the placeholder pods), and a 409 for one of them
        sent the reconcile into the work queue's error backoff with the placeholders still
        there. A 409 now means the object read is gone and another took its name: as for a
        404, there is nothing of ours to delete, and what took the name is the next
        reconcile's (an event on it, if it is the SPA's, brings that reconcile)."""
        uid = (current.get("metadata") or {}).get("uid")
        try:
            await refusable(self._fence, self._kube.delete, resource, namespace, name, uid=uid)
        except (NotFound, Conflict):
            return False
        return True


def _controlled_by(obj: Mapping[str, Any], autoscaler: wire.ScheduledPodAutoscaler) -> bool:
    # Any object's ownerReferences read as an HPA's: only metadata is looked at.
    owner = controller_owner_uid(wire.typed(wire.HorizontalPodAutoscaler, obj))
    return owner is not None and owner == autoscaler["metadata"].get("uid")


def _buffer(
    resource: Resource,
    autoscaler: wire.ScheduledPodAutoscaler,
    name: str,
    target: tuple[str, str, str],
    pods: int,
) -> dict[str, Any]:
    """A CapacityBuffer of `pods` chunks shaped like the pods of the scale `target`."""
    api_version, kind, target_name = target
    group = api_version.rpartition("/")[0]
    return {
        "apiVersion": resource.api_version,
        "kind": CAPACITY_BUFFER_KIND,
        "metadata": {
            "name": name,
            "namespace": autoscaler["metadata"]["namespace"],
            "labels": {MANAGED_BY_LABEL: FIELD_MANAGER},
            "ownerReferences": [owner_reference(autoscaler)],
        },
        "spec": {
            "scalableRef": {"apiGroup": group, "kind": kind, "name": target_name},
            "replicas": pods,
        },
    }


def _placeholder(
    autoscaler: wire.ScheduledPodAutoscaler,
    namespace: str,
    name: str,
    template: Mapping[str, Any],
    pods: int,
) -> dict[str, Any]:
    """A Deployment of `pods` pause pods in `namespace` (the controller's), each requesting
    what one pod of `template` requests (its containers' requests summed) and placed as it is
    (node selector, tolerations, affinity, topology spread: :func:`_placement`), under the
    placeholder PriorityClass: real pods preempt them. Labelled with the SPA's namespace and
    name, which say whose it is (docs/schedules.md, "Node capacity")."""
    spec = template.get("spec") or {}
    requests: dict[str, Any] = {}
    for container in spec.get("containers") or ():
        for resource, quantity in (
            (container.get("resources") or {}).get("requests") or {}
        ).items():
            requests[resource] = _sum_quantity(requests.get(resource), quantity)
    metadata = autoscaler["metadata"]
    labels = {
        MANAGED_BY_LABEL: FIELD_MANAGER,
        PLACEHOLDER_NAMESPACE_LABEL: metadata["namespace"],
        PLACEHOLDER_LABEL: metadata["name"],
    }
    pod_spec: dict[str, Any] = {
        "containers": [
            {
                "name": "pause",
                "image": PLACEHOLDER_IMAGE,
                "resources": {"requests": requests},
                # The Pod Security `restricted` level, which the controller's namespace enforces.
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
        "securityContext": {
            "runAsNonRoot": True,
            # The pause image's own user (65535), said so that no image metadata is needed.
            "runAsUser": 65535,
            "runAsGroup": 65535,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "priorityClassName": PLACEHOLDER_PRIORITY_CLASS,
        # Gone at once when preempted or deleted: the room is for the real pods.
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
    }
    pod_spec.update(_placement(spec, metadata["namespace"]))
    return {
        "apiVersion": DEPLOYMENTS.api_version,
        "kind": DEPLOYMENTS.kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": pods,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def _placement(spec: Mapping[str, Any], target_namespace: str) -> dict[str, Any]:
    """Where the target's pods may run, for pods in another namespace: its node selector,
    tolerations, affinity and topology spread, with each pod (anti-)affinity term that means
    "pods of my namespace" (neither `namespaces` nor `namespaceSelector`) given the target's
    namespace, so that it selects the pods it selects for the target's pods. Topology spread
    has no namespace: it counts the placeholder's namespace (docs/schedules.md)."""
    placement = {field: spec[field] for field in _PLACEMENT if spec.get(field)}
    affinity = placement.get("affinity")
    if not isinstance(affinity, Mapping):
        return placement
    copied = dict(affinity)
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind)
        if not isinstance(rules, Mapping):
            continue
        required = [
            _in_namespace(term, target_namespace)
            for term in rules.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        preferred = [
            {
                **weighted,
                "podAffinityTerm": _in_namespace(
                    weighted.get("podAffinityTerm") or {}, target_namespace
                ),
            }
            for weighted in rules.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        rewritten = dict(rules)
        if required:
            rewritten["requiredDuringSchedulingIgnoredDuringExecution"] = required
        if preferred:
            rewritten["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
        copied[kind] = rewritten
    placement["affinity"] = copied
    return placement


def _in_namespace(term: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """A pod affinity term that selects pods of `namespace` where it meant its own pod's."""
    if term.get("namespaces") or term.get("namespaceSelector") is not None:
        return dict(term)
    return {**term, "namespaces": [namespace]}


def _sum_quantity(first: Any, second: Any) -> str:
    """Two Kubernetes quantities added (the first may be None), as a quantity: whole units
    when the sum is whole, else thousandths (`m`) rounded up, which every resource reads."""
    if first is None:
        return str(second)
    total = _quantity(str(first)) + _quantity(str(second))
    if total == total.to_integral_value():
        return str(int(total))
    return f"{math.ceil(total * 1000)}m"


_SUFFIXES = {
    **{s: Decimal(1024) ** n for n, s in enumerate(("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
    **{s: Decimal(1000) ** n for n, s in enumerate(("", "k", "M", "G", "T", "P", "E"))},
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


def _quantity(text: str) -> Decimal:
    """A Kubernetes quantity (`500m`, `1Gi`, `1.5`, `2e3`) as a number; ValueError if it is not
    one (the API server stores only valid quantities)."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    number, exponent, suffix = match.groups()
    value = Decimal(number + (exponent or ""))
    return value * _SUFFIXES[suffix or ""]
