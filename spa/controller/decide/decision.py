"""`decide(snapshot) -> Plan`: the order in which the rule families speak for one key.

Why it is short: each family (membership, HPA convergence, statuses) is a module of its own;
this one only says who goes first. Ownership changes come before the HPA, the HPA before node
capacity and any status (and, at a boundary, every HPA of the fleet before any status: a write
that changes the HPA ends the reconcile at the back of the queue), and a dying or missing SPA
stops the rest.
"""

from __future__ import annotations

from dataclasses import replace

from spa.api import (
    InvalidObject,
    ScheduledPodAutoscaler,
    autoscaler_base,
    wire,
)
from spa.api.incident import incident_at
from spa.controller.decide import status
from spa.controller.decide.capacity import (
    PLACEHOLDER_HANDOVER_SECONDS,
    CapacityTask,
    capacity_intent,
)
from spa.controller.decide.fleet import (
    adds_capacity,
    early_state,
    fleet_message,
    kept_early,
    kept_message,
)
from spa.controller.decide.holding import Holding, holding
from spa.controller.decide.hpa import FOREIGN_HPA_RECHECK_SECONDS, Standing, converge
from spa.controller.decide.incident import held, incident_conditions
from spa.controller.decide.membership import Evaluated, evaluate, membership, uid
from spa.controller.decide.plan import (
    AutoscalerReport,
    AutoscalerStatusWrite,
    BackOfQueue,
    CreateHpa,
    Final,
    PatchHpa,
    Plan,
    ReadPods,
    ReadReadiness,
    ReleaseOrphaned,
    SetOwner,
    SetOwners,
    StatusWrite,
    WakeUp,
)
from spa.controller.decide.reasons import Event, Reason
from spa.controller.decide.recording import HeldCapacity, recording
from spa.controller.decide.snapshot import Snapshot, dying
from spa.controller.desired import controller_owner_uid
from spa.schedule import Base, Rule, State, next_transition, state_at

__all__ = ["decide"]


