"""Node capacity ahead of a window (docs/schedules.md, "Node capacity"): how much, and when.

Why a module of its own: a window's pods can only be Ready at its start if nodes for them
exist, and a node autoscaler takes minutes to make one. The rules of ordering that capacity
(from `capacity.leadTime` before the window until the target has been raised to the window's
minimum, never past the window's end; how many pods' worth; when to wake up for it; what the
SPA's CapacityReady condition says) are rules, and rules belong to the pure decision. What to
read and what to hold, step by step, is `holding.py`'s; the actuator performs those steps
(spa/controller/capacity.py), after the HPA write of the same reconcile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from spa.api import CompiledSchedule, ScheduledPodAutoscaler, wire
from spa.api.resources import CapacityMode
from spa.api.validation.compile import autoscaler_capacity_lead
from spa.controller.decide.reasons import Reason
from spa.schedule import Base, Rule, next_transition, state_at

__all__ = [
    "CAPACITY_CONDITION",
    "PLACEHOLDER_HANDOVER_SECONDS",
    "CapacityIntent",
    "CapacityOutcome",
    "CapacityTask",
    "CapacityView",
    "capacity_condition",
    "capacity_intent",
    "pods_wanted",
    "window_capacity_lead",
]

# The SPA condition that reports the node capacity ordered for the next window (docs/api.md).
CAPACITY_CONDITION = "CapacityReady"

# How long before the pod lead placeholder pods are removed: they occupy the nodes themselves,
# and the window's pods are to find the room free, not have to preempt them (a preempting pod
# waits for the scheduler to retry it once its victims are gone, which on the test plane's
# kube-scheduler took longer than the window's lead: docs/schedules.md, "Node capacity").
# Short enough that no node autoscaler removes the emptied node meanwhile.
PLACEHOLDER_HANDOVER_SECONDS = 5

# (condition status, reason, message) of the CapacityReady condition.
CapacityOutcome = tuple[Literal["True", "False"], Reason, str]


@dataclass(frozen=True, slots=True)
class CapacityView:
    """What the controller's caches show of an SPA's node capacity, read without a request
    (None in the snapshot: node capacity is not wired, as in tests of other things)."""

    # The pods' worth its CapacityBuffer and its placeholder Deployment hold, by mode, each
    # only if it exists and the SPA controls it; None: the caches cannot tell (not wired, or a
    # CapacityBuffer API served whose cache has not listed yet).
    held: Mapping[CapacityMode, int] | None = None
    # Whether a CapacityBuffer API is served, for mode Auto (None: not known without asking
    # discovery, which a read step does).
    buffers_served: bool | None = None
    # The Ready pods (status.readyReplicas) of its placeholder Deployment: placeholders Ready
    # stand on nodes (None: it has none, or the caches cannot tell). A CapacityBuffer's status
    # says nothing of nodes (docs/api.md, "status.windows").
    placeholders_ready: int | None = None


def window_capacity_lead(
    compiled: CompiledSchedule, autoscaler: ScheduledPodAutoscaler
) -> int | None:
    """A window's capacity lead in seconds: its own capacity.leadTime, else its SPA's (None:
    the window orders no capacity)."""
    lead = compiled.capacity_lead
    return autoscaler_capacity_lead(autoscaler) if lead is None else lead


@dataclass(frozen=True, slots=True)
class CapacityIntent:
    """What the SPA wants of node capacity at one instant, before the target's replicas are
    known: the windows whose capacity lead has begun and have not ended (`windows`), the
    minReplicas they will set (`minimum`), and when this next changes (`wake_at`: the next
    capacity lead's start, or the end of a window)."""

    mode: CapacityMode
    minimum: int | None
    windows: tuple[str, ...]
    wake_at: int | None


@dataclass(frozen=True, slots=True)
class CapacityTask:
    """What the reconciler does about node capacity at the end of a reconcile: read the
    target's replicas (`target`: apiVersion, kind, name), then hold :func:`pods_wanted` pods'
    worth of capacity for `autoscaler`, none when `intent` is None (the SPA orders none, is
    paused, or its spec is invalid: whatever it held goes)."""

    autoscaler: wire.ScheduledPodAutoscaler
    target: tuple[str, str, str]
    intent: CapacityIntent | None
    # Some window of the SPA orders capacity: only then is its CapacityReady condition written
    # (an SPA without `capacity` sees no change at all).
    enabled: bool = False
    # The HPA's minReplicas in force has reached the intent's minimum: the target is being
    # raised, and what capacity is still held goes once it has been.
    raised: bool = False
    # The HPA's minReplicas reaches the intent's minimum within PLACEHOLDER_HANDOVER_SECONDS
    # (or has): placeholder pods are to be gone by then.
    handing_over: bool = False


def capacity_intent(
    *, base: Base, rules: Sequence[Rule], instant: int, mode: CapacityMode | None
) -> CapacityIntent:
    """The capacity intent at `instant`. `rules` are the SPA's windows that order capacity,
    each moved earlier by its capacity lead (the end unchanged): a window is "in its capacity
    lead" exactly when its rule is active, and the most any such window raises minReplicas to
    is what the capacity is for."""
    state = state_at(base, rules, instant)
    wake = next_transition(base, rules, instant)
    if not state.active:
        return CapacityIntent(mode or CapacityMode.Auto, None, (), wake)
    return CapacityIntent(mode or CapacityMode.Auto, state.min_replicas, state.active, wake)


def pods_wanted(
    intent: CapacityIntent | None,
    replicas: int,
    *,
    placeholders: bool = False,
    handing_over: bool = False,
) -> int:
    """How many pods' worth of node capacity to hold now, for a target that runs `replicas`
    (its /scale `spec.replicas`): the window's minimum less what runs, while a window is in
    its capacity lead; none once the target has been raised to the minimum (its own pods then
    take the capacity), outside every capacity lead, and after the window's end. Placeholder
    pods (`placeholders`) go PLACEHOLDER_HANDOVER_SECONDS before the HPA is raised
    (`handing_over`), so that the window's pods find their room free."""
    if intent is None or intent.minimum is None or (placeholders and handing_over):
        return 0
    return max(0, intent.minimum - replicas)


def capacity_condition(
    intent: CapacityIntent | None,
    *,
    pods: int,
    replicas: int | None,
    mode: CapacityMode | None,
    unsupported: str | None = None,
) -> CapacityOutcome:
    """The SPA's CapacityReady condition: True when no capacity is wanted, or the target
    already has the window's minimum; False while capacity is being held for `pods` pods
    (`mode`: how it is held), or when it cannot be held (`unsupported` says why)."""
    if unsupported is not None:
        return "False", Reason.CAPACITY_UNSUPPORTED, unsupported
    if intent is None or intent.minimum is None:
        return "True", Reason.CAPACITY_NOT_REQUESTED, "no window is in its capacity lead"
    windows = ", ".join(intent.windows)
    if pods > 0:
        how = "a placeholder Deployment" if mode is CapacityMode.Placeholder else "a CapacityBuffer"
        reason = (
            Reason.PLACEHOLDER_RUNNING
            if mode is CapacityMode.Placeholder
            else Reason.BUFFER_REQUESTED
        )
        return (
            "False",
            reason,
            f"holding node capacity for {pods} more pods with {how}, for minReplicas "
            f"{intent.minimum} of {windows} (the target has {replicas})",
        )
    if replicas is not None and replicas < intent.minimum:
        return (
            "True",
            Reason.PODS_REQUESTED,
            f"placeholder pods removed ahead of minReplicas {intent.minimum} of {windows}: the "
            f"target's pods (it has {replicas}) take their room",
        )
    return (
        "True",
        Reason.PODS_REQUESTED,
        f"the target has {replicas} replicas, at least minReplicas {intent.minimum} of "
        f"{windows}: its own pods take the capacity",
    )
