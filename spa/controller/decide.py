"""What the SPA controller intends for one key, decided without a single request.

Why a pure function: the reconcile of a key used to decide, write and interpret HTTP answers
in one class, so its rules (who owns which Schedule, when the HPA needs a write, what a refusal
means for the statuses, when to wake up) could only be tested against an API server.
:func:`decide` takes a :class:`Snapshot` (the SPA, the Schedules that name it, its HPA, the
instant, what the controller remembers of the key, and what this reconcile already tried) and
returns a :class:`Plan`; the reconciler performs the Plan through the actuator and, when the
Plan was only a step (ownerReferences or an HPA write come first), decides again on a fresh
snapshot that includes what those writes did. docs/architecture.md, "Decide, then act", shows
the loop; the rules themselves are those of docs/architecture.md and docs/schedules.md.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, overload

from spa.api import (
    CompiledSchedule,
    Condition,
    InvalidObject,
    ScheduleCondition,
    ScheduledPodAutoscaler,
    ScheduledPodAutoscalerCondition,
    ScheduledPodAutoscalerStatus,
    ScheduleStatus,
    autoscaler_base,
    autoscaler_lead,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
    wire,
)
from spa.controller.desired import (
    SPEC_HASH_ANNOTATION,
    HpaComparison,
    compare_hpa,
    controller_owner_uid,
    desired_hpa,
    foreign_controller,
    hpa_patch,
    orphaned_hpa,
    with_condition,
)
from spa.schedule import (
    Rule,
    State,
    Timeline,
    format_instant,
    next_transition,
    state_at,
)

__all__ = [
    "FOREIGN_HPA_RECHECK_SECONDS",
    "MAX_SCHEDULES_PER_AUTOSCALER",
    "SCALE_UP_CONDITION",
    "Attempts",
    "AutoscalerReport",
    "AutoscalerStatusWrite",
    "Compiled",
    "CreateHpa",
    "DryRunHpa",
    "Event",
    "EventType",
    "Memory",
    "PatchHpa",
    "Plan",
    "Refusal",
    "ScaleUp",
    "ScaleUpOutcome",
    "ScheduleStatusWrite",
    "SetOwner",
    "Snapshot",
    "StatusWrite",
    "compile_window",
    "decide",
    "dying",
    "status_fields",
]

# How often a name taken by somebody else's HPA is looked at again (a read, never a write).
FOREIGN_HPA_RECHECK_SECONDS = 60.0
# The SPA condition that reports the last immediate scale-up (docs/api.md).
SCALE_UP_CONDITION = "ImmediateScaleUp"
# The most Schedules one SPA applies (docs/schedules.md, "Limits"); the oldest win.
MAX_SCHEDULES_PER_AUTOSCALER = 100

Compiled = tuple[CompiledSchedule | InvalidObject, Timeline | None]
"""A Schedule's spec compiled (or why it cannot be), with the Timeline of its window."""


