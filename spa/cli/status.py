"""`kubectl spa status`: what each ScheduledPodAutoscaler is doing now, and what it will do next.

The question is "is my scaling working?", which by hand means reading an SPA, its Schedules,
its HPA and their events, and working out the schedule in one's head. Here the SPAs and
Schedules read from the cluster go through the same validation and engine as `spa plan` and
the controller (so "wanted" is what the controller wants), and that is compared with the HPA:
the bounds in force, whether they are what the SPA wants, the active Schedules, the next
transitions in UTC and in each Schedule's own zone, what is Degraded and why, and the last
events (docs/status.md).

Building the report is a pure function of the objects and an instant, so it is tested without
a cluster; reading the cluster is spa/cli/cluster.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from spa.api import (
    SCHEDULE_KIND,
    SCHEDULED_POD_AUTOSCALER,
    InvalidObject,
    parse_scheduled_pod_autoscaler,
    wire,
)
from spa.api.adoption import ADOPT_ANNOTATION, Takeover, takeover
from spa.cli.cluster import (
    ClusterObjects,
    cluster_plan,
    connected,
    object_name,
    object_namespace,
    read_cluster,
    schedule_target,
)
from spa.cli.output import emit
from spa.controller.desired import (
    HpaComparison,
    compare_hpa,
    controller_owner_uid,
    desired_hpa,
    orphaned_hpa,
)
from spa.controller.main import ClusterFailure
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.plan import AutoscalerPlan, PlanError
from spa.plan.render import (
    columns,
    describe_error,
    incident_fields,
    incident_lines,
    local_times,
    schedule_rows,
    state_fields,
    transition_zones,
)
from spa.plan.schedules import zone_name
from spa.schedule import State, format_instant, instant_of

__all__ = [
    "AutoscalerStatus",
    "HpaState",
    "StatusReport",
    "build_status",
    "render_status",
    "run_status",
]

# How far ahead transitions are looked for: a week and a day shows every weekly pattern, and
# keeps a status of a thousand SPAs (and `--watch` reading it every few seconds) cheap.
HORIZON_SECONDS = 8 * 86400
TABLE_TRANSITIONS, WIDE_TRANSITIONS = 3, 10
TABLE_EVENTS, WIDE_EVENTS = 5, 10


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


_HPA_TEXT = {
    HpaState.IN_SYNC: "HPA in sync",
    HpaState.OUT_OF_SYNC: "HPA out of sync (not applied yet, or the controller is not running)",
    HpaState.MISSING: "no HPA",
    HpaState.NOT_OWNED: "HPA of that name not controlled by this SPA",
    HpaState.WILL_ADOPT: "HPA of that name not controlled by this SPA yet: will adopt",
    HpaState.ADOPTION_REFUSED: "HPA of that name not controlled by this SPA: adoption refused",
    HpaState.UNKNOWN: "HPA unknown",
    HpaState.PAUSED: "HPA left as it is (paused)",
}


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
        own = wanting.get(key, [])
        _problems(entry, autoscaler, own)
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


# -- output -----------------------------------------------------------------------------------


# `-o name` names an SPA as `kubectl get -o name` does: kind.group/name, without the namespace.
_NAME_PREFIX = f"{SCHEDULED_POD_AUTOSCALERS.kind.lower()}.{SCHEDULED_POD_AUTOSCALERS.group}/"


def render_status(report: StatusReport, output: str, *, headers: bool = True) -> str:
    """The report as `table`, `wide`, `json`, `yaml` or `name` (docs/status.md); `headers`
    False (`--no-headers`) leaves out the table's first line."""
    if output == "json":
        return json.dumps(status_document(report), indent=2, ensure_ascii=False)
    if output == "yaml":
        return yaml.safe_dump(status_document(report), sort_keys=False, allow_unicode=True)
    if output == "name":
        return "\n".join(_NAME_PREFIX + entry.name for entry in report.autoscalers)
    return _table(report, wide=output == "wide", headers=headers)


