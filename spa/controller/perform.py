"""Each step of a plan performed through the actuator, and what happened said as an outcome.

Why a module of its own: the reconciler is the loop of "Decide, then act"
(docs/architecture.md); turning a step into requests, and the actuator's answers and errors
(a name taken, a refusal the user must fix, an ownerReference given up) into the outcomes the
decision reads, is one job of its own, with the write metrics and the per-write lines of the
log that go with it. Only the errors a decision must know of become outcomes; any other ends
the reconcile (the convention of spa/controller/decide/__init__.py).
"""

from __future__ import annotations

import logging
import math

from spa.api import wire
from spa.controller.actuator import Act, OwnerNotChanged
from spa.controller.decide import (
    AutoscalerGone,
    AutoscalerStatusWrite,
    BoundsWritten,
    CreateHpa,
    DryRunAnswered,
    DryRunHpa,
    EventType,
    Final,
    HoldCapacity,
    HpaNameTaken,
    HpaRefused,
    HpaWrite,
    HpaWritten,
    Outcome,
    OwnersSet,
    PatchBounds,
    PatchHpa,
    ReadCapacity,
    ReadPods,
    ReadReadiness,
    Refusal,
    ReleaseCapacity,
    ReleaseOrphaned,
    ScaleUp,
    ScaleUpDone,
    SetOwner,
    SetOwners,
    Step,
    changed_by,
    status_fields,
)
from spa.controller.decide.scaleup import scale_up_outcome
from spa.controller.fleet import FleetIndex
from spa.controller.metrics import ControllerMetrics
from spa.controller.writes import Refused
from spa.kube import Conflict
from spa.runtime import (
    Clock,
    ObjectLogger,
    Store,
    TerminatingNamespaces,
    UrgentWrites,
    split_key,
)

__all__ = ["Performer"]


