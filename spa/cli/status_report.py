"""`kubectl spa status`'s report: what each ScheduledPodAutoscaler is doing now, and what it
will do next.

The question is "is my scaling working?", which by hand means reading an SPA, its Schedules,
its HPA and their events, and working out the schedule in one's head. Here the SPAs and
Schedules read from the cluster go through the same validation and engine as `spa plan` and
the controller (so "wanted" is what the controller wants), and that is compared with the HPA:
the bounds in force, whether they are what the SPA wants, the active Schedules, the next
transitions in UTC and in each Schedule's own zone, what is Degraded and why, and the last
events (docs/status.md).

Building the report is a pure function of the objects and an instant, so it is tested without
a cluster; reading the cluster is spa/cli/cluster.py, showing the report
spa/cli/status_render.py, and the command spa/cli/status.py.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from spa.api import (
    SCHEDULE_KIND,
    SCHEDULED_POD_AUTOSCALER,
    InvalidObject,
    parse_scheduled_pod_autoscaler,
    wire,
)
from spa.api.adoption import ADOPT_ANNOTATION, Takeover, takeover
from spa.api.resources import MAX_WINDOWS, WindowRecord
from spa.api.validation.leads import LeadsInForce, autoscaler_leads, is_auto
from spa.cli.cluster import (
    ClusterObjects,
    cluster_plan,
    object_name,
    object_namespace,
    schedule_target,
)
from spa.controller.decide.status import raised_ahead_condition
from spa.controller.desired import (
    HpaComparison,
    compare_hpa,
    controller_owner_uid,
    desired_hpa,
    orphaned_hpa,
)
from spa.plan import AutoscalerPlan, PlanError
from spa.schedule import State, instant_of

__all__ = [
    "HORIZON_SECONDS",
    "AutoscalerStatus",
    "Event",
    "Hpa",
    "HpaState",
    "Problem",
    "StatusReport",
    "build_status",
]


# How far ahead transitions are looked for: a week and a day shows every weekly pattern, and
# keeps a status of a thousand SPAs (and `--watch` reading it every few seconds) cheap.
HORIZON_SECONDS = 8 * 86400


class HpaState(enum.StrEnum):
    IN_SYNC = "InSync"
    """The HPA has the SPA's spec with the bounds wanted now."""
    OUT_OF_SYNC = "OutOfSync"
    """It differs from what the SPA wants: the controller has not applied it (yet)."""
    MISSING = "Missing"
    """No HPA of the SPA's name."""
    NOT_OWNED = "NotOwned"
    """An HPA of the SPA's name that this SPA does not control (docs/architecture.md)."""
    WILL_ADOPT = "WillAdopt"
    """An HPA of the SPA's name that this SPA does not control yet, and adopts at its next
    reconcile (spa/api/adoption.py; one of ours left by an orphan deletion, too)."""
    ADOPTION_REFUSED = "AdoptionRefused"
    """Like NOT_OWNED, but the SPA asks to adopt it and may not (`detail` says why)."""
    UNKNOWN = "Unknown"
    """HPAs could not be read, or the SPA is invalid."""
    PAUSED = "Paused"
    """The SPA is paused: the controller leaves its HPA as it is (docs/operations.md)."""


@dataclass(frozen=True, slots=True)
class Hpa:
    state: HpaState
    min_replicas: int | None = None
    max_replicas: int | None = None
    current_replicas: int | None = None
    desired_replicas: int | None = None
    # Of an HPA this SPA does not control: why it is not adopted (the controller's words).
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Event:
    time: int | None
    type: str
    reason: str
    kind: str
    name: str
    count: int
    message: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Something Degraded or invalid, and why."""

    kind: str
    name: str
    message: str


@dataclass(slots=True)
class AutoscalerStatus:
    namespace: str
    name: str
    condition: str | None
    plan: AutoscalerPlan | None
    """None when the SPA itself is invalid (its problems say why)."""
    hpa: Hpa
    schedule_conditions: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    windows: list[WindowRecord] = field(default_factory=list)
    """The last window starts of status.windows, newest first (docs/api.md)."""
    leads: LeadsInForce | None = None
    """The SPA's lead times in force, when it sets any (docs/schedules.md, "Auto lead
    times")."""
    # Why the bounds in force were written ahead of their boundary (its RaisedAhead condition,
    # docs/schedules.md, "Raises ahead of a shared boundary"; None: they were not).
    raised_ahead: str | None = None
    # ... and once the boundary came, the last raise ahead its condition (False) says.
    last_raised_ahead: str | None = None


