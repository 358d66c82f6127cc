"""Every request of the SPA reconciler, behind the leadership fence: :class:`Act`, and the
:class:`Actuator` that performs it.

The reconciler decides what should be; this module does it, as controller-runtime's client
does for a `Reconcile`: which verb, patch type and subresource each request about an SPA, a
Schedule, the HPA or the scale target uses, the field manager, the compare-and-swap retries of
ownerReferences, immediate scale-up's tested patch or its read and compare-and-swap
(:meth:`Actuator.raise_target`), and recording our own writes in the caches
(`Store.put_written`, so the next reconcile never acts on state older than its own write). How
it writes is the writers' one way (spa/controller/writes.py): under this replica's write
fence, the refusals the user must fix raised as :class:`~spa.controller.writes.Refused`,
Events only while it may write.

Node capacity's requests go through the same :class:`Act`: the actuator composes the capacity
writer (spa/controller/capacity.py) rather than merging with it. That writer has a discovery,
object bodies and quantity arithmetic of its own, tested on their own; what the two share is
the scale target (the replicas node capacity reads are immediate scale-up's /scale, found by
the same discovery of scalable kinds), which is here. So the reconciler sees one writer, and
each module keeps one job; the capacity writer never imports this one.

It reaches the API server through :class:`spa.kube.Client` and records Events through a
:class:`~spa.controller.writes.Recorder` (:class:`spa.kube.KubeClient` and
:class:`spa.runtime.EventRecorder` are the real ones), so a unit test hands in a small fake.
Failures follow the controller's one convention (spa/controller/decide/__init__.py): every
failure is an exception, never a None or a string returned.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Protocol

from spa.api import wire
from spa.controller.capacity import CapacityActuator
from spa.controller.decide import (
    SCALE_ATTEMPTS,
    CapacityHeld,
    CapacityRead,
    CapacityReleased,
    CapacityView,
    HoldCapacity,
    PodsRead,
    PodTimes,
    Raised,
    ReadCapacity,
    ReadinessRead,
    ReadPods,
    ReadReadiness,
    ReleaseCapacity,
    ReleaseOrphaned,
    ScaleProblem,
    ScaleRefused,
    ScaleResult,
    ScaleUp,
    Unscalable,
    one_request_raise,
    replicas_to_set,
)
from spa.controller.desired import FIELD_MANAGER, owner_reference
from spa.controller.permissions import TEMPLATE_KINDS, Permission, PlaceholderAccess, PodAccess
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.controller.writes import REFUSALS, FencedRecorder, Recorder, Refused, brief, refusable
from spa.kube import POD, ApiError, Client, Conflict, NamespaceDeleted, NotFound, Resource
from spa.runtime import (
    NotLeader,
    Store,
    WriteFence,
    WriteSummary,
    object_logger,
    unfenced,
    write_fenced,
)

__all__ = ["Act", "Actuator", "NotScalable", "OwnerNotChanged", "ReplicasChanged"]

log = logging.getLogger(__name__)

_CONFLICT_RETRIES = 3

# What the log's summary of writes counts them as (spa.runtime.WriteSummary).
_HPAS = "HPAs"
_TARGETS = "scale targets"
_OWNERS = "Schedule ownerReferences"


class OwnerNotChanged(Exception):
    """A Schedule's controller ownerReference could not be changed (the server refused, the
    Schedule was deleted, or it kept changing); `message` says why, in our words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotScalable(Exception):
    """The scale target cannot be scaled through its /scale subresource: `problem` says which
    way (the decision picks the Event's reason for it), `message` says why in our words."""

    def __init__(self, problem: ScaleProblem, message: str) -> None:
        super().__init__(message)
        self.problem = problem
        self.message = message


class ReplicasChanged(Exception):
    """A JSON patch of a Scale found other replicas than it tested (the API server answers 422
    for a failed `test` operation): somebody scaled the target since the HPA controller last
    said; read the Scale and decide on it."""


