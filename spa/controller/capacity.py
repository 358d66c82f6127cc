"""The requests of node capacity ahead of a window: one CapacityBuffer per SPA, or none.

Why a module of its own: the buffer is the controller's only write of an object that is not
its own kind or the HPA, it needs a discovery of its own (the CapacityBuffer API is a CRD that
Karpenter or cluster-autoscaler installs, served as `v1beta1` from Karpenter v1.15.0 and
`v1alpha1` before: the version is asked of the server, never assumed), and its rules of
ownership differ from the HPA's (an object of that name that the SPA does not control is never
touched). How much capacity, and when, is the pure decision's (spa/controller/decide/capacity.py);
this module only makes the cluster hold it (docs/schedules.md, "Node capacity"). Every write
goes through the same leadership fence as the actuator's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from spa.api import wire
from spa.api.resources import CapacityMode
from spa.controller.actuator import Recorder, Refused, brief
from spa.controller.decide import Reason
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL, owner_reference
from spa.kube import ApiError, NotFound, PatchType, Resource
from spa.runtime import Clock, WriteFence, may_write, object_logger, unfenced, write_fenced

__all__ = [
    "CAPACITY_BUFFER_GROUP",
    "CAPACITY_BUFFER_PLURAL",
    "CapacityActuator",
    "CapacityKube",
    "Held",
    "buffer_name",
]

log = logging.getLogger(__name__)

CAPACITY_BUFFER_GROUP = "autoscaling.x-k8s.io"
CAPACITY_BUFFER_PLURAL = "capacitybuffers"
CAPACITY_BUFFER_KIND = "CapacityBuffer"
# How long an answer "the server serves no CapacityBuffer" is kept: the CRD may be installed
# after the controller started.
_NOT_SERVED_RECHECK_SECONDS = 300.0


def buffer_name(autoscaler_name: str) -> str:
    """The name of an SPA's CapacityBuffer (one per SPA)."""
    return f"{autoscaler_name}-capacity"


class CapacityKube(Protocol):
    """The requests the capacity actuator sends (:class:`spa.kube.KubeClient` has them)."""

    async def preferred_version(self, group: str) -> str | None: ...

    async def api_resources(self, group_version: str) -> Any: ...

    async def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any]: ...

    async def create(
        self,
        resource: Resource,
        namespace: str | None,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
    ) -> dict[str, Any]: ...

    async def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any],
        *,
        patch_type: PatchType,
        field_manager: str,
    ) -> dict[str, Any]: ...

    async def delete(
        self, resource: Resource, namespace: str | None, name: str, *, resource_version: str | None
    ) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Held:
    """What the cluster holds for an SPA after :meth:`CapacityActuator.hold`: `pods` (0: no
    object), in `mode`; `unsupported` says why nothing could be held."""

    pods: int
    mode: CapacityMode | None
    unsupported: str | None = None


