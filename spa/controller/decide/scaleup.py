"""Immediate scale-up (docs/schedules.md): when it is due, what it may do, and what it says.

Why here: these are rules (at boundaries only, only up, never from 0 replicas, how many reads
of a Scale that keeps changing, which outcome is a Warning, the words of its Event and of the
SPA's ImmediateScaleUp condition), and rules belong to the pure decision. The reconciler only
performs the requests these functions allow (one JSON patch that tests the replicas the HPA
controller last left, or a read and a compare-and-swap write), and hands back what happened as
a :data:`ScaleResult`, which :func:`spa.controller.decide.memory.absorb` keeps for the final
plan.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from spa.api import ScheduledPodAutoscaler
from spa.controller.decide.reasons import Reason
from spa.schedule import State

__all__ = [
    "MISSING_TARGET_RECHECK_SECONDS",
    "SCALE_ATTEMPTS",
    "SCALE_UP_CONDITION",
    "MissingTarget",
    "Raised",
    "ScaleProblem",
    "ScaleRefused",
    "ScaleResult",
    "ScaleUp",
    "ScaleUpOutcome",
    "Unscalable",
    "one_request_raise",
    "plan_scale_up",
    "replicas_to_set",
    "scale_up_outcome",
    "still_missing",
]

# The SPA condition that reports the last immediate scale-up (docs/api.md).
SCALE_UP_CONDITION = "ImmediateScaleUp"
# Reads of the target's Scale when it keeps changing between our read and our write.
SCALE_ATTEMPTS = 3
# How long a target found missing is not asked for again, unless its HPA says it appeared.
MISSING_TARGET_RECHECK_SECONDS = 3600

# (condition status, reason, message) of an immediate scale-up.
ScaleUpOutcome = tuple[Literal["True", "False"], Reason, str]


@dataclass(frozen=True, slots=True)
class ScaleUp:
    """Immediate scale-up (docs/schedules.md): once the HPA write that raises minReplicas has
    changed the HPA, raise the target to `minimum` through its /scale subresource, if it has
    fewer replicas (and more than 0)."""

    api_version: str
    kind: str
    name: str
    minimum: int
    # The raise starts from minReplicas 0 (scale to zero): a target at 0 replicas is then the
    # HPA's doing, and the HPA leaves a target at 0 alone once minReplicas is above 0, so the
    # scale-up raises it from 0 too (docs/schedules.md, "Scale to zero").
    from_zero: bool = False
    # The target's replicas as the HPA controller last left them (its HPA's
    # status.desiredReplicas, in the informer cache): the value one JSON patch tests before it
    # replaces them (:func:`one_request_raise`). None: the HPA has no status yet; read the Scale.
    expected: int | None = None
    # The HPA's AbleToScale condition as it was planned ((status, lastTransitionTime); None:
    # none): remembered with a target found missing, to tell when it appears.
    able_to_scale: tuple[str | None, str | None] | None = None

    @property
    def target(self) -> str:
        return f"{self.kind} {self.name}"

    @property
    def ref(self) -> tuple[str, str, str]:
        return (self.api_version, self.kind, self.name)


@dataclass(frozen=True, slots=True)
class MissingTarget:
    """A scale target found missing (404, or a kind the server does not serve) at `since`,
    not asked for again at every boundary (:func:`still_missing`)."""

    ref: tuple[str, str, str]  # (apiVersion, kind, name)
    since: int
    # Its HPA's AbleToScale condition then, (status, lastTransitionTime).
    able_to_scale: tuple[str | None, str | None] | None


class ScaleProblem(enum.Enum):
    """Why a target cannot be scaled through /scale, as the actuator found it."""

    TARGET_NOT_FOUND = enum.auto()  # the object, or its kind, does not exist
    NO_SCALE_SUBRESOURCE = enum.auto()  # its kind serves no /scale
    FORBIDDEN = enum.auto()  # RBAC forbids reading its Scale


_PROBLEM_REASONS = {
    ScaleProblem.TARGET_NOT_FOUND: Reason.TARGET_NOT_FOUND,
    ScaleProblem.NO_SCALE_SUBRESOURCE: Reason.NO_SCALE_SUBRESOURCE,
    ScaleProblem.FORBIDDEN: Reason.SCALE_FORBIDDEN,
}


@dataclass(frozen=True, slots=True)
class Raised:
    """The target was raised from `before` replicas to the ScaleUp's minimum."""

    before: int


@dataclass(frozen=True, slots=True)
class Unscalable:
    """The target cannot be scaled through /scale; `message` says why (the actuator's words)."""

    problem: ScaleProblem
    message: str


@dataclass(frozen=True, slots=True)
class ScaleRefused:
    """The API server refused the write of the Scale (its message, shortened)."""

    message: str


ScaleResult = Raised | Unscalable | ScaleRefused
"""What one immediate scale-up did, when it did anything worth saying."""