class EventType(enum.StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class Event:
    """An Event to record about `obj` (the SPA or one of its Schedules)."""

    obj: wire.ScheduledPodAutoscaler | wire.Schedule
    type: EventType
    reason: str
    message: str


# (condition status, reason, message) of an immediate scale-up.
ScaleUpOutcome = tuple[Literal["True", "False"], str, str]


@dataclass(frozen=True, slots=True)
class Memory:
    """What the controller remembers of one SPA between reconciles. All of it is a shortcut or
    a "say it once": after a restart it is empty, and the first reconcile finds the same facts
    again (a dry-run answer, one more Event)."""

    # (hash of a desired spec, hash of the spec the API server stored, or would store, for it),
    # from the server's own answers (docs/architecture.md, "Convergence").
    stored_spec: tuple[str, str] | None = None
    # (hash of the desired spec, resourceVersion of the HPA) our last full write left: wanting
    # to write the same spec again while the HPA is still at that version is a loop.
    last_write: tuple[str, str] | None = None
    # The HPA's name is taken by an object our label-filtered cache does not hold.
    foreign_hpa: bool = False
    # The HPA problem last reported by a Warning (said once, not at every retry).
    reported_problem: str | None = None
    # The transition the last reconcile expected next (to measure how late it was applied).
    expected_boundary: int | None = None
    # (status, reason, message) of the last immediate scale-up, for the SPA's condition
    # SCALE_UP_CONDITION (the status is written in a later pass than the scale-up).
    scale_up: ScaleUpOutcome | None = None
    # Its Event, not yet recorded: Events wait for the final plan, so that a fleet's HPA and
    # scale writes at one boundary are not delayed by Events (HPAs first).
    scale_up_event: Event | None = None
    # The effective minReplicas last seen in force on the HPA. A raise is measured from it, so
    # that putting back a minReplicas somebody lowered on the HPA is no raise: immediate
    # scale-up happens at boundaries only (docs/schedules.md). Unknown after a restart: the
    # HPA's own minReplicas is the measure then.
    applied_min: int | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """The API server refused a write for a reason the user must fix (400, 403, 422)."""

    status: int
    message: str


@dataclass(frozen=True, slots=True)
class Attempts:
    """What this reconcile already tried; decide() must not plan again what just failed."""

    # By Schedule uid: why setting its controller ownerReference failed.
    owner_failures: Mapping[str, str] = field(default_factory=dict)
    # The refusal of the desired HPA (its creation or the patch of the whole spec).
    hpa_refusal: Refusal | None = None
    # The refusal of the fallback that patches only min/maxReplicas.
    bounds_refusal: Refusal | None = None
    # A write changed the HPA.
    hpa_written: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one decision reads."""

    key: str
    instant: int
    # The SPA (None: it does not exist), the Schedules whose scaleTargetRef names it, and its
    # HPA (as cached, or as read from the API server when the cache cannot hold it).
    autoscaler: wire.ScheduledPodAutoscaler | None
    schedules: Sequence[wire.Schedule]
    hpa: wire.HorizontalPodAutoscaler | None
    # The uids, among the controllers of those Schedules, of SPAs that exist and are not
    # being deleted (read only when the SPA itself does not exist).
    live_owners: frozenset[str]
    hpa_api_version: str
    # (Schedule, its SPA's leadTime in seconds) -> the compiled Schedule.
    compile: Callable[[wire.Schedule, int], Compiled]
    memory: Memory = Memory()
    attempts: Attempts = Attempts()
    max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER


# -- the writes a Plan may ask for ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetOwner:
    """Make `autoscaler` (None: nobody) the controller of `schedule`."""

    schedule: wire.Schedule
    autoscaler: wire.ScheduledPodAutoscaler | None


@dataclass(frozen=True, slots=True)
class CreateHpa:
    desired: wire.NewHorizontalPodAutoscaler
    wanted: str  # the desired spec's hash


@dataclass(frozen=True, slots=True)
class PatchHpa:
    """A JSON merge patch of the HPA: the whole desired spec (`wanted` is its hash), or only
    min/maxReplicas after the server refused the whole spec (`wanted` is None)."""

    current: wire.HorizontalPodAutoscaler
    patch: dict[str, Any]
    wanted: str | None


@dataclass(frozen=True, slots=True)
class DryRunHpa:
    """Ask the API server what it would store for the desired spec, without storing it."""

    current: wire.HorizontalPodAutoscaler
    patch: dict[str, Any]
    wanted: str


HpaWrite = CreateHpa | PatchHpa | DryRunHpa


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """Immediate scale-up (docs/schedules.md): once the HPA write that raises minReplicas has
    changed the HPA, raise the target to `minimum` through its /scale subresource, if it has
    fewer replicas (and more than 0)."""

    api_version: str
    kind: str
    name: str
    minimum: int


@dataclass(frozen=True, slots=True)
class AutoscalerStatusWrite:
    """The status fields the controller owns, for the SPA."""

    obj: wire.ScheduledPodAutoscaler
    status: ScheduledPodAutoscalerStatus


@dataclass(frozen=True, slots=True)
class ScheduleStatusWrite:
    """The status fields the controller owns, for one of the SPA's Schedules."""

    obj: wire.Schedule
    status: ScheduleStatus


# Two classes rather than one with a union of objects and of statuses, so that the object and
# its status are of the same kind for mypy too.
StatusWrite = AutoscalerStatusWrite | ScheduleStatusWrite


@dataclass(frozen=True, slots=True)
class AutoscalerReport:
    """What the per-SPA metrics show after a final plan."""

    replicas: tuple[int, int] | None
    schedules: Mapping[str, bool]


@dataclass(frozen=True, slots=True)
class Plan:
    """The intended writes, in order: ownerReferences, then the HPA, then statuses.

    A Plan with `owners` or an `hpa` write is a step: perform it, then decide again. One
    without them is final: write its statuses, record its events, and wake up as it says.
    """

    memory: Memory
    owners: tuple[SetOwner, ...] = ()
    hpa: HpaWrite | None = None
    # With `hpa`: what to do right after it, if it changed the HPA.
    scale_up: ScaleUp | None = None
    statuses: tuple[StatusWrite, ...] = ()
    events: tuple[Event, ...] = ()
    requeue_at: int | None = None
    requeue_after: float | None = None
    retry: bool = False
    # The SPA is gone or going: drop what is remembered and its metrics.
    forget: bool = False
    report: AutoscalerReport | None = None
    # Why the SPA is Degraded, for the log.
    problem: str | None = None

    @property
    def final(self) -> bool:
        return not self.owners and self.hpa is None


def dying(obj: wire.ScheduledPodAutoscaler) -> bool:
    """Deleted, but held by finalizers (foreground or orphan deletion, or somebody's): the
    garbage collector is at work on its dependents."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def compile_window(schedule: wire.Schedule, lead: int = 0) -> Compiled:
    """A Schedule's spec compiled, or why it cannot be (the reconciler caches this by uid,
    generation and `lead`: the Timeline holds the intervals that make each decision cheap).
    `lead` is its SPA's leadTime in seconds, for a Schedule that sets none itself."""
    try:
        compiled = compile_schedule(parse_schedule(schedule).spec)
    except InvalidObject as invalid:
        return invalid, None
    return compiled, Timeline(compiled.applied_window(lead))


