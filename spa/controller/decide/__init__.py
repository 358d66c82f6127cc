"""What the SPA controller intends for one key, decided without a single request.

Why a pure package: the reconcile of a key used to decide, write and interpret HTTP answers in
one class, so its rules (who owns which Schedule, when the HPA needs a write, what a refusal
means for the statuses, when to wake up) could only be tested against an API server.
:func:`decide` takes a :class:`Snapshot` (the SPA, the Schedules that name it, its HPA, what
is derived from them, what the caches show of its node capacity, the instant, what the
controller remembers of the key, and what this reconcile already tried: plain data, no
callables) and returns a :class:`Plan`: the Memory after it, and a :data:`Step` to perform
before deciding again (or ending the reconcile, :func:`ends_after`), or the :class:`Final`
plan. The reconciler performs it through the actuator and reports what happened as an
:data:`Outcome`, which :func:`absorb` (Memory) and :func:`attempted` (Attempts) turn into what
the next decision knows. docs/architecture.md, "Decide, then act",
shows the loop; the rules are those of docs/architecture.md and docs/schedules.md.

The modules, from the bottom: `reasons` (every Event and condition reason), `scaleup`
(immediate scale-up's rules), `memory` (Memory, Attempts, outcomes), `plan` (steps and the
final plan), `snapshot` (what a decision reads), then the rule families `membership`, `hpa`
(convergence), `incident`, `holding` (node capacity's steps) and `status`, and `decision`,
which orders them.

Errors, one convention for the whole controller: a failure is an exception, never a None or a
string returned. The actuator raises :mod:`spa.kube`'s errors (`NotFound`, `Conflict`,
`ApiError`, ...), `Refused` for a refusal the user must fix (400, 403, 422), `NotScalable`
for a target /scale cannot serve, `OwnerNotChanged` for an ownerReference change given up,
and `NotLeader` when it may not write. The reconciler catches exactly the ones a decision
must know of and turns each into an :data:`Outcome` (data); every other exception ends the
reconcile, and the work queue retries the key with backoff. Nothing in this package raises
for a cluster's state: an invalid object is a status, not an error.
"""

from spa.controller.decide.capacity import CapacityView
from spa.controller.decide.decision import decide
from spa.controller.decide.hpa import FOREIGN_HPA_RECHECK_SECONDS, changed_by
from spa.controller.decide.memory import (
    Attempts,
    AutoscalerGone,
    BoundsWritten,
    CapacityHeld,
    CapacityRead,
    CapacityReleased,
    DryRunAnswered,
    ForeignHpaGone,
    HpaNameTaken,
    HpaRefused,
    HpaWritten,
    Memory,
    Outcome,
    OwnersSet,
    PodsRead,
    ReadinessRead,
    Refusal,
    ScaleUpDone,
    absorb,
    attempted,
)
from spa.controller.decide.plan import (
    AutoscalerReport,
    AutoscalerStatusWrite,
    BackOfQueue,
    CapacityReport,
    CapacityStep,
    CreateHpa,
    DryRunHpa,
    Final,
    HoldCapacity,
    HpaWrite,
    PatchBounds,
    PatchHpa,
    Plan,
    ReadCapacity,
    ReadPods,
    ReadReadiness,
    ReleaseCapacity,
    ReleaseOrphaned,
    Requeue,
    ScheduleStatusWrite,
    SetOwner,
    SetOwners,
    StatusWrite,
    Step,
    WakeUp,
    WindowReport,
    ends_after,
)
from spa.controller.decide.readiness import PodTimes
from spa.controller.decide.reasons import Event, EventType, Reason
from spa.controller.decide.scaleup import (
    SCALE_ATTEMPTS,
    SCALE_UP_CONDITION,
    Raised,
    ScaleProblem,
    ScaleRefused,
    ScaleResult,
    ScaleUp,
    ScaleUpOutcome,
    Unscalable,
    one_request_raise,
    replicas_to_set,
)
from spa.controller.decide.snapshot import (
    MAX_SCHEDULES_PER_AUTOSCALER,
    Calendars,
    Compiled,
    Derivations,
    ParsedAutoscaler,
    Snapshot,
    capacity_timeline,
    compile_window,
    derive,
    dying,
)
from spa.controller.decide.status import status_fields

__all__ = [
    "FOREIGN_HPA_RECHECK_SECONDS",
    "MAX_SCHEDULES_PER_AUTOSCALER",
    "SCALE_ATTEMPTS",
    "SCALE_UP_CONDITION",
    "Attempts",
    "AutoscalerGone",
    "AutoscalerReport",
    "AutoscalerStatusWrite",
    "BackOfQueue",
    "BoundsWritten",
    "Calendars",
    "CapacityHeld",
    "CapacityRead",
    "CapacityReleased",
    "CapacityReport",
    "CapacityStep",
    "CapacityView",
    "Compiled",
    "CreateHpa",
    "Derivations",
    "DryRunAnswered",
    "DryRunHpa",
    "Event",
    "EventType",
    "Final",
    "ForeignHpaGone",
    "HoldCapacity",
    "HpaNameTaken",
    "HpaRefused",
    "HpaWrite",
    "HpaWritten",
    "Memory",
    "Outcome",
    "OwnersSet",
    "ParsedAutoscaler",
    "PatchBounds",
    "PatchHpa",
    "Plan",
    "PodTimes",
    "PodsRead",
    "Raised",
    "ReadCapacity",
    "ReadPods",
    "ReadReadiness",
    "ReadinessRead",
    "Reason",
    "Refusal",
    "ReleaseCapacity",
    "ReleaseOrphaned",
    "Requeue",
    "ScaleProblem",
    "ScaleRefused",
    "ScaleResult",
    "ScaleUp",
    "ScaleUpDone",
    "ScaleUpOutcome",
    "ScheduleStatusWrite",
    "SetOwner",
    "SetOwners",
    "Snapshot",
    "StatusWrite",
    "Step",
    "Unscalable",
    "WakeUp",
    "WindowReport",
    "absorb",
    "attempted",
    "capacity_timeline",
    "changed_by",
    "compile_window",
    "decide",
    "derive",
    "dying",
    "ends_after",
    "one_request_raise",
    "replicas_to_set",
    "status_fields",
]
