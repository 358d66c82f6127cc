"""Every window start recorded in status.windows: which window starts are measured, when the
target is read for them, and what the final plan says of them.

Why a module of its own: `readiness.py` says what one window's timestamps mean; recording needs
what only a request can tell (the target's spec.replicas and status.readyReplicas, which its
/scale does not give), and that read is a step of the decision like node capacity's
(docs/architecture.md, "Decide, then act"), made only while a window start is being measured:
at its raise, at its boundary B, then every 5 to 30 s until it is Ready or the window ends, and
never between windows. With a capacity lead, the entry is made when the capacity is held, and
the capacity's times (held, standing on nodes, released) come from the decision's own data;
when those do not say what the nodes took (the placeholders were handed over before they all
stood, or a CapacityBuffer held the capacity), the target's pods are listed once, in the
reconcile that finds the window Ready (or missed), for how long they waited for a node.
Everything is kept in the SPA's status, never in process memory, so a restarted controller or a
new leader goes on measuring where the last one stopped, and the Auto leads are learned from it
(docs/api.md, "status.windows"; docs/schedules.md, "Auto lead times").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from spa.api import (
    CompiledSchedule,
    ScheduledPodAutoscaler,
    ScheduledPodAutoscalerStatus,
    autoscaler_lead,
    wire,
)
from spa.api.resources import LeadInForce, WindowRecord
from spa.api.validation.leads import autoscaler_leads, in_force, is_auto, learned_pod_lead
from spa.controller.decide.capacity import window_capacity_lead
from spa.controller.decide.membership import Evaluated
from spa.controller.decide.memory import ReadinessRead
from spa.controller.decide.plan import ReadPods, ReadReadiness, WindowReport
from spa.controller.decide.readiness import (
    HELD_BACK,
    MissedReason,
    Observation,
    Outcome,
    is_late,
    is_quota,
    longest_wait,
    record,
    waits_for_nodes,
    with_record,
)
from spa.controller.decide.reasons import Event, EventType, Reason
from spa.controller.decide.snapshot import Snapshot
from spa.schedule import format_instant
from spa.schedule.learned_lead import fixed_lead

__all__ = [
    "FIRST_SEEN_GRACE_SECONDS",
    "READY_RECHECK_MAX_SECONDS",
    "READY_RECHECK_MIN_SECONDS",
    "HeldCapacity",
    "Recording",
    "recording",
]

# A window start first seen this long after its raise is not measured: the controller was not
# running at its start (a restart, a new Schedule), so when its HPA was raised is not known.
FIRST_SEEN_GRACE_SECONDS = 120
# While a window start is being measured, the target is read again after a quarter of the time
# since the raise, within these bounds (docs/api.md, "status.windows").
READY_RECHECK_MIN_SECONDS = 5.0
READY_RECHECK_MAX_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Recording:
    """What the final plan carries of the window starts: status.windows (None: leave it as it
    is), the leads in force for the status, the Events of windows found late or missed, the
    series, and when to look at the target again (`wake_at`, `recheck`; None: not for this)."""

    windows: list[WindowRecord] | None
    lead_time: LeadInForce | None
    capacity_lead_time: LeadInForce | None
    events: list[Event]
    report: WindowReport
    wake_at: int | None = None
    recheck: float | None = None


@dataclass(frozen=True, slots=True)
class HeldCapacity:
    """Node capacity as the final plan leaves it, for an SPA that orders some: the Schedules
    whose windows are in their capacity lead (`schedules`), whether capacity is held for them
    (`held`) and whether it stands on nodes (`stood`: every placeholder pod Ready)."""

    schedules: tuple[str, ...] = ()
    held: bool = False
    stood: bool = False


def _instant(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return math.floor(datetime.fromisoformat(text).timestamp())
    except ValueError:
        return None


def _lead(compiled: CompiledSchedule, model: ScheduledPodAutoscaler) -> tuple[int, LeadInForce]:
    """The pod lead in force for a Schedule's window, in seconds and as the status says it."""
    seconds = autoscaler_lead(model) if compiled.lead is None else compiled.lead
    auto = compiled.lead_auto or (compiled.lead is None and is_auto(model.spec.lead_time))
    lead = learned_pod_lead(model) if auto else fixed_lead(seconds)
    return seconds, in_force(replace(lead, seconds=seconds))