class CapacityActuator:
    """Creates, resizes and deletes the CapacityBuffer of an SPA."""

    def __init__(
        self,
        *,
        kube: CapacityKube,
        recorder: Recorder,
        clock: Clock,
        fence: WriteFence = unfenced,
    ) -> None:
        self._kube = kube
        self._recorder = recorder
        self._clock = clock
        self._fence = fence
        self._resource: Resource | None = None
        self._not_served_since: float | None = None

    async def buffer_resource(self) -> Resource | None:
        """The CapacityBuffer resource in the version the server prefers; None where it serves
        none (asked again after a while: the CRD may come later)."""
        if self._resource is not None:
            return self._resource
        now = self._clock.monotonic()
        if (
            self._not_served_since is not None
            and now - self._not_served_since < _NOT_SERVED_RECHECK_SECONDS
        ):
            return None
        version = await self._kube.preferred_version(CAPACITY_BUFFER_GROUP)
        served = []
        if version is not None:
            served = await self._kube.api_resources(f"{CAPACITY_BUFFER_GROUP}/{version}")
        if version is None or not any(
            item.get("name") == CAPACITY_BUFFER_PLURAL for item in served
        ):
            self._not_served_since = now
            return None
        self._resource = Resource(
            CAPACITY_BUFFER_GROUP, version, CAPACITY_BUFFER_PLURAL, CAPACITY_BUFFER_KIND, True
        )
        return self._resource

    async def hold(
        self,
        autoscaler: wire.ScheduledPodAutoscaler,
        target: tuple[str, str, str],
        *,
        pods: int,
        mode: CapacityMode,
    ) -> Held:
        """Make the cluster hold capacity for `pods` pods of `target` (apiVersion, kind, name)
        for `autoscaler`: create, resize or (at 0) delete its CapacityBuffer, each only when
        it would change."""
        metadata = autoscaler["metadata"]
        namespace, name = metadata["namespace"], metadata["name"]
        logger = object_logger(log, namespace, name)
        resource = None if mode is CapacityMode.Placeholder else await self.buffer_resource()
        if resource is None:
            if pods == 0:
                return Held(0, None)
            why = (
                "placeholder pods are not built yet"
                if mode is CapacityMode.Placeholder
                else "the API server serves no CapacityBuffer (autoscaling.x-k8s.io), and "
                "placeholder pods are not built yet"
            )
            return Held(0, None, f"cannot hold node capacity for {pods} pods: {why}")
        buffer = buffer_name(name)
        try:
            current: dict[str, Any] | None = await self._kube.get(resource, namespace, buffer)
        except NotFound:
            current = None
        if current is not None and not _controlled_by(current, autoscaler):
            message = (
                f"CapacityBuffer {buffer} exists and is not controlled by this "
                "ScheduledPodAutoscaler: left alone, no capacity ordered"
            )
            self._event(autoscaler, "warning", Reason.CAPACITY_NAME_TAKEN, message)
            return Held(0, None, message)
        held = int(((current or {}).get("spec") or {}).get("replicas") or 0)
        try:
            if pods == 0:
                if current is not None:
                    await self._fenced_delete(resource, namespace, buffer, current)
                    logger.info("deleted CapacityBuffer %s", buffer)
                    self._event(
                        autoscaler,
                        "normal",
                        Reason.CAPACITY_REMOVED,
                        f"deleted CapacityBuffer {buffer} (held {held} pods)",
                    )
                return Held(0, CapacityMode.CapacityBuffer)
            if current is None:
                body = _buffer(resource, autoscaler, buffer, target, pods)
                await self._fenced_write(
                    self._kube.create, resource, namespace, body, field_manager=FIELD_MANAGER
                )
                logger.info("created CapacityBuffer %s for %d pods", buffer, pods)
                self._event(
                    autoscaler,
                    "normal",
                    Reason.CAPACITY_CREATED,
                    f"created CapacityBuffer {buffer} for {pods} pods of {target[1]} {target[2]}",
                )
            elif held != pods:
                await self._fenced_write(
                    self._kube.patch,
                    resource,
                    namespace,
                    buffer,
                    {"spec": {"replicas": pods}},
                    patch_type="merge",
                    field_manager=FIELD_MANAGER,
                )
                logger.info("resized CapacityBuffer %s from %d to %d pods", buffer, held, pods)
                self._event(
                    autoscaler,
                    "normal",
                    Reason.CAPACITY_RESIZED,
                    f"resized CapacityBuffer {buffer} from {held} to {pods} pods",
                )
        except Refused as refused:
            return Held(
                0, None, f"the API server refused CapacityBuffer {buffer}: {refused.message}"
            )
        return Held(pods, CapacityMode.CapacityBuffer)

    async def _fenced_delete(
        self, resource: Resource, namespace: str, name: str, current: Mapping[str, Any]
    ) -> None:
        version = (current.get("metadata") or {}).get("resourceVersion")
        try:
            await self._fenced_write(
                self._kube.delete, resource, namespace, name, resource_version=version
            )
        except NotFound:
            return

    async def _fenced_write(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await write_fenced(self._fence, call, *args, **kwargs)
        except ApiError as error:
            if error.status in (400, 403, 422):
                raise Refused(error.status, brief(error.message)) from error
            raise

    def _event(
        self, autoscaler: wire.ScheduledPodAutoscaler, kind: str, reason: Reason, message: str
    ) -> None:
        if not may_write(self._fence):
            return
        if kind == "warning":
            self._recorder.warning(autoscaler, reason, message)
        else:
            self._recorder.normal(autoscaler, reason, message)


def _controlled_by(obj: Mapping[str, Any], autoscaler: wire.ScheduledPodAutoscaler) -> bool:
    uid = autoscaler["metadata"].get("uid")
    return any(
        isinstance(reference, Mapping)
        and reference.get("controller")
        and reference.get("uid") == uid
        for reference in (obj.get("metadata") or {}).get("ownerReferences") or ()
    )


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