@overload
def status_fields(
    status: ScheduledPodAutoscalerStatus,
) -> wire.ScheduledPodAutoscalerStatusPatch: ...


@overload
def status_fields(status: ScheduleStatus) -> wire.ScheduleStatusPatch: ...


def status_fields(
    status: ScheduledPodAutoscalerStatus | ScheduleStatus,
) -> wire.ScheduledPodAutoscalerStatusPatch | wire.ScheduleStatusPatch:
    """A status as the merge patch of the fields the controller owns: a None clears a field,
    and conditions carry only their set fields, as the API server stores them."""
    fields = status.model_dump(mode="json", by_alias=True, exclude={"conditions"})
    if isinstance(status, ScheduleStatus):
        return wire.typed(wire.ScheduleStatusPatch, fields)
    if status.conditions is not None:
        fields["conditions"] = [condition.to_wire() for condition in status.conditions]
    return wire.typed(wire.ScheduledPodAutoscalerStatusPatch, fields)


# -- the decision ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Evaluated:
    """One Schedule as the decision sees it; `problem` makes it Degraded, and `reason` names
    the problem in the Warning event."""

    obj: wire.Schedule
    compiled: CompiledSchedule | None
    problem: str | None
    rule: Rule | None
    reason: str = "InvalidSchedule"


@dataclass(frozen=True, slots=True)
class _HpaOutcome:
    """Where the HPA stands when no write is left to try."""

    # min/maxReplicas of the desired state are in force on the HPA.
    applied: bool
    problem: str | None = None
    reason: str = "HPAConflict"
    # Keep trying with the key's backoff (a write the server refused, or a loop).
    retry: bool = False