def decide(snapshot: Snapshot) -> Plan:
    """The next step, or the final plan, for the SPA of `snapshot.key`."""
    autoscaler = snapshot.autoscaler
    if autoscaler is None:
        return _without_autoscaler(snapshot)
    if dying(autoscaler):
        # A dying SPA (foreground or orphan deletion, a finalizer) is left to the garbage
        # collector: no ownerReference is added or removed for it and no HPA created, so
        # each propagation policy does what Kubernetes means by it (docs/architecture.md).
        return Plan(None, Final())
    members, refused, adoptions = membership(snapshot, autoscaler)
    if adoptions:
        return Plan(snapshot.memory, SetOwners(adoptions))
    parsed = snapshot.derived.parsed
    assert parsed is not None  # derived from the SPA (spa/controller/decide/snapshot.py)
    model = parsed.model
    if isinstance(model, InvalidObject):
        return _invalid_autoscaler(snapshot, autoscaler, members, refused, str(model))

    evaluated = [evaluate(snapshot, member, model) for member in members]
    rules = [entry.rule for entry in evaluated if entry.rule is not None]
    base = autoscaler_base(model)
    state = state_at(base, rules, snapshot.instant)
    upcoming = next_transition(base, rules, snapshot.instant)
    # A raise at the next transition may be written ahead of it when a fleet shares it
    # (docs/schedules.md, "Raises ahead of a shared boundary"); what it removes waits for it.
    ahead = None if upcoming is None else state_at(base, rules, upcoming)
    raise_at = upcoming if ahead is not None and adds_capacity(state, ahead) else None
    early = (
        None
        if ahead is None
        else early_state(
            state, ahead, instant=snapshot.instant, raise_=snapshot.fleet, upcoming=upcoming
        )
    )
    # An early raise the HPA already holds is not undone before its boundary, whoever wrote
    # it and whatever this process has counted of its fleet so far (`kept_early`).
    kept_ahead = (
        None
        if ahead is None or early is not None
        else kept_early(
            state,
            ahead,
            base=base,
            rules=rules,
            instant=snapshot.instant,
            upcoming=upcoming,
            bounds=held(snapshot.hpa),
            horizon=snapshot.fleet_horizon,
        )
    )
    fleet_start: int | None = None
    if early is not None:
        state = early
    elif kept_ahead is not None:
        state = kept_ahead
    elif (
        raise_at is not None
        and snapshot.fleet is not None
        and snapshot.fleet.boundary == raise_at
        and snapshot.fleet.start > snapshot.instant
    ):
        # Wake up when the fleet starts, to write this raise then.
        fleet_start = snapshot.fleet.start
    # Pause and override for incidents (spa/api/incident.py, docs/operations.md): a pause
    # leaves the HPA alone, an override holds its bounds instead of the schedule's; either
    # ends by itself at its `until`, when the key wakes up to return to the schedule.
    incident = incident_at(
        (autoscaler.get("metadata") or {}).get("annotations"),
        base_max=base.max_replicas,
        instant=snapshot.instant,
    )
    paused = incident.pause is not None
    if incident.override is not None and not paused:
        override = incident.override
        state = State(override.min_replicas, override.max_replicas, state.active)
    upcoming = _earliest(upcoming, incident.wake_at)

    if paused:
        # No write of the HPA at all, not even its creation (docs/operations.md).
        standing: Plan | Standing = Standing(snapshot.memory, applied=False)
    else:
        desired = parsed.desired_hpa(state, api_version=snapshot.hpa_api_version)
        standing = converge(snapshot, autoscaler, model, state, desired)
    if isinstance(standing, Plan):
        if isinstance(standing.action, CreateHpa | PatchHpa) and standing.memory is not None:
            # HPAs first: when a whole fleet is due at one boundary (or at the first start),
            # every due HPA is written before any status. A write that changes the HPA ends the
            # reconcile, the key behind the others that are due now; that pass finds the HPA in
            # sync and writes the statuses and Events. Only a write that changed the HPA comes
            # back at once, so this cannot loop; the next transition is `upcoming`, which the
            # write's outcome keeps (`absorb`), so the Schedules are not evaluated again for it.
            why_ahead = (
                fleet_message(snapshot.fleet)
                if early is not None and snapshot.fleet is not None
                else standing.memory.raised_ahead
            )
            return Plan(
                replace(standing.memory, following_boundary=upcoming, raised_ahead=why_ahead),
                replace(standing.action, then=BackOfQueue()),
            )
        return standing
    memory = replace(standing.memory, expected_boundary=upcoming, following_boundary=None)

    capacity, wake = _capacity(
        snapshot, autoscaler, model, evaluated, base, rules, state, upcoming, paused=paused
    )
    wake = _earliest(wake, fleet_start)
    held_capacity: Holding | None = None
    if snapshot.capacity is not None:
        # Node capacity, after the HPA and before the statuses: its reads and writes are
        # steps; the decision after each finds the same statuses and Events, the Memory being
        # the snapshot's until the final plan.
        next_capacity = holding(snapshot, snapshot.capacity, capacity, memory)
        if not isinstance(next_capacity, Holding):
            return Plan(snapshot.memory, next_capacity)
        held_capacity = next_capacity
        memory = held_capacity.memory

    # Every window start measured (docs/api.md, "status.windows"): the read of the target is a
    # step, made only while one is being measured.
    held_now = None
    if held_capacity is not None and capacity.enabled:
        held_now = HeldCapacity(
            schedules=() if capacity.intent is None else capacity.intent.windows,
            held=bool(held_capacity.report.requested),
            stood=held_capacity.stood,
        )
    recorded = recording(
        snapshot,
        autoscaler,
        model,
        evaluated,
        applied=standing.applied,
        paused=paused,
        bounds=(state.min_replicas, state.max_replicas),
        overridden=incident.override is not None and not paused,
        capacity=held_now,
    )
    if isinstance(recorded, ReadReadiness | ReadPods):
        return Plan(snapshot.memory, recorded)

    reason = Reason.APPLIED
    if paused:
        reason = Reason.PAUSED
    elif standing.problem is not None:
        assert standing.reason is not None  # a problem comes with its reason
        reason = standing.reason
    elif incident.override is not None:
        reason = Reason.OVERRIDDEN
    elif state.max_raised:
        reason = Reason.MAX_RAISED_TO_MIN
    kept = held(snapshot.hpa) if paused else None
    conditions, incident_events = incident_conditions(autoscaler, incident)
    events: list[Event] = list(standing.events)
    if memory.scale_up_event is not None:
        events.append(memory.scale_up_event)
        memory = replace(memory, scale_up_event=None)
    if standing.applied:
        events += status.window_changes(autoscaler, state)
    raised_early = (
        _raised_early(snapshot, autoscaler, early=early, kept=kept_ahead, boundary=raise_at)
        if standing.applied
        else None
    )
    # A shard writes the status of an SPA raised ahead at its boundary, not now: the other
    # shards sharing the API server may still be raising theirs (spa/controller/fleet.py,
    # `FleetIndex.statuses_at_boundary`). The Memory keeps why it came early, for then.
    at_boundary = snapshot.statuses_at_boundary and raised_early is not None
    autoscaler_status, status_events = status.autoscaler_status(
        snapshot,
        autoscaler,
        state=state,
        upcoming=upcoming,
        applied=standing.applied,
        problem=standing.problem,
        reason=reason,
        paused=paused,
        held=kept,
        incident=conditions,
        capacity=None if held_capacity is None else held_capacity.condition,
        windows=recorded.windows,
        leads=(recorded.lead_time, recorded.capacity_lead_time),
        raised_early=raised_early,
        raised_before=memory.raised_ahead,
    )
    memory = replace(memory, raised_ahead=raised_early if at_boundary else None)
    statuses: list[StatusWrite] = []
    if not at_boundary:
        statuses.append(AutoscalerStatusWrite(autoscaler, autoscaler_status))
    events += recorded.events
    events += incident_events
    if not at_boundary:
        events += status_events
    for entry in evaluated:
        write, warning = status.schedule_status(
            snapshot, entry, state=state, problem=None if standing.applied else standing.problem
        )
        statuses.append(write)
        events += warning
    refused_statuses, refused_events = status.refused_statuses(snapshot, autoscaler, refused)
    report = AutoscalerReport(
        replicas=kept
        if paused
        else (state.min_replicas, state.max_replicas)
        if standing.applied
        else None,
        schedules={
            str(entry.obj["metadata"]["name"]): standing.applied
            and entry.obj["metadata"]["name"] in state.active
            for entry in evaluated
        },
    )
    requeue = _requeue(standing, _earliest(wake, recorded.wake_at))
    if recorded.recheck is not None:
        recheck = recorded.recheck
        requeue = replace(requeue, recheck_after=min(recheck, requeue.recheck_after or recheck))
    if held_capacity is not None and held_capacity.recheck is not None:
        recheck = held_capacity.recheck
        requeue = replace(requeue, recheck_after=min(recheck, requeue.recheck_after or recheck))
    return Plan(
        memory,
        Final(
            requeue=requeue,
            statuses=(*statuses, *refused_statuses),
            events=(*events, *refused_events),
            report=report,
            capacity=capacity,
            capacity_report=None if held_capacity is None else held_capacity.report,
            windows=recorded.report,
            problem=standing.problem,
            raise_at=None if paused else raise_at,
        ),
    )


