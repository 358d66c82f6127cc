"""The effective min/maxReplicas of an autoscaler at an instant, and when they next change.

This is SPEC.md section 3 in code: the base values, raised (or set) by the active windows,
field by field, with max raised to min when the two cross. The controller and `spa plan` both
call it, so a plan shows exactly what the controller will do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from spa.schedule.windows import DEFAULT_HORIZON_SECONDS, Timeline

__all__ = ["Base", "Rule", "State", "next_transition", "state_at", "transitions_between"]

# An HPA whose spec leaves minReplicas unset behaves as if it were 1.
DEFAULT_MIN_REPLICAS = 1


@dataclass(frozen=True, slots=True)
class Base:
    """The autoscaler's own bounds, used whenever no window overrides them."""

    min_replicas: int | None
    max_replicas: int


@dataclass(frozen=True, slots=True)
class Rule:
    """One valid, unsuspended Schedule: a named window and the bounds it sets while active."""

    name: str
    timeline: Timeline
    min_replicas: int | None = None
    max_replicas: int | None = None


@dataclass(frozen=True, slots=True)
class State:
    """What holds from some instant on.

    `max_raised` is True when the highest scheduled min exceeded the max in force and the max
    was raised to it (capacity wins; the controller warns about it).
    """

    min_replicas: int
    max_replicas: int
    active: tuple[str, ...]
    max_raised: bool = False


def state_at(base: Base, rules: Iterable[Rule], instant: int) -> State:
    """The effective values and the sorted names of the active rules at `instant`."""
    active = [rule for rule in rules if rule.timeline.is_active(instant)]
    mins = [rule.min_replicas for rule in active if rule.min_replicas is not None]
    maxes = [rule.max_replicas for rule in active if rule.max_replicas is not None]
    minimum = max(mins) if mins else (base.min_replicas or DEFAULT_MIN_REPLICAS)
    maximum = max(maxes) if maxes else base.max_replicas
    return State(
        min_replicas=minimum,
        max_replicas=max(minimum, maximum),
        active=tuple(sorted(rule.name for rule in active)),
        max_raised=minimum > maximum,
    )


def next_transition(
    base: Base,
    rules: Sequence[Rule],
    instant: int,
    *,
    horizon: int = DEFAULT_HORIZON_SECONDS,
) -> int | None:
    """The first instant after `instant` at which the state of `state_at` changes, if any.

    Every window boundary changes the set of active rules, so the earliest boundary among the
    rules is the answer; the state comparison only guards that argument.
    """
    current = state_at(base, rules, instant)
    limit = instant + horizon
    cursor = instant
    while True:
        candidates = [
            found
            for rule in rules
            if (found := rule.timeline.next_boundary(cursor, horizon=limit - cursor)) is not None
        ]
        if not candidates:
            return None
        cursor = min(candidates)
        if state_at(base, rules, cursor) != current:
            return cursor


def transitions_between(
    base: Base, rules: Sequence[Rule], low: int, high: int
) -> list[tuple[int, State]]:
    """Every transition in `(low, high]`, each with the state that holds from it on."""
    instants = sorted({b for rule in rules for b in rule.timeline.boundaries_between(low, high)})
    found: list[tuple[int, State]] = []
    previous = state_at(base, rules, low)
    for instant in instants:
        state = state_at(base, rules, instant)
        if state != previous:
            found.append((instant, state))
            previous = state
    return found