def _capacity_lead(compiled: CompiledSchedule, model: ScheduledPodAutoscaler) -> LeadInForce | None:
    """The node capacity lead in force for a Schedule's window (None: it orders none)."""
    seconds = window_capacity_lead(compiled, model)
    if seconds is None:
        return None
    capacity = model.spec.capacity
    auto = compiled.capacity_lead_auto or (
        compiled.capacity_lead is None and capacity is not None and is_auto(capacity.lead_time)
    )
    nodes = autoscaler_leads(model).nodes if auto else None
    lead = fixed_lead(seconds) if nodes is None else replace(nodes, seconds=seconds)
    return in_force(lead)


def _current_start(compiled: CompiledSchedule, lead: int, instant: int) -> tuple[int, int] | None:
    """(B, end) of the window start whose raise has come and whose end has not, if any."""
    window = compiled.window
    if window.always_active:
        return None
    for occurrence in window.occurrences(instant, instant + lead + 1):
        if occurrence.start - lead <= instant < occurrence.end:
            return occurrence.start, occurrence.end
    return None


def _end_of(compiled: CompiledSchedule, boundary: int) -> int | None:
    """When the window that starts at `boundary` ends (None: it no longer starts then)."""
    for occurrence in compiled.window.occurrences(boundary, boundary + 1):
        if occurrence.start == boundary:
            return occurrence.end
    return None


def _held_back(entry: WindowRecord) -> MissedReason | None:
    """The cause a Pending entry keeps (one of HELD_BACK), if any."""
    return next((why for why in HELD_BACK if why == entry.reason), None)


def _observation(entry: WindowRecord, *, end: int, paused: bool) -> Observation:
    held_back = _held_back(entry)
    return Observation(
        schedule=str(entry.schedule),
        boundary=_instant(entry.boundary) or 0,
        end=end,
        min_replicas=entry.min_replicas or 0,
        raised_at=_instant(entry.raised_at),
        replicas_at=_instant(entry.replicas_at),
        ready_at=_instant(entry.ready_at),
        capacity_held_at=_instant(entry.capacity_held_at),
        capacity_released_at=_instant(entry.capacity_released_at),
        nodes_ready_at=_instant(entry.nodes_ready_at),
        pods_waited_seconds=entry.pods_waited_seconds,
        paused=paused,
        held_back=held_back,
        held_back_message=None if held_back is None else entry.message,
    )


def _capacity_records(
    windows: list[WindowRecord],
    model: ScheduledPodAutoscaler,
    evaluated: Sequence[Evaluated],
    capacity: HeldCapacity,
    instant: int,
) -> list[WindowRecord]:
    """status.windows with what node capacity did for each window start: an entry made when
    capacity is first held for it in its capacity lead (`capacityHeldAt`, no `raisedAt` until
    its raise), and `nodesReadyAt` and `capacityReleasedAt` on the entries whose capacity was
    held (docs/api.md, "status.windows"). From the decision's own data: no request."""
    if capacity.held:
        for entry in evaluated:
            compiled, rule = entry.compiled, entry.rule
            if compiled is None or rule is None or not rule.min_replicas:
                continue
            if rule.name not in capacity.schedules:
                continue
            seconds = window_capacity_lead(compiled, model)
            current = None if seconds is None else _current_start(compiled, seconds, instant)
            if seconds is None or current is None:
                continue
            if instant > current[0] - seconds + FIRST_SEEN_GRACE_SECONDS:
                continue  # first seen late: when the capacity was ordered is not known
            pod_seconds, lead = _lead(compiled, model)
            if instant >= current[0] - pod_seconds:
                continue  # its raise has come: recorded as every window start is
            boundary = format_instant(current[0])
            if any((w.schedule, w.boundary) == (rule.name, boundary) for w in windows):
                continue
            observation = Observation(
                schedule=rule.name,
                boundary=current[0],
                end=current[1],
                min_replicas=rule.min_replicas,
                capacity_held_at=instant,
            )
            entered = record(
                observation,
                now=instant,
                lead=lead,
                capacity_lead=_capacity_lead(compiled, model),
            )
            windows = with_record(windows, entered)
    now = format_instant(instant)
    for window in list(windows):
        if window.capacity_held_at is None or window.capacity_released_at is not None:
            continue
        holds = capacity.held and window.schedule in capacity.schedules
        update: dict[str, str] = {}
        if holds and capacity.stood and window.nodes_ready_at is None:
            update["nodes_ready_at"] = now
        if not holds:
            update["capacity_released_at"] = now
        if update:
            windows = with_record(windows, window.model_copy(update=update))
    return windows


