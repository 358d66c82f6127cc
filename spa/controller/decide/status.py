"""The statuses of the SPA and of its Schedules, and the Events that go with them.

Why a module of its own: what users read (`kubectl get`, `kubectl describe`, the conditions
and Events of docs/operations.md) is decided from the outcome of the other rule families, in
one place, so that a status and its Event can never disagree and each Warning is said once
(when the condition or its message changes, not at every reconcile).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from spa.api import (
    Condition,
    ScheduleCondition,
    ScheduledPodAutoscalerCondition,
    ScheduledPodAutoscalerStatus,
    ScheduleStatus,
    wire,
)
from spa.api.resources import LeadInForce, WindowRecord
from spa.controller.decide.capacity import CAPACITY_CONDITION, CapacityOutcome
from spa.controller.decide.incident import IncidentCondition
from spa.controller.decide.membership import Evaluated
from spa.controller.decide.plan import ScheduleStatusWrite, StatusWrite
from spa.controller.decide.readiness import stored_windows
from spa.controller.decide.reasons import Event, EventType, Reason
from spa.controller.decide.scaleup import SCALE_UP_CONDITION, ScaleUpOutcome
from spa.controller.decide.snapshot import Snapshot
from spa.controller.desired import with_condition
from spa.schedule import State, format_instant

# The SPA's condition that says a raise was written ahead of its boundary.
RAISED_AHEAD_CONDITION = "RaisedAhead"

__all__ = [
    "RAISED_AHEAD_CONDITION",
    "autoscaler_status",
    "raised_ahead_condition",
    "raised_ahead_message",
    "refused_statuses",
    "schedule_status",
    "status_fields",
    "window_changes",
]


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
    if status.windows is not None:
        # A list replaces the stored one whole: its entries carry only their set fields.
        fields["windows"] = [
            window.model_dump(mode="json", by_alias=True, exclude_none=True)
            for window in status.windows
        ]
    if status.conditions is not None:
        fields["conditions"] = [condition.to_wire() for condition in status.conditions]
    return wire.typed(wire.ScheduledPodAutoscalerStatusPatch, fields)


def window_changes(autoscaler: wire.ScheduledPodAutoscaler, state: State) -> list[Event]:
    """A Normal Event for each window that started or ended since the status was written."""
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
        Event(
            autoscaler,
            EventType.NORMAL,
            Reason.SCHEDULE_STARTED,
            f"Schedule {name} started: {change}",
        )
        for name in sorted(after - before)
    ]
    ended = [
        Event(
            autoscaler, EventType.NORMAL, Reason.SCHEDULE_ENDED, f"Schedule {name} ended: {change}"
        )
        for name in sorted(before - after)
    ]
    return started + ended


def autoscaler_status(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    *,
    state: State | None,
    upcoming: int | None,
    applied: bool,
    problem: str | None,
    reason: Reason,
    paused: bool = False,
    held: tuple[int, int] | None = None,
    incident: Sequence[IncidentCondition] = (),
    capacity: CapacityOutcome | None = None,
    windows: Sequence[WindowRecord] | None = None,
    leads: tuple[LeadInForce | None, LeadInForce | None] | None = None,
    raised_early: str | None = None,
    raised_before: str | None = None,
) -> tuple[ScheduledPodAutoscalerStatus, list[Event]]:
    """The SPA's status (Available or Degraded with `problem`; its Ready condition with
    `reason`; the last immediate scale-up's condition; the `incident` conditions; the
    CapacityReady condition, `capacity`, for an SPA that orders node capacity), and a
    Warning when a Ready reason worth one is new. `raised_early` says why the bounds in
    force were written ahead of their boundary (docs/schedules.md, "Raises ahead of a shared
    boundary"), in the RaisedAhead condition; `raised_before`, why the last raise was, when
    its boundary came before this status said so.

    While `paused`, the bounds in force are those the HPA keeps (`held`, None without an HPA)
    and Ready is False: the HPA has whatever it had, not necessarily what the schedule wants.

    `windows` is status.windows and `leads` the leads in force (status.leadTime,
    status.capacityLeadTime) as the decision recorded them; None keeps them as stored: a status
    written without them would clear the history the Auto leads are learned from."""
    metadata = autoscaler["metadata"]
    current = autoscaler.get("status") or {}
    now = format_instant(snapshot.instant)
    condition = (
        ScheduledPodAutoscalerCondition.Available
        if problem is None
        else ScheduledPodAutoscalerCondition.Degraded
    )
    message = _ready_message(state, problem=problem, paused=paused, held=held)
    in_force = (state.min_replicas, state.max_replicas) if applied and state is not None else None
    conditions = _conditions(
        current.get("conditions"),
        ready=in_force is not None,
        reason=reason,
        message=message,
        incident=incident,
        scale_up=snapshot.memory.scale_up,
        capacity=capacity,
        raised_ahead=raised_early if problem is None and not paused else None,
        raised_before=raised_before,
        generation=metadata.get("generation"),
        now=now,
    )
    if paused:
        in_force = held
    status = ScheduledPodAutoscalerStatus(
        condition=condition,
        last_transition_time=_since(current, condition, now),
        conditions=[valid for entry in conditions if (valid := _condition(entry)) is not None],
        observed_generation=metadata.get("generation"),
        min_replicas=in_force[0] if in_force is not None else None,
        max_replicas=in_force[1] if in_force is not None else None,
        active_schedules=list(state.active) if state is not None else [],
        next_transition_time=format_instant(upcoming) if upcoming is not None else None,
        lead_time=_stored_lead(current, "leadTime") if leads is None else leads[0],
        capacity_lead_time=_stored_lead(current, "capacityLeadTime") if leads is None else leads[1],
        windows=(list(windows) if windows is not None else stored_windows(autoscaler)) or None,
    )
    previous_reason = next(
        (c.get("reason") for c in current.get("conditions") or () if c.get("type") == "Ready"),
        None,
    )
    events = []
    if reason in (Reason.MAX_RAISED_TO_MIN, Reason.INVALID_SPEC) and previous_reason != reason:
        events.append(Event(autoscaler, EventType.WARNING, reason, message))
    return status, events


def _stored_lead(current: wire.ScheduledPodAutoscalerStatus, field: str) -> LeadInForce | None:
    stored = current.get(field)
    if not isinstance(stored, dict):
        return None
    try:
        return LeadInForce.model_validate(stored)
    except ValueError:
        return None


def _ready_message(
    state: State | None, *, problem: str | None, paused: bool, held: tuple[int, int] | None
) -> str:
    """The message of the SPA's Ready condition: the pause and what the HPA keeps, the
    problem, or the bounds in force."""
    if paused:
        wants = (
            f" (the schedule wants minReplicas {state.min_replicas}, maxReplicas "
            f"{state.max_replicas})"
            if state is not None
            else ""
        )
        return (
            f"paused: the HorizontalPodAutoscaler keeps minReplicas {held[0]}, maxReplicas "
            f"{held[1]}{wants}"
            if held is not None
            else "paused: there is no HorizontalPodAutoscaler, and none is created until the "
            "pause ends"
        )
    if problem is not None:
        return problem
    if state is not None and state.max_raised:
        return (
            f"the active Schedules set minReplicas {state.min_replicas} above maxReplicas; "
            f"maxReplicas was raised to {state.max_replicas}"
        )
    if state is not None:
        return f"HPA has minReplicas {state.min_replicas}, maxReplicas {state.max_replicas}"
    return ""


def _conditions(
    current: Sequence[wire.Condition] | None,
    *,
    ready: bool,
    reason: Reason,
    message: str,
    incident: Sequence[IncidentCondition],
    scale_up: ScaleUpOutcome | None,
    capacity: CapacityOutcome | None,
    generation: int | None,
    now: str,
    raised_ahead: str | None = None,
    raised_before: str | None = None,
) -> list[wire.Condition]:
    """The SPA's conditions as they are to be written: Ready (True when bounds are in force),
    the `incident` conditions, the last immediate scale-up's, and CapacityReady
    (docs/schedules.md, "Node capacity")."""
    conditions = with_condition(
        current,
        type_="Ready",
        status="True" if ready else "False",
        reason=reason,
        message=message,
        generation=generation,
        now=now,
    )
    others = [(entry.type, entry.status, entry.reason, entry.message) for entry in incident]
    if scale_up is not None:
        others.append((SCALE_UP_CONDITION, *scale_up))
    if capacity is not None:
        others.append((CAPACITY_CONDITION, *capacity))
    others.extend(_raised_ahead(current, raised_ahead, raised_before))
    for type_, status, why, text in others:
        conditions = with_condition(
            conditions,
            type_=type_,
            status=status,
            reason=why,
            message=text,
            generation=generation,
            now=now,
        )
    return conditions


def schedule_status(
    snapshot: Snapshot, entry: Evaluated, *, state: State | None, problem: str | None
) -> tuple[ScheduleStatusWrite, list[Event]]:
    """A Schedule's status: Degraded with its own problem or, while it is active (or has no
    SPA to apply), with `problem`; else Suspend, Completed, Progressing or Available."""
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
        reason = entry.reason if entry.problem is not None else Reason.NOT_APPLIED
        assert reason is not None  # an Evaluated with a problem has its reason
        events.append(Event(schedule, EventType.WARNING, reason, str(message)))
    return ScheduleStatusWrite(schedule, status), events


def refused_statuses(
    snapshot: Snapshot, autoscaler: wire.ScheduledPodAutoscaler, refused: list[Evaluated]
) -> tuple[list[StatusWrite], list[Event]]:
    """Schedules that name the SPA but cannot apply: a Warning on the SPA when one newly
    becomes so (its own status and Event follow), then its Degraded status."""
    statuses: list[StatusWrite] = []
    events: list[Event] = []
    for entry in refused:
        assert entry.reason is not None  # every refused Schedule has its reason
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
        write, warning = schedule_status(snapshot, entry, state=None, problem=None)
        statuses.append(write)
        events += warning
    return statuses, events


def raised_ahead_message(autoscaler: Mapping[str, Any]) -> str | None:
    """The message of the SPA's RaisedAhead condition while it is True ("" if it has none;
    None: not True): why its bounds in force were written ahead of their boundary, as the
    last status said it (a new leader's decision, `kubectl spa status`)."""
    said = raised_ahead_condition(autoscaler)
    return said[1] if said is not None and said[0] else None


def raised_ahead_condition(autoscaler: Mapping[str, Any]) -> tuple[bool, str] | None:
    """The SPA's RaisedAhead condition as (True while in force, its message), None without
    one."""
    for condition in (autoscaler.get("status") or {}).get("conditions") or ():
        if condition.get("type") == RAISED_AHEAD_CONDITION:
            return condition.get("status") == "True", str(condition.get("message") or "")
    return None


def _raised_ahead(
    current: Sequence[wire.Condition] | None, raised_ahead: str | None, before: str | None
) -> list[tuple[str, Literal["True", "False"], Reason, str]]:
    """The RaisedAhead condition: True while the bounds in force were written ahead of their
    boundary for its fleet (docs/schedules.md, "Raises ahead of a shared boundary"); False,
    with the last such raise, from the boundary on (also when the boundary came before a
    status said it: `before`); absent for an SPA never raised ahead."""
    if raised_ahead is not None:
        return [(RAISED_AHEAD_CONDITION, "True", Reason.FLEET_AHEAD, raised_ahead)]
    last = next((c for c in current or () if c.get("type") == RAISED_AHEAD_CONDITION), None)
    if before is None and (last is None or last.get("status") != "True"):
        return []
    said = before if before is not None else last.get("message") if last is not None else ""
    message = f"its boundary came; the last raise ahead of one: {said}"
    return [(RAISED_AHEAD_CONDITION, "False", Reason.BOUNDARY_REACHED, message)]


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