def _capacity(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    model: ScheduledPodAutoscaler,
    evaluated: list[Evaluated],
    base: Base,
    rules: list[Rule],
    state: State,
    upcoming: int | None,
    *,
    paused: bool,
) -> tuple[CapacityTask, int | None]:
    """Node capacity ahead of the windows (docs/schedules.md, "Node capacity"), and when to
    wake up next with it: each window with a capacity lead (its own capacity.leadTime, else
    its SPA's) as a rule moved earlier by that lead (its Timeline derived before the decision).
    None is wanted while paused (the schedule is not being applied), nor by an SPA whose
    windows order none."""
    ref = model.spec.horizontal_pod_autoscaler_spec.scale_target_ref
    target = (ref.api_version or "v1", ref.kind, ref.name)
    leads: list[Rule] = []
    for entry in evaluated:
        if entry.rule is None or entry.compiled is None:
            continue
        timeline = snapshot.derived.capacity_timelines.get(entry.rule.name)
        if timeline is not None:
            leads.append(replace(entry.rule, timeline=timeline))
    if paused or not leads:
        return CapacityTask(autoscaler, target, None, enabled=bool(leads)), upcoming
    mode = model.spec.capacity.mode if model.spec.capacity is not None else None
    intent = capacity_intent(base=base, rules=leads, instant=snapshot.instant, mode=mode)
    task = CapacityTask(autoscaler, target, intent, enabled=True)
    wake = _earliest(upcoming, intent.wake_at)
    # Placeholder pods leave a little before the HPA is raised: wake for that too.
    handover = None if upcoming is None else upcoming - PLACEHOLDER_HANDOVER_SECONDS
    if handover is not None and handover > snapshot.instant:
        wake = _earliest(wake, handover)
    if intent.minimum is not None:
        soon = state_at(base, rules, snapshot.instant + PLACEHOLDER_HANDOVER_SECONDS)
        task = replace(
            task,
            raised=state.min_replicas >= intent.minimum,
            handing_over=state.min_replicas >= intent.minimum
            or soon.min_replicas >= intent.minimum,
        )
    return task, wake


