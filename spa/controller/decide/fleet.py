"""Raises scheduled ahead of a shared boundary: how early a fleet's raise may be written.

Why: a fleet of SPAs whose windows start at the same instant B (08:00, a sale, a kick-off)
needs one HPA write each, and the API server takes them at a finite rate, so writes made *at*
B land after B. The controller knows B in advance: it counts the SPAs with a raise due at B and
measures its own write time (spa/controller/fleet.py), and hands each decision a plain number,
the advance of its next raise (:class:`FleetRaise`). The rule here is pure: a change that adds
capacity (a higher minReplicas, a higher maxReplicas) may be written from B - advance; a change
that removes capacity never before its boundary (docs/schedules.md, "Raises ahead of a shared
boundary"; the rule `leadTime` already follows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from spa.schedule import (
    Base,
    Rule,
    State,
    format_instant,
    state_at,
    transitions_between,
)

__all__ = [
    "QUIET_SECONDS",
    "FleetRaise",
    "adds_capacity",
    "early_state",
    "fleet_advance",
    "fleet_message",
    "kept_early",
    "kept_message",
]

# A fleet whose writes are estimated to take less than this is written at its boundary, as
# ever: the raises land within this of B, and nobody is moved for so little.
QUIET_SECONDS = 0.25


@dataclass(frozen=True, slots=True)
class FleetRaise:
    """The advance of one SPA's next raise: the SPAs with a raise due at `boundary` (`fleet`),
    and how many seconds before it their raises may be written (`advance`; 0: at B)."""

    boundary: int
    advance: int
    fleet: int

    @property
    def start(self) -> int:
        """When the fleet's raises begin to be written."""
        return self.boundary - self.advance


def fleet_advance(fleet: int, write_seconds: float, *, margin: float, max_advance: int) -> int:
    """How many whole seconds before its boundary a fleet of `fleet` raises starts, each
    estimated to take `write_seconds` of the controller's write throughput: the need
    (fleet times write time) times `margin`, rounded up to a second, at most `max_advance`; 0 for
    a quiet boundary (a need under :data:`QUIET_SECONDS`, a single SPA). So the first raise is
    early by at most `margin` times the need + 1 s, never by more than `max_advance`."""
    need = fleet * write_seconds
    if fleet < 2 or need < QUIET_SECONDS:
        return 0
    return min(max_advance, math.ceil(need * margin))


def adds_capacity(before: State, after: State) -> bool:
    """`after` raises minReplicas or maxReplicas above `before`."""
    return after.min_replicas > before.min_replicas or after.max_replicas > before.max_replicas


def early_state(
    state: State, ahead: State, *, instant: int, raise_: FleetRaise | None, upcoming: int | None
) -> State | None:
    """The state to write now when the next transition (`upcoming`, to `ahead`) is a raise
    whose fleet starts at or before `instant`: each bound the higher of now's and the
    boundary's, so that what the boundary adds is written early and what it removes (a lower
    max, a lower min) waits for it. None: nothing is written early (no fleet advance for this
    boundary, not yet its start, or the boundary adds nothing)."""
    if raise_ is None or raise_.advance <= 0 or upcoming is None:
        return None
    if raise_.boundary != upcoming or instant < raise_.start or instant >= upcoming:
        return None
    if not adds_capacity(state, ahead):
        return None
    return _ahead_of(state, ahead)


def kept_early(
    state: State,
    ahead: State,
    *,
    base: Base,
    rules: Sequence[Rule],
    instant: int,
    upcoming: int | None,
    bounds: tuple[int, int] | None,
    horizon: int,
) -> State | None:
    """The state of an early raise the HPA already holds (`bounds`: its min and max), kept
    until its boundary: what the next transition (`upcoming`, to `ahead`) adds, written by
    this process or a previous leader no more than `horizon` seconds (`--fleet-max-advance`)
    before it. None: the HPA holds something else, or the raise is not that close.

    Why: a process that has just taken the Lease (or restarted) learns its fleets one
    reconcile at a time, so its first reconciles see a fleet of a few SPAs and an advance of a
    second or none, and would write the base bounds over raises the last leader wrote early,
    then raise them again once the fleet is counted: capacity removed before its boundary,
    and three writes for one. Keeping what is already written is the rule itself (what adds
    capacity may be written early; docs/schedules.md, "Raises ahead of a shared boundary").

    Bounds that some state of the `base` and `rules` held within the last `horizon` seconds
    are not taken for an early raise: they may be what a window that just ended left (a
    window ending at 10:00 and another raising to the same bounds at 10:01), and that end is
    written at its boundary, as ever."""
    if upcoming is None or bounds is None or horizon <= 0:
        return None
    if not instant < upcoming <= instant + horizon or not adds_capacity(state, ahead):
        return None
    early = _ahead_of(state, ahead)
    if (early.min_replicas, early.max_replicas) != bounds:
        return None
    since = instant - horizon
    recent = [state_at(base, rules, since)]
    recent += [each for _, each in transitions_between(base, rules, since, instant)]
    if any((each.min_replicas, each.max_replicas) == bounds for each in recent):
        return None
    return early


def _ahead_of(state: State, ahead: State) -> State:
    """Each bound the higher of now's and the boundary's: what the boundary adds, early."""
    return State(
        max(state.min_replicas, ahead.min_replicas),
        max(state.max_replicas, ahead.max_replicas),
        state.active,
        max_raised=state.max_raised or ahead.max_raised,
    )


def fleet_message(raise_: FleetRaise) -> str:
    """What the Ready condition adds while a raise is written ahead of its boundary."""
    return (
        f"raised ahead of {format_instant(raise_.boundary)} for a fleet of {raise_.fleet:,} "
        f"SPAs at that boundary: written from {format_instant(raise_.start)}"
    )


def kept_message(boundary: int) -> str:
    """What the condition says of an early raise kept (:func:`kept_early`) when the SPA's
    status does not say already why it was written early."""
    return f"raised ahead of {format_instant(boundary)}, kept until then"
