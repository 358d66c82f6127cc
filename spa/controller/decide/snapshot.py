"""What one decision reads: the :class:`Snapshot` of a key, and the compiled Schedules in it.

Why a value: everything a decision depends on (the objects as cached, the instant, what is
remembered of the key, what this reconcile already tried) is in one frozen object, so a
decision can be repeated and tested without an API server or a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spa.api import (
    CompiledSchedule,
    InvalidObject,
    ScheduledPodAutoscaler,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
    wire,
)
from spa.api.calendars import CalendarKey, calendar_lookup
from spa.api.membership import MAX_SCHEDULES_PER_AUTOSCALER
from spa.controller.decide.memory import Attempts, Memory
from spa.controller.desired import desired_hpa
from spa.schedule import State, Timeline, with_lead

__all__ = [
    "MAX_SCHEDULES_PER_AUTOSCALER",
    "Calendars",
    "Compiled",
    "ParsedAutoscaler",
    "Snapshot",
    "capacity_timeline",
    "compile_window",
    "dying",
]

Compiled = tuple[CompiledSchedule | InvalidObject, Timeline | None]
"""A Schedule's spec compiled (or why it cannot be), with the Timeline of its window."""

Calendars = Mapping[CalendarKey, Mapping[str, Any]]
"""The shared calendars the Schedules refer to, as cached, by key (one that is missing is not
there): gathered by the reconciler, so that the decision reads no cache."""


class ParsedAutoscaler:
    """What decisions derive from one version of an SPA, each computed once: its validated
    model (or why it is invalid) and the desired HPA for each pair of bounds.

    Why: at a boundary a key is decided three times (the HPA pass, again after its write, then
    the statuses pass) on the same SPA, and validating it with pydantic and building the
    desired HPA (its spec's JSON and hash) were a fifth of each decision (docs/performance.md,
    "2026-11-25: the request path (issue 24)"). The reconciler keeps one per SPA version (uid
    and resourceVersion: any change of the object is a new one) while the key is between the
    passes of a boundary, for a bounded number of keys; without it, each decision makes its
    own. Share, never mutate, what it returns.
    """

    __slots__ = ("_desired", "autoscaler", "model")

    def __init__(self, autoscaler: wire.ScheduledPodAutoscaler) -> None:
        self.autoscaler = autoscaler
        self.model: ScheduledPodAutoscaler | InvalidObject
        try:
            self.model = parse_scheduled_pod_autoscaler(autoscaler)
        except InvalidObject as invalid:
            self.model = invalid
        self._desired: dict[tuple[int, int, str], wire.NewHorizontalPodAutoscaler] = {}

    def desired_hpa(self, state: State, *, api_version: str) -> wire.NewHorizontalPodAutoscaler:
        """The HPA to apply in `state` (its bounds are all it reads of it): see
        :func:`spa.controller.desired.desired_hpa`. Only for a valid SPA."""
        assert not isinstance(self.model, InvalidObject), "an invalid SPA has no desired HPA"
        key = (state.min_replicas, state.max_replicas, api_version)
        desired = self._desired.get(key)
        if desired is None:
            desired = self._desired[key] = desired_hpa(
                self.autoscaler, self.model, state, api_version=api_version
            )
        return desired


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
    # (Schedule, its SPA's leadTime in seconds, the calendars) -> the compiled Schedule.
    compile: Callable[[wire.Schedule, int, Calendars], Compiled]
    # (Schedule, its compiled spec, its capacity lead in seconds) -> the Timeline of its window
    # moved earlier by that lead (docs/schedules.md, "Node capacity").
    capacity_timeline: Callable[[wire.Schedule, CompiledSchedule, int], Timeline] = field(
        default=lambda schedule, compiled, lead: capacity_timeline(compiled, lead)
    )
    memory: Memory = field(default_factory=Memory)
    attempts: Attempts = field(default_factory=Attempts)
    max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER
    # The calendars the Schedules refer to (docs/schedules.md, "Shared calendars").
    calendars: Calendars = field(default_factory=dict)
    # The SPA -> what is derived from it (the reconciler's reuses it per version).
    parse: Callable[[wire.ScheduledPodAutoscaler], ParsedAutoscaler] = ParsedAutoscaler


def dying(obj: wire.ScheduledPodAutoscaler) -> bool:
    """Deleted, but held by finalizers (foreground or orphan deletion, or somebody's): the
    garbage collector is at work on its dependents."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def compile_window(
    schedule: wire.Schedule,
    lead: int = 0,
    calendars: Calendars | None = None,
    *,
    unserved: Mapping[str, str] | None = None,
) -> Compiled:
    """A Schedule's spec compiled, or why it cannot be (the reconciler caches this by uid,
    generation, `lead` and the versions of the calendars it refers to: the Timeline holds the
    intervals that make each decision cheap). `lead` is its SPA's leadTime in seconds, for a
    Schedule that sets none itself; `calendars` are those the Schedules refer to, and
    `unserved` the calendar kinds not served, with what a reference to one says."""
    namespace = str(schedule["metadata"].get("namespace") or "")
    lookup = calendar_lookup(namespace, calendars or {}, unserved=unserved)
    try:
        compiled = compile_schedule(parse_schedule(schedule).spec, calendars=lookup)
    except InvalidObject as invalid:
        return invalid, None
    return compiled, Timeline(compiled.applied_window(lead))


def capacity_timeline(compiled: CompiledSchedule, lead: int) -> Timeline:
    """The Timeline of a Schedule's window moved `lead` seconds earlier, the end unchanged: the
    interval in which node capacity is ordered for it (the reconciler caches this like the
    window itself)."""
    return Timeline(with_lead(compiled.window, lead))
