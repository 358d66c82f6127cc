"""Which Schedules an SPA applies, which it adopts first, and which name it but cannot apply.

Why a module of its own: membership is the rule set that ownership, the 100-Schedule limit and
foreign controllers meet in (docs/architecture.md, "Ownership"), and each Schedule is judged on
its own, so one that cannot apply never stops the others. It also compiles each member into
the engine's Rule (through the snapshot's cache).
"""

from __future__ import annotations

from dataclasses import dataclass

from spa.api import CompiledSchedule, InvalidObject, wire
from spa.controller.decide.plan import SetOwner
from spa.controller.decide.reasons import Reason
from spa.controller.decide.snapshot import Snapshot
from spa.controller.desired import controller_owner_uid, foreign_controller
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
    adoptions to make first. One Schedule never stops the others."""
    owner = str(autoscaler["metadata"]["uid"])
    members: list[wire.Schedule] = []
    refused: list[Evaluated] = []
    adoptions: list[SetOwner] = []
    for schedule in sorted(snapshot.schedules, key=_created_order):
        other = foreign_controller(schedule)
        failure = snapshot.attempts.owner_failures.get(uid(schedule))
        if other is not None:
            problem = (
                f"controlled by {other}, so it is not adopted by ScheduledPodAutoscaler "
                f"{snapshot.key} and does not apply; remove that controller ownerReference to "
                "use it"
            )
            refused.append(Evaluated(schedule, None, None, problem, Reason.FOREIGN_CONTROLLER))
        elif len(members) + len(adoptions) >= snapshot.max_schedules:
            problem = (
                f"ScheduledPodAutoscaler {snapshot.key} already has {snapshot.max_schedules} "
                "Schedules, the most one may have; this one (among the newest) does not apply"
            )
            refused.append(Evaluated(schedule, None, None, problem, Reason.TOO_MANY_SCHEDULES))
        elif controller_owner_uid(schedule) == owner:
            members.append(schedule)
        elif failure is not None:
            refused.append(Evaluated(schedule, None, None, failure, Reason.ADOPTION_FAILED))
        else:
            adoptions.append(SetOwner(schedule, autoscaler))
    return members, refused, tuple(adoptions)


def evaluate(snapshot: Snapshot, schedule: wire.Schedule, lead: int = 0) -> Evaluated:
    """`lead`: the SPA's leadTime (0 where there is no valid SPA: only the status is wanted)."""
    compiled, timeline = snapshot.compile(schedule, lead)
    if isinstance(compiled, InvalidObject):
        return Evaluated(schedule, None, None, str(compiled), Reason.INVALID_SCHEDULE)
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


def _created_order(obj: wire.Schedule) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("creationTimestamp") or ""), str(metadata.get("name") or ""))
