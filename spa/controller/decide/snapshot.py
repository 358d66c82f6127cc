"""What one decision reads: the :class:`Snapshot` of a key, and the compiled Schedules in it.

Why a value: everything a decision depends on (the objects as cached, the instant, what is
remembered of the key, what this reconcile already tried) is in one frozen object, so a
decision can be repeated and tested without an API server or a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from spa.api import CompiledSchedule, InvalidObject, compile_schedule, parse_schedule, wire
from spa.api.membership import MAX_SCHEDULES_PER_AUTOSCALER
from spa.controller.decide.memory import Attempts, Memory
from spa.schedule import Timeline, with_lead

__all__ = [
    "MAX_SCHEDULES_PER_AUTOSCALER",
    "Compiled",
    "Snapshot",
    "capacity_timeline",
    "compile_window",
    "dying",
]

Compiled = tuple[CompiledSchedule | InvalidObject, Timeline | None]
"""A Schedule's spec compiled (or why it cannot be), with the Timeline of its window."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one decision reads."""

    key: str
    instant: int
    # The SPA (None: it does not exist), the Schedules whose scaleTargetRef names it, and its
    # HPA (as cached, or as read from the API server when the cache cannot hold it).
    autoscaler: wire.ScheduledPodAutoscaler | None
    schedules: Sequence[wire.Schedule]
    hpa: wire.HorizontalPodAutoscaler | None
    # The uids, among the controllers of those Schedules, of SPAs that exist and are not
    # being deleted (read only when the SPA itself does not exist).
    live_owners: frozenset[str]
    hpa_api_version: str
    # (Schedule, its SPA's leadTime in seconds) -> the compiled Schedule.
    compile: Callable[[wire.Schedule, int], Compiled]
    # (Schedule, its compiled spec, its capacity lead in seconds) -> the Timeline of its window
    # moved earlier by that lead (docs/schedules.md, "Node capacity").
    capacity_timeline: Callable[[wire.Schedule, CompiledSchedule, int], Timeline] = field(
        default=lambda schedule, compiled, lead: capacity_timeline(compiled, lead)
    )
    memory: Memory = field(default_factory=Memory)
    attempts: Attempts = field(default_factory=Attempts)
    max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER


def dying(obj: wire.ScheduledPodAutoscaler) -> bool:
    """Deleted, but held by finalizers (foreground or orphan deletion, or somebody's): the
    garbage collector is at work on its dependents."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def compile_window(schedule: wire.Schedule, lead: int = 0) -> Compiled:
    """A Schedule's spec compiled, or why it cannot be (the reconciler caches this by uid,
    generation and `lead`: the Timeline holds the intervals that make each decision cheap).
    `lead` is its SPA's leadTime in seconds, for a Schedule that sets none itself."""
    try:
        compiled = compile_schedule(parse_schedule(schedule).spec)
    except InvalidObject as invalid:
        return invalid, None
    return compiled, Timeline(compiled.applied_window(lead))


def capacity_timeline(compiled: CompiledSchedule, lead: int) -> Timeline:
    """The Timeline of a Schedule's window moved `lead` seconds earlier, the end unchanged: the
    interval in which node capacity is ordered for it (the reconciler caches this like the
    window itself)."""
    return Timeline(with_lead(compiled.window, lead))
