"""Was the target Ready for a window? The outcome of a window start, from timestamps.

The project promises capacity *Ready* before a known peak; this module says, for one window
start, whether it was (docs/api.md, "status.windows"): Early when the target's readyReplicas
reached the window's minimum by the boundary B, Late when after B but before the window ended,
Missed when not before it ended (with why), Pending while that is not known yet. Why is the
first cause that applies, most fundamental first (:class:`MissedReason`), from what the
decision knows (a pause, the bounds in force on the HPA) and what the read of the target
itself showed (its spec and status replicas, its ReplicaFailure condition). It is pure:
what the target showed is read elsewhere (at the requeues around a window), and handed in as
an :class:`Observation`; the result is the status entry, kept in status.windows, newest first,
at most `MAX_WINDOWS`, from which the Auto lead times are learned
(spa/api/validation/leads.py).

How long the window's pods waited for a node (`podsWaitedSeconds`) is said here too, from the
creation and scheduling times of the target's pods (:class:`PodTimes`, listed elsewhere, once,
and only for a window whose nodes were not measured standing: :func:`waits_for_nodes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from spa.api import wire
from spa.api.resources import MAX_WINDOWS, LeadInForce, WindowRecord
from spa.schedule import format_instant

__all__ = [
    "HELD_BACK",
    "RAISE_SKEW_SECONDS",
    "MissedReason",
    "Observation",
    "Outcome",
    "PodTimes",
    "classify",
    "is_late",
    "is_quota",
    "longest_wait",
    "record",
    "stored_windows",
    "waits_for_nodes",
    "with_record",
]


class Outcome(StrEnum):
    Early = "Early"
    Late = "Late"
    Missed = "Missed"
    Pending = "Pending"


class MissedReason(StrEnum):
    """Why a window was missed, most fundamental first: the first that applies is given
    (docs/api.md, "status.windows")."""

    NotReadable = "NotReadable"
    NoTarget = "NoTarget"
    NoReadyReplicas = "NoReadyReplicas"
    Paused = "Paused"
    MaxReplicas = "MaxReplicas"
    Overridden = "Overridden"
    NotScaled = "NotScaled"
    Quota = "Quota"
    FailedCreate = "FailedCreate"
    PodsPending = "PodsPending"
    NotReady = "NotReady"


# The causes the decision knows of, not the target: kept on a Pending entry when seen while
# the window is open, since at its end the pause or override may be over and the bounds in
# force are the next window's.
HELD_BACK = (MissedReason.Paused, MissedReason.MaxReplicas, MissedReason.Overridden)

_MESSAGES = {
    MissedReason.NoReadyReplicas: "the target reports no status.readyReplicas: Ready is not "
    "measured",
    MissedReason.NotReadable: "Ready not measured: the controller may not read the target "
    '(grant get on its kind: docs/install.md, "Window readiness")',
    MissedReason.NoTarget: "the scale target cannot be read (not found, or its kind is not "
    "served): Ready is not measured",
    MissedReason.Paused: "the ScheduledPodAutoscaler was paused during the window",
    MissedReason.MaxReplicas: "the maxReplicas in force on the HPA (an override's) was below "
    "the window's minReplicas",
    MissedReason.Overridden: "an override held the HPA's minReplicas below the window's",
    MissedReason.NotScaled: "the target's spec.replicas never reached the window's minimum "
    "(its HPA did not scale it, or something scaled it back: see the HPA's conditions)",
    MissedReason.Quota: "a ResourceQuota refused the window's pods",
    MissedReason.FailedCreate: "the window's pods could not be created",
    MissedReason.PodsPending: "the window's pods were created but not Ready: Pending (no node "
    "with room, an image pull) or failing their readiness probe",
    MissedReason.NotReady: "the pods were not Ready before the window ended",
}
# Started paused: the HPA was not raised for the window, so nothing is measured.
_STARTED_PAUSED = (
    "the ScheduledPodAutoscaler was paused when the window started: its HPA was not raised "
    "for it, and Ready is not measured"
)
# A message is at most 256 characters (docs/api.md, "status.windows").
_MESSAGE_LENGTH = 256


def is_quota(failure: str) -> bool:
    """Whether a ReplicaFailure condition's message is a ResourceQuota's refusal (the
    admission's "exceeded quota" or "failed quota")."""
    return "exceeded quota" in failure or "failed quota" in failure


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
    """The SPA is paused (at the raise: `started_paused`)."""
    started_paused: bool = False
    """The window's raise came while the SPA was paused: its HPA was not raised for it."""
    max_below_min: bool = False
    """The maxReplicas in force on the HPA is below the window's minimum."""
    overridden: bool = False
    """An override holds the HPA's minReplicas below the window's minimum."""
    reports_replicas: bool = True
    """False for a target without spec.replicas (whether it was scaled is not known)."""
    quota_refused: bool = False
    """The target's ReplicaFailure condition is a ResourceQuota's refusal."""
    create_failure: str | None = None
    """The message of the target's ReplicaFailure condition, when it has one."""
    pods_pending: bool = False
    """The target's status.replicas reached the minimum, its readyReplicas did not."""
    held_back: MissedReason | None = None
    """A cause kept on the Pending entry (one of HELD_BACK), with its message."""
    held_back_message: str | None = None


def _causes(observation: Observation, *, final: bool) -> list[MissedReason]:
    """What held the window back, most fundamental first; `final`: at its end, when what did
    not happen in it (its spec reaching the minimum) is a cause too."""
    facts = (
        (observation.paused or observation.started_paused, MissedReason.Paused),
        (observation.max_below_min, MissedReason.MaxReplicas),
        (observation.overridden, MissedReason.Overridden),
        (
            final and observation.reports_replicas and observation.replicas_at is None,
            MissedReason.NotScaled,
        ),
        (observation.quota_refused, MissedReason.Quota),
        (observation.create_failure is not None, MissedReason.FailedCreate),
        (observation.pods_pending, MissedReason.PodsPending),
    )
    found = {why for applies, why in facts if applies}
    if observation.held_back is not None:
        found.add(observation.held_back)
    return [why for why in MissedReason if why in found]


def classify(observation: Observation, *, now: int) -> tuple[Outcome, MissedReason | None]:
    """The outcome of a window start at `now`, and why it was missed (for a Pending one: what
    the decision saw hold it back so far, one of HELD_BACK, if any)."""
    if not observation.readable:
        return Outcome.Missed, MissedReason.NotReadable
    if not observation.found:
        return Outcome.Missed, MissedReason.NoTarget
    if observation.started_paused:
        return Outcome.Missed, MissedReason.Paused
    if observation.ready_at is not None and observation.reports_ready:
        if observation.ready_at <= observation.boundary:
            return Outcome.Early, None
        if observation.ready_at < observation.end:
            return Outcome.Late, None
    elif now < observation.end and observation.reports_ready:
        held = [why for why in _causes(observation, final=False) if why in HELD_BACK]
        return Outcome.Pending, held[0] if held else None
    elif now < observation.end:
        # A target that reports no readiness: said at once, nothing to wait for.
        return Outcome.Missed, MissedReason.NoReadyReplicas
    if not observation.reports_ready:
        return Outcome.Missed, MissedReason.NoReadyReplicas
    causes = _causes(observation, final=True)
    return Outcome.Missed, causes[0] if causes else MissedReason.NotReady


def is_late(window: WindowRecord) -> bool:
    """Whether a recorded window counts against readiness (the SpaWindowLate alert,
    docs/operations.md): Late, or Missed for a reason other than a pause, an override (what
    somebody chose to hold) or a target whose readiness is not measured."""
    if window.outcome == Outcome.Late:
        return True
    return window.outcome == Outcome.Missed and window.reason not in (
        MissedReason.Paused,
        MissedReason.MaxReplicas,
        MissedReason.Overridden,
        MissedReason.NoReadyReplicas,
        MissedReason.NotReadable,
        MissedReason.NoTarget,
    )


def _time(instant: int | None) -> str | None:
    return None if instant is None else format_instant(instant)


def _message(observation: Observation, reason: MissedReason) -> str:
    """The reason in words, with the target's own words for a failure to create pods."""
    if reason == MissedReason.Paused and observation.started_paused:
        return _STARTED_PAUSED
    if reason == observation.held_back and observation.held_back_message:
        return observation.held_back_message
    text = _MESSAGES[reason]
    if reason in (MissedReason.Quota, MissedReason.FailedCreate) and observation.create_failure:
        text = f"{text}: {observation.create_failure}"
    if len(text) > _MESSAGE_LENGTH:
        text = text[: _MESSAGE_LENGTH - 3] + "..."
    return text


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
        message=None if reason is None else _message(observation, reason),
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


# A pod created this little before the raise is still the window's: the raise is the
# controller's clock, a pod's creationTimestamp the API server's (whole seconds, truncated).
RAISE_SKEW_SECONDS = 2


@dataclass(frozen=True, slots=True)
class PodTimes:
    """One pod of the scale target, as Unix seconds of the API server's clock: when it was
    created (`metadata.creationTimestamp`) and when it was bound to a node (its PodScheduled
    condition's `lastTransitionTime`, status True; None: not scheduled yet). The binding sets
    that condition True; kube-scheduler sets it False (Unschedulable) while no node has room,
    and the time moves only when the status changes, so a pod bound at once has the time of
    its binding, and one that waited for a node the time the node took it."""

    created: int
    scheduled: int | None


def waits_for_nodes(window: WindowRecord) -> bool:
    """Whether the pods' wait for nodes is worth measuring for a window (docs/api.md,
    "status.windows"): capacity was held for it and its nodes were not measured standing (no
    `nodesReadyAt`: its placeholders were handed over before all of them stood, or it was a
    CapacityBuffer, whose status does not say), its HPA was raised, and the wait is not known
    yet. Every other window says what the nodes took without a request."""
    return (
        window.capacity_held_at is not None
        and window.nodes_ready_at is None
        and window.raised_at is not None
        and window.pods_waited_seconds is None
    )


def longest_wait(pods: Sequence[PodTimes], *, raised_at: int, now: int, ready: bool) -> int | None:
    """The longest time one of the window's new pods waited for a node, in whole seconds
    (None: no pod of the window to say it).

    The window's new pods are those created at or after its raise (`raised_at`, within
    RAISE_SKEW_SECONDS); older ones were there before it. Each waited from its creation to its
    binding. A pod not bound yet has waited until `now` so far; it counts only while the
    window is not Ready (a Missed one): once the window's minimum is Ready, a pod still
    Pending is one more than it needed (the HPA's), and no wait of the window's."""
    waits = []
    for pod in pods:
        if pod.created < raised_at - RAISE_SKEW_SECONDS:
            continue
        if pod.scheduled is not None:
            waits.append(pod.scheduled - pod.created)
        elif not ready:
            waits.append(now - pod.created)
    return max(0, *waits) if waits else None


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