class Act(Protocol):
    """What the reconciler has done through the API server (:class:`Actuator` does it; the
    manager builds it with the caches, the client, the recorder, the write fence and the
    capacity writer). Each method raises on failure (the convention of
    spa/controller/decide/__init__.py), except the capacity steps', whose outcomes are data."""

    hpa_resource: Resource

    async def get_hpa(self, namespace: str, name: str) -> wire.HorizontalPodAutoscaler: ...

    async def create_hpa(
        self, desired: wire.NewHorizontalPodAutoscaler
    ) -> wire.HorizontalPodAutoscaler: ...

    async def patch_hpa(
        self, current: wire.HorizontalPodAutoscaler, patch: dict[str, Any], *, dry_run: bool = False
    ) -> wire.HorizontalPodAutoscaler: ...

    async def autoscaler_exists(self, autoscaler: wire.ScheduledPodAutoscaler) -> bool: ...

    async def raise_target(self, namespace: str, scale_up: ScaleUp) -> ScaleResult | None: ...

    async def set_schedule_owner(
        self, schedule: wire.Schedule, autoscaler: wire.ScheduledPodAutoscaler | None
    ) -> wire.Schedule: ...

    def capacity_view(self, autoscaler: wire.ScheduledPodAutoscaler) -> CapacityView | None: ...

    async def read_capacity(self, step: ReadCapacity) -> CapacityRead: ...

    async def read_readiness(self, step: ReadReadiness) -> ReadinessRead: ...

    async def read_pods(self, step: ReadPods) -> PodsRead: ...

    async def hold_capacity(self, step: HoldCapacity) -> CapacityHeld: ...

    async def release_capacity(self, step: ReleaseCapacity) -> CapacityReleased: ...

    def orphaned_capacity(self, namespace: str, name: str) -> bool: ...

    async def release_orphaned(self, step: ReleaseOrphaned) -> CapacityReleased: ...

    async def patch_autoscaler_status(
        self, obj: wire.ScheduledPodAutoscaler, status: wire.ScheduledPodAutoscalerStatusPatch
    ) -> None: ...

    async def patch_schedule_status(
        self, obj: wire.Schedule, status: wire.ScheduleStatusPatch
    ) -> None: ...

    def warning(
        self, obj: wire.ScheduledPodAutoscaler | wire.Schedule, reason: str, message: str
    ) -> None: ...

    def normal(
        self, obj: wire.ScheduledPodAutoscaler | wire.Schedule, reason: str, message: str
    ) -> None: ...