def _raised_early(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    *,
    early: State | None,
    kept: State | None,
    boundary: int | None,
) -> str | None:
    """Why the bounds in force were written ahead of their boundary (None: they were not):
    the fleet, for a raise written from its start; for one kept as the HPA holds it, what the
    SPA's status already says (the previous leader's reason), or that it is kept."""
    if early is not None and snapshot.fleet is not None:
        return fleet_message(snapshot.fleet)
    if kept is None or boundary is None:
        return None
    return status.raised_ahead_message(autoscaler) or kept_message(boundary)


def _earliest(first: int | None, second: int | None) -> int | None:
    """The earlier of two instants, either of which may be None (never)."""
    if first is None or second is None:
        return first if second is None else second
    return min(first, second)


def _requeue(standing: Standing, upcoming: int | None) -> WakeUp:
    """At the next transition; a name taken by somebody else's HPA is looked at again in a
    while, and a refusal or a loop is retried with the key's backoff."""
    recheck = standing.problem is not None and not standing.retry
    return WakeUp(
        at=upcoming,
        recheck_after=FOREIGN_HPA_RECHECK_SECONDS if recheck else None,
        backoff=standing.retry,
    )


def _without_autoscaler(snapshot: Snapshot) -> Plan:
    """Schedules that name a ScheduledPodAutoscaler that does not exist (yet), and the node
    capacity it may have left behind."""
    if snapshot.orphaned_capacity and not snapshot.attempts.capacity_released:
        namespace, _, name = snapshot.key.partition("/")
        return Plan(None, ReleaseOrphaned(namespace, name))
    failures = snapshot.attempts.owner_failures
    releases = tuple(
        SetOwner(schedule, None)
        for schedule in snapshot.schedules
        if controller_owner_uid(schedule) in snapshot.live_owners and uid(schedule) not in failures
    )
    if releases:
        # Retargeted away from a live SPA: detach it, so that deleting that SPA does not
        # garbage-collect a Schedule that now belongs elsewhere. An owner that no longer
        # exists, or is being deleted, is left to the garbage collector.
        return Plan(None, SetOwners(releases))
    statuses: list[StatusWrite] = []
    events: list[Event] = []
    for schedule in snapshot.schedules:
        problem = failures.get(uid(schedule), f"ScheduledPodAutoscaler {snapshot.key} not found")
        write, warning = status.schedule_status(
            snapshot, evaluate(snapshot, schedule), state=None, problem=problem
        )
        statuses.append(write)
        events += warning
    return Plan(None, Final(statuses=tuple(statuses), events=tuple(events)))


def _invalid_autoscaler(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    members: list[wire.Schedule],
    refused: list[Evaluated],
    invalid: str,
) -> Plan:
    problem = f"invalid spec: {invalid}"
    autoscaler_status, events = status.autoscaler_status(
        snapshot,
        autoscaler,
        state=None,
        upcoming=None,
        applied=False,
        problem=problem,
        reason=Reason.INVALID_SPEC,
    )
    statuses: list[StatusWrite] = [AutoscalerStatusWrite(autoscaler, autoscaler_status)]
    for member in members:
        write, warning = status.schedule_status(
            snapshot,
            evaluate(snapshot, member),
            state=None,
            problem=f"ScheduledPodAutoscaler {snapshot.key} is invalid",
        )
        statuses.append(write)
        events += warning
    refused_statuses, refused_events = status.refused_statuses(snapshot, autoscaler, refused)
    return Plan(
        snapshot.memory,
        Final(
            statuses=(*statuses, *refused_statuses),
            events=(*events, *refused_events),
            report=AutoscalerReport(replicas=None, schedules={}),
            problem=problem,
        ),
    )