def decide(snapshot: Snapshot) -> Plan:
    """The next step, or the final plan, for the SPA of `snapshot.key`."""
    autoscaler = snapshot.autoscaler
    if autoscaler is None:
        return _without_autoscaler(snapshot)
    if dying(autoscaler):
        # A dying SPA (foreground or orphan deletion, a finalizer) is left to the garbage
        # collector: no ownerReference is added or removed for it and no HPA created, so
        # each propagation policy does what Kubernetes means by it (docs/architecture.md).
        return Plan(memory=Memory(), forget=True)
    members, refused, adoptions = _membership(snapshot, autoscaler)
    if adoptions:
        return Plan(memory=snapshot.memory, owners=adoptions)
    try:
        model = parse_scheduled_pod_autoscaler(autoscaler)
    except InvalidObject as invalid:
        return _invalid_autoscaler(snapshot, autoscaler, members, refused, str(invalid))

    lead = autoscaler_lead(model)
    evaluated = [_evaluate(snapshot, member, lead) for member in members]
    rules = [entry.rule for entry in evaluated if entry.rule is not None]
    base = autoscaler_base(model)
    state = state_at(base, rules, snapshot.instant)
    upcoming = next_transition(base, rules, snapshot.instant)

    if snapshot.attempts.hpa_written:
        # HPAs first: when a whole fleet is due at one boundary (or at the first start), every
        # due HPA is written before any status. This key goes back to the end of the queue,
        # behind the others that are due now; that pass finds the HPA in sync and writes the
        # statuses and Events. Only a write that changed the HPA comes back at once, so this
        # cannot loop.
        return Plan(memory=replace(snapshot.memory, expected_boundary=upcoming), requeue_after=0.0)
    step = _hpa(snapshot, autoscaler, model, state)
    if isinstance(step, Plan):
        return step
    outcome, memory, events = step
    memory = replace(memory, expected_boundary=upcoming)

    reason = "Applied"
    if outcome.problem is not None:
        reason = outcome.reason
    elif state.max_raised:
        reason = "MaxRaisedToMin"
    all_events = list(events)
    if memory.scale_up_event is not None:
        all_events.append(memory.scale_up_event)
        memory = replace(memory, scale_up_event=None)
    if outcome.applied:
        all_events += _window_changes(autoscaler, state)
    status, status_events = _autoscaler_status(
        snapshot, autoscaler, state=state, upcoming=upcoming, outcome=outcome, reason=reason
    )
    statuses: list[StatusWrite] = [AutoscalerStatusWrite(autoscaler, status)]
    all_events += status_events
    for entry in evaluated:
        write, warning = _schedule_status(
            snapshot, entry, state=state, problem=None if outcome.applied else outcome.problem
        )
        statuses.append(write)
        all_events += warning
    refused_statuses, refused_events = _refused(snapshot, autoscaler, refused)
    report = AutoscalerReport(
        replicas=(state.min_replicas, state.max_replicas) if outcome.applied else None,
        schedules={
            str(entry.obj["metadata"]["name"]): outcome.applied
            and entry.obj["metadata"]["name"] in state.active
            for entry in evaluated
        },
    )
    return Plan(
        memory=memory,
        statuses=(*statuses, *refused_statuses),
        events=(*all_events, *refused_events),
        requeue_at=upcoming,
        requeue_after=(
            FOREIGN_HPA_RECHECK_SECONDS
            if outcome.problem is not None and not outcome.retry
            else None
        ),
        retry=outcome.retry,
        report=report,
        problem=outcome.problem,
    )


def _without_autoscaler(snapshot: Snapshot) -> Plan:
    """Schedules that name a ScheduledPodAutoscaler that does not exist (yet)."""
    failures = snapshot.attempts.owner_failures
    releases = tuple(
        SetOwner(schedule, None)
        for schedule in snapshot.schedules
        if controller_owner_uid(schedule) in snapshot.live_owners and _uid(schedule) not in failures
    )
    if releases:
        # Retargeted away from a live SPA: detach it, so that deleting that SPA does not
        # garbage-collect a Schedule that now belongs elsewhere. An owner that no longer
        # exists, or is being deleted, is left to the garbage collector.
        return Plan(memory=Memory(), owners=releases, forget=True)
    statuses: list[StatusWrite] = []
    events: list[Event] = []
    for schedule in snapshot.schedules:
        problem = failures.get(_uid(schedule), f"ScheduledPodAutoscaler {snapshot.key} not found")
        write, warning = _schedule_status(
            snapshot, _evaluate(snapshot, schedule), state=None, problem=problem
        )
        statuses.append(write)
        events += warning
    return Plan(memory=Memory(), statuses=tuple(statuses), events=tuple(events), forget=True)


