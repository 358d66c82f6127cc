"""`kubectl spa status`'s report as a table (`-o table`, `wide`), JSON, YAML or names.

The table answers "is my scaling working?" at a glance, one block per SPA: the bounds of its
base, wanted now and in force, the active Schedules, the next transitions, what is Degraded and
the last events; the JSON and YAML are the structure of docs/status.md, whose keys are only
ever added. The report itself is spa/cli/status_report.py.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import yaml

from spa.api.resources import WindowRecord
from spa.api.validation.leads import LeadsInForce
from spa.cli.status_report import AutoscalerStatus, Event, HpaState, StatusReport
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.plan import AutoscalerPlan
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
from spa.schedule import format_instant
from spa.schedule.learned_lead import spoken_seconds

__all__ = ["render_status", "status_document", "window_line"]


TABLE_TRANSITIONS, WIDE_TRANSITIONS = 3, 10


TABLE_EVENTS, WIDE_EVENTS = 5, 10


TABLE_WINDOWS, WIDE_WINDOWS = 5, 10


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
        if entry.raised_ahead is not None:
            lines.append(f"  raised ahead: {entry.raised_ahead}")
        elif entry.last_raised_ahead is not None:
            lines.append(f"  last raised ahead: {entry.last_raised_ahead}")
        lines += _transition_lines(planned, WIDE_TRANSITIONS if wide else TABLE_TRANSITIONS)
        if wide:
            lines.append("  schedules:")
            lines.extend("    " + line for line in schedule_rows(planned))
    lines += _lead_lines(entry)
    lines += _window_lines(entry, WIDE_WINDOWS if wide else TABLE_WINDOWS, wide=wide)
    if entry.problems:
        lines.append("  degraded:")
        lines.extend(f"    {p.kind} {p.name}: {p.message}" for p in entry.problems)
    lines += _event_lines(report.at, entry.events, WIDE_EVENTS if wide else TABLE_EVENTS, wide)
    return lines


# How a missed window's reason reads (docs/api.md, "status.windows").
_MISSED = {
    "PodsPending": "pods Pending or not Ready",
    "Quota": "a ResourceQuota refused pods",
    "FailedCreate": "pods could not be created (the target's ReplicaFailure)",
    "NotScaled": "the target's spec.replicas never reached the minimum",
    "MaxReplicas": "the HPA's maxReplicas (an override's) is below the window's minimum",
    "Overridden": "an override held minReplicas below the window's",
    "Paused": "paused",
    "NoReadyReplicas": "the target reports no readyReplicas",
    "NotReadable": "Ready not measured (grant get on the target, docs/install.md)",
    "NoTarget": "the target was not found",
    "NotReady": "pods not Ready",
}


def _lead_lines(entry: AutoscalerStatus) -> list[str]:
    if entry.leads is None:
        return []
    pods = entry.leads.pod_status()
    lines = [f"  lead: {spoken_seconds(entry.leads.pods.seconds)} ({pods.explanation})"]
    nodes = entry.leads.node_status()
    if nodes is not None and entry.leads.nodes is not None:
        seconds = entry.leads.nodes.seconds
        lines.append(f"  capacity lead: {spoken_seconds(seconds)} ({nodes.explanation})")
    return lines


def _relative(seconds: int) -> str:
    return f"B{'+' if seconds > 0 else '-' if seconds < 0 else ''}{abs(seconds)} s"


def _nodes(window: WindowRecord) -> str:
    """ ", nodes Ready 40 s after the order" when the node capacity's wait was measured, else
    ", pods waited 45 s for a node" when the pods' was."""
    try:
        held = datetime.fromisoformat(window.capacity_held_at or "")
        stood = datetime.fromisoformat(window.nodes_ready_at or "")
    except ValueError:
        if window.pods_waited_seconds is None:
            return ""
        return f", pods waited {window.pods_waited_seconds} s for a node"
    return f", nodes Ready {round((stood - held).total_seconds())} s after the order"


def window_line(window: WindowRecord) -> str:
    """One window start in words: "08:00 peak: Ready at B-42 s", "late: Ready at B+75 s",
    "missed: pods Pending", with ", nodes Ready 40 s after the order" or ", pods waited 45 s
    for a node" when measured (docs/status.md)."""
    return _window_words(window) + _nodes(window)


def _window_words(window: WindowRecord) -> str:
    when = (window.boundary or "").replace("T", " ").removesuffix("Z")[:16]
    head = f"{when} {window.schedule}:"
    ready = "" if window.ready_seconds is None else f"Ready at {_relative(window.ready_seconds)}"
    if window.outcome == "Early":
        return f"{head} {ready}"
    if window.outcome == "Late":
        return f"{head} late: {ready}"
    if window.outcome == "Missed":
        return f"{head} missed: {_MISSED.get(window.reason or '', window.reason or 'not Ready')}"
    if window.outcome == "Pending" and window.reason:
        return f"{head} being measured, held back: {_MISSED.get(window.reason, window.reason)}"
    if window.outcome == "Pending" and window.raised_at is None and window.capacity_held_at:
        return f"{head} nodes ordered, pods not raised yet"
    if window.outcome == "Pending":
        return f"{head} being measured"
    return f"{head} {window.outcome}"


def _window_lines(entry: AutoscalerStatus, limit: int, *, wide: bool) -> list[str]:
    if not entry.windows:
        return []
    lines = ["  windows (UTC, B = the window's start):"]
    for window in entry.windows[:limit]:
        line = window_line(window)
        lead = window.lead
        if wide and lead is not None and lead.seconds is not None:
            line += f" (lead {spoken_seconds(lead.seconds)}, {lead.source})"
        lines.append(f"    {line}")
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


def _node_lead(leads: LeadsInForce) -> dict[str, Any] | None:
    nodes = leads.node_status()
    return None if nodes is None else nodes.to_wire()


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
        "raisedAhead": entry.raised_ahead,
        "lastRaisedAhead": entry.last_raised_ahead,
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
        # status.windows as recorded, and the leads in force (docs/api.md).
        "windows": [window.to_wire() for window in entry.windows],
        "leadTime": None if entry.leads is None else entry.leads.pod_status().to_wire(),
        "capacityLeadTime": None if entry.leads is None else _node_lead(entry.leads),
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
