"""The effective min/maxReplicas of an autoscaler at an instant, and when they next change.

This is docs/schedules.md, "Effective values", in code: the base values, raised (or set) by
the active windows, field by field, with max raised to min when the two cross. The controller
and `spa plan` both call it, so a plan shows exactly what the controller will do.
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
    return _state(base, [rule for rule in rules if rule.timeline.is_active(instant)])


def _state(base: Base, active: Iterable[Rule]) -> State:
    names = []
    minimum = maximum = None
    for rule in active:
        names.append(rule.name)
        if rule.min_replicas is not None and (minimum is None or rule.min_replicas > minimum):
            minimum = rule.min_replicas
        if rule.max_replicas is not None and (maximum is None or rule.max_replicas > maximum):
            maximum = rule.max_replicas
    if minimum is None:
        # `is None`, not `or`: a base minReplicas of 0 (scale to zero) is a value.
        minimum = DEFAULT_MIN_REPLICAS if base.min_replicas is None else base.min_replicas
    if maximum is None:
        maximum = base.max_replicas
    return State(
        min_replicas=minimum,
        max_replicas=max(minimum, maximum),
        active=tuple(sorted(names)),
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
    """Every transition in `(low, high]`, each with the state that holds from it on.

    A sweep over the rules' boundaries: each boundary flips its rule's activity, so the active
    set is kept up to date without asking every rule again at every instant.
    """
    flips: dict[int, list[int]] = {}
    for index, rule in enumerate(rules):
        for boundary in rule.timeline.boundaries_between(low, high):
            flips.setdefault(boundary, []).append(index)
    active = {index for index, rule in enumerate(rules) if rule.timeline.is_active(low)}
    previous = _state(base, (rules[index] for index in active))
    found: list[tuple[int, State]] = []
    for instant in sorted(flips):
        active.symmetric_difference_update(flips[instant])
        state = _state(base, (rules[index] for index in active))
        if state != previous:
            found.append((instant, state))
            previous = state
    return found