def _awaiting_raise(
    windows: list[WindowRecord],
    model: ScheduledPodAutoscaler,
    by_name: dict[str, CompiledSchedule],
    instant: int,
) -> list[WindowRecord]:
    """status.windows without the entries made at a capacity lead whose raise was not seen
    in time (FIRST_SEEN_GRACE_SECONDS after it: the controller was not running then) or whose
    window no longer starts then (its Schedule deleted or edited): what is not measured is not
    kept."""
    kept = []
    for window in windows:
        if window.outcome == Outcome.Pending and window.raised_at is None:
            compiled = by_name.get(str(window.schedule))
            start = _instant(window.boundary)
            end = None if compiled is None or start is None else _end_of(compiled, start)
            if compiled is None or start is None or end is None or instant >= end:
                continue
            if instant > start - _lead(compiled, model)[0] + FIRST_SEEN_GRACE_SECONDS:
                continue
        kept.append(window)
    return kept


def _recheck(instant: int, raised_at: int | None) -> float:
    since = instant - (instant if raised_at is None else raised_at)
    return min(READY_RECHECK_MAX_SECONDS, max(READY_RECHECK_MIN_SECONDS, since / 4))


def _event(autoscaler: wire.ScheduledPodAutoscaler, entry: WindowRecord) -> Event | None:
    """The Warning of a window found late or missed (not of a pause, nor of a target whose
    readiness is not measured: the status says those)."""
    if not is_late(entry):
        return None
    start = f"Schedule {entry.schedule}, window start {entry.boundary}"
    if entry.outcome == Outcome.Late:
        return Event(
            autoscaler,
            EventType.WARNING,
            Reason.WINDOW_LATE,
            f"{start}: {entry.min_replicas} replicas Ready at B+{entry.ready_seconds} s, after "
            f"the boundary (lead {entry.lead.seconds if entry.lead else 0} s)",
        )
    return Event(
        autoscaler,
        EventType.WARNING,
        Reason.WINDOW_MISSED,
        f"{start}: {entry.min_replicas} replicas not Ready before the window ended: "
        f"{entry.message}",
    )


def _leads_in_force(
    model: ScheduledPodAutoscaler, windows: list[WindowRecord]
) -> tuple[LeadInForce | None, LeadInForce | None]:
    """status.leadTime and status.capacityLeadTime (with Auto only) as learned from `windows`,
    the list this decision writes: a window measured now is in them at once (the windows of
    the next raise are derived from the stored list at the reconcile after this one)."""
    spec = model.spec
    if not is_auto(spec.lead_time) and not (
        spec.capacity is not None and is_auto(spec.capacity.lead_time)
    ):
        return None, None
    status = model.status or ScheduledPodAutoscalerStatus()
    learned = model.model_copy(update={"status": status.model_copy(update={"windows": windows})})
    leads = autoscaler_leads(learned)
    lead_time = leads.pod_status() if is_auto(spec.lead_time) else None
    capacity_lead_time = None
    if spec.capacity is not None:
        capacity_lead_time = leads.node_status()
    return lead_time, capacity_lead_time