class Performer:
    """Performs the steps of the SPA reconciler's plans through `actuator`; the HPA and /scale
    writes as `urgent` ones (docs/architecture.md, "Capacity first").

    :param terminating: the namespaces said to be being deleted (the reconciler's): an SPA
        found gone before its HPA's creation in one of them is logged at DEBUG only (None:
        none is known).
    """

    def __init__(
        self,
        *,
        actuator: Act,
        autoscalers: Store,
        metrics: ControllerMetrics,
        urgent: UrgentWrites,
        clock: Clock | None = None,
        fleet: FleetIndex | None = None,
        terminating: TerminatingNamespaces | None = None,
    ) -> None:
        self._clock = clock
        self._terminating = terminating
        self._fleet = fleet
        self._act = actuator
        self._autoscalers = autoscalers
        self._metrics = metrics
        self._urgent = urgent

    async def perform(
        self,
        key: str,
        step: Step,
        now: float,
        logger: ObjectLogger,
        *,
        expected_boundary: int | None = None,
    ) -> Outcome:
        """Perform one step and say what happened (`expected_boundary`: the transition the
        key's Memory expects, to measure how late an HPA write applies it)."""
        match step:
            case SetOwners(changes):
                return await self._set_owners(changes)
            case PatchBounds() as write:
                async with self._urgent.urgent():
                    return await self._patch_bounds(write, logger)
            case CreateHpa() | PatchHpa() | DryRunHpa() as write:
                async with self._urgent.urgent():
                    return await self._write_hpa(key, write, now, logger, expected_boundary)
            case ReadCapacity() as read:
                return await self._act.read_capacity(read)
            case ReadReadiness() as readiness:
                return await self._act.read_readiness(readiness)
            case ReadPods() as pods:
                return await self._act.read_pods(pods)
            case HoldCapacity() as hold:
                return await self._act.hold_capacity(hold)
            case ReleaseCapacity() as release:
                return await self._act.release_capacity(release)
            case ReleaseOrphaned() as orphaned:
                return await self._act.release_orphaned(orphaned)

    async def finish(self, key: str, final: Final, now: float, logger: ObjectLogger) -> None:
        """Perform the final plan: its Events and statuses once no urgent write is in flight
        (capacity first), then the SPA's series and the problem's log line."""
        namespace, name = split_key(key)
        assert namespace is not None
        if final.events or final.statuses:
            await self._urgent.settled()
        for event in final.events:
            if event.type is EventType.WARNING:
                self._act.warning(event.obj, event.reason, event.message)
            else:
                self._act.normal(event.obj, event.reason, event.message)
        for write in final.statuses:
            if isinstance(write, AutoscalerStatusWrite):
                await self._act.patch_autoscaler_status(write.obj, status_fields(write.status))
            else:
                await self._act.patch_schedule_status(write.obj, status_fields(write.status))
        if final.report is not None:
            self._metrics.autoscaler(
                namespace=namespace,
                name=name,
                replicas=final.report.replicas,
                schedules=dict(final.report.schedules),
                reconciled_at=now,
            )
        if final.capacity_report is not None:
            pods = final.capacity_report.requested
            if pods:
                logger.debug("holding node capacity for %d pods", pods)
            self._metrics.capacity_requested(namespace=namespace, name=name, pods=pods)
            self._metrics.capacity_not_ready(
                namespace=namespace, name=name, late=final.capacity_report.late
            )
        if final.windows is not None:
            for outcome, reason, ready_seconds in final.windows.measured:
                self._metrics.window_measured(
                    outcome=outcome, reason=reason, ready_seconds=ready_seconds
                )
            self._metrics.window_late(namespace=namespace, name=name, late=final.windows.late)
        if final.problem is not None:
            logger.warning("%s", final.problem)

    async def _set_owners(self, changes: tuple[SetOwner, ...]) -> OwnersSet:
        failures: dict[str, str] = {}
        for change in changes:
            try:
                await self._act.set_schedule_owner(change.schedule, change.autoscaler)
            except OwnerNotChanged as failed:
                failures[str(change.schedule["metadata"]["uid"])] = failed.message
        return OwnersSet(failures)

    async def _write_hpa(
        self,
        key: str,
        write: HpaWrite,
        now: float,
        logger: ObjectLogger,
        expected_boundary: int | None,
    ) -> Outcome:
        """Perform one write of the desired HPA (or its dry-run) and say what happened."""
        if isinstance(write, CreateHpa):
            autoscaler = wire.typed_optional(
                wire.ScheduledPodAutoscaler, self._autoscalers.get(key)
            )
            if autoscaler is None or not await self._act.autoscaler_exists(autoscaler):
                # Our cache of SPAs is behind (its watch has not caught up after an outage or
                # a 410): creating now would resurrect the HPA of a deleted SPA until the
                # garbage collector removes it again. The SPA's deletion event follows.
                # In a namespace already said to be being deleted, that is the namespace
                # controller at work: one line per namespace, none per object
                # (docs/operations.md, "Namespaces being deleted").
                namespace, _ = split_key(key)
                quiet = (
                    self._terminating is not None
                    and namespace is not None
                    and self._terminating.said(namespace)
                )
                logger.log(
                    logging.DEBUG if quiet else logging.INFO,
                    "not creating the HPA: the ScheduledPodAutoscaler no longer exists",
                )
                return AutoscalerGone()
        started = None if self._clock is None else self._clock.now()
        try:
            match write:
                case CreateHpa(desired):
                    answer = await self._act.create_hpa(desired)
                case PatchHpa(current, patch):
                    answer = await self._act.patch_hpa(current, patch)
                case DryRunHpa(current, patch, wanted):
                    answer = await self._act.patch_hpa(current, patch, dry_run=True)
                    self._metrics.hpa_dry_run()
                    return DryRunAnswered(wanted, answer)
        except Conflict:
            if not isinstance(write, CreateHpa):
                raise
            return HpaNameTaken()
        except Refused as refused:
            self._metrics.hpa_refused(refused.status)
            return HpaRefused(Refusal(refused.status, refused.message))
        changed = changed_by(write, answer)
        if self._fleet is not None and self._clock is not None and started is not None:
            # The write time of this API server, and when each fleet's raises landed
            # (docs/schedules.md, "Raises ahead of a shared boundary").
            done = self._clock.now()
            self._fleet.write_time.observe(done - started, in_flight=self._urgent.in_flight)
            if changed:
                self._fleet.written(key, done, raised=_raised(write, answer))
        operation = "create" if isinstance(write, CreateHpa) else "patch" if changed else "noop"
        self._metrics.hpa_written(operation)
        boundary = expected_boundary
        if changed and boundary is not None and boundary <= math.floor(now):
            self._metrics.boundary_lag(now - boundary)
        spec = answer.get("spec") or {}
        # One line per write at DEBUG; INFO has the actuator's one line per burst of writes.
        if isinstance(write, CreateHpa):
            logger.debug(
                "created HPA with minReplicas %d, maxReplicas %d",
                write.desired["spec"]["minReplicas"],
                write.desired["spec"]["maxReplicas"],
            )
        else:
            logger.debug(
                "%s HPA with minReplicas %s, maxReplicas %s%s",
                "adopted the" if isinstance(write, PatchHpa) and write.adopts else "applied",
                spec.get("minReplicas"),
                spec.get("maxReplicas"),
                "" if changed else " (the server stored nothing new)",
            )
        return HpaWritten(
            write.wanted, answer, changed, adopted=isinstance(write, PatchHpa) and write.adopts
        )

    async def _patch_bounds(self, write: PatchBounds, logger: ObjectLogger) -> Outcome:
        try:
            await self._act.patch_hpa(write.current, write.patch)
        except Refused as refused:
            logger.warning("the API server refused the bounds too: %s", refused.message)
            return HpaRefused(Refusal(refused.status, refused.message), bounds=True)
        self._metrics.hpa_written("patch")
        return BoundsWritten()

    # -- immediate scale-up ---------------------------------------------------------------------

    async def scale_up(
        self, key: str, scale_up: ScaleUp | None, instant: int, logger: ObjectLogger
    ) -> ScaleUpDone | None:
        """Raise the target right after the HPA write that raised minReplicas, through the
        actuator (docs/schedules.md, "Immediate scale-up"); what it did (None: nothing to
        say)."""
        autoscaler = wire.typed_optional(wire.ScheduledPodAutoscaler, self._autoscalers.get(key))
        if scale_up is None or autoscaler is None:
            return None
        async with self._urgent.urgent():
            result = await self._act.raise_target(autoscaler["metadata"]["namespace"], scale_up)
        if result is None:
            return None
        status, _, message = scale_up_outcome(scale_up, result)
        if status == "True":
            logger.debug("%s", message)
        else:
            logger.warning("immediate scale-up: %s", message)
        return ScaleUpDone(autoscaler, scale_up, result, instant)


def _raised(write: CreateHpa | PatchHpa, answer: wire.HorizontalPodAutoscaler) -> bool:
    """Whether the write added capacity (a new HPA, or a higher minReplicas or maxReplicas in
    what the server stored): the writes a burst's pace is measured on, since only raises are
    written ahead of a boundary (docs/schedules.md, "Raises ahead of a shared boundary")."""
    if isinstance(write, CreateHpa):
        return True
    before = write.current.get("spec") or {}
    after = answer.get("spec") or {}
    # minReplicas defaults to 1 (docs/api.md); maxReplicas is required.
    return (after.get("minReplicas") or 1) > (before.get("minReplicas") or 1) or (
        after.get("maxReplicas") or 0
    ) > (before.get("maxReplicas") or 0)
