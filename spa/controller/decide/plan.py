"""What one decision asks for: a :data:`Step` to perform before deciding again, or the
:class:`Final` plan of the reconcile, each with the key's :class:`Memory` after it.

Why two types: a step is one request the rest depends on (ownerReferences first, then one HPA
write, then node capacity's reads and writes), and the reconciler decides again on the answer
(or, for a step that says so in `then`, ends the reconcile there); the final plan carries what
only ends a reconcile (statuses, Events, metrics, when to run again). One class with both kinds of
field let a step carry statuses nobody would write, and "requeue after 0 seconds" silently
meant "at the back of the queue"; the types say both now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spa.api import ScheduledPodAutoscalerStatus, ScheduleStatus, wire
from spa.api.resources import CapacityMode
from spa.controller.decide.capacity import CapacityTask
from spa.controller.decide.memory import HpaWritten, Memory, Outcome
from spa.controller.decide.reasons import Event
from spa.controller.decide.scaleup import ScaleUp

__all__ = [
    "AutoscalerReport",
    "AutoscalerStatusWrite",
    "BackOfQueue",
    "CapacityReport",
    "CapacityStep",
    "CreateHpa",
    "DryRunHpa",
    "Final",
    "HoldCapacity",
    "HpaWrite",
    "PatchBounds",
    "PatchHpa",
    "Plan",
    "ReadCapacity",
    "ReadPods",
    "ReadReadiness",
    "ReleaseCapacity",
    "ReleaseOrphaned",
    "Requeue",
    "ScheduleStatusWrite",
    "SetOwner",
    "SetOwners",
    "StatusWrite",
    "Step",
    "WakeUp",
    "WindowReport",
    "ends_after",
]


# -- steps ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetOwner:
    """Make `autoscaler` (None: nobody) the controller of `schedule`."""

    schedule: wire.Schedule
    autoscaler: wire.ScheduledPodAutoscaler | None


@dataclass(frozen=True, slots=True)
class SetOwners:
    """Adopt or release Schedules (each change on its own: one failure stops no other)."""

    changes: tuple[SetOwner, ...]


@dataclass(frozen=True, slots=True)
class CreateHpa:
    desired: wire.NewHorizontalPodAutoscaler
    wanted: str  # the desired spec's hash
    # What to do right after it, if it changed the HPA (a create raises nothing: always None).
    scale_up: ScaleUp | None = None
    # How the reconcile ends once the write changed the HPA, without deciding again (None:
    # decide again on its answer).
    then: BackOfQueue | None = None


@dataclass(frozen=True, slots=True)
class PatchHpa:
    """A JSON merge patch of the HPA to the whole desired spec (`wanted` is its hash)."""

    current: wire.HorizontalPodAutoscaler
    patch: dict[str, Any]
    wanted: str
    # What to do right after it, if it changed the HPA.
    scale_up: ScaleUp | None = None
    # It adopts somebody's HPA (spa/api/adoption.py): its answer is announced by an Event.
    adopts: bool = False
    # How the reconcile ends once the write changed the HPA (see CreateHpa).
    then: BackOfQueue | None = None


@dataclass(frozen=True, slots=True)
class DryRunHpa:
    """Ask the API server what it would store for the desired spec, without storing it."""

    current: wire.HorizontalPodAutoscaler
    patch: dict[str, Any]
    wanted: str


@dataclass(frozen=True, slots=True)
class PatchBounds:
    """A JSON merge patch of min/maxReplicas alone, after the server refused the whole spec."""

    current: wire.HorizontalPodAutoscaler
    patch: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ReadCapacity:
    """Read what node capacity's decision lacks: the replicas of the scale `target`
    (apiVersion, kind, name; None: not wanted) from its /scale, and, with `buffers`, whether a
    CapacityBuffer API is served (asked of discovery only after the replicas were read)."""

    autoscaler: wire.ScheduledPodAutoscaler
    target: tuple[str, str, str] | None
    buffers: bool = False


@dataclass(frozen=True, slots=True)
class HoldCapacity:
    """Make the cluster hold node capacity for `pods` pods of `target` for `autoscaler`, in
    `mode` (never Auto: the decision resolved it): create, resize or, at 0, delete its object."""

    autoscaler: wire.ScheduledPodAutoscaler
    target: tuple[str, str, str]
    pods: int
    mode: CapacityMode


@dataclass(frozen=True, slots=True)
class ReleaseCapacity:
    """Delete what `autoscaler` holds in each of `modes` (held the other way before: the mode
    was changed, or Auto found a CapacityBuffer API served since), in that order."""

    autoscaler: wire.ScheduledPodAutoscaler
    target: tuple[str, str, str]
    modes: tuple[CapacityMode, ...]


@dataclass(frozen=True, slots=True)
class ReleaseOrphaned:
    """Delete the placeholder Deployment of the SPA `namespace/name`, which the caches no
    longer have: it lives in the controller's namespace, where no ownerReference to the SPA
    can be, so the garbage collector does not delete it (docs/schedules.md, "Node capacity").
    Performed only once the API server, not the cache, says the SPA is gone."""

    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class ReadReadiness:
    """Read the scale `target` (apiVersion, kind, name) of `autoscaler` itself, not its /scale
    (which has no readyReplicas): its spec.replicas and status.readyReplicas, for the window
    starts being measured (docs/api.md, "status.windows")."""

    autoscaler: wire.ScheduledPodAutoscaler
    target: tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class ReadPods:
    """List the pods of `autoscaler`'s scale target (its label `selector`, in its namespace),
    for how long a window's new pods waited for a node (docs/api.md, "status.windows",
    podsWaitedSeconds): once per window, and only for one whose nodes were not measured
    standing."""

    autoscaler: wire.ScheduledPodAutoscaler
    selector: str


# The capacity steps come after the HPA's, at the end of a reconcile (docs/schedules.md, "Node
# capacity").
CapacityStep = ReadCapacity | HoldCapacity | ReleaseCapacity | ReleaseOrphaned

HpaWrite = CreateHpa | PatchHpa | DryRunHpa
"""A write of the desired HPA (or the question what the server would store for it)."""

Step = SetOwners | HpaWrite | PatchBounds | CapacityStep | ReadReadiness | ReadPods
"""A request the rest of the reconcile depends on: perform it, then decide again (or end the
reconcile as its `then` says: :func:`ends_after`)."""


# -- the final plan -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AutoscalerStatusWrite:
    """The status fields the controller owns, for the SPA."""

    obj: wire.ScheduledPodAutoscaler
    status: ScheduledPodAutoscalerStatus


@dataclass(frozen=True, slots=True)
class ScheduleStatusWrite:
    """The status fields the controller owns, for one of the SPA's Schedules."""

    obj: wire.Schedule
    status: ScheduleStatus