def plan_scale_up(
    model: ScheduledPodAutoscaler,
    state: State,
    current: Mapping[str, Any] | None,
    applied_min: int | None,
    *,
    missing: MissingTarget | None,
    instant: int,
) -> ScaleUp | None:
    """The immediate scale-up that goes with a write of the desired HPA: when it raises the
    effective minReplicas last in force (`applied_min`; unknown: the HPA's) and the SPA has not
    turned it off. Not when it creates the HPA (nothing was raised; the HPA controller sets the
    target within its first sync), not when it only puts back a minReplicas somebody lowered
    on the HPA (between boundaries), not at a window's end (minReplicas falls: scaling down
    stays with the HPA controller), and not for a target found `missing` that has not
    appeared since (:func:`still_missing`)."""
    if model.spec.scale_up_immediately is False or current is None:
        return None
    before = applied_min
    if before is None:
        written = (current.get("spec") or {}).get("minReplicas")
        before = 1 if written is None else int(written)
    if state.min_replicas <= before:
        return None
    ref = model.spec.horizontal_pod_autoscaler_spec.scale_target_ref
    able = able_to_scale(current)
    target = (ref.api_version or "v1", ref.kind, ref.name)
    if still_missing(missing, target, able, instant):
        return None
    return ScaleUp(
        *target,
        state.min_replicas,
        from_zero=before == 0,
        expected=_last_set(current),
        able_to_scale=able,
    )


def still_missing(
    missing: MissingTarget | None,
    target: tuple[str, str, str],
    able: tuple[str | None, str | None] | None,
    instant: int,
) -> bool:
    """Whether the scale target was found missing and is not to be asked for again yet: a
    404 at every boundary would be a request for nothing. Asked again once the HPA controller
    says it got the target's Scale since (its AbleToScale condition turned True after we
    found the target missing: the HPA controller reads the Scale at every sync of the HPA, so
    this costs nothing), or, where no HPA controller says so (none runs, or its condition did
    not change), after MISSING_TARGET_RECHECK_SECONDS; and at once for another target."""
    if missing is None or missing.ref != target:
        return False
    if instant >= missing.since + MISSING_TARGET_RECHECK_SECONDS:
        return False
    appeared = able is not None and able[0] == "True" and able != missing.able_to_scale
    return not appeared


def able_to_scale(hpa: Mapping[str, Any]) -> tuple[str | None, str | None] | None:
    """The HPA's AbleToScale condition, (status, lastTransitionTime): the HPA controller sets
    it False (FailedGetScale) while it cannot read the target's Scale, True once it can; the
    transition time tells a new True from one that was already there."""
    for condition in (hpa.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "AbleToScale":
            return (condition.get("status"), condition.get("lastTransitionTime"))
    return None


def _last_set(hpa: Mapping[str, Any]) -> int | None:
    """The replicas the HPA controller last left on its target: `status.desiredReplicas`,
    else `status.currentReplicas`. desiredReplicas first: a sync that rescales the target
    writes the count it found there (currentReplicas) and the count it set (desiredReplicas)
    in the same status, so right after an HPA-made scale-up currentReplicas is one sync
    behind. currentReplicas when desiredReplicas is 0: a sync whose metrics cannot be read
    sets only currentReplicas (from the Scale), and desiredReplicas stays as it was, 0 for an
    HPA that never rescaled. Either may be stale; the JSON patch's test is what makes a wrong
    guess safe (it fails, and the Scale is read)."""
    status = hpa.get("status") or {}
    for field in ("desiredReplicas", "currentReplicas"):
        value = status.get(field)
        if type(value) is int and value > 0:
            return value
    return None


def one_request_raise(scale_up: ScaleUp) -> tuple[int, int] | None:
    """(the replicas to test, the replicas to set) when one JSON patch of the Scale can do the
    scale-up: the replicas expected on the target call for a raise. The test makes it as safe
    as the read-then-write: the server applies it only if the target has exactly the expected
    replicas, and for those `replicas_to_set` decides as it would on a read. None: read the
    Scale first (nothing expected, or a target expected at 0, whose Scale has no
    `spec.replicas` to test: 0 is left out of the JSON, and a test of a missing path fails)."""
    expected = scale_up.expected
    if expected is None or expected == 0:
        return None
    wanted = replicas_to_set(scale_up, expected)
    return None if wanted is None else (expected, wanted)


def replicas_to_set(scale_up: ScaleUp, replicas: int) -> int | None:
    """The replicas to write on a target that has `replicas`, or None to leave it: never down,
    never from 0 (scaling to 0 turns the HPA off, and so this too), unless the raise starts
    from minReplicas 0, where 0 replicas are the HPA's own scale to zero."""
    if (replicas == 0 and not scale_up.from_zero) or replicas >= scale_up.minimum:
        return None
    return scale_up.minimum


def scale_up_outcome(scale_up: ScaleUp, result: ScaleResult) -> ScaleUpOutcome:
    """The SPA's ImmediateScaleUp condition (and its Event) for what a scale-up did. A target
    that cannot be scaled is reported; the HPA controller still raises it at its next sync."""
    match result:
        case Raised(before):
            return (
                "True",
                Reason.SCALED_UP,
                f"raised {scale_up.target} from {before} to {scale_up.minimum} replicas through "
                "its scale subresource, ahead of the HPA controller",
            )
        case Unscalable(problem, message):
            return "False", _PROBLEM_REASONS[problem], _instead(message)
        case ScaleRefused(message):
            return (
                "False",
                Reason.SCALE_REFUSED,
                _instead(f"the API server refused to scale {scale_up.target}: {message}"),
            )


def _instead(message: str) -> str:
    return f"{message}; the HPA controller raises the target at its next sync instead"
