"""Pause and override in the decision: the SPA's `Paused` and `Overridden` conditions and the
Events that say when one starts, ends, expires or is malformed (docs/status.md, "Pause and
override"; the rule itself, shared with `kubectl spa status`, is spa/api/incident.py).

Why conditions carry the history: the controller is level-triggered and remembers nothing
across restarts, yet "the pause just expired" and "somebody resumed" must each be said once.
The condition last written says what was in force before; comparing it with what the
annotations mean now tells the transition, and its lastTransitionTime is when it began (the
audit of since/until and values, since annotations cannot say who wrote them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from spa.api import wire
from spa.api.incident import (
    OVERRIDE_ANNOTATION,
    PAUSED_UNTIL_ANNOTATION,
    Incident,
    Override,
    Pause,
    describe_override,
    describe_pause,
)
from spa.api.validation.messages import annotation_field
from spa.controller.decide.reasons import Event, EventType, Reason
from spa.schedule import format_instant

__all__ = [
    "OVERRIDDEN_CONDITION",
    "PAUSED_CONDITION",
    "IncidentCondition",
    "held",
    "incident_conditions",
]

PAUSED_CONDITION = "Paused"
OVERRIDDEN_CONDITION = "Overridden"

# What follows every message of a measure that no longer holds: the user's first question.
_SCHEDULE_APPLIES = "the schedule applies"


@dataclass(frozen=True, slots=True)
class IncidentCondition:
    """One of the two conditions, as it is to be written."""

    type: str
    status: Literal["True", "False"]
    reason: Reason
    message: str


def incident_conditions(
    autoscaler: wire.ScheduledPodAutoscaler, incident: Incident
) -> tuple[list[IncidentCondition], list[Event]]:
    """The `Paused` and `Overridden` conditions to write (none for an SPA that was never
    paused nor overridden: an upgrade writes nothing new), and an Event for each change."""
    current = {
        str(entry.get("type")): entry
        for entry in (autoscaler.get("status") or {}).get("conditions") or ()
    }
    errors = {error.field: str(error) for error in incident.errors}
    conditions: list[IncidentCondition] = []
    events: list[Event] = []
    for wanted in (
        _condition(
            PAUSED_CONDITION,
            current.get(PAUSED_CONDITION),
            active=incident.pause,
            expired=incident.expired_pause,
            error=errors.get(annotation_field(PAUSED_UNTIL_ANNOTATION)),
        ),
        _condition(
            OVERRIDDEN_CONDITION,
            current.get(OVERRIDDEN_CONDITION),
            active=incident.override,
            expired=incident.expired_override,
            error=errors.get(annotation_field(OVERRIDE_ANNOTATION)),
        ),
    ):
        if wanted is None:
            continue
        conditions.append(wanted)
        before = current.get(wanted.type)
        if before is None or (
            before.get("status"),
            before.get("reason"),
            before.get("message"),
        ) != (
            wanted.status,
            wanted.reason.value,
            wanted.message,
        ):
            kind = (
                EventType.WARNING
                if wanted.reason is Reason.INVALID_ANNOTATION
                else EventType.NORMAL
            )
            events.append(Event(autoscaler, kind, wanted.reason, wanted.message))
    return conditions, events


def _condition(
    type_: str,
    before: wire.Condition | None,
    *,
    active: Pause | Override | None,
    expired: Pause | Override | None,
    error: str | None,
) -> IncidentCondition | None:
    """The condition of one measure now (None: leave it as it is, or absent)."""
    pause = type_ == PAUSED_CONDITION
    if active is not None:
        message = describe_pause(active) if isinstance(active, Pause) else describe_override(active)
        if pause:
            message += ": the controller leaves the HorizontalPodAutoscaler as it is"
        return IncidentCondition(
            type_, "True", Reason.PAUSED if pause else Reason.OVERRIDDEN, message
        )
    if error is not None:
        return IncidentCondition(
            type_, "False", Reason.INVALID_ANNOTATION, f"{error} (ignored: {_SCHEDULE_APPLIES})"
        )
    was_active = before is not None and before.get("status") == "True"
    was_invalid = before is not None and before.get("reason") == Reason.INVALID_ANNOTATION
    if not was_active and not was_invalid:
        # Nothing started, so nothing ends: an expired annotation found on a new SPA, or one
        # already reported, changes nothing.
        return None
    if expired is not None and expired.until is not None:
        what = "pause" if pause else "override"
        return IncidentCondition(
            type_,
            "False",
            Reason.PAUSE_EXPIRED if pause else Reason.OVERRIDE_EXPIRED,
            f"the {what} ended at {format_instant(expired.until)}; {_SCHEDULE_APPLIES}",
        )
    if was_invalid:
        ended = "the malformed annotation was removed"
    else:
        ended = "resumed" if pause else "the override was removed"
    return IncidentCondition(
        type_,
        "False",
        Reason.PAUSE_ENDED if pause else Reason.OVERRIDE_ENDED,
        f"{ended}; {_SCHEDULE_APPLIES}",
    )


def held(hpa: wire.HorizontalPodAutoscaler | None) -> tuple[int, int] | None:
    """The bounds the HPA holds: those a paused HPA keeps, and those an early raise already
    written is kept by (None: there is no HPA, or no bounds to read)."""
    spec = (hpa.get("spec") if hpa is not None else None) or {}
    maximum = spec.get("maxReplicas")
    if type(maximum) is not int:
        return None
    minimum = spec.get("minReplicas")
    return (minimum if type(minimum) is int else 1, maximum)
