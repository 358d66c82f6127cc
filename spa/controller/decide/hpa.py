"""HPA convergence: the one write the HPA needs next, or where it stands when none is left.

Why a module of its own: "one write, then nothing" (docs/architecture.md, "Convergence") is the
subtlest rule family of the controller: the server's spelling of our spec learned by a dry-run,
the safety net against a write that would loop, a name taken by somebody else's HPA, the
refusals the user must fix and the bounds-only fallback after one, the adoption of an HPA
somebody made before the SPA (on request: spa/api/adoption.py), and the fields a server
prunes from our spec (said once, never written again). Each returns either a
:class:`~spa.controller.decide.plan.Plan` whose action is an HPA step, or a :class:`Standing`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from spa.api import ScheduledPodAutoscaler, wire
from spa.api.adoption import ADOPT_ANNOTATION, Takeover, takeover
from spa.controller.decide.memory import Attempts, Memory, Refusal
from spa.controller.decide.plan import CreateHpa, DryRunHpa, PatchBounds, PatchHpa, Plan
from spa.controller.decide.reasons import Event, EventType, Reason
from spa.controller.decide.scaleup import ScaleUp, plan_scale_up
from spa.controller.decide.snapshot import Snapshot
from spa.controller.desired import (
    SPEC_HASH_ANNOTATION,
    HpaComparison,
    compare_hpa,
    controller_owner_uid,
    hpa_patch,
    orphaned_hpa,
)
from spa.schedule import State

__all__ = ["FOREIGN_HPA_RECHECK_SECONDS", "Standing", "converge", "dropped_fields"]

# How often a name taken by somebody else's HPA is looked at again (a read, never a write).
FOREIGN_HPA_RECHECK_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Standing:
    """Where the HPA stands when no write is left to try, and the Memory after it."""

    memory: Memory
    # min/maxReplicas of the desired state are in force on the HPA.
    applied: bool
    # Why the SPA is Degraded (None: it is not), and then the reason its Ready condition gives.
    problem: str | None = None
    reason: Reason | None = None
    # Keep trying with the key's backoff (a write the server refused, or a loop).
    retry: bool = False
    events: tuple[Event, ...] = ()


def converge(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    model: ScheduledPodAutoscaler,
    state: State,
    desired: wire.NewHorizontalPodAutoscaler,
) -> Plan | Standing:
    """The HPA write to make next (a Plan whose action is that step), or where the HPA
    stands; `desired` is the HPA to apply in `state` (ParsedAutoscaler.desired_hpa)."""
    memory = snapshot.memory
    attempts = snapshot.attempts
    wanted = str(desired["metadata"]["annotations"][SPEC_HASH_ANNOTATION])
    current = snapshot.hpa
    scale_up = plan_scale_up(
        model,
        state,
        current,
        memory.applied_min,
        missing=memory.missing_target,
        instant=snapshot.instant,
    )
    if current is None:
        if attempts.hpa_refusal is not None:
            return _refused_hpa(memory, autoscaler, attempts.hpa_refusal, applied=False)
        return Plan(memory, CreateHpa(desired, wanted, scale_up))
    if controller_owner_uid(current) != autoscaler["metadata"]["uid"] and not orphaned_hpa(current):
        return _foreign(snapshot, autoscaler, current, desired, scale_up)
    converged = _ours(snapshot, autoscaler, current, desired, state, scale_up)
    if isinstance(converged, Standing) and converged.memory.adopted:
        return _announced(converged, autoscaler, snapshot.key)
    return converged


def _ours(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    current: wire.HorizontalPodAutoscaler,
    desired: wire.NewHorizontalPodAutoscaler,
    state: State,
    scale_up: ScaleUp | None,
) -> Plan | Standing:
    """The write an HPA this SPA controls (or one of ours it adopts back after an orphan
    deletion) needs next, or where it stands."""
    wanted = str(desired["metadata"]["annotations"][SPEC_HASH_ANNOTATION])
    memory = replace(snapshot.memory, foreign_hpa=False)
    attempts = snapshot.attempts
    if attempts.hpa_refusal is not None:
        return _after_refusal(memory, autoscaler, current, state, attempts)
    patch = hpa_patch(current, desired)
    stored = memory.stored_spec
    comparison = compare_hpa(
        current,
        desired,
        stored_spec=stored[1] if stored is not None and stored[0] == wanted else None,
    )
    if comparison is HpaComparison.ASK_SERVER:
        # Values differ literally, and nothing remembered says whether that is the server's
        # spelling of this very spec (after a restart or a failover) or somebody's edit: the
        # server's own dry-run answer tells, and is remembered.
        return Plan(memory, DryRunHpa(current, patch, wanted))
    if comparison is HpaComparison.IN_SYNC:
        in_force = replace(memory, reported_problem=None, applied_min=state.min_replicas)
        return _in_sync(in_force, autoscaler, current, desired)
    version = str((current.get("metadata") or {}).get("resourceVersion"))
    if memory.last_write == (wanted, version):
        return _not_converging(memory, autoscaler)
    return Plan(memory, PatchHpa(current, patch, wanted, scale_up))


def _foreign(
    snapshot: Snapshot,
    autoscaler: wire.ScheduledPodAutoscaler,
    current: wire.HorizontalPodAutoscaler,
    desired: wire.NewHorizontalPodAutoscaler,
    scale_up: ScaleUp | None,
) -> Plan | Standing:
    """An HPA of the SPA's name that it does not control: adopted in one write when the SPA
    asks for it and it is safe (the rule of spa/api/adoption.py, which `kubectl spa status`
    shares), else left untouched, the SPA Degraded and a Warning said once per problem."""
    # Our label-filtered cache cannot hold it: read it again at each reconcile until it is
    # ours (adopted) or gone.
    memory = replace(snapshot.memory, foreign_hpa=True)
    verdict = takeover(
        autoscaler["metadata"].get("annotations"),
        current,
        target=desired["spec"]["scaleTargetRef"],
    )
    taken = (
        f"HorizontalPodAutoscaler {snapshot.key} already exists and is not controlled by this "
        "ScheduledPodAutoscaler"
    )
    reason, retry = Reason.HPA_ADOPTION_REFUSED, False
    if verdict.takeover is Takeover.ADOPT:
        refusal = snapshot.attempts.hpa_refusal
        if refusal is None:
            patch = hpa_patch(current, desired)
            # A compare-and-swap: the patch replaces ownerReferences whole, so a controller
            # reference added since the HPA was read must make it fail (409), not vanish.
            patch["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            wanted = str(desired["metadata"]["annotations"][SPEC_HASH_ANNOTATION])
            return Plan(memory, PatchHpa(current, patch, wanted, scale_up, adopts=True))
        problem = f"{taken}; the API server refused its adoption: {refusal.message}"
        retry = True
    elif verdict.takeover is Takeover.REFUSE:
        problem = f"{taken}; adoption refused: {verdict.why}"
    else:
        reason = Reason.HPA_CONFLICT
        if verdict.why is None:
            problem = (
                f"{taken}; it is left untouched (delete it, rename the ScheduledPodAutoscaler, or "
                f'annotate the ScheduledPodAutoscaler {ADOPT_ANNOTATION}="true" to adopt it)'
            )
        else:
            problem = (
                f"{taken}; it is left untouched (delete it or rename the "
                f"ScheduledPodAutoscaler; it cannot be adopted: {verdict.why})"
            )
    return _hpa_problem(memory, autoscaler, problem, reason, applied=False, retry=retry)


def _announced(standing: Standing, autoscaler: wire.ScheduledPodAutoscaler, key: str) -> Standing:
    """The Standing after an adoption, with its Event (said once: it is forgotten then)."""
    event = Event(
        autoscaler,
        EventType.NORMAL,
        Reason.ADOPTED,
        f"adopted HorizontalPodAutoscaler {key}: this ScheduledPodAutoscaler is its controller "
        "now, and its spec follows the ScheduledPodAutoscaler's",
    )
    return replace(
        standing,
        memory=replace(standing.memory, adopted=False),
        events=(event, *standing.events),
    )


def _in_sync(
    memory: Memory,
    autoscaler: wire.ScheduledPodAutoscaler,
    current: wire.HorizontalPodAutoscaler,
    desired: wire.NewHorizontalPodAutoscaler,
) -> Standing:
    """In force; and if the server stored it without fields of our spec (an API server that
    does not know them, or whose feature gate for them is off: it prunes them silently), a
    Warning says which, once. In sync all the same: the server's answer is what it stored, so
    writing again would change nothing (docs/schedules.md, "Newer HPA fields")."""
    dropped = tuple(dropped_fields(desired["spec"], current.get("spec") or {}))
    events: tuple[Event, ...] = ()
    if dropped and dropped != memory.reported_dropped:
        message = (
            f"the API server stored the HorizontalPodAutoscaler without {', '.join(dropped)}: "
            "this Kubernetes release does not serve the field, or its feature gate is off "
            "(behavior tolerance: Kubernetes 1.33 and later, feature gate "
            "HPAConfigurableTolerance); the HPA runs without it"
        )
        events = (Event(autoscaler, EventType.WARNING, Reason.HPA_FIELD_DROPPED, message),)
    return Standing(replace(memory, reported_dropped=dropped), applied=True, events=events)


def dropped_fields(desired: Mapping[str, Any], stored: Mapping[str, Any]) -> Iterator[str]:
    """The paths (`behavior.scaleUp.tolerance`) of the fields with a value in `desired` that
    `stored` lacks. Maps and lists with nothing but empty values in them are not said: the
    server drops or defaults them as a matter of spelling (`selector: {matchLabels: {}}`,
    docs/architecture.md, "Convergence"), never as an unknown field; a list whose length the
    server changed is not looked into."""
    for key, value in desired.items():
        if _empty(value):
            continue
        if key not in stored:
            yield key
            continue
        existing = stored[key]
        if isinstance(value, Mapping) and isinstance(existing, Mapping):
            yield from (f"{key}.{path}" for path in dropped_fields(value, existing))
        elif isinstance(value, list) and isinstance(existing, list) and len(value) == len(existing):
            for index, (item, kept) in enumerate(zip(value, existing, strict=True)):
                if isinstance(item, Mapping) and isinstance(kept, Mapping):
                    yield from (f"{key}[{index}].{path}" for path in dropped_fields(item, kept))


def _empty(value: object) -> bool:
    """Nothing but maps and lists down to None (or nothing at all)."""
    if isinstance(value, Mapping):
        return all(_empty(item) for item in value.values())
    if isinstance(value, list):
        return all(_empty(item) for item in value)
    return value is None


def changed_by(write: CreateHpa | PatchHpa, answer: wire.HorizontalPodAutoscaler) -> bool:
    """Whether a write changed the HPA: a create always does; a patch whose answer has the
    resourceVersion it was based on changed nothing (a "noop")."""
    if isinstance(write, CreateHpa):
        return True
    version = str((write.current.get("metadata") or {}).get("resourceVersion"))
    return str(answer["metadata"].get("resourceVersion")) != version


def _after_refusal(
    memory: Memory,
    autoscaler: wire.ScheduledPodAutoscaler,
    current: wire.HorizontalPodAutoscaler,
    state: State,
    attempts: Attempts,
) -> Plan | Standing:
    """The server refused the whole desired spec: an invalid one (400, 422: an SPA spec the
    CRD schema let through) still gets min/maxReplicas following the Schedules on the HPA as
    it is, so a bad edit of the SPA cannot freeze a peak minReplicas in place. A forbidden one
    (403: RBAC, quota, a webhook) gets nothing more."""
    refusal = attempts.hpa_refusal
    assert refusal is not None
    if refusal.status == 403:
        return _refused_hpa(memory, autoscaler, refusal, applied=False)
    spec = current.get("spec") or {}
    bounds = {"minReplicas": state.min_replicas, "maxReplicas": state.max_replicas}
    if all(spec.get(name) == value for name, value in bounds.items()):
        return _refused_hpa(memory, autoscaler, refusal, applied=True)
    if attempts.bounds_refusal is None:
        return Plan(memory, PatchBounds(current, {"spec": bounds}))
    return _refused_hpa(memory, autoscaler, refusal, applied=False)


def _refused_hpa(
    memory: Memory, autoscaler: wire.ScheduledPodAutoscaler, refusal: Refusal, *, applied: bool
) -> Standing:
    """Degraded with the server's message and a Warning event, then retried with backoff; a
    write that succeeds later clears it."""
    verb = "forbade" if refusal.status == 403 else "rejected"
    problem = f"the API server {verb} the HorizontalPodAutoscaler: {refusal.message}"
    if applied:
        problem += "; minReplicas and maxReplicas still follow the Schedules"
    return _hpa_problem(memory, autoscaler, problem, Reason.HPA_REJECTED, applied=applied)


def _not_converging(memory: Memory, autoscaler: wire.ScheduledPodAutoscaler) -> Standing:
    """The safety net of "one write, then nothing": the HPA is still exactly as our last write
    left it, yet it compares as different. Writing again would loop (a bug in the comparison,
    or an API server that answers one thing and stores another), so back off and say so."""
    problem = (
        "the HorizontalPodAutoscaler still differs from the desired spec right after the "
        "controller wrote it, with no other change since; not writing it again until the "
        "backoff ends"
    )
    return _hpa_problem(memory, autoscaler, problem, Reason.HPA_NOT_CONVERGING, applied=False)


def _hpa_problem(
    memory: Memory,
    autoscaler: wire.ScheduledPodAutoscaler,
    problem: str,
    reason: Reason,
    *,
    applied: bool,
    retry: bool = True,
) -> Standing:
    """Where the HPA stands when something is wrong with it: the problem in the status, and a
    Warning the first time it is this problem (said once, not at every reconcile)."""
    events: tuple[Event, ...] = ()
    if memory.reported_problem != problem:
        events = (Event(autoscaler, EventType.WARNING, reason, problem),)
    return Standing(
        replace(memory, reported_problem=problem),
        applied=applied,
        problem=problem,
        reason=reason,
        retry=retry,
        events=events,
    )