class Actuator:
    """Reads the API server where a cache cannot answer, and writes, for the SPA reconciler.

    :param capacity: node capacity's writer (None: node capacity is not wired, as in tests of
        other things: the decision then orders none).
    """

    def __init__(
        self,
        *,
        kube: Client,
        autoscalers: Store,
        schedules: Store,
        hpas: Store,
        hpa_resource: Resource,
        recorder: Recorder,
        fence: WriteFence = unfenced,
        summary: WriteSummary | None = None,
        capacity: CapacityActuator | None = None,
        access: PlaceholderAccess | None = None,
        pod_access: PodAccess | None = None,
    ) -> None:
        self._kube = kube
        self._capacity = capacity
        # What the start's access reviews answered (None: not asked, or no answer): a target
        # read or a list of pods they refused is not made (docs/install.md, "Window
        # readiness").
        self._access = access
        self._pod_access = pod_access
        # Where each write is counted for the log's one line per burst of writes (the
        # per-write lines are DEBUG: docs/operations.md, "Logs").
        self._summary = summary
        self._autoscalers = autoscalers
        self._schedules = schedules
        self._hpas = hpas
        self.hpa_resource = hpa_resource
        self._recorder = FencedRecorder(recorder, fence)
        self._fence = fence
        # Scale targets' REST resources by (apiVersion, kind), from discovery. Only what was
        # found is kept: a kind missing now may be served later (a CRD installed after).
        self._scalable: dict[tuple[str, str], Resource] = {}

    # -- the HPA --------------------------------------------------------------------------------

    async def get_hpa(self, namespace: str, name: str) -> wire.HorizontalPodAutoscaler:
        """An HPA our label-filtered cache does not hold (somebody else's)."""
        return wire.typed(
            wire.HorizontalPodAutoscaler, await self._kube.get(self.hpa_resource, namespace, name)
        )

    async def create_hpa(
        self, desired: wire.NewHorizontalPodAutoscaler
    ) -> wire.HorizontalPodAutoscaler:
        """Create the HPA; :class:`~spa.kube.Conflict` if the name is taken,
        :class:`~spa.kube.NamespaceDeleted` if its namespace is being deleted or gone."""
        metadata = desired["metadata"]
        with self._counted(_HPAS, Conflict):
            created = await refusable(
                self._fence,
                self._kube.create,
                self.hpa_resource,
                metadata["namespace"],
                desired,
                field_manager=FIELD_MANAGER,
            )
        self._hpas.put_written(created, based_on=None)
        return wire.typed(wire.HorizontalPodAutoscaler, created)

    async def patch_hpa(
        self,
        current: wire.HorizontalPodAutoscaler,
        patch: dict[str, Any],
        *,
        dry_run: bool = False,
    ) -> wire.HorizontalPodAutoscaler:
        """JSON-merge-patch the HPA; with `dry_run` the server's answer of what it would store."""
        metadata = current["metadata"]
        with self._counted(None if dry_run else _HPAS, Conflict):
            answer = await refusable(
                self._fence,
                self._kube.patch,
                self.hpa_resource,
                metadata["namespace"],
                metadata["name"],
                patch,
                patch_type="merge",
                field_manager=FIELD_MANAGER,
                dry_run=dry_run,
            )
        if not dry_run:
            self._hpas.put_written(answer, based_on=current)
        return wire.typed(wire.HorizontalPodAutoscaler, answer)

    async def autoscaler_exists(self, autoscaler: wire.ScheduledPodAutoscaler) -> bool:
        """Whether this very SPA (same uid) exists and is not being deleted, asked of the API
        server: an HPA is created rarely, and only then does acting on a stale cache leave a
        trace. (A list by name, because the controller's RBAC grants list, not get, on SPAs.)"""
        metadata = autoscaler["metadata"]
        live = await self._kube.list(
            SCHEDULED_POD_AUTOSCALERS,
            namespace=metadata["namespace"],
            field_selector=f"metadata.name={metadata['name']}",
        )
        return any(
            item["metadata"].get("uid") == metadata.get("uid")
            and not item["metadata"].get("deletionTimestamp")
            for item in wire.typed_list(wire.ScheduledPodAutoscaler, live.items)
        )

    # -- the scale target (immediate scale-up) --------------------------------------------------

    async def raise_target(self, namespace: str, scale_up: ScaleUp) -> ScaleResult | None:
        """Raise the target through /scale right after the HPA write that raised minReplicas,
        instead of waiting up to a sync period of the HPA controller (docs/schedules.md,
        "Immediate scale-up"), as `replicas_to_set` allows: in one JSON patch that tests the
        replicas the HPA controller last left (`one_request_raise`), or, when there is nothing
        to test or the test fails, a read and a compare-and-swap, read again when the Scale
        changed in between, at most SCALE_ATTEMPTS times. What it did; None: nothing to say
        (the target needs no raise, or its Scale kept changing)."""
        logger = object_logger(log, namespace, scale_up.name)
        tested = one_request_raise(scale_up)
        if tested is not None:
            expected, wanted = tested
            try:
                await self.replace_target_replicas(
                    namespace,
                    scale_up.api_version,
                    scale_up.kind,
                    scale_up.name,
                    expected=expected,
                    replicas=wanted,
                )
            except (ReplicasChanged, Conflict):
                logger.debug("the target no longer has %d replicas; reading its scale", expected)
            except NotScalable as problem:
                return Unscalable(problem.problem, problem.message)
            except Refused as refused:
                return ScaleRefused(refused.message)
            else:
                return Raised(expected)
        for _attempt in range(SCALE_ATTEMPTS):
            try:
                resource, scale = await self.target_scale(
                    namespace, scale_up.api_version, scale_up.kind, scale_up.name
                )
                replicas = int((scale.get("spec") or {}).get("replicas") or 0)
                raised = replicas_to_set(scale_up, replicas)
                if raised is None:
                    return None  # enough replicas (or at 0): nothing done, nothing said
                await self.set_target_replicas(resource, namespace, scale_up.name, scale, raised)
            except Conflict:
                continue  # the Scale changed since it was read: read it again
            except NotScalable as problem:
                return Unscalable(problem.problem, problem.message)
            except Refused as refused:
                return ScaleRefused(refused.message)
            return Raised(replicas)
        logger.info("the target's scale kept changing; the HPA controller raises it")
        return None

    async def target_scale(
        self, namespace: str, api_version: str, kind: str, name: str
    ) -> tuple[Resource, dict[str, Any]]:
        """The target's REST resource and its Scale (`GET .../scale`); :class:`NotScalable` if
        the kind has no /scale, the object is missing, or RBAC forbids reading it."""
        resource = await self._scalable_resource(api_version, kind)
        try:
            scale = await self._kube.get(resource, namespace, name, subresource="scale")
        except NotFound:
            raise _target_not_found(kind, namespace, name) from None
        except ApiError as error:
            if error.status != 403:
                raise
            raise NotScalable(
                ScaleProblem.FORBIDDEN,
                f"not allowed to read {resource.plural}/scale: {brief(error.message)} "
                "(grant get and patch on it, docs/install.md)",
            ) from error
        return resource, scale

    async def replace_target_replicas(
        self,
        namespace: str,
        api_version: str,
        kind: str,
        name: str,
        *,
        expected: int,
        replicas: int,
    ) -> dict[str, Any]:
        """Set the target's replicas through /scale in one request, only if it has exactly
        `expected` now: a JSON patch that tests them, then replaces them (RFC 6902; the server
        applies both or neither, so a scale by somebody else is never undone). The new Scale;
        :class:`ReplicasChanged` if the test failed, :class:`NotScalable` if the kind has no
        /scale or the object is missing, :class:`Refused` on 400 or 403."""
        resource = await self._scalable_resource(api_version, kind)
        patch = [
            {"op": "test", "path": "/spec/replicas", "value": expected},
            {"op": "replace", "path": "/spec/replicas", "value": replicas},
        ]
        with self._counted(_TARGETS, ReplicasChanged):
            try:
                return await write_fenced(
                    self._fence,
                    self._kube.patch,
                    resource,
                    namespace,
                    name,
                    patch,
                    patch_type="json",
                    subresource="scale",
                    field_manager=FIELD_MANAGER,
                )
            except NotFound:
                raise _target_not_found(kind, namespace, name) from None
            except ApiError as error:
                if error.status == 422:
                    # A failed test. Any other 422 (an invalid Scale) is found again, and
                    # reported, by the read-then-write the caller falls back to: no server
                    # message is parsed.
                    raise ReplicasChanged(brief(error.message)) from error
                if error.status in REFUSALS:
                    raise Refused(error.status, brief(error.message)) from error
                raise

    async def set_target_replicas(
        self, resource: Resource, namespace: str, name: str, scale: dict[str, Any], replicas: int
    ) -> dict[str, Any]:
        """Set the target's replicas through /scale, only if its Scale is still at the version
        that was read (a compare-and-swap, so a scale-up by somebody else in between is never
        undone): the new Scale. :class:`~spa.kube.Conflict` if it changed meanwhile,
        :class:`Refused` on 403."""
        patch = {
            "metadata": {"resourceVersion": (scale.get("metadata") or {}).get("resourceVersion")},
            "spec": {"replicas": replicas},
        }
        with self._counted(_TARGETS, Conflict):
            return await refusable(
                self._fence,
                self._kube.patch,
                resource,
                namespace,
                name,
                patch,
                patch_type="merge",
                subresource="scale",
                field_manager=FIELD_MANAGER,
            )

    async def _scalable_resource(self, api_version: str, kind: str) -> Resource:
        known = self._scalable.get((api_version, kind))
        if known is not None:
            return known
        listed = await self._kube.api_resources(api_version)
        found = next(
            (
                item
                for item in listed
                if item.get("kind") == kind and "/" not in str(item.get("name"))
            ),
            None,
        )
        if found is None:
            raise NotScalable(
                ScaleProblem.TARGET_NOT_FOUND,
                f"the API server serves no kind {kind} in {api_version}",
            )
        plural = str(found["name"])
        if not any(item.get("name") == f"{plural}/scale" for item in listed):
            raise NotScalable(
                ScaleProblem.NO_SCALE_SUBRESOURCE,
                f"{kind} ({plural}.{api_version}) has no scale subresource",
            )
        group, _, version = api_version.rpartition("/")
        resource = Resource(group, version, plural, kind, bool(found.get("namespaced")))
        self._scalable[(api_version, kind)] = resource
        return resource

    # -- node capacity (docs/schedules.md, "Node capacity") -----------------------------------

    def capacity_view(self, autoscaler: wire.ScheduledPodAutoscaler) -> CapacityView | None:
        """What the caches show of the SPA's node capacity, without a request (None: node
        capacity is not wired). A CapacityBuffer API is known served once discovery found it;
        before, whether it is needs a question (:meth:`read_capacity`)."""
        if self._capacity is None:
            return None
        served = True if self._capacity.buffers_found else None
        return CapacityView(
            self._capacity.cached(autoscaler),
            served,
            placeholders_ready=self._capacity.placeholders_ready(autoscaler),
        )

    async def read_capacity(self, step: ReadCapacity) -> CapacityRead:
        """The target's replicas from its /scale (when `step.target` is given), then, if they
        could be read (or were not asked for) and `step.buffers`, whether a CapacityBuffer API
        is served."""
        assert self._capacity is not None, "a capacity step without the capacity writer"
        replicas: int | None = None
        if step.target is not None:
            api_version, kind, name = step.target
            namespace = step.autoscaler["metadata"]["namespace"]
            try:
                _, scale = await self.target_scale(namespace, api_version, kind, name)
            except NotScalable as problem:
                return CapacityRead(problem=problem.message)
            replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        served = None
        if step.buffers:
            served = await self._capacity.buffer_resource() is not None
        return CapacityRead(replicas, None, served)

    async def read_readiness(self, step: ReadReadiness) -> ReadinessRead:
        """The scale target's spec.replicas and status.readyReplicas, from one GET of the
        object itself (its /scale has no readyReplicas): docs/api.md, "status.windows". The
        apps/v1 kinds leave readyReplicas out at 0; another kind that has it nowhere in its
        status reports none. A read RBAC forbids is said as such (docs/install.md, "Window
        readiness"), a target not found or of a kind not served as a problem; any other
        error ends the reconcile, which is retried."""
        api_version, kind, name = step.target
        namespace = step.autoscaler["metadata"]["namespace"]
        try:
            resource = await self._scalable_resource(api_version, kind)
            if (
                self._access is not None
                and resource.group == "apps"
                and resource.plural in TEMPLATE_KINDS
                and not self._access.may_get(resource.plural, namespace)
            ):
                refused = Permission("get", resource.plural, namespace)
                return ReadinessRead(problem=f"not allowed to {refused}", forbidden=True)
            obj = await self._kube.get(resource, namespace, name)
        except NotScalable as problem:
            return ReadinessRead(problem=problem.message)
        except NotFound:
            return ReadinessRead(problem=_target_not_found(kind, namespace, name).message)
        except ApiError as error:
            if error.status != 403:
                raise
            return ReadinessRead(problem=brief(error.message), forbidden=True)
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        apps = resource.group == "apps"
        ready = status.get("readyReplicas")
        if ready is None and (apps or "replicas" in status):
            ready = 0  # omitted when 0 (omitempty)
        created = status.get("replicas")
        if created is None and apps:
            created = 0
        return ReadinessRead(
            replicas=_count(spec.get("replicas", 0 if apps else None)),
            ready=_count(ready),
            created=_count(created),
            failure=_replica_failure(status.get("conditions")),
            selector=_label_selector(spec.get("selector")),
        )

    async def read_pods(self, step: ReadPods) -> PodsRead:
        """The creation and scheduling times of the scale target's pods (its label selector,
        in its namespace), from one list: how long a window's pods waited for a node
        (docs/api.md, "status.windows", podsWaitedSeconds). A list the start's access review
        said no to is not made, and one RBAC refuses is said as such (the wait then stays
        unmeasured); any other error ends the reconcile, which is retried."""
        namespace = step.autoscaler["metadata"]["namespace"]
        if self._pod_access is not None and not self._pod_access.may_list(namespace):
            refused = Permission("list", "pods", namespace, group="")
            return PodsRead(problem=f"not allowed to {refused}", forbidden=True)
        try:
            listed = await self._kube.list(
                POD, namespace=namespace, label_selector=step.selector, transform=_pod_times
            )
        except ApiError as error:
            if error.status != 403:
                raise
            return PodsRead(problem=brief(error.message), forbidden=True)
        pods = []
        for item in listed.items:
            times = item.get("times")
            if isinstance(times, list) and len(times) == 2 and isinstance(times[0], int):
                scheduled = times[1] if isinstance(times[1], int) else None
                pods.append(PodTimes(created=times[0], scheduled=scheduled))
        return PodsRead(pods=tuple(pods))

    async def hold_capacity(self, step: HoldCapacity) -> CapacityHeld:
        """Make the cluster hold `step.pods` pods' worth in `step.mode`."""
        assert self._capacity is not None, "a capacity step without the capacity writer"
        return await self._capacity.hold(
            step.autoscaler, step.target, pods=step.pods, mode=step.mode
        )

    def orphaned_capacity(self, namespace: str, name: str) -> bool:
        """Whether the caches show a placeholder Deployment of the SPA `namespace/name`, which
        they no longer have (no request)."""
        return self._capacity is not None and self._capacity.orphaned(namespace, name)

    async def release_orphaned(self, step: ReleaseOrphaned) -> CapacityReleased:
        """Delete the placeholder Deployment of a gone SPA, once the API server says it is."""
        assert self._capacity is not None, "a capacity step without the capacity writer"
        await self._capacity.release(step.namespace, step.name)
        return CapacityReleased()

    async def release_capacity(self, step: ReleaseCapacity) -> CapacityReleased:
        """Delete what the SPA holds in each of `step.modes`."""
        assert self._capacity is not None, "a capacity step without the capacity writer"
        for mode in step.modes:
            await self._capacity.hold(step.autoscaler, step.target, pods=0, mode=mode)
        return CapacityReleased()

    # -- Schedules' ownerReferences -------------------------------------------------------------

    async def set_schedule_owner(
        self, schedule: wire.Schedule, autoscaler: wire.ScheduledPodAutoscaler | None
    ) -> wire.Schedule:
        """Make `autoscaler` (None: nobody) the Schedule's controller; other owners stay.
        Returns the updated Schedule; :class:`OwnerNotChanged` says why it could not be done
        (the server refused, the Schedule was deleted, or it kept changing)."""
        metadata = schedule["metadata"]
        action = "adopt" if autoscaler is not None else "release"
        for _attempt in range(_CONFLICT_RETRIES):
            references = [
                reference
                for reference in metadata.get("ownerReferences") or ()
                if not (
                    reference.get("controller")
                    and reference.get("kind") == SCHEDULED_POD_AUTOSCALERS.kind
                )
            ]
            if autoscaler is not None:
                references.append(owner_reference(autoscaler))
            patch = {
                "metadata": {
                    "ownerReferences": references or None,
                    # A compare-and-swap: ownerReferences is a list, replaced whole.
                    "resourceVersion": metadata.get("resourceVersion"),
                }
            }
            try:
                with self._counted(_OWNERS, Conflict):
                    updated = await refusable(
                        self._fence,
                        self._kube.patch,
                        SCHEDULES,
                        metadata["namespace"],
                        metadata["name"],
                        patch,
                        patch_type="merge",
                        field_manager=FIELD_MANAGER,
                    )
            except Conflict:
                try:
                    schedule = wire.typed(
                        wire.Schedule,
                        await self._kube.get(SCHEDULES, metadata["namespace"], metadata["name"]),
                    )
                except NotFound:
                    raise OwnerNotChanged(
                        "deleted while its ownerReferences were being changed"
                    ) from None
                metadata = schedule["metadata"]
                continue
            except Refused as refused:
                # 422 (another controller reference appeared), 403 (RBAC, a webhook): report
                # it and go on with the other Schedules.
                object_logger(log, metadata["namespace"], metadata["name"]).warning(
                    "could not %s the Schedule: %s", action, refused.message
                )
                raise OwnerNotChanged(
                    f"the API server refused to {action} it: {refused.message}"
                ) from refused
            self._schedules.put_written(updated, based_on=schedule)
            object_logger(log, metadata["namespace"], metadata["name"]).debug(
                "Schedule %sed", action.removesuffix("e")
            )
            return wire.typed(wire.Schedule, updated)
        raise OwnerNotChanged("its ownerReferences kept changing; will try again")

    # -- statuses and events --------------------------------------------------------------------

    async def patch_autoscaler_status(
        self, obj: wire.ScheduledPodAutoscaler, status: wire.ScheduledPodAutoscalerStatusPatch
    ) -> None:
        """Merge-patch the SPA status fields this controller owns, if any differs."""
        await self._patch_status(SCHEDULED_POD_AUTOSCALERS, self._autoscalers, obj, status)

    async def patch_schedule_status(
        self, obj: wire.Schedule, status: wire.ScheduleStatusPatch
    ) -> None:
        """Merge-patch the Schedule status fields this controller owns, if any differs."""
        await self._patch_status(SCHEDULES, self._schedules, obj, status)

    async def _patch_status(
        self,
        resource: Resource,
        store: Store,
        obj: wire.ScheduledPodAutoscaler | wire.Schedule,
        status: wire.ScheduledPodAutoscalerStatusPatch | wire.ScheduleStatusPatch,
    ) -> None:
        current = obj.get("status") or {}
        if all(_same(current.get(field), value) for field, value in status.items()):
            return
        metadata = obj["metadata"]
        try:
            with self._counted(f"{resource.kind} statuses", NotFound):
                updated = await write_fenced(
                    self._fence,
                    self._kube.patch,
                    resource,
                    metadata["namespace"],
                    metadata["name"],
                    {"status": status},
                    patch_type="merge",
                    subresource="status",
                    field_manager=FIELD_MANAGER,
                )
        except NotFound:
            return  # deleted meanwhile: its deletion event brings the next reconcile
        store.put_written(updated, based_on=obj)

    def warning(
        self, obj: wire.ScheduledPodAutoscaler | wire.Schedule, reason: str, message: str
    ) -> None:
        self._recorder.warning(obj, reason, message)

    def normal(
        self, obj: wire.ScheduledPodAutoscaler | wire.Schedule, reason: str, message: str
    ) -> None:
        self._recorder.normal(obj, reason, message)

    # -- the log's summary of writes -------------------------------------------------------------

    @contextlib.contextmanager
    def _counted(self, what: str | None, *uncounted: type[BaseException]) -> Iterator[None]:
        """Count the write made inside (`what`; None: not a write) for the log's summary, as
        written or as failed; `uncounted` exceptions are not failures (a retried conflict, a
        fallback), a refusal of this replica's fence sent nothing, and a create in a namespace
        being deleted or gone is counted by spa.runtime.TerminatingNamespaces instead."""
        ignored: tuple[type[BaseException], ...] = (NotLeader, NamespaceDeleted, *uncounted)
        try:
            yield
        except ignored:
            raise
        except Exception:
            if what is not None and self._summary is not None:
                self._summary.note(what, failed=True)
            raise
        if what is not None and self._summary is not None:
            self._summary.note(what)