# Two classes rather than one with a union of objects and of statuses, so that the object and
# its status are of the same kind for mypy too.
StatusWrite = AutoscalerStatusWrite | ScheduleStatusWrite


@dataclass(frozen=True, slots=True)
class AutoscalerReport:
    """What the per-SPA metrics show after a final plan."""

    replicas: tuple[int, int] | None
    schedules: Mapping[str, bool]


@dataclass(frozen=True, slots=True)
class WakeUp:
    """Reconcile the key again at the next transition (`at`; None: none is coming, wait for
    a change), or `recheck_after` seconds from now if that is sooner; with `backoff`, also
    with the key's exponential backoff (a write the server refused, a loop withheld)."""

    at: int | None = None
    recheck_after: float | None = None
    backoff: bool = False


@dataclass(frozen=True, slots=True)
class BackOfQueue:
    """Reconcile the key again now, behind every key already due: the HPA-first order of a
    fleet at one boundary (every due HPA is written before any status)."""


Requeue = WakeUp | BackOfQueue


@dataclass(frozen=True, slots=True)
class CapacityReport:
    """What the node capacity series show after a final plan (docs/operations.md): the pods'
    worth requested (None: the SPA orders no capacity) and whether the window's boundary has
    passed with the capacity not taken (None: not applicable)."""

    requested: int | None = None
    late: bool | None = None


@dataclass(frozen=True, slots=True)
class WindowReport:
    """What the window series show after a final plan (docs/operations.md): the window starts
    whose outcome this plan made final, as (outcome, why it was missed, Ready relative to B
    in seconds), and whether the last measured window was late (None: none measured)."""

    measured: tuple[tuple[str, str | None, int | None], ...] = ()
    late: bool | None = None


@dataclass(frozen=True, slots=True)
class Final:
    """What ends a reconcile: statuses to write, Events to record, when to run again."""

    requeue: Requeue = WakeUp()
    statuses: tuple[StatusWrite, ...] = ()
    events: tuple[Event, ...] = ()
    report: AutoscalerReport | None = None
    # What the SPA wants of node capacity ahead of a window (None: nothing, as for a dying
    # SPA), and, where node capacity is wired, what its series show once it is held.
    capacity: CapacityTask | None = None
    capacity_report: CapacityReport | None = None
    # What the window series show (None: not decided, as for an invalid SPA).
    windows: WindowReport | None = None
    # Why the SPA is Degraded, for the log.
    problem: str | None = None
    # The next transition, when it raises the HPA's bounds (the fleet index counts it).
    raise_at: int | None = None


# -- one decision ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    """One decision: what to remember of the key after it (None: forget the key and its
    metrics, the SPA is gone or going), and the step to take or the final plan."""

    memory: Memory | None
    action: Step | Final

    @property
    def final(self) -> Final | None:
        return self.action if isinstance(self.action, Final) else None


def ends_after(step: Step, outcome: Outcome) -> Requeue | None:
    """How the reconcile ends right after `step` did `outcome`, without another decision
    (None: decide again on the caches as the step left them). A write that changed the HPA
    ends it as its `then` says: the key goes to the back of the queue, HPAs first."""
    if isinstance(step, CreateHpa | PatchHpa) and isinstance(outcome, HpaWritten):
        return step.then if outcome.changed else None
    return None