def _pods_waited(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    read: ReadinessRead | None,
    updates: Sequence[tuple[WindowRecord, int | None, int | None, int | None]],
) -> ReadPods | dict[tuple[str | None, str | None], int | None]:
    """The list of the target's pods that the window starts measured now need, or the longest
    wait for a node of each one's new pods, by (Schedule, boundary) (docs/api.md, "status.windows",
    podsWaitedSeconds). Only a window that has just been measured (Ready, or Missed at its end)
    and whose nodes were not measured standing needs it (:func:`waits_for_nodes`): the pods
    are listed once for it, in the reconcile that measures it, and never between windows.
    Nothing when they cannot be listed (no selector, or not allowed: the wait stays unset)."""
    done = [
        (updated, raised_at)
        for updated, _, _, raised_at in updates
        if updated.outcome != Outcome.Pending and waits_for_nodes(updated)
    ]
    if not done or read is None or read.selector is None:
        return {}
    listed = snapshot.attempts.pods
    if listed is None:
        return ReadPods(autoscaler, read.selector)
    if listed.forbidden or listed.problem is not None:
        return {}
    return {
        (updated.schedule, updated.boundary): longest_wait(
            listed.pods,
            raised_at=raised_at,
            now=snapshot.instant,
            ready=updated.outcome != Outcome.Missed,
        )
        for updated, raised_at in done
        if raised_at is not None
    }


