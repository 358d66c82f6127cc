"""Which Schedules an SPA applies, which it adopts first, and which name it but cannot apply.

Why a module of its own: membership is the rule set that ownership, the 100-Schedule limit and
foreign controllers meet in (docs/architecture.md, "Ownership"), and each Schedule is judged on
its own, so one that cannot apply never stops the others. Who is a member is decided by the
rule `spa plan` and `kubectl spa status` share (spa/api/membership.py); this module turns it
into the controller's terms: adoptions to make, and the Degraded Schedules with their reasons.
It also turns each member, as the snapshot has it compiled, into the engine's Rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from spa.api import CompiledSchedule, InvalidObject, ScheduledPodAutoscaler, wire
from spa.api.membership import controller_owner_uid
from spa.api.membership import membership as shared_membership
from spa.api.validation.compile import errors_against_autoscaler
from spa.controller.decide.plan import SetOwner
from spa.controller.decide.reasons import Reason
from spa.controller.decide.snapshot import Snapshot
from spa.schedule import Rule

__all__ = ["Evaluated", "evaluate", "membership", "uid"]


@dataclass(frozen=True, slots=True)
class Evaluated:
    """One Schedule as the decision sees it; a `problem` makes it Degraded, and `reason` (set
    with it) names the problem in the Warning event."""

    obj: wire.Schedule
    compiled: CompiledSchedule | None
    rule: Rule | None
    problem: str | None = None
    reason: Reason | None = None


def membership(
    snapshot: Snapshot, autoscaler: wire.ScheduledPodAutoscaler
) -> tuple[list[wire.Schedule], list[Evaluated], tuple[SetOwner, ...]]:
    """The SPA's Schedules; the ones that name it but cannot apply (controlled by an object of
    another kind, beyond the limit, or their adoption refused), each with its problem; and the
    adoptions to make first. One Schedule never stops the others. The rule is the one `spa
    plan` and `kubectl spa status` use (:func:`spa.api.membership.membership`)."""
    owner = str(autoscaler["metadata"]["uid"])
    judged = shared_membership(
        snapshot.key,
        snapshot.schedules,
        owner_uid=owner,
        limit=snapshot.max_schedules,
        adoption_failures=snapshot.attempts.owner_failures,
    )
    members = [s for s in judged.members if controller_owner_uid(s) == owner]
    adoptions = tuple(
        SetOwner(s, autoscaler) for s in judged.members if controller_owner_uid(s) != owner
    )
    refused = [
        Evaluated(entry.schedule, None, None, entry.message, Reason(entry.reason.value))
        for entry in judged.excluded
    ]
    return members, refused, adoptions


def evaluate(
    snapshot: Snapshot,
    schedule: wire.Schedule,
    autoscaler: ScheduledPodAutoscaler | None = None,
) -> Evaluated:
    """The Schedule as compiled in the snapshot (with its SPA's leadTime, or 0 where there is
    no valid SPA: only the status is wanted); `autoscaler`: the valid SPA, whose metrics decide
    whether a window of 0 may apply."""
    compiled, timeline = snapshot.derived.compiled[str(schedule["metadata"].get("name"))]
    if isinstance(compiled, InvalidObject):
        return Evaluated(schedule, None, None, str(compiled), Reason.INVALID_SCHEDULE)
    against = (
        errors_against_autoscaler(compiled, autoscaler, owner=snapshot.key)
        if autoscaler is not None
        else []
    )
    if against:
        # As `spa plan` says it: minReplicas 0 the API server would refuse in the whole HPA at
        # the window's start, a capacity lead too short for nodes to help the pods
        # (docs/schedules.md); refused alone, the Schedule stops none of the others.
        message = "; ".join(str(error) for error in against)
        return Evaluated(schedule, compiled, None, message, Reason.INVALID_SCHEDULE)
    rule = None
    if not compiled.suspend and timeline is not None:
        rule = Rule(
            name=str(schedule["metadata"]["name"]),
            timeline=timeline,
            min_replicas=compiled.min_replicas,
            max_replicas=compiled.max_replicas,
        )
    return Evaluated(schedule, compiled, rule)


def uid(obj: wire.Schedule) -> str:
    return str((obj.get("metadata") or {}).get("uid"))
