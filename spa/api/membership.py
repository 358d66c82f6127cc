"""Which of the Schedules that name a ScheduledPodAutoscaler it takes, and why not the others.

Why here, in the API layer: the controller (spa.controller.decide), `spa plan` and `kubectl
spa status` must answer this question the same way, or "in sync" in the status could
disagree with what the controller does. The plan and the command-line tool may not import the
controller (setup.cfg, the import-linter contracts), so the rule lives below all three, as one
pure function of the objects: :func:`membership`.

The rules (docs/schedules.md, "Limits"; docs/architecture.md, "Ownership"), each Schedule on
its own, oldest first (by `creationTimestamp`, then name):

- one controlled by an object that is not a ScheduledPodAutoscaler is never adopted and does
  not apply (an object has one controller at most): `ForeignController`;
- once the SPA has `limit` (100) Schedules, the newer ones do not apply: `TooManySchedules`;
- one whose adoption the API server refused does not apply until it is retried
  (`AdoptionFailed`; only the controller knows of such refusals);
- every other one is a member: the SPA controls it, or adopts it first.

A member still applies only if its spec is valid (:func:`spa.api.compile_schedule`): an
invalid member keeps its place among the `limit`, as in the controller, and is Degraded. The
spec of a Schedule that is not a member is never read: why it does not apply is all that is
said of it, by the controller's status and by the plan and the status alike (so a foreign or
surplus Schedule with an invalid spec is reported once, as foreign or surplus).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from spa.api import wire
from spa.api.resources import SCHEDULED_POD_AUTOSCALER

__all__ = [
    "MAX_SCHEDULES_PER_AUTOSCALER",
    "Excluded",
    "Exclusion",
    "Membership",
    "controller_owner_name",
    "controller_owner_uid",
    "created_order",
    "foreign_controller",
    "membership",
]

# The most Schedules one SPA applies (docs/schedules.md, "Limits"); the oldest win.
MAX_SCHEDULES_PER_AUTOSCALER = 100


class Exclusion(enum.StrEnum):
    """Why a Schedule that names an SPA is not one of its members: the reason of its Warning
    Event and of the SPA's (spa.controller.decide.Reason has the same values)."""

    FOREIGN_CONTROLLER = "ForeignController"
    TOO_MANY_SCHEDULES = "TooManySchedules"
    ADOPTION_FAILED = "AdoptionFailed"


@dataclass(frozen=True, slots=True)
class Excluded:
    """A Schedule that names the SPA but does not apply; `message` is what its status says."""

    schedule: wire.Schedule
    reason: Exclusion
    message: str


@dataclass(frozen=True, slots=True)
class Membership:
    """The SPA's members, oldest first (owned, or to be adopted), and the others."""

    members: tuple[wire.Schedule, ...]
    excluded: tuple[Excluded, ...]


def membership(
    key: str,
    schedules: Iterable[wire.Schedule],
    *,
    owner_uid: str | None = None,
    limit: int = MAX_SCHEDULES_PER_AUTOSCALER,
    adoption_failures: Mapping[str, str] | None = None,
) -> Membership:
    """The members of the SPA `key` (`namespace/name`, whose uid is `owner_uid`, if it has one)
    among `schedules`, those that name it, and why each other one does not apply.
    `adoption_failures` maps a Schedule's uid to the refusal of its adoption."""
    failures = adoption_failures or {}
    members: list[wire.Schedule] = []
    excluded: list[Excluded] = []
    for schedule in sorted(schedules, key=created_order):
        other = foreign_controller(schedule)
        failure = failures.get(_uid(schedule))
        if other is not None:
            excluded.append(
                Excluded(
                    schedule,
                    Exclusion.FOREIGN_CONTROLLER,
                    f"controlled by {other}, so it is not adopted by ScheduledPodAutoscaler "
                    f"{key} and does not apply; remove that controller ownerReference to use it",
                )
            )
        elif len(members) >= limit:
            excluded.append(
                Excluded(
                    schedule,
                    Exclusion.TOO_MANY_SCHEDULES,
                    f"ScheduledPodAutoscaler {key} already has {limit} Schedules, the most one "
                    "may have; this one (among the newest) does not apply",
                )
            )
        elif failure is not None and (
            owner_uid is None or controller_owner_uid(schedule) != owner_uid
        ):
            excluded.append(Excluded(schedule, Exclusion.ADOPTION_FAILED, failure))
        else:
            members.append(schedule)
    return Membership(tuple(members), tuple(excluded))


def controller_owner_uid(obj: wire.Schedule | wire.HorizontalPodAutoscaler) -> str | None:
    """The uid of the ScheduledPodAutoscaler that controls `obj`, if one does."""
    for reference in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(reference, Mapping) and reference.get("controller") and _is_ours(reference):
            return str(reference.get("uid"))
    return None


def controller_owner_name(obj: wire.Schedule | wire.HorizontalPodAutoscaler) -> str | None:
    """The name of the ScheduledPodAutoscaler that controls `obj` (in its namespace), if one
    does."""
    for reference in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(reference, Mapping) and reference.get("controller") and _is_ours(reference):
            name = reference.get("name")
            return str(name) if name else None
    return None


def foreign_controller(obj: wire.Schedule) -> str | None:
    """`Kind name` of the controller of `obj` if that is not a ScheduledPodAutoscaler (an
    object has at most one controller, so such an object can never be adopted)."""
    for reference in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(reference, Mapping) and reference.get("controller"):
            if _is_ours(reference):
                return None
            return f"{reference.get('kind')} {reference.get('name')}"
    return None


def created_order(obj: wire.Schedule) -> tuple[str, str]:
    """Oldest first; Schedules created in the same second (a file applied at once), by name."""
    metadata = obj.get("metadata") or {}
    return (str(metadata.get("creationTimestamp") or ""), str(metadata.get("name") or ""))


def _is_ours(reference: wire.OwnerReference) -> bool:
    return reference.get("kind") == SCHEDULED_POD_AUTOSCALER and str(
        reference.get("apiVersion", "")
    ).startswith("autoscaling.d-kuro.github.io/")


def _uid(obj: wire.Schedule) -> str:
    return str((obj.get("metadata") or {}).get("uid"))