def recording(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    model: ScheduledPodAutoscaler,
    evaluated: Sequence[Evaluated],
    *,
    applied: bool,
    paused: bool,
    bounds: tuple[int, int],
    overridden: bool = False,
    capacity: HeldCapacity | None = None,
) -> ReadReadiness | ReadPods | Recording:
    """The read of the target the window starts being measured need first (and, for a window
    just measured whose nodes were not measured standing, the list of its pods), or what the
    final plan says of them.

    A window start is recorded (Pending) when the raise of a Schedule that sets minReplicas
    has come, unless it is first seen more than FIRST_SEEN_GRACE_SECONDS after it; while one
    is Pending, each decision reads the target (once per reconcile) and the entry becomes
    Early, Late or Missed (spa/controller/decide/readiness.py). A raise that comes while the
    SPA is paused is recorded Missed, Paused, at once: its HPA is not raised for it.

    `bounds` are the (minReplicas, maxReplicas) in force on the HPA now, `overridden` whether
    an override holds them: while a window is open, bounds below its minimum say why it is
    held back (after its end they are the next window's, so they are not looked at then).

    `capacity` is the node capacity the final plan holds (None: the SPA orders none): a
    window start for which it is held is recorded at its capacity lead's start, Pending
    without `raisedAt`, and the target is read for it only from its raise on."""
    instant = snapshot.instant
    # As validated with the SPA (no second validation per decision).
    stored = list(model.status.windows or []) if model.status is not None else []
    windows = list(stored)
    spec = model.spec
    by_name = {
        str(entry.obj["metadata"]["name"]): entry.compiled
        for entry in evaluated
        if entry.compiled is not None and entry.rule is not None
    }
    measured: list[tuple[str, str | None, int | None]] = []
    if capacity is not None:
        windows = _capacity_records(windows, model, evaluated, capacity, instant)
    # New window starts: their raise has come (or would have, but for a pause); one entered
    # at its capacity lead gets its raise now.
    if applied or paused:
        for entry in evaluated:
            compiled = entry.compiled
            if compiled is None or entry.rule is None or not entry.rule.min_replicas:
                continue
            if not entry.rule.timeline.is_active(instant):
                continue  # the cached intervals: no occurrence computed between windows
            seconds, lead = _lead(compiled, model)
            current = _current_start(compiled, seconds, instant)
            name = entry.rule.name
            if current is None or instant > current[0] - seconds + FIRST_SEEN_GRACE_SECONDS:
                continue
            boundary = format_instant(current[0])
            early = next((w for w in windows if (w.schedule, w.boundary) == (name, boundary)), None)
            raised = early is not None and early.raised_at is not None
            if raised or (early is not None and early.outcome != Outcome.Pending):
                continue
            observation = Observation(
                schedule=name,
                boundary=current[0],
                end=current[1],
                min_replicas=entry.rule.min_replicas,
            )
            if early is not None:
                observation = _observation(early, end=current[1], paused=False)
            observation = replace(
                observation, raised_at=None if paused else instant, started_paused=paused
            )
            entered = record(
                observation,
                now=instant,
                lead=lead,
                capacity_lead=_capacity_lead(compiled, model)
                if early is None
                else early.capacity_lead,
            )
            windows = with_record(windows, entered)
            if entered.outcome != Outcome.Pending:
                measured.append((str(entered.outcome), entered.reason, entered.ready_seconds))
    windows = _awaiting_raise(windows, model, by_name, instant)
    # The target is read only for the window starts whose raise has come.
    pending = [w for w in windows if w.outcome == Outcome.Pending and w.raised_at is not None]
    read = snapshot.attempts.readiness
    if pending and read is None:
        ref = spec.horizontal_pod_autoscaler_spec.scale_target_ref
        return ReadReadiness(autoscaler, (ref.api_version or "v1", ref.kind, ref.name))
    events: list[Event] = []
    wake_at: int | None = None
    recheck: float | None = None
    # Each window start measured now: its entry, B, its end and its raise.
    updates: list[tuple[WindowRecord, int | None, int | None, int | None]] = []
    for window in pending:
        compiled = by_name.get(str(window.schedule))
        start = _instant(window.boundary)
        end = None if compiled is None or start is None else _end_of(compiled, start)
        # A window whose Schedule is gone, or no longer starts then, is over.
        observation = _observation(window, end=end if end is not None else instant, paused=paused)
        minimum = observation.min_replicas
        if instant < observation.end:
            # The window is open: the bounds in force are its own, unless something holds
            # them below it (docs/api.md, "status.windows").
            observation = replace(
                observation,
                max_below_min=bounds[1] < minimum,
                overridden=overridden and bounds[0] < minimum,
            )
        assert read is not None  # read above while a window start is pending
        if read.forbidden:
            observation = replace(observation, readable=False)
        elif read.problem is not None:
            # Not there (its ImmediateScaleUp condition says so too): nothing to wait for.
            observation = replace(observation, found=False)
        else:
            if read.ready is None:
                observation = replace(observation, reports_ready=False)
            if read.replicas is None:
                observation = replace(observation, reports_replicas=False)
            failure = read.failure
            observation = replace(
                observation,
                quota_refused=failure is not None and is_quota(failure),
                create_failure=failure,
                pods_pending=read.created is not None
                and read.created >= minimum
                and (read.ready or 0) < minimum,
            )
            if observation.replicas_at is None and (read.replicas or 0) >= minimum:
                observation = replace(observation, replicas_at=instant)
            if observation.ready_at is None and (read.ready or 0) >= minimum:
                observation = replace(observation, ready_at=instant)
        updated = record(
            observation, now=instant, lead=window.lead, capacity_lead=window.capacity_lead
        )
        updates.append((updated, start, end, observation.raised_at))
    waited = _pods_waited(snapshot, autoscaler, read, updates)
    if isinstance(waited, ReadPods):
        return waited
    for updated, start, end, raised_at in updates:
        if updated.outcome != Outcome.Pending and waits_for_nodes(updated):
            wait = waited.get((updated.schedule, updated.boundary))
            updated = updated.model_copy(update={"pods_waited_seconds": wait})
        windows = with_record(windows, updated)
        if updated.outcome == Outcome.Pending:
            if start is not None and instant < start:
                wake_at = start if wake_at is None else min(wake_at, start)
            if end is not None:
                wake_at = end if wake_at is None else min(wake_at, end)
            again = _recheck(instant, raised_at)
            recheck = again if recheck is None else min(recheck, again)
            continue
        measured.append((str(updated.outcome), updated.reason, updated.ready_seconds))
        event = _event(autoscaler, updated)
        if event is not None:
            events.append(event)
    lead_time, capacity_lead_time = _leads_in_force(model, windows)
    last = next((w for w in windows if w.outcome != Outcome.Pending), None)
    report = WindowReport(tuple(measured), None if last is None else is_late(last))
    return Recording(
        windows=windows if windows or stored else None,
        lead_time=lead_time,
        capacity_lead_time=capacity_lead_time,
        events=events,
        report=report,
        wake_at=wake_at,
        recheck=recheck,
    )