@dataclass(slots=True)
class StatusReport:
    at: int
    server: str
    autoscalers: list[AutoscalerStatus]
    errors: list[PlanError] = field(default_factory=list)
    """Problems of objects that belong to no listed SPA (a Schedule whose SPA is missing)."""
    unread: list[str] = field(default_factory=list)
    """What could not be read (not allowed) and is therefore not shown."""


def build_status(
    objects: ClusterObjects, *, at: int, name: str | None = None, selection: bool = False
) -> StatusReport:
    """The status of every SPA in `objects` (or only `name`) at the instant `at`. `selection`:
    the SPAs were listed with a label selector (`-l`), so the Schedules of the others are
    left out, not taken for Schedules whose SPA does not exist."""
    autoscalers = sorted(objects.autoscalers, key=_key)
    if name is not None:
        autoscalers = [a for a in autoscalers if object_name(a) == name]
    wanting: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for schedule in objects.schedules:
        target = (object_namespace(schedule), schedule_target(schedule))
        wanting.setdefault(target, []).append(schedule)
    if name is not None or selection:
        # Only what belongs to the SPA asked for is planned (and reported).
        objects = dataclasses.replace(
            objects,
            autoscalers=autoscalers,
            schedules=[s for a in autoscalers for s in wanting.get(_key(a), [])],
        )
    plan = cluster_plan(objects, at=at, until=at + HORIZON_SECONDS)
    planned = {(a.namespace, a.name): _wanted(a) for a in plan.autoscalers}
    hpas = None if objects.hpas is None else {_key(h): h for h in objects.hpas}
    events = _events_by_object(objects.events or [])
    report = StatusReport(at=at, server=objects.server, autoscalers=[], unread=objects.problems)
    entries: dict[tuple[str, str], AutoscalerStatus] = {}
    for autoscaler in autoscalers:
        key = _key(autoscaler)
        entry = AutoscalerStatus(
            namespace=key[0],
            name=key[1],
            condition=(autoscaler.get("status") or {}).get("condition"),
            plan=planned.get(key),
            hpa=_hpa(autoscaler, planned.get(key), hpas),
        )
        entry.windows = _windows(autoscaler)
        entry.leads = _leads(autoscaler)
        own = wanting.get(key, [])
        _problems(entry, autoscaler, own)
        entry.raised_ahead, entry.last_raised_ahead = _raised_ahead(autoscaler)
        entry.events = sorted(
            [
                *events.get((key[0], SCHEDULED_POD_AUTOSCALER, key[1]), []),
                *(e for s in own for e in events.get((key[0], SCHEDULE_KIND, object_name(s)), [])),
            ],
            key=lambda e: -1 if e.time is None else e.time,
            reverse=True,
        )
        report.autoscalers.append(entry)
        entries[key] = entry
    targets = {_key(s): schedule_target(s) for s in objects.schedules}
    for error in plan.errors:
        owner = _owner_of(error, targets)
        if owner is not None and owner in entries:
            problem = _plan_problem(error)
            # The controller says the same in the Schedule's status: say it once.
            entries[owner].problems = [p for p in entries[owner].problems if p != problem]
            entries[owner].problems.append(problem)
        else:
            report.errors.append(error)
    return report


def _windows(autoscaler: Mapping[str, Any]) -> list[WindowRecord]:
    """status.windows as recorded, newest first; an entry that does not read (written by
    somebody else) is left out rather than hiding the others."""
    status = autoscaler.get("status")
    recorded = status.get("windows") if isinstance(status, Mapping) else None
    windows = []
    for item in recorded if isinstance(recorded, list) else []:
        try:
            window = WindowRecord.model_validate(item)
        except ValueError:
            continue
        if window.boundary and window.schedule and window.outcome:
            windows.append(window)
    return sorted(windows, key=lambda w: w.boundary or "", reverse=True)[:MAX_WINDOWS]


