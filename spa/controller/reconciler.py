"""The ScheduledPodAutoscaler reconciler: one key in, the cluster made to match, next wake-up out.

Level-triggered: it reads the SPA, its Schedules and its HPA from the informer caches, works out
what should be (with the pure engine and `spa.controller.desired`), writes only what differs,
and asks to run again at the SPA's next transition. It owns, and alone writes, the SPA's status,
the generated HPA, the status of every Schedule whose `scaleTargetRef` names the SPA, and those
Schedules' controller ownerReferences. The key of a missing SPA is reconciled too: that is where
Schedules created before their SPA are marked Degraded.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from spa.api import (
    CompiledSchedule,
    InvalidObject,
    ScheduledPodAutoscaler,
    autoscaler_base,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
)
from spa.controller.actuator import Actuator, Refused
from spa.controller.desired import (
    SPEC_HASH_ANNOTATION,
    HpaComparison,
    compare_hpa,
    controller_owner_uid,
    desired_hpa,
    foreign_controller,
    hpa_patch,
    orphaned_hpa,
    spec_hash,
    with_condition,
)
from spa.controller.metrics import ControllerMetrics
from spa.controller.watches import TARGET_INDEX, UID_INDEX
from spa.kube import Conflict, NotFound, Resource
from spa.runtime import (
    AsyncKubeClient,
    Clock,
    EventRecorder,
    Result,
    Store,
    object_logger,
    split_key,
)
from spa.schedule import (
    OneShotWindow,
    Rule,
    State,
    Timeline,
    format_instant,
    next_transition,
    state_at,
)

__all__ = ["MAX_SCHEDULES_PER_AUTOSCALER", "Reconciler"]

log = logging.getLogger(__name__)

# How often a name taken by somebody else's HPA is looked at again (a read, never a write).
FOREIGN_HPA_RECHECK_SECONDS = 60.0
# The most Schedules one SPA applies (docs/schedules.md, "Limits"); the oldest win.
MAX_SCHEDULES_PER_AUTOSCALER = 100


@dataclass(frozen=True, slots=True)
class _Evaluated:
    """One Schedule as the reconcile sees it; `problem` makes it Degraded, and `reason` names
    the problem in the Warning event."""

    obj: dict[str, Any]
    compiled: CompiledSchedule | None
    problem: str | None
    rule: Rule | None
    reason: str = "InvalidSchedule"


@dataclass(frozen=True, slots=True)
class _HpaOutcome:
    applied: bool
    problem: str | None = None
    # A write landed and changed the HPA (a write the server answered with the same
    # resourceVersion changed nothing, and is not counted here).
    wrote: bool = False
    reason: str = "HPAConflict"
    # The SPA turned out to be deleted: nothing more to do until its deletion event.
    gone: bool = False
    # Keep trying with the key's backoff (a write the server refused).
    retry: bool = False


def _dying(obj: Mapping[str, Any]) -> bool:
    """Deleted, but held by finalizers (foreground or orphan deletion, or somebody's): the
    garbage collector is at work on its dependents."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _created_order(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("creationTimestamp") or ""), str(metadata.get("name") or ""))


class Reconciler:
    """Reconciles ScheduledPodAutoscaler keys (`namespace/name`)."""

    def __init__(
        self,
        *,
        kube: AsyncKubeClient,
        autoscalers: Store,
        schedules: Store,
        hpas: Store,
        hpa_resource: Resource,
        recorder: EventRecorder,
        clock: Clock,
        may_write: Callable[[], bool] = lambda: True,
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
            may_write=may_write,
        )
        self._clock = clock
        self._metrics = metrics or ControllerMetrics()
        self._max_schedules = max_schedules
        # Compiled windows by Schedule uid, reused until the Schedule's generation changes:
        # their Timelines hold the cached intervals that make each reconcile cheap.
        self._compiled: dict[
            str, tuple[int | None, CompiledSchedule | InvalidObject, Timeline | None]
        ] = {}
        self._expected_boundary: dict[str, int] = {}
        self._foreign_hpa: set[str] = set()
        self._rejected_hpa: dict[str, str] = {}
        # By SPA key: (hash of a desired spec, hash of the spec the API server stored, or would
        # store, for it), from the server's own answers (docs/architecture.md, "Convergence").
        self._stored_specs: dict[str, tuple[str, str]] = {}
        # By SPA key: (hash of the desired spec, resourceVersion of the HPA) our last full
        # write left; a reconcile that wants to write the same spec again while the HPA is
        # still at that version is looping.
        self._last_write: dict[str, tuple[str, str]] = {}

    # -- entry points ---------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        now = self._clock.now()
        instant = math.floor(now)
        namespace, name = split_key(key)
        assert namespace is not None
        logger = object_logger(log, namespace, name)
        autoscaler_object = self._autoscalers.get(key)
        if autoscaler_object is None or _dying(autoscaler_object):
            if autoscaler_object is None:
                await self._orphaned(key, instant)
            # A dying SPA (foreground or orphan deletion, a finalizer) is left to the garbage
            # collector: no ownerReference is added or removed for it and no HPA created, so
            # each propagation policy does what Kubernetes means by it (docs/architecture.md).
            self._forget(key)
            return Result()

        members, refused = await self._adopt(autoscaler_object, key)
        try:
            autoscaler = parse_scheduled_pod_autoscaler(autoscaler_object)
        except InvalidObject as invalid:
            problem = f"invalid spec: {invalid}"
            logger.warning("ScheduledPodAutoscaler is invalid: %s", invalid)
            await self._write_autoscaler_status(
                autoscaler_object,
                state=None,
                upcoming=None,
                outcome=_HpaOutcome(False, problem),
                reason="InvalidSpec",
                instant=instant,
            )
            for member in members:
                await self._write_schedule_status(
                    self._evaluate(member, instant),
                    state=None,
                    instant=instant,
                    problem=f"ScheduledPodAutoscaler {key} is invalid",
                )
            await self._report_refused(autoscaler_object, refused, instant)
            self._metrics.autoscaler(
                namespace=namespace, name=name, replicas=None, schedules={}, reconciled_at=now
            )
            return Result()

        evaluated = [self._evaluate(member, instant) for member in members]
        rules = [entry.rule for entry in evaluated if entry.rule is not None]
        base = autoscaler_base(autoscaler)
        state = state_at(base, rules, instant)
        upcoming = next_transition(base, rules, instant)

        outcome = await self._sync_hpa(autoscaler_object, autoscaler, state, key)
        if outcome.gone:
            return Result()
        boundary = self._expected_boundary.get(key)
        if outcome.wrote and boundary is not None and boundary <= instant:
            self._metrics.boundary_lag(now - boundary)
        if upcoming is None:
            self._expected_boundary.pop(key, None)
        else:
            self._expected_boundary[key] = upcoming
        if outcome.wrote and outcome.problem is None:
            # HPAs first: when a whole fleet is due at one boundary (or at the first start),
            # every due HPA is written before any status. This key goes back to the end of the
            # queue, behind the others that are due now; that pass finds the HPA in sync and
            # writes the statuses and Events. With a throttled client (or a busy API server)
            # the last HPA no longer waits for the status writes of all the SPAs before it.
            # Only a write that changed the HPA comes back at once, so this cannot loop.
            return Result(requeue_after=0.0)

        reason = "Applied"
        if outcome.problem is not None:
            reason = outcome.reason
        elif state.max_raised:
            reason = "MaxRaisedToMin"
        if outcome.applied:
            self._record_window_changes(autoscaler_object, state)
        await self._write_autoscaler_status(
            autoscaler_object,
            state=state,
            upcoming=upcoming,
            outcome=outcome,
            reason=reason,
            instant=instant,
        )
        for entry in evaluated:
            await self._write_schedule_status(
                entry,
                state=state,
                instant=instant,
                problem=None if outcome.applied else outcome.problem,
            )
        await self._report_refused(autoscaler_object, refused, instant)
        self._metrics.autoscaler(
            namespace=namespace,
            name=name,
            replicas=(state.min_replicas, state.max_replicas) if outcome.applied else None,
            schedules={
                str(entry.obj["metadata"]["name"]): outcome.applied
                and entry.obj["metadata"]["name"] in state.active
                for entry in evaluated
            },
            reconciled_at=now,
        )
        if outcome.retry:
            logger.warning("%s", outcome.problem)
            return Result(requeue_at=upcoming, retry=True)
        if outcome.problem is not None:
            logger.warning("%s", outcome.problem)
            return Result(requeue_at=upcoming, requeue_after=FOREIGN_HPA_RECHECK_SECONDS)
        return Result(requeue_at=upcoming)

    def forget_schedule(self, uid: str) -> None:
        """Drop the compiled window of a deleted Schedule."""
        self._compiled.pop(uid, None)

    def _forget(self, key: str) -> None:
        """Drop what is remembered about an SPA that is gone or going."""
        namespace, name = split_key(key)
        assert namespace is not None
        self._metrics.forget_autoscaler(namespace=namespace, name=name)
        self._expected_boundary.pop(key, None)
        self._foreign_hpa.discard(key)
        self._rejected_hpa.pop(key, None)
        self._stored_specs.pop(key, None)
        self._last_write.pop(key, None)

    # -- Schedules ------------------------------------------------------------------------------

    async def _orphaned(self, key: str, instant: int) -> None:
        """Schedules that name a ScheduledPodAutoscaler that does not exist (yet)."""
        for schedule in self._schedules.by_index(TARGET_INDEX, key):
            owner = controller_owner_uid(schedule)
            owners = self._autoscalers.by_index(UID_INDEX, owner) if owner else []
            problem = f"ScheduledPodAutoscaler {key} not found"
            if owners and not any(_dying(o) for o in owners):
                # Retargeted away from a live SPA: detach it, so that deleting that SPA does not
                # garbage-collect a Schedule that now belongs elsewhere. An owner that no longer
                # exists, or is being deleted, is left to the garbage collector.
                released = await self._act.set_schedule_owner(schedule, None)
                if isinstance(released, str):
                    problem = released
                else:
                    schedule = released
            await self._write_schedule_status(
                self._evaluate(schedule, instant), state=None, instant=instant, problem=problem
            )

    async def _adopt(
        self, autoscaler_object: dict[str, Any], key: str
    ) -> tuple[list[dict[str, Any]], list[_Evaluated]]:
        """The SPA's Schedules, after adopting the ones that name it but are not yet (or no
        longer) controlled by it; and the ones that name it but cannot apply (controlled by
        an object of another kind, beyond the limit, or refused by the API server), each with
        its problem. One Schedule never stops the others."""
        uid = str(autoscaler_object["metadata"]["uid"])
        members: list[dict[str, Any]] = []
        refused: list[_Evaluated] = []
        candidates = sorted(self._schedules.by_index(TARGET_INDEX, key), key=_created_order)
        for schedule in candidates:
            other = foreign_controller(schedule)
            if other is not None:
                problem = (
                    f"controlled by {other}, so it is not adopted by ScheduledPodAutoscaler "
                    f"{key} and does not apply; remove that controller ownerReference to use it"
                )
                refused.append(_Evaluated(schedule, None, problem, None, "ForeignController"))
            elif len(members) >= self._max_schedules:
                problem = (
                    f"ScheduledPodAutoscaler {key} already has {self._max_schedules} Schedules, "
                    "the most one may have; this one (among the newest) does not apply"
                )
                refused.append(_Evaluated(schedule, None, problem, None, "TooManySchedules"))
            elif controller_owner_uid(schedule) == uid:
                members.append(schedule)
            else:
                adopted = await self._act.set_schedule_owner(schedule, autoscaler_object)
                if isinstance(adopted, str):
                    refused.append(_Evaluated(schedule, None, adopted, None, "AdoptionFailed"))
                else:
                    members.append(adopted)
        return members, refused

    async def _report_refused(
        self, autoscaler_object: dict[str, Any], refused: list[_Evaluated], instant: int
    ) -> None:
        """Schedules that name the SPA but cannot apply: a Warning on the SPA when one newly
        becomes so (its own status and Event follow), then its Degraded status."""
        for entry in refused:
            status = entry.obj.get("status") or {}
            if status.get("condition") != "Degraded" or status.get("message") != entry.problem:
                self._act.warning(
                    autoscaler_object,
                    entry.reason,
                    f"Schedule {entry.obj['metadata']['name']}: {entry.problem}",
                )
            await self._write_schedule_status(entry, state=None, instant=instant, problem=None)

    def _evaluate(self, schedule: dict[str, Any], instant: int) -> _Evaluated:
        metadata = schedule["metadata"]
        uid = str(metadata.get("uid"))
        generation = metadata.get("generation")
        cached = self._compiled.get(uid)
        if cached is None or cached[0] != generation:
            timeline = None
            compiled: CompiledSchedule | InvalidObject
            try:
                compiled = compile_schedule(parse_schedule(schedule).spec)
                timeline = Timeline(compiled.window)
            except InvalidObject as invalid:
                compiled = invalid
            cached = self._compiled[uid] = (generation, compiled, timeline)
        _, compiled, timeline = cached
        if isinstance(compiled, InvalidObject):
            return _Evaluated(schedule, None, str(compiled), None)
        rule = None
        if not compiled.suspend and timeline is not None:
            rule = Rule(
                name=str(metadata["name"]),
                timeline=timeline,
                min_replicas=compiled.min_replicas,
                max_replicas=compiled.max_replicas,
            )
        return _Evaluated(schedule, compiled, None, rule)

    # -- the HPA --------------------------------------------------------------------------------

    async def _sync_hpa(
        self,
        autoscaler_object: dict[str, Any],
        autoscaler: ScheduledPodAutoscaler,
        state: State,
        key: str,
    ) -> _HpaOutcome:
        namespace, name = split_key(key)
        assert namespace is not None
        desired = desired_hpa(
            autoscaler_object, autoscaler, state, api_version=self._act.hpa_resource.api_version
        )
        wanted = str(desired["metadata"]["annotations"][SPEC_HASH_ANNOTATION])
        current = self._hpas.get(key)
        if current is None and key in self._foreign_hpa:
            try:
                current = await self._act.get_hpa(namespace, name)
            except NotFound:
                self._foreign_hpa.discard(key)
        if current is None:
            if not await self._act.autoscaler_exists(autoscaler_object):
                # Our cache of SPAs is behind (its watch has not caught up after an outage or
                # a 410): creating now would resurrect the HPA of a deleted SPA until the
                # garbage collector removes it again. The SPA's deletion event follows.
                object_logger(log, namespace, name).info(
                    "not creating the HPA: the ScheduledPodAutoscaler no longer exists"
                )
                return _HpaOutcome(applied=False, gone=True)
            try:
                created = await self._act.create_hpa(desired)
            except Conflict:
                # The name is taken by an HPA our label-filtered cache does not see.
                current = await self._act.get_hpa(namespace, name)
            except Refused as refused:
                return self._hpa_refused(autoscaler_object, key, refused, applied=False)
            else:
                self._remember_write(key, wanted, created)
                self._rejected_hpa.pop(key, None)
                self._metrics.hpa_written("create")
                object_logger(log, namespace, name).info(
                    "created HPA with minReplicas %d, maxReplicas %d",
                    state.min_replicas,
                    state.max_replicas,
                )
                return _HpaOutcome(applied=True, wrote=True)
        if controller_owner_uid(current) != autoscaler_object["metadata"]["uid"] and not (
            orphaned_hpa(current)
        ):
            first_time = key not in self._foreign_hpa
            self._foreign_hpa.add(key)
            problem = (
                f"HorizontalPodAutoscaler {key} already exists and is not controlled by this "
                "ScheduledPodAutoscaler; it is left untouched (delete it or rename the "
                "ScheduledPodAutoscaler)"
            )
            if first_time:
                self._act.warning(autoscaler_object, "HPAConflict", problem)
            return _HpaOutcome(applied=False, problem=problem)
        self._foreign_hpa.discard(key)
        patch = hpa_patch(current, desired)
        comparison = compare_hpa(current, desired, stored_spec=self._stored_spec(key, wanted))
        if comparison is HpaComparison.ASK_SERVER:
            # Values differ literally, and nothing remembered says whether that is the server's
            # spelling of this very spec (after a restart or a failover) or somebody's edit:
            # the server's own dry-run answer tells, and is remembered.
            answer = await self._act.patch_hpa(current, patch, dry_run=True)
            self._metrics.hpa_dry_run()
            self._stored_specs[key] = (wanted, spec_hash(answer.get("spec") or {}))
            comparison = compare_hpa(current, desired, stored_spec=self._stored_spec(key, wanted))
        if comparison is HpaComparison.IN_SYNC:
            self._rejected_hpa.pop(key, None)
            return _HpaOutcome(applied=True)
        version = str(current["metadata"].get("resourceVersion"))
        if self._last_write.get(key) == (wanted, version):
            return self._not_converging(autoscaler_object, key)
        try:
            applied = await self._act.patch_hpa(current, patch)
        except Refused as refused:
            if refused.status == 403:
                return self._hpa_refused(autoscaler_object, key, refused, applied=False)
            bounds_applied = await self._apply_bounds_only(current, state, key)
            return self._hpa_refused(autoscaler_object, key, refused, applied=bounds_applied)
        self._remember_write(key, wanted, applied)
        self._rejected_hpa.pop(key, None)
        changed = str(applied["metadata"].get("resourceVersion")) != version
        self._metrics.hpa_written("patch" if changed else "noop")
        object_logger(log, namespace, name).info(
            "applied HPA with minReplicas %d, maxReplicas %d%s",
            state.min_replicas,
            state.max_replicas,
            "" if changed else " (the server stored nothing new)",
        )
        return _HpaOutcome(applied=True, wrote=changed)

    def _stored_spec(self, key: str, wanted: str) -> str | None:
        remembered = self._stored_specs.get(key)
        return remembered[1] if remembered is not None and remembered[0] == wanted else None

    def _remember_write(self, key: str, wanted: str, answer: dict[str, Any]) -> None:
        """What the server stored for our desired spec `wanted`, as its answer says."""
        self._stored_specs[key] = (wanted, spec_hash(answer.get("spec") or {}))
        self._last_write[key] = (wanted, str(answer["metadata"].get("resourceVersion")))

    async def _apply_bounds_only(self, current: dict[str, Any], state: State, key: str) -> bool:
        """After the server refused the whole desired spec: keep min/maxReplicas following the
        Schedules on the HPA as it is, so that a bad edit of the SPA cannot freeze a peak
        `minReplicas` in place. Returns whether the bounds are in force."""
        spec = current.get("spec") or {}
        bounds = {"minReplicas": state.min_replicas, "maxReplicas": state.max_replicas}
        if all(spec.get(field) == value for field, value in bounds.items()):
            return True
        try:
            await self._act.patch_hpa(current, {"spec": bounds})
        except Refused as refused:
            object_logger(log, *split_key(key)).warning(
                "the API server refused the bounds too: %s", refused.message
            )
            return False
        # Not a write of the desired spec: the next pass tries the whole spec again.
        self._last_write.pop(key, None)
        self._metrics.hpa_written("patch")
        return True

    def _hpa_refused(
        self, autoscaler_object: dict[str, Any], key: str, refused: Refused, *, applied: bool
    ) -> _HpaOutcome:
        """A write of the HPA the API server refuses: invalid (400, 422: an SPA spec the CRD
        schema let through) or forbidden (403: RBAC, quota, an admission webhook). Degraded
        with the server's message and a Warning event, then retried with backoff; a write
        that succeeds later clears it. (Other errors propagate, for the usual error backoff.)"""
        verb = "forbade" if refused.status == 403 else "rejected"
        problem = f"the API server {verb} the HorizontalPodAutoscaler: {refused.message}"
        if applied:
            problem += "; minReplicas and maxReplicas still follow the Schedules"
        if self._rejected_hpa.get(key) != problem:
            self._rejected_hpa[key] = problem
            self._act.warning(autoscaler_object, "HPARejected", problem)
        self._metrics.hpa_refused(refused.status)
        return _HpaOutcome(applied=applied, problem=problem, reason="HPARejected", retry=True)

    def _not_converging(self, autoscaler_object: dict[str, Any], key: str) -> _HpaOutcome:
        """The safety net of "one write, then nothing": the HPA is still exactly as our last
        write left it, yet it compares as different. Writing again would loop (a bug in the
        comparison, or an API server that answers one thing and stores another), so back off
        and say so instead."""
        problem = (
            "the HorizontalPodAutoscaler still differs from the desired spec right after the "
            "controller wrote it, with no other change since; not writing it again until the "
            "backoff ends"
        )
        if self._rejected_hpa.get(key) != problem:
            self._rejected_hpa[key] = problem
            self._act.warning(autoscaler_object, "HPANotConverging", problem)
        self._metrics.hpa_not_converging()
        return _HpaOutcome(applied=False, problem=problem, reason="HPANotConverging", retry=True)

    # -- statuses and events --------------------------------------------------------------------

    def _record_window_changes(self, autoscaler_object: dict[str, Any], state: State) -> None:
        status = autoscaler_object.get("status") or {}
        before = set(status.get("activeSchedules") or ())
        after = set(state.active)
        if before == after:
            return
        old_min = status.get("minReplicas", "-")
        old_max = status.get("maxReplicas", "-")
        change = (
            f"minReplicas {old_min} -> {state.min_replicas}, "
            f"maxReplicas {old_max} -> {state.max_replicas}"
        )
        for schedule in sorted(after - before):
            self._act.normal(
                autoscaler_object, "ScheduleStarted", f"Schedule {schedule} started: {change}"
            )
        for schedule in sorted(before - after):
            self._act.normal(
                autoscaler_object, "ScheduleEnded", f"Schedule {schedule} ended: {change}"
            )

    async def _write_autoscaler_status(
        self,
        autoscaler_object: dict[str, Any],
        *,
        state: State | None,
        upcoming: int | None,
        outcome: _HpaOutcome,
        reason: str,
        instant: int,
    ) -> None:
        metadata = autoscaler_object["metadata"]
        current = autoscaler_object.get("status") or {}
        now = format_instant(instant)
        condition = "Available" if outcome.problem is None else "Degraded"
        if outcome.problem is not None:
            message = outcome.problem
        elif state is not None and state.max_raised:
            message = (
                f"the active Schedules set minReplicas {state.min_replicas} above maxReplicas; "
                f"maxReplicas was raised to {state.max_replicas}"
            )
        elif state is not None:
            message = f"HPA has minReplicas {state.min_replicas}, maxReplicas {state.max_replicas}"
        else:
            message = ""
        applied = outcome.applied and state is not None
        desired: dict[str, Any] = {
            "condition": condition,
            "lastTransitionTime": (
                current.get("lastTransitionTime") or now
                if current.get("condition") == condition
                else now
            ),
            "conditions": with_condition(
                current.get("conditions"),
                type_="Ready",
                status="True" if applied else "False",
                reason=reason,
                message=message,
                generation=metadata.get("generation"),
                now=now,
            ),
            "observedGeneration": metadata.get("generation"),
            "minReplicas": state.min_replicas if applied and state else None,
            "maxReplicas": state.max_replicas if applied and state else None,
            "activeSchedules": list(state.active) if state is not None else [],
            "nextTransitionTime": format_instant(upcoming) if upcoming is not None else None,
        }
        previous_reason = next(
            (c.get("reason") for c in current.get("conditions") or () if c.get("type") == "Ready"),
            None,
        )
        if reason == "MaxRaisedToMin" and previous_reason != reason:
            self._act.warning(autoscaler_object, "MaxRaisedToMin", message)
        if reason == "InvalidSpec" and previous_reason != reason:
            self._act.warning(autoscaler_object, "InvalidSpec", message)
        await self._act.patch_autoscaler_status(autoscaler_object, desired)

    async def _write_schedule_status(
        self,
        entry: _Evaluated,
        *,
        state: State | None,
        instant: int,
        problem: str | None,
    ) -> None:
        schedule = entry.obj
        metadata = schedule["metadata"]
        current = schedule.get("status") or {}
        name = metadata["name"]
        message: str | None = None
        upcoming: int | None = None
        active = state is not None and name in state.active
        if entry.problem is not None:
            condition, message = "Degraded", entry.problem
        elif problem is not None and (state is None or active):
            condition, message = "Degraded", problem
        elif entry.compiled is not None and entry.compiled.suspend:
            condition = "Suspend"
        elif (
            entry.compiled is not None
            and isinstance(entry.compiled.window, OneShotWindow)
            and entry.compiled.window.completed(instant)
        ):
            condition = "Completed"
        else:
            condition = "Progressing" if active else "Available"
            if entry.rule is not None:
                upcoming = entry.rule.timeline.next_boundary(instant)
        now = format_instant(instant)
        desired = {
            "condition": condition,
            "lastTransitionTime": (
                current.get("lastTransitionTime") or now
                if current.get("condition") == condition
                else now
            ),
            "message": message,
            "observedGeneration": metadata.get("generation"),
            "nextTransitionTime": format_instant(upcoming) if upcoming is not None else None,
        }
        if condition == "Degraded" and (
            current.get("condition") != "Degraded" or current.get("message") != message
        ):
            reason = entry.reason if entry.problem is not None else "NotApplied"
            self._act.warning(schedule, reason, str(message))
        await self._act.patch_schedule_status(schedule, desired)
