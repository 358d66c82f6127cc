"""What the decision remembers of a key: across reconciles (:class:`Memory`) and within one
(:class:`Attempts`), and the one way either changes: an :data:`Outcome` absorbed.

Why outcomes are data: the reconciler used to update the per-key Memory in five places and the
Attempts in as many, each a small rule of its own (what a dry-run answer means, that a write of
the bounds alone is not a write of the spec, when a scale-up is reported). Now the reconciler
only reports what happened, as one of the outcome classes below, and :func:`absorb` and
:func:`attempted` (pure) say what that means for the next decision. docs/architecture.md,
"Decide, then act", describes both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from spa.api import wire
from spa.api.resources import CapacityMode
from spa.controller.decide.readiness import PodTimes
from spa.controller.decide.reasons import Event, EventType
from spa.controller.decide.scaleup import (
    MissingTarget,
    ScaleProblem,
    ScaleResult,
    ScaleUp,
    ScaleUpOutcome,
    Unscalable,
    scale_up_outcome,
)
from spa.controller.desired import spec_hash

__all__ = [
    "Attempts",
    "AutoscalerGone",
    "BoundsWritten",
    "CapacityHeld",
    "CapacityRead",
    "CapacityReleased",
    "DryRunAnswered",
    "ForeignHpaGone",
    "HpaNameTaken",
    "HpaRefused",
    "HpaWritten",
    "Memory",
    "Outcome",
    "OwnersSet",
    "PodsRead",
    "ReadinessRead",
    "Refusal",
    "ScaleUpDone",
    "absorb",
    "attempted",
]


@dataclass(frozen=True, slots=True)
class Memory:
    """What the controller remembers of one SPA between reconciles. All of it is a shortcut or
    a "say it once": after a restart it is empty, and the first reconcile finds the same facts
    again (a dry-run answer, one more Event)."""

    # (hash of a desired spec, hash of the spec the API server stored, or would store, for it),
    # from the server's own answers (docs/architecture.md, "Convergence").
    stored_spec: tuple[str, str] | None = None
    # (hash of the desired spec, resourceVersion of the HPA) our last full write left: wanting
    # to write the same spec again while the HPA is still at that version is a loop.
    last_write: tuple[str, str] | None = None
    # The HPA's name is taken by an object our label-filtered cache does not hold.
    foreign_hpa: bool = False
    # The HPA problem last reported by a Warning (said once, not at every retry).
    reported_problem: str | None = None
    # The fields of the desired spec the API server dropped from the HPA, last reported by a
    # Warning (said once per process, not at every boundary's write).
    reported_dropped: tuple[str, ...] = ()
    # The transition the last reconcile expected next (to measure how late it was applied).
    expected_boundary: int | None = None
    # The transition after the one an HPA write being made applies, as the decision that
    # asked for the write computed it: a write that changes the HPA ends the reconcile (its
    # step's `then`), and `absorb` takes this as the `expected_boundary`, so the Schedules are
    # not evaluated again for it (spa/controller/decide/decision.py, `decide`).
    following_boundary: int | None = None
    # (status, reason, message) of the last immediate scale-up, for the SPA's condition
    # SCALE_UP_CONDITION (the status is written in a later pass than the scale-up).
    scale_up: ScaleUpOutcome | None = None
    # Its Event, not yet recorded: Events wait for the final plan, so that a fleet's HPA and
    # scale writes at one boundary are not delayed by Events (HPAs first).
    scale_up_event: Event | None = None
    # The effective minReplicas last seen in force on the HPA. A raise is measured from it, so
    # that putting back a minReplicas somebody lowered on the HPA is no raise: immediate
    # scale-up happens at boundaries only (docs/schedules.md). Unknown after a restart: the
    # HPA's own minReplicas is the measure then.
    applied_min: int | None = None
    # Somebody's HPA was adopted (spa/api/adoption.py) and its Event is not recorded yet.
    adopted: bool = False
    # The scale target immediate scale-up last found missing: not asked for again at every
    # boundary, until it appears (spa/controller/decide/scaleup.py, `still_missing`).
    missing_target: MissingTarget | None = None
    # The node capacity this process last held for the SPA, (pods, mode), as written or found
    # (None: unknown, after a start): what it holds when the caches cannot tell
    # (docs/schedules.md, "Node capacity").
    capacity_held: tuple[int, CapacityMode | None] | None = None
    # Why the HPA's last raise was written ahead of its boundary, until a status has said so:
    # at a large boundary the statuses pass may come after the boundary, which the decision
    # then cannot tell from the schedule (docs/schedules.md, "Raises ahead of a shared
    # boundary").
    raised_ahead: str | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """The API server refused a write for a reason the user must fix (400, 403, 422)."""

    status: int
    message: str


@dataclass(frozen=True, slots=True)
class Attempts:
    """What this reconcile already tried; decide() must not plan again what just failed."""

    # By Schedule uid: why setting its controller ownerReference failed.
    owner_failures: Mapping[str, str] = field(default_factory=dict)
    # The refusal of the desired HPA (its creation or the patch of the whole spec).
    hpa_refusal: Refusal | None = None
    # The refusal of the fallback that patches only min/maxReplicas.
    bounds_refusal: Refusal | None = None
    # A write changed the HPA.
    hpa_written: bool = False
    # Node capacity: what was read of the target and of discovery, what the hold did, and
    # whether what was held the other way was released.
    capacity_read: CapacityRead | None = None
    capacity_held: CapacityHeld | None = None
    capacity_released: bool = False
    # What was read of the scale target's readiness for status.windows (docs/api.md), and of
    # its pods' wait for nodes.
    readiness: ReadinessRead | None = None
    pods: PodsRead | None = None


# -- outcomes: what performing a step did ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OwnersSet:
    """The ownerReference changes of a step were made, except those in `failures` (by
    Schedule uid: why not)."""

    failures: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class HpaWritten:
    """The API server's answer to a create or a patch of the desired spec (`wanted`, its
    hash); `changed`: the write changed the HPA (a create always does); `adopted`: the write
    adopted somebody's HPA."""

    wanted: str
    answer: wire.HorizontalPodAutoscaler
    changed: bool
    adopted: bool = False


