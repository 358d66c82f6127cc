"""Was the target Ready for a window? The outcome of a window start, from timestamps.

The project promises capacity *Ready* before a known peak; this module says, for one window
start, whether it was (docs/api.md, "status.windows"): Early when the target's readyReplicas
reached the window's minimum by the boundary B, Late when after B but before the window ended,
Missed when not before it ended (with why), Pending while that is not known yet. It is pure:
what the target showed is read elsewhere (at the requeues around a window), and handed in as
an :class:`Observation`; the result is the status entry, kept in status.windows, newest first,
at most `MAX_WINDOWS`, from which the Auto lead times are learned
(spa/api/validation/leads.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from spa.api import wire
from spa.api.resources import MAX_WINDOWS, LeadInForce, WindowRecord
from spa.schedule import format_instant

__all__ = [
    "MissedReason",
    "Observation",
    "Outcome",
    "classify",
    "is_late",
    "record",
    "stored_windows",
    "with_record",
]


class Outcome(StrEnum):
    Early = "Early"
    Late = "Late"
    Missed = "Missed"
    Pending = "Pending"


class MissedReason(StrEnum):
    """Why a window was missed, most fundamental first: the first that applies is given."""

    NoReadyReplicas = "NoReadyReplicas"
    NotReadable = "NotReadable"
    NoTarget = "NoTarget"
    Paused = "Paused"
    MaxReplicas = "MaxReplicas"
    Quota = "Quota"
    PodsPending = "PodsPending"
    NotReady = "NotReady"


_MESSAGES = {
    MissedReason.NoReadyReplicas: "the target reports no status.readyReplicas: Ready is not "
    "measured",
    MissedReason.NotReadable: "Ready not measured: the controller may not read the target "
    '(grant get on its kind: docs/install.md, "Window readiness")',
    MissedReason.NoTarget: "the scale target cannot be read (not found, or its kind is not "
    "served): Ready is not measured",
    MissedReason.Paused: "the ScheduledPodAutoscaler was paused during the window",
    MissedReason.MaxReplicas: "the HPA's maxReplicas is below the window's minReplicas",
    MissedReason.Quota: "a ResourceQuota refused the window's pods",
    MissedReason.PodsPending: "pods stayed Pending: no node had room for them",
    MissedReason.NotReady: "the pods were not Ready before the window ended",
}


@dataclass(frozen=True, slots=True)
class Observation:
    """What one window start showed, as Unix seconds (None: not seen yet)."""

    schedule: str
    boundary: int
    """B: the window's start, before any lead."""
    end: int
    """When the window ends: a window not Ready by then is Missed."""
    min_replicas: int
    raised_at: int | None = None
    replicas_at: int | None = None
    ready_at: int | None = None
    capacity_held_at: int | None = None
    capacity_released_at: int | None = None
    nodes_ready_at: int | None = None
    pods_waited_seconds: int | None = None
    reports_ready: bool = True
    """False for a target without status.readyReplicas."""
    readable: bool = True
    """False when RBAC forbids reading the target (docs/install.md, "Window readiness")."""
    found: bool = True
    """False when the target cannot be read: not found, or its kind not served."""
    paused: bool = False
    max_below_min: bool = False
    quota_refused: bool = False
    pods_unschedulable: bool = False


def classify(observation: Observation, *, now: int) -> tuple[Outcome, MissedReason | None]:
    """The outcome of a window start at `now`, and why it was missed."""
    if not observation.readable:
        return Outcome.Missed, MissedReason.NotReadable
    if not observation.found:
        return Outcome.Missed, MissedReason.NoTarget
    if observation.ready_at is not None and observation.reports_ready:
        if observation.ready_at <= observation.boundary:
            return Outcome.Early, None
        if observation.ready_at < observation.end:
            return Outcome.Late, None
    elif now < observation.end and observation.reports_ready:
        return Outcome.Pending, None
    elif now < observation.end:
        # A target that reports no readiness: said at once, nothing to wait for.
        return Outcome.Missed, MissedReason.NoReadyReplicas
    causes = (
        (not observation.reports_ready, MissedReason.NoReadyReplicas),
        (observation.paused, MissedReason.Paused),
        (observation.max_below_min, MissedReason.MaxReplicas),
        (observation.quota_refused, MissedReason.Quota),
        (observation.pods_unschedulable, MissedReason.PodsPending),
    )
    reason = next((why for applies, why in causes if applies), MissedReason.NotReady)
    return Outcome.Missed, reason


def is_late(window: WindowRecord) -> bool:
    """Whether a recorded window counts against readiness (the SpaWindowLate alert,
    docs/operations.md): Late, or Missed for a reason other than a pause or a target whose
    readiness is not measured."""
    if window.outcome == Outcome.Late:
        return True
    return window.outcome == Outcome.Missed and window.reason not in (
        MissedReason.Paused,
        MissedReason.NoReadyReplicas,
        MissedReason.NotReadable,
        MissedReason.NoTarget,
    )


def _time(instant: int | None) -> str | None:
    return None if instant is None else format_instant(instant)


def record(
    observation: Observation,
    *,
    now: int,
    lead: LeadInForce | None,
    capacity_lead: LeadInForce | None = None,
) -> WindowRecord:
    """The status.windows entry of a window start as observed at `now`."""
    outcome, reason = classify(observation, now=now)
    measured = observation.reports_ready and observation.readable and observation.found
    ready = observation.ready_at if measured else None
    return WindowRecord(
        schedule=observation.schedule,
        boundary=format_instant(observation.boundary),
        min_replicas=observation.min_replicas,
        lead=lead,
        capacity_lead=capacity_lead,
        raised_at=_time(observation.raised_at),
        replicas_at=_time(observation.replicas_at),
        ready_at=_time(ready),
        capacity_held_at=_time(observation.capacity_held_at),
        capacity_released_at=_time(observation.capacity_released_at),
        nodes_ready_at=_time(observation.nodes_ready_at),
        pods_waited_seconds=observation.pods_waited_seconds,
        ready_seconds=None if ready is None else ready - observation.boundary,
        outcome=outcome.value,
        reason=None if reason is None else reason.value,
        message=None if reason is None else _MESSAGES[reason],
    )


def with_record(windows: Sequence[WindowRecord], entry: WindowRecord) -> list[WindowRecord]:
    """status.windows with `entry` in: replacing the entry of the same window start, else
    first; newest first by boundary, at most `MAX_WINDOWS` (the oldest dropped, and any
    entry without a boundary)."""
    kept = [
        window
        for window in windows
        if window.boundary is not None
        and (window.schedule, window.boundary) != (entry.schedule, entry.boundary)
    ]
    # RFC 3339 in UTC with a Z (format_instant) is fixed-width: text order is time order.
    ordered = sorted([entry, *kept], key=lambda window: window.boundary or "", reverse=True)
    return ordered[:MAX_WINDOWS]


def stored_windows(autoscaler: wire.ScheduledPodAutoscaler) -> list[WindowRecord]:
    """status.windows as stored; an entry that is not one (written by somebody else) is left
    out."""
    entries = (autoscaler.get("status") or {}).get("windows") or []
    kept = []
    for entry in entries:
        try:
            kept.append(WindowRecord.model_validate(entry))
        except ValueError:
            continue
    return kept