def _membership(
    snapshot: Snapshot, autoscaler: wire.ScheduledPodAutoscaler
) -> tuple[list[wire.Schedule], list[_Evaluated], tuple[SetOwner, ...]]:
    """The SPA's Schedules; the ones that name it but cannot apply (controlled by an object of
    another kind, beyond the limit, or their adoption refused), each with its problem; and the
    adoptions to make first. One Schedule never stops the others."""
    uid = str(autoscaler["metadata"]["uid"])
    members: list[wire.Schedule] = []
    refused: list[_Evaluated] = []
    adoptions: list[SetOwner] = []
    for schedule in sorted(snapshot.schedules, key=_created_order):
        other = foreign_controller(schedule)
        failure = snapshot.attempts.owner_failures.get(_uid(schedule))
        if other is not None:
            problem = (
                f"controlled by {other}, so it is not adopted by ScheduledPodAutoscaler "
                f"{snapshot.key} and does not apply; remove that controller ownerReference to "
                "use it"
            )
            refused.append(_Evaluated(schedule, None, problem, None, "ForeignController"))
        elif len(members) + len(adoptions) >= snapshot.max_schedules:
            problem = (
                f"ScheduledPodAutoscaler {snapshot.key} already has {snapshot.max_schedules} "
                "Schedules, the most one may have; this one (among the newest) does not apply"
            )
            refused.append(_Evaluated(schedule, None, problem, None, "TooManySchedules"))
        elif controller_owner_uid(schedule) == uid:
            members.append(schedule)
        elif failure is not None:
            refused.append(_Evaluated(schedule, None, failure, None, "AdoptionFailed"))
        else:
            adoptions.append(SetOwner(schedule, autoscaler))
    return members, refused, tuple(adoptions)


def _evaluate(snapshot: Snapshot, schedule: wire.Schedule, lead: int = 0) -> _Evaluated:
    """`lead`: the SPA's leadTime (0 where there is no valid SPA: only the status is wanted)."""
    compiled, timeline = snapshot.compile(schedule, lead)
    if isinstance(compiled, InvalidObject):
        return _Evaluated(schedule, None, str(compiled), None)
    rule = None
    if not compiled.suspend and timeline is not None:
        rule = Rule(
            name=str(schedule["metadata"]["name"]),
            timeline=timeline,
            min_replicas=compiled.min_replicas,
            max_replicas=compiled.max_replicas,
        )
    return _Evaluated(schedule, compiled, None, rule)


# -- the HPA --------------------------------------------------------------------------------------


def _hpa(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    model: ScheduledPodAutoscaler,
    state: State,
) -> Plan | tuple[_HpaOutcome, Memory, tuple[Event, ...]]:
    """The HPA write to make next (a step Plan), or where the HPA stands."""
    memory = snapshot.memory
    attempts = snapshot.attempts
    desired = desired_hpa(autoscaler, model, state, api_version=snapshot.hpa_api_version)
    wanted = str(desired["metadata"]["annotations"][SPEC_HASH_ANNOTATION])
    current = snapshot.hpa
    scale_up = _scale_up(model, state, current, memory.applied_min)
    if current is None:
        if attempts.hpa_refusal is not None:
            return _refused_hpa(memory, autoscaler, attempts.hpa_refusal, applied=False)
        return Plan(memory=memory, hpa=CreateHpa(desired, wanted), scale_up=scale_up)
    if controller_owner_uid(current) != autoscaler["metadata"]["uid"] and not orphaned_hpa(current):
        problem = (
            f"HorizontalPodAutoscaler {snapshot.key} already exists and is not controlled by "
            "this ScheduledPodAutoscaler; it is left untouched (delete it or rename the "
            "ScheduledPodAutoscaler)"
        )
        events: tuple[Event, ...] = ()
        if not memory.foreign_hpa:
            events = (Event(autoscaler, EventType.WARNING, "HPAConflict", problem),)
        return _HpaOutcome(False, problem), replace(memory, foreign_hpa=True), events
    memory = replace(memory, foreign_hpa=False)
    if attempts.hpa_refusal is not None:
        return _after_refusal(memory, autoscaler, current, state, attempts)
    patch = hpa_patch(current, desired)
    stored = memory.stored_spec
    comparison = compare_hpa(
        current,
        desired,
        stored_spec=stored[1] if stored is not None and stored[0] == wanted else None,
    )
    if comparison is HpaComparison.ASK_SERVER:
        # Values differ literally, and nothing remembered says whether that is the server's
        # spelling of this very spec (after a restart or a failover) or somebody's edit: the
        # server's own dry-run answer tells, and is remembered.
        return Plan(memory=memory, hpa=DryRunHpa(current, patch, wanted))
    if comparison is HpaComparison.IN_SYNC:
        in_force = replace(memory, reported_problem=None, applied_min=state.min_replicas)
        return _HpaOutcome(True), in_force, ()
    version = str((current.get("metadata") or {}).get("resourceVersion"))
    if memory.last_write == (wanted, version):
        return _not_converging(memory, autoscaler)
    return Plan(memory=memory, hpa=PatchHpa(current, patch, wanted), scale_up=scale_up)


