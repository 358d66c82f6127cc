"""What one decision reads: the :class:`Snapshot` of a key, and what is derived from it.

Why a value: everything a decision depends on (the objects as cached, what is derived from
them, the instant, what is remembered of the key, what this reconcile already tried) is in one
frozen object of plain data, so a decision can be repeated and tested without an API server or
a clock. What is derived (the validated SPA, each Schedule compiled with its Timeline, the
capacity Timelines) is computed before the decision by :func:`derive`, the one place that says
which lead each is compiled with; the reconciler hands it memoised functions
(spa/controller/derived.py), a test plain ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spa.api import (
    CompiledSchedule,
    InvalidObject,
    ScheduledPodAutoscaler,
    autoscaler_lead,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
    wire,
)
from spa.api.calendars import CalendarKey, calendar_lookup
from spa.api.membership import MAX_SCHEDULES_PER_AUTOSCALER
from spa.api.validation.compile import with_learned_leads
from spa.controller.decide.capacity import CapacityView, window_capacity_lead
from spa.controller.decide.fleet import FleetRaise
from spa.controller.decide.memory import Attempts, Memory
from spa.controller.desired import desired_hpa
from spa.schedule import State, Timeline, with_lead

__all__ = [
    "MAX_SCHEDULES_PER_AUTOSCALER",
    "Calendars",
    "Compiled",
    "Derivations",
    "ParsedAutoscaler",
    "Snapshot",
    "capacity_timeline",
    "compile_window",
    "derive",
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

    Why: at a boundary a key is decided in two passes (the HPA pass, then the statuses pass)
    on the same SPA, and validating it with pydantic and building the desired HPA (its spec's
    JSON and hash) were a fifth of each decision (docs/performance.md, "2026-11-25: the request
    path (issue 24)"). The reconciler keeps one per SPA version (uid and resourceVersion: any
    change of the object is a new one) while the key is between the passes of a boundary, for
    a bounded number of keys (spa/controller/derived.py); without it, each decision makes its
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
class Derivations:
    """What is derived from the SPA and its Schedules before a decision (:func:`derive`)."""

    # The SPA validated, with its desired HPAs (None: there is no SPA).
    parsed: ParsedAutoscaler | None = None
    # By Schedule name: each compiled with its SPA's leadTime (0 without a valid SPA), with
    # its Timeline, or why it cannot be.
    compiled: Mapping[str, Compiled] = field(default_factory=dict)
    # By Schedule name: the Timeline of each valid window with a capacity lead, moved earlier
    # by that lead (docs/schedules.md, "Node capacity").
    capacity_timelines: Mapping[str, Timeline] = field(default_factory=dict)


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
    # The SPA validated, the Schedules compiled, the capacity Timelines (:func:`derive`).
    derived: Derivations = field(default_factory=Derivations)
    memory: Memory = field(default_factory=Memory)
    attempts: Attempts = field(default_factory=Attempts)
    max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER
    # The calendars the Schedules refer to (docs/schedules.md, "Shared calendars"); for one
    # not found, those of its name, of either kind and in any namespace (said in its error).
    calendars: Calendars = field(default_factory=dict)
    # What the caches show of the SPA's node capacity (None: node capacity is not wired).
    capacity: CapacityView | None = None
    # The SPA does not exist (as cached) and a placeholder Deployment labelled for its key is
    # cached: what no garbage collector deletes (docs/schedules.md, "Node capacity").
    orphaned_capacity: bool = False
    # The advance of the SPA's next raise, from the fleet due at the same boundary (None: not
    # known, or not moved): docs/schedules.md, "Raises ahead of a shared boundary".
    fleet: FleetRaise | None = None
    # How far ahead of its boundary a raise may have been written (`--fleet-max-advance`; 0:
    # never): an HPA holding such a raise keeps it (spa/controller/decide/fleet.py, `kept_early`).
    fleet_horizon: int = 0
    # The SPA's status, once it is raised ahead of its boundary, is written at the boundary
    # and not before (a shard: spa/controller/fleet.py, `FleetIndex.statuses_at_boundary`).
    statuses_at_boundary: bool = False


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
    autoscaler: ScheduledPodAutoscaler | None = None,
) -> Compiled:
    """A Schedule's spec compiled, or why it cannot be (the reconciler caches this by uid,
    generation, `lead`, the versions of the calendars it refers to and its own learned leads:
    the Timeline holds the intervals that make each decision cheap). `lead` is its SPA's
    leadTime in seconds, for a Schedule that sets none itself; `calendars` are those the
    Schedules refer to, and `unserved` the calendar kinds not served, with what a reference to
    one says; a Schedule whose own leadTime or capacity.leadTime is Auto takes the lead its SPA
    (`autoscaler`, valid) learned (docs/schedules.md, "Auto lead times")."""
    namespace = str(schedule["metadata"].get("namespace") or "")
    lookup = calendar_lookup(namespace, calendars or {}, unserved=unserved)
    try:
        compiled = compile_schedule(parse_schedule(schedule).spec, calendars=lookup)
    except InvalidObject as invalid:
        return invalid, None
    if autoscaler is not None:
        compiled = with_learned_leads(compiled, autoscaler)
    return compiled, Timeline(compiled.applied_window(lead))


def capacity_timeline(compiled: CompiledSchedule, lead: int) -> Timeline:
    """The Timeline of a Schedule's window moved `lead` seconds earlier, the end unchanged: the
    interval in which node capacity is ordered for it (the reconciler caches this like the
    window itself)."""
    return Timeline(with_lead(compiled.window, lead))


def derive(
    autoscaler: wire.ScheduledPodAutoscaler | None,
    schedules: Sequence[wire.Schedule],
    calendars: Calendars | None = None,
    *,
    unserved: Mapping[str, str] | None = None,
    parse: Callable[[wire.ScheduledPodAutoscaler], ParsedAutoscaler] = ParsedAutoscaler,
    compile: Callable[..., Compiled] = compile_window,
    timeline: Callable[[wire.Schedule, CompiledSchedule, int], Timeline] = (
        lambda schedule, compiled, lead: capacity_timeline(compiled, lead)
    ),
) -> Derivations:
    """What a decision derives from the SPA and its Schedules: the SPA validated (`parse`),
    each Schedule compiled (`compile`, with the SPA's leadTime where the SPA is valid, else 0,
    the calendars, and the SPA for a Schedule's own Auto leads), and the capacity Timeline of
    each valid window that orders capacity (`timeline`, with its own capacity lead, else its
    SPA's). The reconciler hands in its memoised functions (spa/controller/derived.py); the
    defaults compute afresh."""
    parsed = None if autoscaler is None else parse(autoscaler)
    model = None if parsed is None or isinstance(parsed.model, InvalidObject) else parsed.model
    lead = 0 if model is None else autoscaler_lead(model)
    compiled: dict[str, Compiled] = {}
    timelines: dict[str, Timeline] = {}
    for schedule in schedules:
        name = str(schedule["metadata"].get("name"))
        entry = compiled[name] = compile(
            schedule, lead, calendars or {}, unserved=unserved, autoscaler=model
        )
        spec = entry[0]
        if model is None or isinstance(spec, InvalidObject):
            continue
        capacity_lead = window_capacity_lead(spec, model)
        if capacity_lead is not None:
            timelines[name] = timeline(schedule, spec, capacity_lead)
    return Derivations(parsed, compiled, timelines)
