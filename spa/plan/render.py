"""The two faces of a plan: a table for people and the JSON of docs/plan.md for tools.

The JSON keys and their order are a contract other tools consume; nothing is added to it.
"""

from __future__ import annotations

import json
from typing import Any

from spa.plan.planner import Plan, PlanError
from spa.schedule import State, format_instant

__all__ = ["render_json", "render_table"]


def render_json(plan: Plan) -> str:
    """The JSON document, laid out one autoscaler, transition or error per line.

    Readable for a person and fast for a large fleet: `json.dumps` with `indent` runs Python's
    pure-Python encoder (a second for 1,000 autoscalers), while each line here is encoded by
    the C encoder.
    """
    autoscalers = []
    for autoscaler in plan.autoscalers:
        head = _encode(
            {
                "namespace": autoscaler.namespace,
                "name": autoscaler.name,
                **_state_fields(autoscaler.state),
            }
        )
        transitions = [
            {"time": format_instant(instant), **_state_fields(state)}
            for instant, state in autoscaler.transitions
        ]
        autoscalers.append(f'{head[:-1]}, "transitions": {_lines(transitions, depth=3)}}}')
    errors = [_encode(_error_fields(error)) for error in plan.errors]
    return "\n".join(
        [
            "{",
            f'  "at": {_encode(format_instant(plan.at))},',
            f'  "until": {_encode(format_instant(plan.until))},',
            f'  "autoscalers": {_join(autoscalers, depth=2)},',
            f'  "errors": {_join(errors, depth=2)}',
            "}",
        ]
    )


def _encode(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lines(items: list[dict[str, Any]], *, depth: int) -> str:
    return _join([_encode(item) for item in items], depth=depth)


def _join(encoded: list[str], *, depth: int) -> str:
    if not encoded:
        return "[]"
    inner, outer = "  " * depth, "  " * (depth - 1)
    return f"[\n{inner}" + f",\n{inner}".join(encoded) + f"\n{outer}]"


def _state_fields(state: State) -> dict[str, Any]:
    return {
        "minReplicas": state.min_replicas,
        "maxReplicas": state.max_replicas,
        "activeSchedules": list(state.active),
    }


def _error_fields(error: PlanError) -> dict[str, Any]:
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
    """The current state of every autoscaler, then each one's upcoming transitions."""
    lines = [
        f"Plan from {format_instant(plan.at)} until {format_instant(plan.until)} (times in UTC)",
        "",
    ]
    if not plan.autoscalers:
        lines.append("No valid ScheduledPodAutoscaler found.")
    else:
        rows = [["NAMESPACE", "NAME", "MIN", "MAX", "ACTIVE SCHEDULES", "NEXT TRANSITION"]]
        for autoscaler in plan.autoscalers:
            upcoming = autoscaler.transitions
            rows.append(
                [
                    autoscaler.namespace,
                    autoscaler.name,
                    str(autoscaler.state.min_replicas),
                    _max_text(autoscaler.state),
                    ",".join(autoscaler.state.active) or "-",
                    format_instant(upcoming[0][0]) if upcoming else "-",
                ]
            )
        lines.extend(_columns(rows))
        for autoscaler in plan.autoscalers:
            lines += ["", f"{autoscaler.namespace}/{autoscaler.name}:"]
            if not autoscaler.transitions:
                lines.append("  no transition in this period")
                continue
            rows = [["FROM", "MIN", "MAX", "ACTIVE SCHEDULES"]]
            rows += [
                [
                    format_instant(instant),
                    str(state.min_replicas),
                    _max_text(state),
                    ",".join(state.active) or "-",
                ]
                for instant, state in autoscaler.transitions
            ]
            lines.extend("  " + line for line in _columns(rows))
    if plan.errors:
        lines += ["", f"{len(plan.errors)} error(s):"]
        lines.extend(f"  {describe_error(error)}" for error in plan.errors)
    return "\n".join(lines)


def describe_error(error: PlanError) -> str:
    where = error.file if error.document is None else f"{error.file} (document {error.document})"
    subject = ""
    if error.kind:
        subject = f" {error.kind} {error.namespace}/{error.name or '<unnamed>'}"
    detail = f"{error.field}: {error.message}" if error.field else error.message
    return f"{where}{subject}: {detail}"


def _max_text(state: State) -> str:
    # Flag max raised to min (docs/schedules.md, "Effective values") in the table, where a
    # reader reviewing a change needs to see it.
    return f"{state.max_replicas} (raised to min)" if state.max_raised else str(state.max_replicas)


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