def _leads(autoscaler: Mapping[str, Any]) -> LeadsInForce | None:
    """The SPA's leads in force, learned from its status.windows; None unless one is Auto
    (a fixed one reads as written in its spec), or when it is invalid (its problems say
    why)."""
    try:
        model = parse_scheduled_pod_autoscaler(autoscaler)
    except InvalidObject:
        return None
    capacity = model.spec.capacity
    if not is_auto(model.spec.lead_time) and not (capacity and is_auto(capacity.lead_time)):
        return None
    return autoscaler_leads(model)


def _wanted(planned: AutoscalerPlan) -> AutoscalerPlan:
    """The plan with what the controller wants now: an override's bounds in force replace the
    schedule's (by the controller's rule, spa/api/incident.py); a pause wants nothing of the
    HPA, which `_hpa` says."""
    override = planned.incident.override
    if override is None or planned.incident.pause is not None:
        return planned
    state = State(override.min_replicas, override.max_replicas, planned.state.active)
    return dataclasses.replace(planned, state=state)


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return (object_namespace(obj), object_name(obj))


def _owner_of(error: PlanError, targets: Mapping[tuple[str, str], str]) -> tuple[str, str] | None:
    if error.namespace is None or error.name is None:
        return None
    if error.kind == SCHEDULED_POD_AUTOSCALER:
        return (error.namespace, error.name)
    if error.kind == SCHEDULE_KIND and (error.namespace, error.name) in targets:
        return (error.namespace, targets[(error.namespace, error.name)])
    return None


def _plan_problem(error: PlanError) -> Problem:
    detail = f"{error.field}: {error.message}" if error.field else error.message
    return Problem(str(error.kind), str(error.name), detail)


def _hpa(
    autoscaler: Mapping[str, Any],
    planned: AutoscalerPlan | None,
    hpas: Mapping[tuple[str, str], Mapping[str, Any]] | None,
) -> Hpa:
    if hpas is None:
        return Hpa(HpaState.UNKNOWN)
    # Raw JSON as listed (spa.cli.cluster), typed here for the controller's own comparison.
    current = wire.typed_optional(wire.HorizontalPodAutoscaler, hpas.get(_key(autoscaler)))
    if current is None:
        return Hpa(HpaState.MISSING)
    spec, status = current.get("spec") or {}, current.get("status") or {}
    seen: dict[str, Any] = {
        "min_replicas": spec.get("minReplicas", 1),
        "max_replicas": spec.get("maxReplicas"),
        "current_replicas": status.get("currentReplicas"),
        "desired_replicas": status.get("desiredReplicas"),
    }
    # Paused first, as the controller: it writes nothing to the HPA then, ours or not (no
    # adoption either) (docs/status.md, "Pause and override").
    if planned is not None and planned.incident.pause is not None:
        return Hpa(HpaState.PAUSED, **seen)
    uid = (autoscaler.get("metadata") or {}).get("uid")
    if controller_owner_uid(current) != uid:
        return _not_owned(autoscaler, planned, current, seen)
    if planned is None:
        return Hpa(HpaState.UNKNOWN, **seen)
    try:
        model = parse_scheduled_pod_autoscaler(autoscaler)
    except InvalidObject:
        return Hpa(HpaState.UNKNOWN, **seen)
    desired = desired_hpa(
        wire.typed(wire.ScheduledPodAutoscaler, autoscaler),
        model,
        planned.state,
        api_version=str(current.get("apiVersion")),
    )
    comparison = compare_hpa(current, desired, stored_spec=None)
    bounds_match = (seen["min_replicas"], seen["max_replicas"]) == (
        planned.state.min_replicas,
        planned.state.max_replicas,
    )
    # ASK_SERVER: our label, owner and the hash of exactly this desired spec are in place and
    # only the API server's own spelling of values differs (docs/architecture.md,
    # "Convergence"); with the bounds right, that is in sync.
    in_sync = comparison is HpaComparison.IN_SYNC or (
        comparison is HpaComparison.ASK_SERVER and bounds_match
    )
    return Hpa(HpaState.IN_SYNC if in_sync else HpaState.OUT_OF_SYNC, **seen)