def _table(report: StatusReport, *, wide: bool, headers: bool) -> str:
    lines = [f"Status at {format_instant(report.at)} from {report.server}"]
    if not report.autoscalers:
        lines += ["", "No ScheduledPodAutoscaler found."]
    for entry in report.autoscalers:
        lines += ["", *_block(report, entry, wide=wide)]
    if not headers:
        # The heading and the blank line after it; the blocks keep their column titles, without
        # which the three pairs of bounds could not be told apart (docs/status.md).
        lines = lines[2:]
    if report.errors:
        lines += ["", f"{len(report.errors)} error(s):"]
        lines.extend(f"  {describe_error(error)}" for error in report.errors)
    for unread in report.unread:
        lines += ["", f"Not shown: {unread}"]
    return "\n".join(lines)


def _block(report: StatusReport, entry: AutoscalerStatus, *, wide: bool) -> list[str]:
    hpa, planned = entry.hpa, entry.plan
    lines = [
        f"{entry.namespace}/{entry.name}   {entry.condition or 'no status yet'}   "
        f"{_HPA_TEXT[hpa.state]}" + ("" if hpa.detail is None else f": {hpa.detail}")
    ]
    if planned is not None and planned.base is not None:
        base_min = planned.base.min_replicas
        rows = [
            ["", "BASE", "WANTED NOW", "IN FORCE (HPA)"],
            [
                "min",
                "1 (unset)" if base_min is None else str(base_min),
                str(planned.state.min_replicas),
                _optional(hpa.min_replicas),
            ],
            [
                "max",
                str(planned.base.max_replicas),
                str(planned.state.max_replicas),
                _optional(hpa.max_replicas),
            ],
        ]
        lines.extend("  " + line for line in columns(rows))
        lines.extend("  " + line for line in incident_lines(planned.incident))
        if wide and hpa.current_replicas is not None:
            lines.append(
                f"  replicas: {hpa.current_replicas} now, {_optional(hpa.desired_replicas)} "
                "desired by the HPA"
            )
        lines.append("  active: " + (", ".join(planned.state.active) or "none"))
        lines += _transition_lines(planned, WIDE_TRANSITIONS if wide else TABLE_TRANSITIONS)
        if wide:
            lines.append("  schedules:")
            lines.extend("    " + line for line in schedule_rows(planned))
    if entry.problems:
        lines.append("  degraded:")
        lines.extend(f"    {p.kind} {p.name}: {p.message}" for p in entry.problems)
    lines += _event_lines(report.at, entry.events, WIDE_EVENTS if wide else TABLE_EVENTS, wide)
    return lines


def _transition_lines(planned: AutoscalerPlan, limit: int) -> list[str]:
    if not planned.transitions:
        return ["  next: no transition in the next 8 days"]
    zones = transition_zones(planned)
    rows = [["next:", "UTC", "MIN", "MAX", "ACTIVE", "LOCAL"]]
    for instant, state in planned.transitions[:limit]:
        rows.append(
            [
                "",
                format_instant(instant),
                str(state.min_replicas),
                str(state.max_replicas),
                ",".join(state.active) or "-",
                local_times(instant, zones.get(instant, [])),
            ]
        )
    return ["  " + line for line in columns(rows)]


def _event_lines(at: int, events: Sequence[Event], limit: int, wide: bool) -> list[str]:
    if not events:
        return []
    rows = [["events:", "AGE", "TYPE", "REASON", "OBJECT", "MESSAGE"]]
    for event in events[:limit]:
        message = event.message if wide or len(event.message) <= 100 else event.message[:99] + "…"
        if event.count > 1:
            message = f"{message} (x{event.count})"
        rows.append(
            [
                "",
                "?" if event.time is None else _age(at - event.time),
                event.type,
                event.reason,
                f"{event.kind}/{event.name}",
                message,
            ]
        )
    return ["  " + line for line in columns(rows)]


