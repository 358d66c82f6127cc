"""The two text faces of a plan: a table for people and the JSON of docs/plan.md for tools.

The JSON keys and their order are a contract other tools consume (docs/plan.md); keys are
only ever added, at the end of their object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

import yaml

from spa.api.incident import Incident, describe_override, describe_pause
from spa.plan.planner import AutoscalerPlan, Plan, PlanError, SkippedWindow
from spa.plan.schedules import PlannedSchedule, ScheduleState, format_local, zone_name
from spa.schedule import State, format_instant

__all__ = [
    "as_yaml",
    "columns",
    "describe_error",
    "describe_schedule_state",
    "encode",
    "error_fields",
    "incident_fields",
    "incident_lines",
    "join_lines",
    "local_times",
    "max_text",
    "render_errors",
    "render_json",
    "render_table",
    "render_warnings",
    "render_yaml",
    "schedule_rows",
    "state_fields",
    "transition_zones",
]


def render_json(plan: Plan) -> str:
    """The JSON document, laid out one autoscaler, transition or error per line.

    Readable for a person and fast for a large fleet: `json.dumps` with `indent` runs Python's
    pure-Python encoder (a second for 1,000 autoscalers), while each line here is encoded by
    the C encoder.
    """
    autoscalers = []
    for autoscaler in plan.autoscalers:
        head = encode(
            {
                "namespace": autoscaler.namespace,
                "name": autoscaler.name,
                **state_fields(autoscaler.state),
            }
        )
        transitions = [
            {"time": format_instant(instant), **state_fields(state)}
            for instant, state in autoscaler.transitions
        ]
        skipped = [
            {
                "time": format_instant(entry.time),
                "schedule": entry.schedule,
                "date": entry.skipped.occurrence.day.isoformat(),
                "reason": entry.skipped.reason,
            }
            for entry in autoscaler.skipped
        ]
        autoscalers.append(
            f'{head[:-1]}, "transitions": {_lines(transitions, depth=3)}, '
            f'"skipped": {_lines(skipped, depth=3)}, '
            f'"incident": {encode(incident_fields(autoscaler.incident))}}}'
        )
    errors = [encode(error_fields(error)) for error in plan.errors]
    warnings = [encode(error_fields(warning)) for warning in plan.warnings]
    return "\n".join(
        [
            "{",
            f'  "at": {encode(format_instant(plan.at))},',
            f'  "until": {encode(format_instant(plan.until))},',
            f'  "autoscalers": {join_lines(autoscalers, depth=2)},',
            f'  "errors": {join_lines(errors, depth=2)},',
            f'  "warnings": {join_lines(warnings, depth=2)}',
            "}",
        ]
    )


def render_yaml(plan: Plan) -> str:
    """The JSON document as YAML (`-o yaml`, as kubectl offers both): the same fields in the
    same order, so that one description serves both (docs/plan.md)."""
    return as_yaml(render_json(plan))


def as_yaml(document: str) -> str:
    """A JSON document as YAML, its keys in the same order."""
    # The CSafeDumper where PyYAML has its C extension: a large fleet's plan is long.
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        json.loads(document),
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )


def encode(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lines(items: list[dict[str, Any]], *, depth: int) -> str:
    return join_lines([encode(item) for item in items], depth=depth)


def join_lines(encoded: list[str], *, depth: int) -> str:
    if not encoded:
        return "[]"
    inner, outer = "  " * depth, "  " * (depth - 1)
    return f"[\n{inner}" + f",\n{inner}".join(encoded) + f"\n{outer}]"


def state_fields(state: State) -> dict[str, Any]:
    return {
        "minReplicas": state.min_replicas,
        "maxReplicas": state.max_replicas,
        "activeSchedules": list(state.active),
    }


def incident_fields(incident: Incident) -> dict[str, Any] | None:
    """A pause and an override in force, and malformed annotations, as the JSON of
    docs/plan.md and docs/status.md writes them; None when there is none of them."""
    if incident.pause is None and incident.override is None and not incident.errors:
        return None
    pause, override = incident.pause, incident.override
    return {
        "paused": None
        if pause is None
        else {"until": None if pause.until is None else format_instant(pause.until)},
        "override": None
        if override is None
        else {
            "minReplicas": override.min_replicas,
            "maxReplicas": override.max_replicas,
            "until": format_instant(override.until),
        },
        "errors": [str(error) for error in incident.errors],
    }


def incident_lines(incident: Incident) -> list[str]:
    """The pause, the override and malformed annotations, one line each, as the table and
    `kubectl spa status` say them (the words of the controller's conditions)."""
    lines = []
    if incident.pause is not None:
        lines.append(f"{describe_pause(incident.pause)}: the controller leaves the HPA as it is")
    if incident.override is not None:
        wins = " (the pause wins while both hold)" if incident.pause is not None else ""
        lines.append(f"{describe_override(incident.override)}, then the schedule{wins}")
    lines += [f"ignored: {error}" for error in incident.errors]
    return lines


def error_fields(error: PlanError) -> dict[str, Any]:
    return {
        "file": error.file,
        "document": error.document,
        "kind": error.kind,
        "namespace": error.namespace,
        "name": error.name,
        "field": error.field,
        "message": error.message,
    }


def render_table(plan: Plan) -> str:
    """The current state of every autoscaler, then each one's Schedules and transitions
    (the errors are for standard error: `render_errors`).

    Times are UTC (as the API and the JSON write them) with, beside them, the wall-clock time
    in the zone of the Schedule that starts or ends then: the time its author wrote.
    """
    lines = [
        f"Plan from {format_instant(plan.at)} until {format_instant(plan.until)} (times in UTC)",
        "",
    ]
    if not plan.autoscalers:
        lines.append("No valid ScheduledPodAutoscaler found.")
    else:
        rows = [
            [
                "NAMESPACE",
                "NAME",
                "MIN",
                "MAX",
                "ACTIVE SCHEDULES",
                "NEXT TRANSITION",
                "LOCAL",
            ]
        ]
        zones_of = {id(autoscaler): transition_zones(autoscaler) for autoscaler in plan.autoscalers}
        for autoscaler in plan.autoscalers:
            upcoming = autoscaler.transitions
            zones = zones_of[id(autoscaler)]
            rows.append(
                [
                    autoscaler.namespace,
                    autoscaler.name,
                    str(autoscaler.state.min_replicas),
                    max_text(autoscaler.state),
                    ",".join(autoscaler.state.active) or "-",
                    format_instant(upcoming[0][0]) if upcoming else "-",
                    local_times(upcoming[0][0], zones.get(upcoming[0][0], [])) if upcoming else "-",
                ]
            )
        lines.extend(columns(rows))
        for autoscaler in plan.autoscalers:
            lines += ["", f"{autoscaler.namespace}/{autoscaler.name}{_base_text(autoscaler)}:"]
            lines.extend("  " + line for line in autoscaler.auto_leads)
            lines.extend("  " + line for line in incident_lines(autoscaler.incident))
            lines.extend("  " + line for line in schedule_rows(autoscaler))
            lines.append("")
            if not autoscaler.transitions:
                lines.append("  no transition in this period")
                lines.extend(_skipped_lines(autoscaler.skipped))
                continue
            zones = zones_of[id(autoscaler)]
            rows = [["FROM", "MIN", "MAX", "ACTIVE SCHEDULES", "LOCAL"]]
            rows += [
                [
                    format_instant(instant),
                    str(state.min_replicas),
                    max_text(state),
                    ",".join(state.active) or "-",
                    local_times(instant, zones.get(instant, [])),
                ]
                for instant, state in autoscaler.transitions
            ]
            lines.extend("  " + line for line in columns(rows))
            lines.extend(_skipped_lines(autoscaler.skipped))
    return "\n".join(lines)


def render_errors(plan: Plan) -> str:
    """The plan's errors for standard error, one line each as kubectl writes them
    (`error: ...`), in file order; empty without errors. The table leaves them out; the JSON
    and HTML documents carry them as well."""
    return "\n".join(f"error: {describe_error(error)}" for error in plan.errors)


def render_warnings(plan: Plan) -> str:
    """The plan's warnings for standard error, one `warning: ...` line each, in file order;
    empty without warnings. Like the errors, the JSON and HTML documents carry them too."""
    return "\n".join(f"warning: {describe_error(warning)}" for warning in plan.warnings)


def transition_zones(autoscaler: AutoscalerPlan) -> dict[int, list[ZoneInfo]]:
    """For each transition of the autoscaler, the zones of the Schedules that start or end
    then, each once, by name (suspended and completed Schedules never do). Built once per
    autoscaler from the Schedules' boundaries: asking every Schedule at every transition
    would make the table of a large fleet several times slower."""
    if not autoscaler.transitions:
        return {}
    low, high = autoscaler.transitions[0][0] - 1, autoscaler.transitions[-1][0]
    found: dict[int, dict[str, ZoneInfo]] = {}
    for schedule in autoscaler.schedules:
        if schedule.state in (ScheduleState.SUSPENDED, ScheduleState.COMPLETED):
            continue
        for boundary in schedule.timeline.boundaries_between(low, high):
            found.setdefault(boundary, {})[zone_name(schedule.zone)] = schedule.zone
    return {instant: [zones[name] for name in sorted(zones)] for instant, zones in found.items()}


def local_times(instant: int, zones: Sequence[ZoneInfo]) -> str:
    """The wall-clock time of `instant` in each of `zones`, or `-` for none (an instant no
    Schedule explains)."""
    return ", ".join(format_local(instant, zone) for zone in zones) or "-"


def schedule_rows(autoscaler: AutoscalerPlan) -> list[str]:
    """The autoscaler's Schedules as table lines, with where each stands."""
    if not autoscaler.schedules:
        return ["no Schedule"]
    rows = [["SCHEDULE", "TYPE", "WINDOW", "TIME ZONE", "MIN", "MAX", "STATE"]]
    for schedule in autoscaler.schedules:
        rows.append(
            [
                schedule.name,
                schedule.type,
                schedule.window,
                zone_name(schedule.zone),
                _optional(schedule.min_replicas),
                _optional(schedule.max_replicas),
                describe_schedule_state(schedule),
            ]
        )
    return columns(rows)


def describe_schedule_state(schedule: PlannedSchedule) -> str:
    """`active until ...`, `starts ...`, `suspended`, `completed`, with local times."""
    state, change = schedule.state, schedule.next_change
    # The zone's name is in the Schedule's own row; its abbreviation still tells EST from EDT.
    when = "" if change is None else format_local(change, schedule.zone, with_name=False)
    if state is ScheduleState.ACTIVE:
        return f"active until {when}" if when else "active"
    if state is ScheduleState.UPCOMING and when:
        if schedule.capacity_from is not None:
            nodes = format_local(schedule.capacity_from, schedule.zone, with_name=False)
            return f"starts {when} (nodes from {nodes})"
        return f"starts {when}"
    if state is ScheduleState.LATER:
        return f"starts {when}, after this period" if when else f"no start {schedule.look_ahead}"
    return state.value


def _optional(value: int | None) -> str:
    return "-" if value is None else str(value)


def _base_text(autoscaler: AutoscalerPlan) -> str:
    base = autoscaler.base
    if base is None:
        return ""
    minimum = "unset (1)" if base.min_replicas is None else str(base.min_replicas)
    return f" (base: min {minimum}, max {base.max_replicas})"


def _skipped_lines(skipped: list[SkippedWindow]) -> list[str]:
    """The windows that do not open in the horizon, and why (docs/plan.md)."""
    if not skipped:
        return []
    rows = [["SKIPPED", "SCHEDULE", "WHY"]]
    rows += [
        [format_instant(entry.time), entry.schedule, entry.skipped.describe()] for entry in skipped
    ]
    return ["  " + line for line in columns(rows)]


def describe_error(error: PlanError) -> str:
    where = error.file if error.document is None else f"{error.file} (document {error.document})"
    subject = ""
    if error.kind:
        # A cluster-scoped object (a ClusterCalendar) has no namespace.
        where_in = f"{error.namespace}/" if error.namespace else ""
        subject = f" {error.kind} {where_in}{error.name or '<unnamed>'}"
    detail = f"{error.field}: {error.message}" if error.field else error.message
    return f"{where}{subject}: {detail}"


def max_text(state: State) -> str:
    # Flag max raised to min (docs/schedules.md, "Effective values") in the table, where a
    # reader reviewing a change needs to see it.
    return f"{state.max_replicas} (raised to min)" if state.max_raised else str(state.max_replicas)


def columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
