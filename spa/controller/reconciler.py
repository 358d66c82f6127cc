"""The ScheduledPodAutoscaler reconciler: one key in, the cluster made to match, next wake-up out.

Level-triggered: it reads the SPA, its Schedules and its HPA from the informer caches, asks the
pure :func:`spa.controller.decide.decide` what should be done, and has the actuator do it;
when the plan was a step (ownerReferences or an HPA write first), it decides again on the
caches as those writes left them (docs/architecture.md, "Decide, then act"). It owns, and alone
writes, the SPA's status, the generated HPA, the status of every Schedule whose
`scaleTargetRef` names the SPA, and those Schedules' controller ownerReferences. The key of a
missing SPA is reconciled too: that is where Schedules created before their SPA are marked
Degraded.

What stays here is what needs the API server or the clock: reading where a cache cannot
answer, turning the answers of writes into :class:`~spa.controller.decide.Attempts` and
:class:`~spa.controller.decide.Memory`, metrics and logs.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace

from spa.api import wire
from spa.controller.actuator import Actuator, NotScalable, Refused
from spa.controller.decide import (
    MAX_SCHEDULES_PER_AUTOSCALER,
    Attempts,
    AutoscalerStatusWrite,
    Compiled,
    CreateHpa,
    DryRunHpa,
    Event,
    EventType,
    HpaWrite,
    Memory,
    Plan,
    Refusal,
    ScaleUp,
    ScaleUpOutcome,
    SetOwner,
    Snapshot,
    compile_window,
    decide,
    dying,
    status_fields,
)
from spa.controller.desired import controller_owner_uid, spec_hash
from spa.controller.metrics import ControllerMetrics
from spa.controller.watches import TARGET_INDEX, UID_INDEX
from spa.kube import Conflict, KubeClient, NotFound, Resource
from spa.runtime import (
    Clock,
    EventRecorder,
    Result,
    Store,
    WriteFence,
    object_logger,
    split_key,
    unfenced,
)

__all__ = ["MAX_SCHEDULES_PER_AUTOSCALER", "Reconciler"]

log = logging.getLogger(__name__)

# The most decisions one reconcile makes. A reconcile takes at most seven steps (adopt, create,
# read the HPA whose name was taken, ask the server, patch, patch the bounds after a refusal,
# finish); more means the caches keep contradicting our own writes, and the key is retried
# with backoff instead of spinning.
_MAX_STEPS = 8
# Reads of the target's Scale when it keeps changing between our read and our write.
_SCALE_ATTEMPTS = 3


class Reconciler:
    """Reconciles ScheduledPodAutoscaler keys (`namespace/name`)."""

    def __init__(
        self,
        *,
        kube: KubeClient,
        autoscalers: Store,
        schedules: Store,
        hpas: Store,
        hpa_resource: Resource,
        recorder: EventRecorder,
        clock: Clock,
        fence: WriteFence = unfenced,
        metrics: ControllerMetrics | None = None,
        max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER,
    ) -> None:
        self._autoscalers = autoscalers
        self._schedules = schedules
        self._hpas = hpas
        self._act = Actuator(
            kube=kube,
            autoscalers=autoscalers,
            schedules=schedules,
            hpas=hpas,
            hpa_resource=hpa_resource,
            recorder=recorder,
            fence=fence,
        )
        self._clock = clock
        self._metrics = metrics or ControllerMetrics()
        self._max_schedules = max_schedules
        # Compiled windows by Schedule uid, reused until the Schedule's generation (or the lead
        # time its SPA gives it) changes: their Timelines hold the cached intervals that make
        # each decision cheap.
        self._compiled: dict[str, tuple[tuple[int | None, int], Compiled]] = {}
        self._memory: dict[str, Memory] = {}

    # -- entry points ---------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        now = self._clock.now()
        instant = math.floor(now)
        namespace, name = split_key(key)
        assert namespace is not None
        logger = object_logger(log, namespace, name)
        attempts = Attempts()
        fetched: wire.HorizontalPodAutoscaler | None = None
        for _step in range(_MAX_STEPS):
            snapshot = await self._snapshot(key, instant, attempts, fetched)
            plan = decide(snapshot)
            self._remember(key, plan)
            self._record(plan)
            if plan.owners:
                attempts = await self._set_owners(plan.owners, attempts)
                continue
            if plan.hpa is not None:
                try:
                    attempts, fetched = await self._write_hpa(key, plan.hpa, attempts, fetched, now)
                except _AutoscalerGone:
                    return Result()
                if plan.scale_up is not None and attempts.hpa_written:
                    await self._scale_up(key, plan.scale_up)
                continue
            for write in plan.statuses:
                if isinstance(write, AutoscalerStatusWrite):
                    await self._act.patch_autoscaler_status(write.obj, status_fields(write.status))
                else:
                    await self._act.patch_schedule_status(write.obj, status_fields(write.status))
            if plan.report is not None:
                self._metrics.autoscaler(
                    namespace=namespace,
                    name=name,
                    replicas=plan.report.replicas,
                    schedules=dict(plan.report.schedules),
                    reconciled_at=now,
                )
            if plan.problem is not None:
                logger.warning("%s", plan.problem)
            return Result(
                requeue_at=plan.requeue_at, requeue_after=plan.requeue_after, retry=plan.retry
            )
        logger.error("no final decision after %d steps; retrying with backoff", _MAX_STEPS)
        return Result(retry=True)

    def forget_schedule(self, uid: str) -> None:
        """Drop the compiled window of a deleted Schedule."""
        self._compiled.pop(uid, None)

    # -- reading --------------------------------------------------------------------------------

    async def _snapshot(
        self,
        key: str,
        instant: int,
        attempts: Attempts,
        fetched: wire.HorizontalPodAutoscaler | None,
    ) -> Snapshot:
        namespace, name = split_key(key)
        assert namespace is not None
        memory = self._memory.get(key, Memory())
        # The caches hold raw JSON: this is where it becomes typed for the decision.
        autoscaler = wire.typed_optional(wire.ScheduledPodAutoscaler, self._autoscalers.get(key))
        schedules = wire.typed_list(wire.Schedule, self._schedules.by_index(TARGET_INDEX, key))
        hpa = fetched or wire.typed_optional(wire.HorizontalPodAutoscaler, self._hpas.get(key))
        if hpa is None and memory.foreign_hpa and autoscaler is not None and not dying(autoscaler):
            # Somebody else's HPA has the name; our label-filtered cache cannot see it go.
            try:
                hpa = await self._act.get_hpa(namespace, name)
            except NotFound:
                memory = replace(memory, foreign_hpa=False)
        live_owners: frozenset[str] = frozenset()
        if autoscaler is None:
            owners = {controller_owner_uid(schedule) for schedule in schedules}
            live_owners = frozenset(
                uid
                for uid in owners
                if uid is not None
                and (found := self._autoscalers.by_index(UID_INDEX, uid))
                and not any(
                    dying(owner) for owner in wire.typed_list(wire.ScheduledPodAutoscaler, found)
                )
            )
        return Snapshot(
            key=key,
            instant=instant,
            autoscaler=autoscaler,
            schedules=schedules,
            hpa=hpa,
            live_owners=live_owners,
            hpa_api_version=self._act.hpa_resource.api_version,
            compile=self._compile,
            memory=memory,
            attempts=attempts,
            max_schedules=self._max_schedules,
        )

    def _compile(self, schedule: wire.Schedule, lead: int = 0) -> Compiled:
        metadata = schedule["metadata"]
        uid = str(metadata.get("uid"))
        version = (metadata.get("generation"), lead)
        cached = self._compiled.get(uid)
        if cached is None or cached[0] != version:
            cached = self._compiled[uid] = (version, compile_window(schedule, lead))
        return cached[1]

    # -- acting ---------------------------------------------------------------------------------

    def _remember(self, key: str, plan: Plan) -> None:
        if plan.forget:
            namespace, name = split_key(key)
            assert namespace is not None
            self._metrics.forget_autoscaler(namespace=namespace, name=name)
            self._memory.pop(key, None)
        else:
            self._memory[key] = plan.memory

    def _record(self, plan: Plan) -> None:
        for event in plan.events:
            if event.type is EventType.WARNING:
                self._act.warning(event.obj, event.reason, event.message)
            else:
                self._act.normal(event.obj, event.reason, event.message)

    async def _set_owners(self, changes: tuple[SetOwner, ...], attempts: Attempts) -> Attempts:
        failures = dict(attempts.owner_failures)
        for change in changes:
            result = await self._act.set_schedule_owner(change.schedule, change.autoscaler)
            if isinstance(result, str):
                failures[str(change.schedule["metadata"]["uid"])] = result
        return replace(attempts, owner_failures=failures)

    async def _write_hpa(
        self,
        key: str,
        write: HpaWrite,
        attempts: Attempts,
        fetched: wire.HorizontalPodAutoscaler | None,
        now: float,
    ) -> tuple[Attempts, wire.HorizontalPodAutoscaler | None]:
        """Perform one HPA write; return what the next decision must know of it, and the HPA
        as read from the API server where the cache cannot hold it (`fetched`: its name was
        taken by an HPA without our label), until a write of ours is in the cache."""
        namespace, name = split_key(key)
        assert namespace is not None
        logger = object_logger(log, namespace, name)
        memory = self._memory.get(key, Memory())
        if isinstance(write, CreateHpa):
            autoscaler = wire.typed_optional(
                wire.ScheduledPodAutoscaler, self._autoscalers.get(key)
            )
            if autoscaler is None or not await self._act.autoscaler_exists(autoscaler):
                # Our cache of SPAs is behind (its watch has not caught up after an outage or
                # a 410): creating now would resurrect the HPA of a deleted SPA until the
                # garbage collector removes it again. The SPA's deletion event follows.
                logger.info("not creating the HPA: the ScheduledPodAutoscaler no longer exists")
                raise _AutoscalerGone
            try:
                created = await self._act.create_hpa(write.desired)
            except Conflict:
                # The name is taken by an HPA our label-filtered cache does not see.
                return attempts, await self._act.get_hpa(namespace, name)
            except Refused as refused:
                self._metrics.hpa_refused(refused.status)
                return replace(attempts, hpa_refusal=_refusal(refused)), None
            self._written(key, memory, write.wanted, created, now)
            self._metrics.hpa_written("create")
            spec = write.desired["spec"]
            logger.info(
                "created HPA with minReplicas %d, maxReplicas %d",
                spec["minReplicas"],
                spec["maxReplicas"],
            )
            return replace(attempts, hpa_written=True), None
        current = write.current
        if isinstance(write, DryRunHpa):
            try:
                answer = await self._act.patch_hpa(current, write.patch, dry_run=True)
            except Refused as refused:
                self._metrics.hpa_refused(refused.status)
                return replace(attempts, hpa_refusal=_refusal(refused)), fetched
            self._metrics.hpa_dry_run()
            stored = (write.wanted, spec_hash(answer.get("spec") or {}))
            self._memory[key] = replace(memory, stored_spec=stored)
            return attempts, fetched
        try:
            applied = await self._act.patch_hpa(current, write.patch)
        except Refused as refused:
            if write.wanted is None:
                logger.warning("the API server refused the bounds too: %s", refused.message)
                return replace(attempts, bounds_refusal=_refusal(refused)), fetched
            self._metrics.hpa_refused(refused.status)
            return replace(attempts, hpa_refusal=_refusal(refused)), fetched
        if write.wanted is None:
            # Not a write of the desired spec: the next pass tries the whole spec again.
            self._metrics.hpa_written("patch")
            self._memory[key] = replace(memory, last_write=None)
            return attempts, None
        version = str((write.current.get("metadata") or {}).get("resourceVersion"))
        changed = str(applied["metadata"].get("resourceVersion")) != version
        self._metrics.hpa_written("patch" if changed else "noop")
        self._written(key, memory, write.wanted, applied, now if changed else None)
        spec = applied.get("spec") or {}
        logger.info(
            "applied HPA with minReplicas %s, maxReplicas %s%s",
            spec.get("minReplicas"),
            spec.get("maxReplicas"),
            "" if changed else " (the server stored nothing new)",
        )
        return replace(attempts, hpa_written=changed), None

    def _written(
        self,
        key: str,
        memory: Memory,
        wanted: str,
        answer: wire.HorizontalPodAutoscaler,
        now: float | None,
    ) -> None:
        """Remember what the server stored for our desired spec `wanted`, as its answer says;
        and, for a write that changed the HPA, how late it came after its boundary."""
        version = str(answer["metadata"].get("resourceVersion"))
        self._memory[key] = replace(
            memory,
            stored_spec=(wanted, spec_hash(answer.get("spec") or {})),
            last_write=(wanted, version),
            reported_problem=None,
        )
        boundary = memory.expected_boundary
        if now is not None and boundary is not None and boundary <= math.floor(now):
            self._metrics.boundary_lag(now - boundary)

    # -- immediate scale-up ---------------------------------------------------------------------

    async def _scale_up(self, key: str, scale_up: ScaleUp) -> None:
        """Raise the target to `scale_up.minimum` through /scale, right after the HPA write
        that raised minReplicas, instead of waiting up to a sync period of the HPA controller
        (docs/schedules.md, "Immediate scale-up"): never down, never from 0 (scaling to 0
        turns the HPA off, and so this too), at most one write. A target that cannot be scaled
        so is reported; the HPA controller still raises it at its next sync."""
        namespace, name = split_key(key)
        assert namespace is not None
        autoscaler = wire.typed_optional(wire.ScheduledPodAutoscaler, self._autoscalers.get(key))
        if autoscaler is None:
            return
        logger = object_logger(log, namespace, name)
        target = f"{scale_up.kind} {scale_up.name}"
        outcome: ScaleUpOutcome | None = None
        for _attempt in range(_SCALE_ATTEMPTS):
            try:
                resource, scale = await self._act.target_scale(
                    namespace, scale_up.api_version, scale_up.kind, scale_up.name
                )
                replicas = int((scale.get("spec") or {}).get("replicas") or 0)
                if replicas == 0 or replicas >= scale_up.minimum:
                    return
                answer = await self._act.set_target_replicas(
                    resource, namespace, scale_up.name, scale, scale_up.minimum
                )
            except NotScalable as problem:
                outcome = ("False", problem.reason, problem.message)
                break
            except Refused as refused:
                message = f"the API server refused to scale {target}: {refused.message}"
                outcome = ("False", "ScaleRefused", message)
                break
            if answer is None:
                continue  # the Scale changed since it was read: read it again
            message = (
                f"raised {target} from {replicas} to {scale_up.minimum} replicas through its "
                "scale subresource, ahead of the HPA controller"
            )
            logger.info("%s", message)
            outcome = ("True", "ScaledUp", message)
            break
        else:
            logger.info("the target's scale kept changing; the HPA controller raises it")
            return
        assert outcome is not None  # every break sets it
        kind = EventType.NORMAL
        if outcome[0] == "False":
            message = f"{outcome[2]}; the HPA controller raises the target at its next sync instead"
            outcome = ("False", outcome[1], message)
            kind = EventType.WARNING
            logger.warning("immediate scale-up: %s", message)
        # Its Event is recorded with the final plan (decide), after the fleet's writes.
        event = Event(autoscaler, kind, outcome[1], outcome[2])
        self._memory[key] = replace(
            self._memory.get(key, Memory()), scale_up=outcome, scale_up_event=event
        )


class _AutoscalerGone(Exception):
    """The SPA turned out to be deleted: nothing more to do until its deletion event."""


def _refusal(refused: Refused) -> Refusal:
    return Refusal(refused.status, refused.message)