def _age(seconds: int) -> str:
    """kubectl's short ages: 45s, 12m, 5h, 3d."""
    seconds = max(0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _optional(value: int | None) -> str:
    return "-" if value is None else str(value)


def status_document(report: StatusReport) -> dict[str, Any]:
    """The structure `-o json` and `-o yaml` print (docs/status.md)."""
    return {
        "at": format_instant(report.at),
        "server": report.server,
        "autoscalers": [_entry_document(entry) for entry in report.autoscalers],
        "errors": [
            {k: v for k, v in dataclasses.asdict(error).items() if k != "document"}
            for error in report.errors
        ],
        "notShown": list(report.unread),
    }


def _entry_document(entry: AutoscalerStatus) -> dict[str, Any]:
    planned = entry.plan
    hpa = entry.hpa
    document: dict[str, Any] = {
        "namespace": entry.namespace,
        "name": entry.name,
        "condition": entry.condition,
        "base": None,
        "wanted": None,
        "hpa": {
            "state": hpa.state.value,
            "minReplicas": hpa.min_replicas,
            "maxReplicas": hpa.max_replicas,
            "currentReplicas": hpa.current_replicas,
            "desiredReplicas": hpa.desired_replicas,
            "detail": hpa.detail,
        },
        "schedules": [],
        "transitions": [],
        "problems": [dataclasses.asdict(problem) for problem in entry.problems],
        "events": [
            {
                "time": None if e.time is None else format_instant(e.time),
                "type": e.type,
                "reason": e.reason,
                "kind": e.kind,
                "name": e.name,
                "count": e.count,
                "message": e.message,
            }
            for e in entry.events
        ],
        "incident": None if planned is None else incident_fields(planned.incident),
    }
    if planned is None:
        return document
    if planned.base is not None:
        document["base"] = {
            "minReplicas": planned.base.min_replicas,
            "maxReplicas": planned.base.max_replicas,
        }
    document["wanted"] = state_fields(planned.state)
    document["schedules"] = [
        {
            "name": s.name,
            "type": s.type,
            "window": s.window,
            "timeZone": zone_name(s.zone),
            "minReplicas": s.min_replicas,
            "maxReplicas": s.max_replicas,
            "state": s.state.value,
            "nextChange": None if s.next_change is None else format_instant(s.next_change),
            "condition": entry.schedule_conditions.get(s.name, (None, None))[0],
            "message": entry.schedule_conditions.get(s.name, (None, None))[1],
            # When node capacity is next ordered for it (docs/schedules.md, "Node capacity").
            "capacityFrom": None if s.capacity_from is None else format_instant(s.capacity_from),
        }
        for s in planned.schedules
    ]
    zones = transition_zones(planned)
    document["transitions"] = [
        {
            "time": format_instant(instant),
            **state_fields(state),
            "local": [
                {
                    "timeZone": zone_name(zone),
                    "time": datetime.fromtimestamp(instant, zone).isoformat(),
                }
                for zone in zones.get(instant, [])
            ],
        }
        for instant, state in planned.transitions
    ]
    return document


# -- the command --------------------------------------------------------------------------------


def run_status(
    arguments: argparse.Namespace,
    *,
    now: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """`status` once, or with `--watch` until interrupted; the exit status."""
    with connected(arguments) as scope:
        last: str | None = None
        while True:
            objects = read_cluster(scope, everything=True, selector=arguments.selector)
            at = int(now())
            report = build_status(
                objects, at=at, name=arguments.name, selection=arguments.selector is not None
            )
            if arguments.name is not None and not report.autoscalers:
                where = scope.namespace or "any namespace"
                raise ClusterFailure(
                    1, f"ScheduledPodAutoscaler {arguments.name} not found in {where}"
                )
            text = render_status(report, arguments.output, headers=not arguments.no_headers)
            if not arguments.watch:
                if text:  # `-o name` of nothing prints nothing, as kubectl
                    emit(text)
                return 0
            # On a terminal the status is redrawn in place at every read (ages move on);
            # elsewhere (a pipe, a log) it is printed again only when something changed.
            redraw = arguments.output in ("table", "wide") and _terminal()
            content = json.dumps({**status_document(report), "at": None}, sort_keys=True)
            if redraw or content != last:
                emit("\033[H\033[2J" + text if redraw else text)
                last = content
            sleep(arguments.interval)


def _terminal() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