def _scale_up(
    model: ScheduledPodAutoscaler,
    state: State,
    current: Mapping[str, Any] | None,
    applied_min: int | None,
) -> ScaleUp | None:
    """The immediate scale-up that goes with a write of the desired HPA: when it raises the
    effective minReplicas last in force (`applied_min`; unknown: the HPA's) and the SPA has not
    turned it off. Not when it creates the HPA (nothing was raised; the HPA controller sets the
    target within its first sync), not when it only puts back a minReplicas somebody lowered
    on the HPA (between boundaries), and not at a window's end (minReplicas falls: scaling
    down stays with the HPA controller)."""
    if model.spec.scale_up_immediately is False or current is None:
        return None
    before = applied_min
    if before is None:
        before = int((current.get("spec") or {}).get("minReplicas") or 1)
    if state.min_replicas <= before:
        return None
    ref = model.spec.horizontal_pod_autoscaler_spec.scale_target_ref
    return ScaleUp(ref.api_version or "v1", ref.kind, ref.name, state.min_replicas)


def _after_refusal(
    memory: Memory,
    autoscaler: wire.ScheduledPodAutoscaler,
    current: wire.HorizontalPodAutoscaler,
    state: State,
    attempts: Attempts,
) -> Plan | tuple[_HpaOutcome, Memory, tuple[Event, ...]]:
    """The server refused the whole desired spec: an invalid one (400, 422: an SPA spec the
    CRD schema let through) still gets min/maxReplicas following the Schedules on the HPA as
    it is, so a bad edit of the SPA cannot freeze a peak minReplicas in place. A forbidden one
    (403: RBAC, quota, a webhook) gets nothing more."""
    refusal = attempts.hpa_refusal
    assert refusal is not None
    if refusal.status == 403:
        return _refused_hpa(memory, autoscaler, refusal, applied=False)
    spec = current.get("spec") or {}
    bounds = {"minReplicas": state.min_replicas, "maxReplicas": state.max_replicas}
    if all(spec.get(name) == value for name, value in bounds.items()):
        return _refused_hpa(memory, autoscaler, refusal, applied=True)
    if attempts.bounds_refusal is None:
        return Plan(memory=memory, hpa=PatchHpa(current, {"spec": bounds}, None))
    return _refused_hpa(memory, autoscaler, refusal, applied=False)


def _refused_hpa(
    memory: Memory, autoscaler: wire.ScheduledPodAutoscaler, refusal: Refusal, *, applied: bool
) -> tuple[_HpaOutcome, Memory, tuple[Event, ...]]:
    """Degraded with the server's message and a Warning event, then retried with backoff; a
    write that succeeds later clears it."""
    verb = "forbade" if refusal.status == 403 else "rejected"
    problem = f"the API server {verb} the HorizontalPodAutoscaler: {refusal.message}"
    if applied:
        problem += "; minReplicas and maxReplicas still follow the Schedules"
    return _hpa_problem(memory, autoscaler, problem, "HPARejected", applied=applied)