def _count(value: object) -> int | None:
    """A replica count as a target's spec or status gives it (None: none, or not a count)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return max(0, value)


def _replica_failure(conditions: object) -> str | None:
    """The message of a target's ReplicaFailure condition when it is True (its pods could not
    be created: a Deployment copies its ReplicaSet's; docs/api.md, "status.windows")."""
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if (
            isinstance(condition, dict)
            and condition.get("type") == "ReplicaFailure"
            and condition.get("status") == "True"
        ):
            message = condition.get("message")
            reason = condition.get("reason")
            return str(message or reason or "ReplicaFailure")
    return None


def _label_selector(selector: object) -> str | None:
    """A target's spec.selector as the `labelSelector` of a list (None: none, or one that
    selects everything, which is never listed). A LabelSelector's matchLabels and
    matchExpressions (In, NotIn, Exists, DoesNotExist), or a selector already in that form (a
    custom kind may have one, as its /scale's status.selector)."""
    if isinstance(selector, str):
        return selector or None
    if not isinstance(selector, dict):
        return None
    terms = [f"{key}={value}" for key, value in (selector.get("matchLabels") or {}).items()]
    for expression in selector.get("matchExpressions") or ():
        if not isinstance(expression, dict):
            return None
        key, operator = expression.get("key"), expression.get("operator")
        values = ",".join(str(value) for value in expression.get("values") or ())
        match operator:
            case "In":
                terms.append(f"{key} in ({values})")
            case "NotIn":
                terms.append(f"{key} notin ({values})")
            case "Exists":
                terms.append(str(key))
            case "DoesNotExist":
                terms.append(f"!{key}")
            case _:
                return None
    return ",".join(terms) or None


