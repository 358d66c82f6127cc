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
answer, performing each step and reporting what happened as an outcome (data: what it means
for the next decision is :func:`~spa.controller.decide.absorb`'s and
:func:`~spa.controller.decide.attempted`'s to say), metrics and logs.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable, MutableMapping
from typing import Any, Protocol

from spa.api import CompiledSchedule, wire
from spa.api.calendars import CalendarKey, referenced_calendars
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND, CapacityMode
from spa.controller.actuator import NotScalable, OwnerNotChanged, ReplicasChanged
from spa.controller.capacity import CapacityActuator
from spa.controller.decide import (
    MAX_SCHEDULES_PER_AUTOSCALER,
    SCALE_ATTEMPTS,
    Attempts,
    AutoscalerGone,
    AutoscalerStatusWrite,
    BackOfQueue,
    BoundsWritten,
    Calendars,
    Compiled,
    CreateHpa,
    DryRunAnswered,
    DryRunHpa,
    EventType,
    Final,
    ForeignHpaGone,
    HpaNameTaken,
    HpaRefused,
    HpaWrite,
    HpaWritten,
    Memory,
    Outcome,
    OwnersSet,
    ParsedAutoscaler,
    PatchBounds,
    PatchHpa,
    Plan,
    Raised,
    Refusal,
    ScaleRefused,
    ScaleResult,
    ScaleUp,
    ScaleUpDone,
    SetOwner,
    SetOwners,
    Snapshot,
    Unscalable,
    WakeUp,
    absorb,
    attempted,
    changed_by,
    compile_window,
    decide,
    dying,
    one_request_raise,
    replicas_to_set,
    status_fields,
)
from spa.controller.decide.capacity import (
    CapacityOutcome,
    CapacityTask,
    capacity_condition,
    pods_wanted,
)
from spa.controller.decide.scaleup import scale_up_outcome
from spa.controller.decide.snapshot import capacity_timeline
from spa.controller.decide.status import with_capacity_condition
from spa.controller.desired import controller_owner_uid
from spa.controller.metrics import ControllerMetrics
from spa.controller.optional import KindCache
from spa.controller.watches import TARGET_INDEX, UID_INDEX
from spa.controller.writes import Refused
from spa.kube import Conflict, NamespaceDeleted, NotFound, Resource
from spa.runtime import (
    Clock,
    ObjectLogger,
    Result,
    Store,
    TerminatingNamespaces,
    UrgentWrites,
    object_logger,
    split_key,
)
from spa.schedule import Timeline

__all__ = ["MAX_SCHEDULES_PER_AUTOSCALER", "Act", "Reconciler"]

log = logging.getLogger(__name__)

# The most decisions one reconcile makes. A reconcile takes at most seven steps (adopt, create,
# read the HPA whose name was taken, ask the server, patch, patch the bounds after a refusal,
# finish); more means the caches keep contradicting our own writes, and the key is retried
# with backoff instead of spinning.
_MAX_STEPS = 8
# While capacity is still held after the HPA asks for the window's minimum (the HPA controller,
# not an immediate scale-up, raises the target), how soon to look at the target again: no
# watch of the target tells when it has been raised.
_CAPACITY_RECHECK_SECONDS = 5.0
# The most validated SPAs kept for the statuses pass of a boundary (`_parsed`). Keeping one
# saves a validation, about 50 µs, and holds about 11 KB until that pass; at a whole-fleet
# boundary every key waits between the passes at once, so without a bound the fleet's size
# decides the peak (55 MB at 5,000 SPAs). Up to this many, every key of the install
# manifest's fleet keeps its own; beyond, the later keys validate again (docs/performance.md,
# "The boundary's peak").
_MAX_PARSED_KEPT = 1000


class Act(Protocol):
    """What the reconciler has done through the API server (:class:`Actuator` does it; the
    manager builds it with the caches, the client, the recorder and the write fence). Each
    method raises on failure (the convention of spa/controller/decide/__init__.py)."""

    hpa_resource: Resource

    async def get_hpa(self, namespace: str, name: str) -> wire.HorizontalPodAutoscaler: ...

    async def create_hpa(
        self, desired: wire.NewHorizontalPodAutoscaler
    ) -> wire.HorizontalPodAutoscaler: ...

    async def patch_hpa(
        self, current: wire.HorizontalPodAutoscaler, patch: dict[str, Any], *, dry_run: bool = False
    ) -> wire.HorizontalPodAutoscaler: ...

    async def autoscaler_exists(self, autoscaler: wire.ScheduledPodAutoscaler) -> bool: ...

    async def target_scale(
        self, namespace: str, api_version: str, kind: str, name: str
    ) -> tuple[Resource, dict[str, Any]]: ...

    async def set_target_replicas(
        self, resource: Resource, namespace: str, name: str, scale: dict[str, Any], replicas: int
    ) -> dict[str, Any]: ...

    async def replace_target_replicas(
        self,
        namespace: str,
        api_version: str,
        kind: str,
        name: str,
        *,
        expected: int,
        replicas: int,
    ) -> dict[str, Any]: ...

    async def set_schedule_owner(
        self, schedule: wire.Schedule, autoscaler: wire.ScheduledPodAutoscaler | None
    ) -> wire.Schedule: ...

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


_Version = tuple[int | None, int, tuple[tuple[CalendarKey, Any], ...]]
"""What a compiled Schedule depends on: its generation, its SPA's lead time and the
resourceVersion of each calendar it refers to (None: missing; `_UNSERVED`: its kind's CRD is
not served)."""
_UNSERVED = object()


class Reconciler:
    """Reconciles ScheduledPodAutoscaler keys (`namespace/name`).

    :param actuator: performs every request (the caches it records writes in are `autoscalers`,
        `schedules` and `hpas`, which the reconciler reads).
    :param memory: what is remembered of each key between reconciles (empty at the start of
        a process); a test may hand in its own.
    :param decide: the decision; a test may wrap :func:`spa.controller.decide.decide` to see
        each plan.
    :param calendars: the Calendar kind, and `cluster_calendars` the ClusterCalendar kind
        (optional kinds, spa/controller/optional.py): the calendars the Schedules refer to are
        gathered from their caches into the snapshot, and while one has none (its CRD not
        served) a reference to it says so. None: not watched, so every reference to one is
        unresolved.
    :param terminating: where a create refused because the SPA's namespace is being deleted
        (or is gone) is reported (the manager shares one with the Event recorder).
    """

    def __init__(
        self,
        *,
        actuator: Act,
        autoscalers: Store,
        schedules: Store,
        hpas: Store,
        clock: Clock,
        metrics: ControllerMetrics | None = None,
        max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER,
        memory: MutableMapping[str, Memory] | None = None,
        decide: Callable[[Snapshot], Plan] = decide,
        calendars: KindCache | None = None,
        cluster_calendars: KindCache | None = None,
        capacity: CapacityActuator | None = None,
        urgent: UrgentWrites | None = None,
        terminating: TerminatingNamespaces | None = None,
    ) -> None:
        self._autoscalers = autoscalers
        self._terminating = terminating or TerminatingNamespaces()
        kinds = ((CALENDAR_KIND, calendars), (CLUSTER_CALENDAR_KIND, cluster_calendars))
        self._calendar_kinds = {kind: cache for kind, cache in kinds if cache is not None}
        self._schedules = schedules
        self._hpas = hpas
        self._act = actuator
        self._clock = clock
        self._metrics = metrics or ControllerMetrics()
        self._max_schedules = max_schedules
        self._decide = decide
        # Capacity first, fleet-wide: the HPA and /scale writes are urgent, and the statuses
        # and Events wait until none is in flight (docs/architecture.md, "Capacity first").
        self._urgent = urgent or UrgentWrites(clock=clock)
        # Compiled windows by Schedule uid, reused until the Schedule's generation, the lead
        # time its SPA gives it or a calendar it refers to changes: their Timelines hold the
        # cached intervals that make each decision cheap.
        self._compiled: dict[str, tuple[_Version, Compiled]] = {}
        # Each SPA validated once per version (uid, resourceVersion), by key, with the desired
        # HPAs derived from it: the decisions of a boundary share them (ParsedAutoscaler). Kept
        # only while the key is between the two passes of a boundary (a result that sends it
        # to the back of the queue), and for at most _MAX_PARSED_KEPT keys at once: a
        # validated SPA with its desired HPAs is about 11 KB, more than the cached SPA, so it
        # is not kept beyond (docs/performance.md, issue 24).
        self._parsed: dict[str, tuple[tuple[object, object], ParsedAutoscaler]] = {}
        self._memory: MutableMapping[str, Memory] = {} if memory is None else memory
        # Node capacity (docs/schedules.md, "Node capacity"): the actuator of CapacityBuffers
        # (None: the feature is not wired, as in tests of other things), the pods' worth each
        # key holds as last written or read (absent: unknown, after a start), and the capacity
        # Timelines by Schedule uid, reused like `_compiled`.
        self._capacity = capacity
        self._held: dict[str, tuple[int, CapacityMode | None]] = {}
        self._capacity_timelines: dict[str, tuple[tuple[int | None, int], Timeline]] = {}

    # -- entry points ---------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        result: Result | None = None
        try:
            result = await self._reconcile(key)
            return result
        except NamespaceDeleted as error:
            # The namespace is being deleted (or is gone), and the SPA with it: the API server
            # creates nothing there any more, so the SPA is left alone, without a status, an
            # Event or a line of its own (docs/operations.md, "Namespaces being deleted"). Its
            # deletion event, or the resync, brings the next reconcile.
            namespace, _ = split_key(key)
            self._terminating.refused(namespace or "", error)
            result = Result()
            return result
        except NotFound as error:
            # An object read from a cache (the HPA, a capacity object) or just before was
            # deleted meanwhile: a race, not a failure. Its deletion event, or this retry,
            # brings a reconcile that sees it gone.
            logger = object_logger(log, *split_key(key))
            logger.debug("%s; deleted meanwhile, retrying", error)
            result = Result(retry=True)
            return result
        finally:
            kept = result is not None and result.back_of_queue
            if not kept or len(self._parsed) > _MAX_PARSED_KEPT:
                self._parsed.pop(key, None)

    async def _reconcile(self, key: str) -> Result:
        now = self._clock.now()
        instant = math.floor(now)
        namespace, name = split_key(key)
        assert namespace is not None
        logger = object_logger(log, namespace, name)
        attempts = Attempts()
        fetched: wire.HorizontalPodAutoscaler | None = None
        for _step in range(_MAX_STEPS):
            snapshot = await self._snapshot(key, instant, attempts, fetched)
            plan = self._decide(snapshot)
            self._remember(key, plan)
            match plan.action:
                case Final() as final:
                    return await self._finish(key, final, now, logger)
                case SetOwners(changes):
                    outcome: Outcome = await self._set_owners(changes)
                case PatchBounds() as write:
                    async with self._urgent.urgent():
                        outcome = await self._patch_bounds(write, logger)
                case CreateHpa() | PatchHpa() | DryRunHpa() as write:
                    async with self._urgent.urgent():
                        outcome = await self._write_hpa(key, write, now, logger)
            self._absorb(key, outcome)
            attempts = attempted(attempts, outcome)
            match outcome:
                case AutoscalerGone():
                    return Result()
                case HpaNameTaken():
                    # The name is taken by an HPA our label-filtered cache does not see: read
                    # it, and decide on it until a write of ours is in the cache.
                    fetched = await self._act.get_hpa(namespace, name)
                case HpaWritten() | BoundsWritten():
                    fetched = None
            if isinstance(plan.action, CreateHpa | PatchHpa) and attempts.hpa_written:
                scale_up = plan.action.scale_up
                if scale_up is not None:
                    async with self._urgent.urgent():
                        done = await self._scale_up(key, scale_up, instant, logger)
                    if done is not None:
                        self._absorb(key, done)
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
                memory = absorb(memory, ForeignHpaGone())
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
            parse=self._parse,
            capacity_timeline=self._capacity_timeline,
            memory=memory,
            attempts=attempts,
            max_schedules=self._max_schedules,
            calendars=self._gather_calendars(schedules),
        )

    def _gather_calendars(
        self, schedules: list[wire.Schedule]
    ) -> dict[CalendarKey, dict[str, Any]]:
        """The cached calendars the Schedules refer to (a missing one is left out)."""
        found: dict[CalendarKey, dict[str, Any]] = {}
        for schedule in schedules:
            for key in referenced_calendars(schedule):
                cache = self._calendar_kinds.get(key.kind)
                store = None if cache is None else cache.store
                cluster = key.kind == CLUSTER_CALENDAR_KIND
                name = key.name if cluster else f"{key.namespace}/{key.name}"
                document = None if store is None else store.get(name)
                if document is not None:
                    found[key] = document
        return found

    def _unserved_calendars(self) -> dict[str, str]:
        """The calendar kinds watched whose cache is not there (the CRD not served, or its
        informer not listed yet), with what a reference to one says."""
        return {
            kind: cache.missing
            for kind, cache in self._calendar_kinds.items()
            if cache.store is None
        }

    def _compile(
        self, schedule: wire.Schedule, lead: int = 0, calendars: Calendars | None = None
    ) -> Compiled:
        metadata = schedule["metadata"]
        uid = str(metadata.get("uid"))
        calendars = calendars or {}
        unserved = self._unserved_calendars()
        versions = tuple(
            (key, _UNSERVED)
            if key.kind in unserved
            else (key, (calendars[key].get("metadata") or {}).get("resourceVersion"))
            if key in calendars
            else (key, None)
            for key in referenced_calendars(schedule)
        )
        version: _Version = (metadata.get("generation"), lead, versions)
        cached = self._compiled.get(uid)
        if cached is None or cached[0] != version:
            compiled = compile_window(schedule, lead, calendars, unserved=unserved)
            cached = self._compiled[uid] = (version, compiled)
        return cached[1]

    def _parse(self, autoscaler: wire.ScheduledPodAutoscaler) -> ParsedAutoscaler:
        metadata = autoscaler.get("metadata") or {}
        key = f"{metadata.get('namespace')}/{metadata.get('name')}"
        version = (metadata.get("uid"), metadata.get("resourceVersion"))
        cached = self._parsed.get(key)
        if cached is None or cached[0] != version or version[1] is None:
            cached = self._parsed[key] = (version, ParsedAutoscaler(autoscaler))
        return cached[1]

    def _capacity_timeline(
        self, schedule: wire.Schedule, compiled: CompiledSchedule, lead: int
    ) -> Timeline:
        metadata = schedule["metadata"]
        uid = str(metadata.get("uid"))
        version = (metadata.get("generation"), lead)
        cached = self._capacity_timelines.get(uid)
        if cached is None or cached[0] != version:
            cached = self._capacity_timelines[uid] = (version, capacity_timeline(compiled, lead))
        return cached[1]

    # -- remembering ----------------------------------------------------------------------------

    def _remember(self, key: str, plan: Plan) -> None:
        """Keep the Memory a decision left (or forget the key: its SPA is gone or going)."""
        if plan.memory is None:
            namespace, name = split_key(key)
            assert namespace is not None
            self._metrics.forget_autoscaler(namespace=namespace, name=name)
            self._memory.pop(key, None)
            # Its CapacityBuffer goes with it (its ownerReference).
            self._held.pop(key, None)
        else:
            self._memory[key] = plan.memory

    def _absorb(self, key: str, outcome: Outcome) -> None:
        """Keep what an outcome means for the key's Memory (decided by `absorb`); a key just
        forgotten stays so when the outcome means nothing for it."""
        memory = self._memory.get(key, Memory())
        absorbed = absorb(memory, outcome)
        if absorbed is not memory:
            self._memory[key] = absorbed

    # -- acting ---------------------------------------------------------------------------------

    async def _finish(self, key: str, final: Final, now: float, logger: ObjectLogger) -> Result:
        """Hold the node capacity wanted, write the statuses, record the Events and metrics,
        and say when to run again."""
        namespace, name = split_key(key)
        assert namespace is not None
        statuses = final.statuses
        recheck: float | None = None
        if final.capacity is None and self._capacity is not None:
            if self._autoscalers.get(key) is None:
                # The SPA is gone: its placeholder Deployment, in the controller's namespace,
                # cannot go with it by an ownerReference (docs/schedules.md, "Node capacity").
                await self._capacity.release(namespace, name)
        elif final.capacity is not None and self._capacity is not None:
            outcome, recheck = await self._hold_capacity(key, final.capacity, logger)
            if outcome is not None:
                statuses = tuple(
                    AutoscalerStatusWrite(
                        write.obj,
                        with_capacity_condition(
                            write.status,
                            outcome,
                            generation=write.obj["metadata"].get("generation"),
                            instant=math.floor(now),
                        ),
                    )
                    if isinstance(write, AutoscalerStatusWrite)
                    else write
                    for write in statuses
                )
        if final.events or statuses:
            await self._urgent.settled()
        for event in final.events:
            if event.type is EventType.WARNING:
                self._act.warning(event.obj, event.reason, event.message)
            else:
                self._act.normal(event.obj, event.reason, event.message)
        for write in statuses:
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
        if final.problem is not None:
            logger.warning("%s", final.problem)
        match final.requeue:
            case BackOfQueue():
                # The statuses wait for every key already due: HPAs first, fleet-wide.
                return Result(back_of_queue=True)
            case WakeUp(at, recheck_after, backoff):
                if recheck is not None:
                    recheck_after = min(recheck, recheck_after or recheck)
                return Result(requeue_at=at, requeue_after=recheck_after, retry=backoff)

    async def _hold_capacity(
        self, key: str, task: CapacityTask, logger: ObjectLogger
    ) -> tuple[CapacityOutcome | None, float | None]:
        """Make the cluster hold the node capacity `task` wants (docs/schedules.md, "Node
        capacity"), after the HPA write of this reconcile: the target's replicas read from its
        /scale only while a window is in its capacity lead, and a request about the buffer
        only when what is wanted differs from what the caches of buffers and placeholders show
        (:meth:`CapacityActuator.cached`). The CapacityReady condition to write (None: the SPA
        orders no capacity) and how soon to look again."""
        assert self._capacity is not None
        namespace, name = split_key(key)
        assert namespace is not None
        intent = task.intent
        mode = intent.mode if intent is not None else CapacityMode.Auto
        known, known_mode = self._held.get(key, (None, None))
        replicas: int | None = None
        unsupported: str | None = None
        pods = 0
        placeholders = False
        if intent is not None and intent.minimum is not None:
            api_version, kind, target = task.target
            try:
                _, scale = await self._act.target_scale(namespace, api_version, kind, target)
                replicas = int((scale.get("spec") or {}).get("replicas") or 0)
                placeholders = await self._capacity.resolve(mode) is CapacityMode.Placeholder
                pods = pods_wanted(
                    intent, replicas, placeholders=placeholders, handing_over=task.handing_over
                )
            except NotScalable as problem:
                unsupported = f"cannot read the target's replicas: {problem.message}"
        # What the SPA holds: as the caches show it (level-triggered: a buffer deleted or
        # edited by hand, or left by a stopped process, is put right), else as this process
        # last wrote it (None: unknown, after a start).
        present = self._capacity.cached(task.autoscaler)
        if present is None and known is not None:
            present = {known_mode: known} if known and known_mode is not None else {}
        if not task.enabled and not present:
            # Not wanted, and nothing held (or, without caches, never ordered by this
            # process): nothing to ask about.
            self._held[key] = (0, None)
            self._metrics.capacity_requested(namespace=namespace, name=name, pods=None)
            self._metrics.capacity_not_ready(namespace=namespace, name=name, late=None)
            return None, None
        wanted_mode = CapacityMode.Placeholder if placeholders else CapacityMode.CapacityBuffer
        wanted = {wanted_mode: pods} if pods > 0 else {}
        held_mode: CapacityMode | None = None
        if present is None or present != wanted:
            # The actuator reads the object before it writes: a cache behind our own last
            # write costs a read, never a second write.
            held = await self._capacity.hold(task.autoscaler, task.target, pods=pods, mode=mode)
            for other in sorted(present or {}):
                if other is not held.mode:
                    # Held the other way before (Auto found a CapacityBuffer served since, or
                    # the mode was changed): that object goes.
                    await self._capacity.hold(task.autoscaler, task.target, pods=0, mode=other)
            self._held[key] = (held.pods, held.mode)
            held_mode = held.mode
            unsupported = unsupported or held.unsupported
            pods = held.pods
        else:
            held_mode = wanted_mode
        self._metrics.capacity_requested(
            namespace=namespace, name=name, pods=pods if task.enabled else None
        )
        if not task.enabled:
            self._metrics.capacity_not_ready(namespace=namespace, name=name, late=None)
            return None, None
        if pods > 0:
            logger.debug("holding node capacity for %d pods", pods)
        outcome = capacity_condition(
            intent, pods=pods, replicas=replicas, mode=held_mode, unsupported=unsupported
        )
        # The alert SpaCapacityNotReady (docs/operations.md): the boundary has passed and the
        # target's pods have not taken the capacity (or there is none to take).
        self._metrics.capacity_not_ready(
            namespace=namespace, name=name, late=task.raised and outcome[0] == "False"
        )
        recheck = _CAPACITY_RECHECK_SECONDS if pods > 0 and task.raised else None
        return outcome, recheck

    async def _set_owners(self, changes: tuple[SetOwner, ...]) -> OwnersSet:
        failures: dict[str, str] = {}
        for change in changes:
            try:
                await self._act.set_schedule_owner(change.schedule, change.autoscaler)
            except OwnerNotChanged as failed:
                failures[str(change.schedule["metadata"]["uid"])] = failed.message
        return OwnersSet(failures)

    async def _write_hpa(
        self, key: str, write: HpaWrite, now: float, logger: ObjectLogger
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
                logger.info("not creating the HPA: the ScheduledPodAutoscaler no longer exists")
                return AutoscalerGone()
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
        operation = "create" if isinstance(write, CreateHpa) else "patch" if changed else "noop"
        self._metrics.hpa_written(operation)
        boundary = self._memory.get(key, Memory()).expected_boundary
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

    async def _scale_up(
        self, key: str, scale_up: ScaleUp, instant: int, logger: ObjectLogger
    ) -> ScaleUpDone | None:
        """Raise the target through /scale right after the HPA write that raised minReplicas,
        instead of waiting up to a sync period of the HPA controller (docs/schedules.md,
        "Immediate scale-up"), as `replicas_to_set` allows: in one JSON patch that tests the
        replicas the HPA controller last left (`one_request_raise`), or, when there is nothing to
        test or the test fails, a read and a compare-and-swap, read again when the Scale
        changed in between, at most SCALE_ATTEMPTS times. None: nothing to say."""
        namespace, _ = split_key(key)
        assert namespace is not None
        autoscaler = wire.typed_optional(wire.ScheduledPodAutoscaler, self._autoscalers.get(key))
        if autoscaler is None:
            return None
        result: ScaleResult | _Unchanged | None = await self._tested_scale_up(
            namespace, scale_up, logger
        )
        if result is None:
            result = await self._read_scale_up(namespace, scale_up, logger)
        if result is None or isinstance(result, _Unchanged):
            return None
        status, _, message = scale_up_outcome(scale_up, result)
        if status == "True":
            logger.debug("%s", message)
        else:
            logger.warning("immediate scale-up: %s", message)
        return ScaleUpDone(autoscaler, scale_up, result, instant)

    async def _tested_scale_up(
        self, namespace: str, scale_up: ScaleUp, logger: ObjectLogger
    ) -> ScaleResult | None:
        """The one-request scale-up; None: it could not be tried, or its test failed."""
        tested = one_request_raise(scale_up)
        if tested is None:
            return None
        expected, wanted = tested
        try:
            await self._act.replace_target_replicas(
                namespace,
                scale_up.api_version,
                scale_up.kind,
                scale_up.name,
                expected=expected,
                replicas=wanted,
            )
        except (ReplicasChanged, Conflict):
            logger.debug("the target no longer has %d replicas; reading its scale", expected)
            return None
        except NotScalable as problem:
            return Unscalable(problem.problem, problem.message)
        except Refused as refused:
            return ScaleRefused(refused.message)
        return Raised(expected)

    async def _read_scale_up(
        self, namespace: str, scale_up: ScaleUp, logger: ObjectLogger
    ) -> ScaleResult | _Unchanged | None:
        """Read the Scale, then a compare-and-swap write; `_UNCHANGED`: the target needs no
        raise; None: the Scale kept changing."""
        for _attempt in range(SCALE_ATTEMPTS):
            try:
                resource, scale = await self._act.target_scale(
                    namespace, scale_up.api_version, scale_up.kind, scale_up.name
                )
                replicas = int((scale.get("spec") or {}).get("replicas") or 0)
                wanted = replicas_to_set(scale_up, replicas)
                if wanted is None:
                    return _UNCHANGED
                await self._act.set_target_replicas(
                    resource, namespace, scale_up.name, scale, wanted
                )
            except Conflict:
                continue  # the Scale changed since it was read: read it again
            except NotScalable as problem:
                return Unscalable(problem.problem, problem.message)
            except Refused as refused:
                return ScaleRefused(refused.message)
            return Raised(replicas)
        logger.info("the target's scale kept changing; the HPA controller raises it")
        return None


class _Unchanged(enum.Enum):
    """The read found the target with enough replicas (or at 0): nothing done, nothing said."""

    UNCHANGED = enum.auto()


_UNCHANGED = _Unchanged.UNCHANGED