def _not_converging(
    memory: Memory, autoscaler: wire.ScheduledPodAutoscaler
) -> tuple[_HpaOutcome, Memory, tuple[Event, ...]]:
    """The safety net of "one write, then nothing": the HPA is still exactly as our last write
    left it, yet it compares as different. Writing again would loop (a bug in the comparison,
    or an API server that answers one thing and stores another), so back off and say so."""
    problem = (
        "the HorizontalPodAutoscaler still differs from the desired spec right after the "
        "controller wrote it, with no other change since; not writing it again until the "
        "backoff ends"
    )
    return _hpa_problem(memory, autoscaler, problem, "HPANotConverging", applied=False)


def _hpa_problem(
    memory: Memory,
    autoscaler: wire.ScheduledPodAutoscaler,
    problem: str,
    reason: str,
    *,
    applied: bool,
) -> tuple[_HpaOutcome, Memory, tuple[Event, ...]]:
    events: tuple[Event, ...] = ()
    if memory.reported_problem != problem:
        events = (Event(autoscaler, EventType.WARNING, reason, problem),)
    outcome = _HpaOutcome(applied, problem, reason, retry=True)
    return outcome, replace(memory, reported_problem=problem), events


# -- statuses and events --------------------------------------------------------------------------


def _window_changes(autoscaler: wire.ScheduledPodAutoscaler, state: State) -> list[Event]:
    status = autoscaler.get("status") or {}
    before = set(status.get("activeSchedules") or ())
    after = set(state.active)
    if before == after:
        return []
    change = (
        f"minReplicas {status.get('minReplicas', '-')} -> {state.min_replicas}, "
        f"maxReplicas {status.get('maxReplicas', '-')} -> {state.max_replicas}"
    )
    started = [
        Event(autoscaler, EventType.NORMAL, "ScheduleStarted", f"Schedule {name} started: {change}")
        for name in sorted(after - before)
    ]
    ended = [
        Event(autoscaler, EventType.NORMAL, "ScheduleEnded", f"Schedule {name} ended: {change}")
        for name in sorted(before - after)
    ]
    return started + ended


def _autoscaler_status(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    *,
    state: State | None,
    upcoming: int | None,
    outcome: _HpaOutcome,
    reason: str,
) -> tuple[ScheduledPodAutoscalerStatus, list[Event]]:
    metadata = autoscaler["metadata"]
    current = autoscaler.get("status") or {}
    now = format_instant(snapshot.instant)
    condition = (
        ScheduledPodAutoscalerCondition.Available
        if outcome.problem is None
        else ScheduledPodAutoscalerCondition.Degraded
    )
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
    applied = state if outcome.applied else None
    conditions = with_condition(
        current.get("conditions"),
        type_="Ready",
        status="True" if applied is not None else "False",
        reason=reason,
        message=message,
        generation=metadata.get("generation"),
        now=now,
    )
    if snapshot.memory.scale_up is not None:
        scale_status, scale_reason, scale_message = snapshot.memory.scale_up
        conditions = with_condition(
            conditions,
            type_=SCALE_UP_CONDITION,
            status=scale_status,
            reason=scale_reason,
            message=scale_message,
            generation=metadata.get("generation"),
            now=now,
        )
    status = ScheduledPodAutoscalerStatus(
        condition=condition,
        last_transition_time=_since(current, condition, now),
        conditions=[valid for entry in conditions if (valid := _condition(entry)) is not None],
        observed_generation=metadata.get("generation"),
        min_replicas=applied.min_replicas if applied is not None else None,
        max_replicas=applied.max_replicas if applied is not None else None,
        active_schedules=list(state.active) if state is not None else [],
        next_transition_time=format_instant(upcoming) if upcoming is not None else None,
    )
    previous_reason = next(
        (c.get("reason") for c in current.get("conditions") or () if c.get("type") == "Ready"),
        None,
    )
    events = []
    if reason in ("MaxRaisedToMin", "InvalidSpec") and previous_reason != reason:
        events.append(Event(autoscaler, EventType.WARNING, reason, message))
    return status, events


def _condition(entry: wire.Condition) -> Condition | None:
    """A condition as the model has it; one written by somebody else that is not a valid
    metav1.Condition is left out (the status belongs to this controller)."""
    try:
        return Condition.model_validate(entry)
    except ValueError:
        return None