@dataclass(frozen=True, slots=True)
class DryRunAnswered:
    """What the API server would store for the desired spec `wanted`."""

    wanted: str
    answer: wire.HorizontalPodAutoscaler


@dataclass(frozen=True, slots=True)
class BoundsWritten:
    """min/maxReplicas alone were patched (after the whole spec was refused)."""


@dataclass(frozen=True, slots=True)
class HpaRefused:
    """The API server refused a write of the HPA: the desired spec, or the bounds alone."""

    refusal: Refusal
    bounds: bool = False


@dataclass(frozen=True, slots=True)
class HpaNameTaken:
    """Creating the HPA found its name taken by an HPA our label-filtered cache cannot hold;
    the reconciler reads it for the next decision."""


@dataclass(frozen=True, slots=True)
class AutoscalerGone:
    """Before creating the HPA, the SPA turned out to be deleted: nothing more to do until
    its deletion event (the cache was behind)."""


@dataclass(frozen=True, slots=True)
class ForeignHpaGone:
    """The HPA of somebody else that had the name is gone."""


@dataclass(frozen=True, slots=True)
class ScaleUpDone:
    """What an immediate scale-up of the SPA `autoscaler`'s target did, at `at`."""

    autoscaler: wire.ScheduledPodAutoscaler
    scale_up: ScaleUp
    result: ScaleResult
    at: int


@dataclass(frozen=True, slots=True)
class CapacityRead:
    """What was read for node capacity: the target's replicas (its /scale `spec.replicas`;
    None: not asked, or `problem` says why they cannot be read), and whether a CapacityBuffer
    API is served (None: not asked)."""

    replicas: int | None = None
    problem: str | None = None
    buffers_served: bool | None = None


@dataclass(frozen=True, slots=True)
class CapacityHeld:
    """What the cluster holds for an SPA after a hold: `pods` (0: no object), in `mode`;
    `unsupported` says why nothing could be held."""

    pods: int
    mode: CapacityMode | None
    unsupported: str | None = None


@dataclass(frozen=True, slots=True)
class ReadinessRead:
    """What the scale target showed of a window's readiness (docs/api.md, "status.windows"):
    its spec.replicas, status.replicas (`created`) and status.readyReplicas (None: it reports
    none), the message of its ReplicaFailure condition (`failure`: its pods could not be
    created), or why it could not be read (`problem`; `forbidden`: RBAC refused the read,
    docs/install.md, "Window readiness"). `selector` is its label selector (None: it has none
    the controller can read), which its pods are listed by when their wait for nodes is
    measured."""

    replicas: int | None = None
    ready: int | None = None
    created: int | None = None
    failure: str | None = None
    problem: str | None = None
    forbidden: bool = False
    selector: str | None = None