def _seconds(text: object) -> int | None:
    """An RFC 3339 time of the API server as Unix seconds (None: none, or not one)."""
    if not isinstance(text, str):
        return None
    try:
        return math.floor(datetime.fromisoformat(text).timestamp())
    except ValueError:
        return None


def _pod_times(pod: dict[str, Any]) -> dict[str, Any]:
    """What a list of the target's pods keeps of each, as it arrives: [created, scheduled]
    in Unix seconds (scheduled: its PodScheduled condition's lastTransitionTime while that is
    True, else None); nothing of a pod bound to a node with no such time to read."""
    created = _seconds((pod.get("metadata") or {}).get("creationTimestamp"))
    scheduled = None
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            scheduled = _seconds(condition.get("lastTransitionTime"))
            if scheduled is None:
                return {}
    if scheduled is None and (pod.get("spec") or {}).get("nodeName"):
        return {}
    return {"times": [created, scheduled]}


def _target_not_found(kind: str, namespace: str, name: str) -> NotScalable:
    return NotScalable(ScaleProblem.TARGET_NOT_FOUND, f"{kind} {namespace}/{name} not found")


def _same(current: Any, desired: Any) -> bool:
    """Equal for status purposes: an absent field and None are the same."""
    return current == desired or (current is None and desired is None)
