"""Every reason the controller gives, in Events and in conditions, and the Events themselves.

Why one enum: the reasons are an interface (`kubectl describe`, alerts, docs/operations.md's
table, docs/schedules.md), and they used to be bare strings spread over the decision, the
reconciler and the actuator, so a new one could appear without its documentation and a typo
would pass every test. A `StrEnum` is its string on the wire: the values here are the reasons
users see, and must not change.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from spa.api import wire
from spa.api.membership import Exclusion

__all__ = ["Event", "EventType", "Reason"]


class Reason(enum.StrEnum):
    """An Event's or a condition's reason (docs/operations.md, "Events"; docs/schedules.md)."""

    # The SPA's Ready condition.
    APPLIED = "Applied"
    MAX_RAISED_TO_MIN = "MaxRaisedToMin"
    INVALID_SPEC = "InvalidSpec"
    HPA_CONFLICT = "HPAConflict"
    HPA_REJECTED = "HPARejected"
    HPA_NOT_CONVERGING = "HPANotConverging"
    # Adopting somebody's HPA of the SPA's name, on request (spa/api/adoption.py): refused
    # (Ready's reason and a Warning), done (a Normal Event).
    HPA_ADOPTION_REFUSED = "HPAAdoptionRefused"
    ADOPTED = "Adopted"
    # The API server stored the HPA without fields of the SPA's spec (a Warning, said once).
    HPA_FIELD_DROPPED = "HPAFieldDropped"
    # A window of the SPA started or ended (Normal).
    SCHEDULE_STARTED = "ScheduleStarted"
    SCHEDULE_ENDED = "ScheduleEnded"
    # A Schedule that names the SPA but does not apply (the membership rule shared with
    # `spa plan` and `kubectl spa status` names the last three: spa/api/membership.py).
    INVALID_SCHEDULE = "InvalidSchedule"
    FOREIGN_CONTROLLER = Exclusion.FOREIGN_CONTROLLER.value
    TOO_MANY_SCHEDULES = Exclusion.TOO_MANY_SCHEDULES.value
    ADOPTION_FAILED = Exclusion.ADOPTION_FAILED.value
    NOT_APPLIED = "NotApplied"
    # Immediate scale-up: the SPA's ImmediateScaleUp condition and its Event.
    SCALED_UP = "ScaledUp"
    SCALE_REFUSED = "ScaleRefused"
    SCALE_FORBIDDEN = "ScaleForbidden"
    TARGET_NOT_FOUND = "TargetNotFound"
    NO_SCALE_SUBRESOURCE = "NoScaleSubresource"
    # Raises ahead of a shared boundary (the RaisedAhead condition).
    FLEET_AHEAD = "FleetAhead"
    BOUNDARY_REACHED = "BoundaryReached"
    # Pause and override for incidents (spa/api/incident.py): the SPA's Paused and Overridden
    # conditions, their Events, and the Ready reason while one holds.
    PAUSED = "Paused"
    PAUSE_EXPIRED = "PauseExpired"
    PAUSE_ENDED = "PauseEnded"
    OVERRIDDEN = "Overridden"
    OVERRIDE_EXPIRED = "OverrideExpired"
    OVERRIDE_ENDED = "OverrideEnded"
    INVALID_ANNOTATION = "InvalidAnnotation"
    # Node capacity ahead of a window (docs/schedules.md, "Node capacity"): the SPA's
    # CapacityReady condition, and the Events of the capacity it holds.
    CAPACITY_NOT_REQUESTED = "NotRequested"
    BUFFER_REQUESTED = "BufferRequested"
    PLACEHOLDER_RUNNING = "PlaceholderRunning"
    PODS_REQUESTED = "PodsRequested"
    CAPACITY_UNSUPPORTED = "Unsupported"
    CAPACITY_CREATED = "CapacityCreated"
    CAPACITY_RESIZED = "CapacityResized"
    CAPACITY_REMOVED = "CapacityRemoved"
    CAPACITY_NAME_TAKEN = "CapacityNameTaken"
    # A window start measured late or missed (docs/api.md, "status.windows"): Warnings.
    WINDOW_LATE = "WindowLate"
    WINDOW_MISSED = "WindowMissed"


class EventType(enum.StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class Event:
    """An Event to record about `obj` (the SPA or one of its Schedules)."""

    obj: wire.ScheduledPodAutoscaler | wire.Schedule
    type: EventType
    reason: Reason
    message: str
