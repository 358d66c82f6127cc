"""How node capacity is held, step by step: what to read, what to hold in which mode, what to
release, and what the SPA's CapacityReady condition and series then say.

Why a module of its own: `capacity.py` says how much capacity a window wants and when; holding
it needs what only a request can tell (the target's replicas from its /scale, whether a
CapacityBuffer API is served for mode Auto) and what the caches show held, and each of those
requests is a step of the decision like an HPA write (docs/architecture.md, "Decide, then
act"): the decision asks for it, the actuator performs it, and its outcome (data) is in the
next snapshot's Attempts. What this process last held (`Memory.capacity_held`, kept by the
final plan: until then the decisions of a reconcile compare with what was held before it)
stands in for the caches where they cannot tell. docs/schedules.md, "Node capacity", is the
contract.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from spa.api.resources import CapacityMode
from spa.controller.decide.capacity import (
    CapacityOutcome,
    CapacityTask,
    CapacityView,
    capacity_condition,
    pods_wanted,
)
from spa.controller.decide.memory import Memory
from spa.controller.decide.plan import (
    CapacityReport,
    CapacityStep,
    HoldCapacity,
    ReadCapacity,
    ReleaseCapacity,
)
from spa.controller.decide.snapshot import Snapshot

__all__ = ["CAPACITY_RECHECK_SECONDS", "Holding", "holding"]

# Mode Auto, by whether a CapacityBuffer API is served.
_AUTO = {True: CapacityMode.CapacityBuffer, False: CapacityMode.Placeholder}

# While capacity is still held after the HPA asks for the window's minimum (the HPA controller,
# not an immediate scale-up, raises the target), how soon to look at the target again: no
# watch of the target tells when it has been raised.
CAPACITY_RECHECK_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Holding:
    """Where node capacity stands once held: the SPA's CapacityReady condition (None: the SPA
    orders no capacity, so its status gets none), its series, how soon to look again, and the
    Memory after it."""

    condition: CapacityOutcome | None
    report: CapacityReport
    recheck: float | None
    memory: Memory
    stood: bool = False
    """The capacity held stands on nodes: every placeholder pod Ready (never known of a
    CapacityBuffer: docs/api.md, "status.windows")."""


def holding(
    snapshot: Snapshot, view: CapacityView, task: CapacityTask, memory: Memory
) -> CapacityStep | Holding:
    """The next capacity step for `task`, or where capacity stands with the final plan's
    `memory`: the target's replicas are read only while a window is in its capacity lead, and
    a request about the buffer is made only when what is wanted differs from what the caches
    show (`view`; else what this process last held)."""
    attempts = snapshot.attempts
    intent = task.intent
    mode = intent.mode if intent is not None else CapacityMode.Auto
    read = attempts.capacity_read
    served = view.buffers_served
    if served is None and read is not None:
        served = read.buffers_served
    # The mode the capacity is held in: Auto is a CapacityBuffer where one is served, else
    # placeholder pods (None: whether one is served is not known yet).
    resolved: CapacityMode | None = mode
    if mode is CapacityMode.Auto:
        resolved = None if served is None else _AUTO[served]
    replicas: int | None = None
    unsupported: str | None = None
    pods = 0
    if intent is not None and intent.minimum is not None:
        if read is None or (read.replicas is None and read.problem is None):
            return ReadCapacity(task.autoscaler, task.target, buffers=resolved is None)
        if read.problem is not None:
            unsupported = f"cannot read the target's replicas: {read.problem}"
        else:
            replicas = read.replicas
            pods = pods_wanted(
                intent,
                replicas or 0,
                placeholders=resolved is CapacityMode.Placeholder,
                handing_over=task.handing_over,
            )
    # What the SPA holds: as the caches show it (level-triggered: a buffer deleted or edited by
    # hand, or left by a stopped process, is put right), else as this process last held it
    # (None: unknown, after a start).
    present = view.held
    if present is None and memory.capacity_held is not None:
        known, known_mode = memory.capacity_held
        present = {known_mode: known} if known and known_mode is not None else {}
    if not task.enabled and not present:
        # Not wanted, and nothing held (or, without caches, never ordered by this process):
        # nothing to ask about.
        return Holding(None, CapacityReport(), None, replace(memory, capacity_held=(0, None)))
    # Pods are wanted only once the mode is known (the read asks for it).
    wanted = {resolved: pods} if pods > 0 and resolved is not None else {}
    held_mode: CapacityMode | None = resolved
    if attempts.capacity_held is not None or present is None or present != wanted:
        held = attempts.capacity_held
        if held is None:
            if resolved is None:
                return ReadCapacity(task.autoscaler, None, buffers=True)
            return HoldCapacity(task.autoscaler, task.target, pods, resolved)
        others = tuple(other for other in sorted(present or {}) if other is not held.mode)
        if others and not attempts.capacity_released:
            # Held the other way before (Auto found a CapacityBuffer served since, or the mode
            # was changed): that object goes.
            return ReleaseCapacity(task.autoscaler, task.target, others)
        held_mode = held.mode
        unsupported = unsupported or held.unsupported
        pods = held.pods
        memory = replace(memory, capacity_held=(held.pods, held.mode))
    if not task.enabled:
        return Holding(None, CapacityReport(), None, memory)
    condition = capacity_condition(
        intent, pods=pods, replicas=replicas, mode=held_mode, unsupported=unsupported
    )
    # The alert SpaCapacityNotReady (docs/operations.md): the boundary has passed and the
    # target's pods have not taken the capacity (or there is none to take).
    late = task.raised and condition[0] == "False"
    recheck = CAPACITY_RECHECK_SECONDS if pods > 0 and task.raised else None
    ready = view.placeholders_ready
    stood = held_mode is CapacityMode.Placeholder and ready is not None and 0 < pods <= ready
    return Holding(condition, CapacityReport(pods, late), recheck, memory, stood=stood)