def _not_owned(
    autoscaler: Mapping[str, Any],
    planned: AutoscalerPlan | None,
    current: wire.HorizontalPodAutoscaler,
    seen: Mapping[str, Any],
) -> Hpa:
    """An HPA of the SPA's name that it does not control: whether the controller adopts it,
    by its own rule (spa/api/adoption.py, and the orphan of ours it takes back unasked), which
    only a valid SPA reaches."""
    if planned is None:
        return Hpa(HpaState.NOT_OWNED, **seen)
    try:
        model = parse_scheduled_pod_autoscaler(autoscaler)
    except InvalidObject:
        return Hpa(HpaState.NOT_OWNED, **seen)
    if orphaned_hpa(current):
        return Hpa(HpaState.WILL_ADOPT, **seen)
    typed = wire.typed(wire.ScheduledPodAutoscaler, autoscaler)
    desired = desired_hpa(typed, model, planned.state, api_version=str(current.get("apiVersion")))
    verdict = takeover(
        typed["metadata"].get("annotations"), current, target=desired["spec"]["scaleTargetRef"]
    )
    if verdict.takeover is Takeover.ADOPT:
        return Hpa(HpaState.WILL_ADOPT, **seen)
    if verdict.takeover is Takeover.REFUSE:
        return Hpa(HpaState.ADOPTION_REFUSED, **seen, detail=verdict.why)
    detail = (
        f'not adopted without the annotation {ADOPT_ANNOTATION}="true"'
        if verdict.why is None
        else f"cannot be adopted: {verdict.why}"
    )
    return Hpa(HpaState.NOT_OWNED, **seen, detail=detail)


def _raised_ahead(autoscaler: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The message of the SPA's RaisedAhead condition while it is True, and once False, the
    last raise ahead it says (a shard's SPAs have only that: a shard writes the condition at
    the boundary; docs/status.md)."""
    said = raised_ahead_condition(autoscaler)
    if said is None:
        return None, None
    in_force, message = said
    if in_force:
        return message or "raised ahead of its boundary", None
    return None, message or None


def _problems(
    entry: AutoscalerStatus, autoscaler: Mapping[str, Any], own: Sequence[Mapping[str, Any]]
) -> None:
    status = autoscaler.get("status") or {}
    if status.get("condition") == "Degraded":
        messages = [
            str(c.get("message"))
            for c in status.get("conditions") or ()
            if c.get("status") != "True" and c.get("message")
        ]
        entry.problems.append(
            Problem(SCHEDULED_POD_AUTOSCALER, entry.name, "; ".join(messages) or "Degraded")
        )
    for schedule in own:
        schedule_status = schedule.get("status") or {}
        condition, message = schedule_status.get("condition"), schedule_status.get("message")
        entry.schedule_conditions[object_name(schedule)] = (condition, message)
        if condition == "Degraded":
            entry.problems.append(
                Problem(SCHEDULE_KIND, object_name(schedule), str(message or "Degraded"))
            )


def _event_time(event: Mapping[str, Any]) -> int | None:
    for text in (
        event.get("lastTimestamp"),
        event.get("eventTime"),
        (event.get("metadata") or {}).get("creationTimestamp"),
    ):
        if isinstance(text, str) and text:
            try:
                return instant_of(datetime.fromisoformat(text))
            except ValueError:
                continue
    return None


def _events_by_object(
    events: Sequence[Mapping[str, Any]],
) -> dict[tuple[str, str, str], list[Event]]:
    """The Events by the (namespace, kind, name) of the object they are about."""
    found: dict[tuple[str, str, str], list[Event]] = {}
    for event in events:
        involved = event.get("involvedObject") or {}
        kind, name = str(involved.get("kind")), str(involved.get("name"))
        namespace = str(involved.get("namespace") or object_namespace(event))
        found.setdefault((namespace, kind, name), []).append(
            Event(
                time=_event_time(event),
                type=str(event.get("type") or ""),
                reason=str(event.get("reason") or ""),
                kind=kind,
                name=name,
                count=int(event.get("count") or 1),
                message=str(event.get("message") or ""),
            )
        )
    return found