@dataclass(frozen=True, slots=True)
class PodsRead:
    """The scale target's pods, as far as their wait for a node goes (docs/api.md,
    "status.windows", podsWaitedSeconds), or why they could not be listed (`problem`;
    `forbidden`: the controller may not list pods, docs/install.md, "Window readiness")."""

    pods: tuple[PodTimes, ...] = ()
    problem: str | None = None
    forbidden: bool = False


@dataclass(frozen=True, slots=True)
class CapacityReleased:
    """What the SPA held the other way (another mode) is gone."""


Outcome = (
    OwnersSet
    | HpaWritten
    | DryRunAnswered
    | BoundsWritten
    | HpaRefused
    | HpaNameTaken
    | AutoscalerGone
    | ForeignHpaGone
    | ScaleUpDone
    | CapacityRead
    | CapacityHeld
    | CapacityReleased
    | ReadinessRead
    | PodsRead
)


def absorb(memory: Memory, outcome: Outcome) -> Memory:
    """The Memory after `outcome`."""
    match outcome:
        case HpaWritten(wanted, answer, changed, adopted=adopted):
            # Remember what the server stored for our desired spec, as its answer says.
            version = str(answer["metadata"].get("resourceVersion"))
            written = replace(
                memory,
                stored_spec=(wanted, spec_hash(answer.get("spec") or {})),
                last_write=(wanted, version),
                reported_problem=None,
                adopted=memory.adopted or adopted,
            )
            if changed and memory.following_boundary is not None:
                # The write ends the reconcile (HPAs first): the next transition is the one
                # the decision that asked for it found.
                return replace(
                    written, expected_boundary=memory.following_boundary, following_boundary=None
                )
            return written
        case DryRunAnswered(wanted, answer):
            return replace(memory, stored_spec=(wanted, spec_hash(answer.get("spec") or {})))
        case BoundsWritten():
            # Not a write of the desired spec: the next pass tries the whole spec again.
            return replace(memory, last_write=None)
        case ForeignHpaGone():
            return replace(memory, foreign_hpa=False)
        case ScaleUpDone(autoscaler, scale_up, result, at):
            outcome_ = scale_up_outcome(scale_up, result)
            kind = EventType.NORMAL if outcome_[0] == "True" else EventType.WARNING
            # Its Event is recorded with the final plan (decide), after the fleet's writes.
            event = Event(autoscaler, kind, outcome_[1], outcome_[2])
            missing = None
            if isinstance(result, Unscalable) and result.problem is ScaleProblem.TARGET_NOT_FOUND:
                missing = MissingTarget(scale_up.ref, at, scale_up.able_to_scale)
            return replace(memory, scale_up=outcome_, scale_up_event=event, missing_target=missing)
        case (
            OwnersSet()
            | HpaRefused()
            | HpaNameTaken()
            | AutoscalerGone()
            | CapacityRead()
            | CapacityHeld()
            | CapacityReleased()
            | ReadinessRead()
            | PodsRead()
        ):
            # What a hold did is this reconcile's (Attempts) until its final plan, which
            # keeps it as `capacity_held` (spa/controller/decide/holding.py).
            return memory


def attempted(attempts: Attempts, outcome: Outcome) -> Attempts:
    """The Attempts of this reconcile after `outcome`."""
    match outcome:
        case OwnersSet(failures):
            return replace(attempts, owner_failures={**attempts.owner_failures, **failures})
        case HpaWritten(changed=changed):
            return replace(attempts, hpa_written=changed)
        case HpaRefused(refusal, bounds=True):
            return replace(attempts, bounds_refusal=refusal)
        case HpaRefused(refusal):
            return replace(attempts, hpa_refusal=refusal)
        case CapacityRead() as read:
            before = attempts.capacity_read or CapacityRead()
            return replace(
                attempts,
                capacity_read=CapacityRead(
                    read.replicas if read.replicas is not None else before.replicas,
                    read.problem if read.problem is not None else before.problem,
                    read.buffers_served
                    if read.buffers_served is not None
                    else before.buffers_served,
                ),
            )
        case CapacityHeld() as held:
            return replace(attempts, capacity_held=held)
        case CapacityReleased():
            return replace(attempts, capacity_released=True)
        case ReadinessRead() as read:
            return replace(attempts, readiness=read)
        case PodsRead() as pods:
            return replace(attempts, pods=pods)
        case (
            DryRunAnswered()
            | BoundsWritten()
            | HpaNameTaken()
            | AutoscalerGone()
            | ForeignHpaGone()
            | ScaleUpDone()
        ):
            return attempts
