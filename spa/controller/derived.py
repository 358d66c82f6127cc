"""What the reconciler derives from the cached objects before each decision, memoised.

Why a class of its own: the decision reads plain data (spa/controller/decide/snapshot.py), so
the validated SPA, the compiled Schedules with their Timelines and the capacity Timelines are
computed before it, by :func:`~spa.controller.decide.derive`. Computing them afresh at every
decision would cost more than the decision itself: a Timeline holds the cached intervals that
make each decision cheap, and a validation with its desired HPA is about 50 µs. Each is kept
here under the version of what it depends on, and only as long as it can serve again
(docs/architecture.md, "Caches"; docs/performance.md, "The boundary's peak").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spa.api import CompiledSchedule, InvalidObject, ScheduledPodAutoscaler, wire
from spa.api.calendars import CalendarKey, referenced_calendars
from spa.api.validation.compile import with_learned_leads
from spa.controller.decide import (
    Calendars,
    Compiled,
    Derivations,
    ParsedAutoscaler,
    capacity_timeline,
    compile_window,
    derive,
)
from spa.schedule import Timeline

__all__ = ["MAX_PARSED_KEPT", "Derived"]

# The most validated SPAs kept for the statuses pass of a boundary. Keeping one saves a
# validation, about 50 µs, and holds about 11 KB until that pass; at a whole-fleet boundary
# every key waits between the passes at once, so without a bound the fleet's size decides the
# peak (55 MB at 5,000 SPAs). Up to this many, every key of the install manifest's fleet keeps
# its own; beyond, the later keys validate again (docs/performance.md, "The boundary's peak").
MAX_PARSED_KEPT = 1000

_Version = tuple[
    int | None, int, tuple[tuple[CalendarKey, Any], ...], tuple[int | None, int | None] | None
]
"""What a compiled Schedule depends on: its generation, its SPA's lead time, the
resourceVersion of each calendar it refers to (None: missing; `_UNSERVED`: its kind's CRD is
not served) and, for its own Auto leads, the leads learned (its leadTime, capacity.leadTime)."""
_UNSERVED = object()


class Derived:
    """The three memos of the derivations: compiled Schedules and capacity Timelines by
    Schedule uid, validated SPAs by key.

    :param max_parsed_kept: how many validated SPAs are kept at once between the passes of a
        boundary (None: :data:`MAX_PARSED_KEPT`).
    """

    def __init__(self, *, max_parsed_kept: int | None = None) -> None:
        self.max_parsed_kept = MAX_PARSED_KEPT if max_parsed_kept is None else max_parsed_kept
        # Compiled windows by Schedule uid, reused until the Schedule's generation, the lead
        # time its SPA gives it or a calendar it refers to changes.
        self._compiled: dict[str, tuple[_Version, Compiled]] = {}
        # Each SPA validated once per version (uid, resourceVersion), by key, with the desired
        # HPAs derived from it: the decisions of a boundary share them. Kept only while the
        # key is between the two passes of a boundary (`done`), for a bounded number of keys:
        # a validated SPA with its desired HPAs is about 11 KB, more than the cached SPA.
        self._parsed: dict[str, tuple[tuple[object, object], ParsedAutoscaler]] = {}
        # The capacity Timelines by Schedule uid, reused like `_compiled`.
        self._capacity_timelines: dict[str, tuple[tuple[int | None, int], Timeline]] = {}

    def derive(
        self,
        autoscaler: wire.ScheduledPodAutoscaler | None,
        schedules: Sequence[wire.Schedule],
        calendars: Calendars,
        *,
        unserved: Mapping[str, str],
    ) -> Derivations:
        """What a decision reads of the SPA and its Schedules, from the memos where they
        still hold (:func:`spa.controller.decide.derive`)."""
        return derive(
            autoscaler,
            schedules,
            calendars,
            unserved=unserved,
            parse=self._parse,
            compile=self._compile,
            timeline=self._capacity_timeline,
        )

    def done(self, key: str, *, kept: bool) -> None:
        """The reconcile of `key` has ended; `kept`: it waits for its statuses pass (the back
        of the queue), so its validated SPA is kept for it, within the bound."""
        if not kept or len(self._parsed) > self.max_parsed_kept:
            self._parsed.pop(key, None)

    def forget_schedule(self, uid: str) -> None:
        """Drop what was derived of a deleted Schedule."""
        self._compiled.pop(uid, None)
        self._capacity_timelines.pop(uid, None)

    def _compile(
        self,
        schedule: wire.Schedule,
        lead: int,
        calendars: Calendars,
        *,
        unserved: Mapping[str, str] | None = None,
        autoscaler: ScheduledPodAutoscaler | None = None,
    ) -> Compiled:
        metadata = schedule["metadata"]
        uid = str(metadata.get("uid"))
        unserved = unserved or {}
        versions = tuple(
            (key, _UNSERVED)
            if key.kind in unserved
            else (key, (calendars[key].get("metadata") or {}).get("resourceVersion"))
            if key in calendars
            else (key, None)
            for key in referenced_calendars(schedule)
        )
        version: _Version = (metadata.get("generation"), lead, versions, None)
        cached = self._compiled.get(uid)
        if cached is None or cached[0][:3] != version[:3]:
            compiled = compile_window(schedule, lead, calendars, unserved=unserved)
            cached = self._compiled[uid] = (version, compiled)
        spec = cached[1][0]
        if autoscaler is None or isinstance(spec, InvalidObject):
            return cached[1]
        if not spec.lead_auto and not spec.capacity_lead_auto:
            return cached[1]
        # A Schedule's own Auto lead: a new status.windows recompiles only when the lead in
        # force changes (docs/schedules.md, "Auto lead times").
        learned = with_learned_leads(spec, autoscaler)
        version = (*version[:3], (learned.lead, learned.capacity_lead))
        if cached[0] != version:
            timeline = Timeline(learned.applied_window(lead))
            cached = self._compiled[uid] = (version, (learned, timeline))
        return cached[1]

    def _parse(self, autoscaler: wire.ScheduledPodAutoscaler) -> ParsedAutoscaler:
        metadata = autoscaler.get("metadata") or {}
        key = f"{metadata.get('namespace')}/{metadata.get('name')}"
        version = (metadata.get("uid"), metadata.get("resourceVersion"))
        cached = self._parsed.get(key)
        if cached is None or cached[0] != version or version[1] is None:
            cached = self._parsed[key] = (version, ParsedAutoscaler(autoscaler))
        return cached[1]

    def _capacity_timeline(
        self, schedule: wire.Schedule, compiled: CompiledSchedule, lead: int
    ) -> Timeline:
        metadata = schedule["metadata"]
        uid = str(metadata.get("uid"))
        version = (metadata.get("generation"), lead)
        cached = self._capacity_timelines.get(uid)
        if cached is None or cached[0] != version:
            cached = self._capacity_timelines[uid] = (version, capacity_timeline(compiled, lead))
        return cached[1]