def _since(
    current: wire.ScheduledPodAutoscalerStatus | wire.ScheduleStatus, condition: str, now: str
) -> str:
    """lastTransitionTime: kept while the condition stays the same."""
    if current.get("condition") == condition:
        return str(current.get("lastTransitionTime") or now)
    return now


def _schedule_status(
    snapshot: Snapshot, entry: _Evaluated, *, state: State | None, problem: str | None
) -> tuple[ScheduleStatusWrite, list[Event]]:
    schedule = entry.obj
    metadata = schedule["metadata"]
    current = schedule.get("status") or {}
    message: str | None = None
    upcoming: int | None = None
    active = state is not None and metadata["name"] in state.active
    if entry.problem is not None:
        condition, message = ScheduleCondition.Degraded, entry.problem
    elif problem is not None and (state is None or active):
        condition, message = ScheduleCondition.Degraded, problem
    elif entry.compiled is not None and entry.compiled.suspend:
        condition = ScheduleCondition.Suspend
    elif entry.compiled is not None and entry.compiled.window.completed(snapshot.instant):
        # A OneShot past its end, or a Schedule past its endDate (docs/schedules.md).
        condition = ScheduleCondition.Completed
    else:
        condition = ScheduleCondition.Progressing if active else ScheduleCondition.Available
        if entry.rule is not None:
            upcoming = entry.rule.timeline.next_boundary(snapshot.instant)
    now = format_instant(snapshot.instant)
    status = ScheduleStatus(
        condition=condition,
        last_transition_time=_since(current, condition, now),
        message=message,
        observed_generation=metadata.get("generation"),
        next_transition_time=format_instant(upcoming) if upcoming is not None else None,
    )
    events = []
    if condition is ScheduleCondition.Degraded and (
        current.get("condition") != condition or current.get("message") != message
    ):
        reason = entry.reason if entry.problem is not None else "NotApplied"
        events.append(Event(schedule, EventType.WARNING, reason, str(message)))
    return ScheduleStatusWrite(schedule, status), events


def _refused(
    snapshot: Snapshot, autoscaler: wire.ScheduledPodAutoscaler, refused: list[_Evaluated]
) -> tuple[list[StatusWrite], list[Event]]:
    """Schedules that name the SPA but cannot apply: a Warning on the SPA when one newly
    becomes so (its own status and Event follow), then its Degraded status."""
    statuses: list[StatusWrite] = []
    events: list[Event] = []
    for entry in refused:
        status = entry.obj.get("status") or {}
        if status.get("condition") != "Degraded" or status.get("message") != entry.problem:
            events.append(
                Event(
                    autoscaler,
                    EventType.WARNING,
                    entry.reason,
                    f"Schedule {entry.obj['metadata']['name']}: {entry.problem}",
                )
            )
        write, warning = _schedule_status(snapshot, entry, state=None, problem=None)
        statuses.append(write)
        events += warning
    return statuses, events


def _invalid_autoscaler(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    members: list[wire.Schedule],
    refused: list[_Evaluated],
    invalid: str,
) -> Plan:
    problem = f"invalid spec: {invalid}"
    status, events = _autoscaler_status(
        snapshot,
        autoscaler,
        state=None,
        upcoming=None,
        outcome=_HpaOutcome(False, problem),
        reason="InvalidSpec",
    )
    statuses: list[StatusWrite] = [AutoscalerStatusWrite(autoscaler, status)]
    for member in members:
        write, warning = _schedule_status(
            snapshot,
            _evaluate(snapshot, member),
            state=None,
            problem=f"ScheduledPodAutoscaler {snapshot.key} is invalid",
        )
        statuses.append(write)
        events += warning
    refused_statuses, refused_events = _refused(snapshot, autoscaler, refused)
    return Plan(
        memory=snapshot.memory,
        statuses=(*statuses, *refused_statuses),
        events=(*events, *refused_events),
        report=AutoscalerReport(replicas=None, schedules={}),
        problem=problem,
    )


def _uid(obj: wire.Schedule) -> str:
    return str((obj.get("metadata") or {}).get("uid"))


def _created_order(obj: wire.Schedule) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("creationTimestamp") or ""), str(metadata.get("name") or ""))
