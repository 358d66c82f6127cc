"""What `spa plan` warns of: manifests that are valid, and that the controller takes, but that
will not do what they look like they do (docs/plan.md, "Warnings").

Why warnings and not errors: each object is accepted by the API server and by the controller,
and a plan of the others is still right; but a reader of the manifests would expect something
else (an HPA that the SPA will not manage, a pause that never holds, a window that never
opens). They are listed like errors, by file and field, and do not change the exit status.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any

from spa.api import SCHEDULED_POD_AUTOSCALER, FieldError, wire
from spa.api.adoption import ADOPT_ANNOTATION, Takeover, takeover
from spa.plan.schedules import look_ahead_from
from spa.schedule import (
    LAST_INSTANT,
    CalendarWindow,
    OneShotWindow,
    SkipCause,
    Window,
    skipped_between,
)
from spa.schedule.wallclock import shift_date, wall_instant
from spa.schedule.windows import DEFAULT_HORIZON_YEARS

__all__ = ["hpa_conflict", "hpa_key", "never_starts"]

_HPA_GROUP = "autoscaling"
_HPA_KIND = "HorizontalPodAutoscaler"


def hpa_key(body: object, default_namespace: str) -> tuple[str, str] | None:
    """The namespace and name of a HorizontalPodAutoscaler document (any version of the
    `autoscaling` group), or None for anything else."""
    if not isinstance(body, Mapping) or body.get("kind") != _HPA_KIND:
        return None
    api_version = body.get("apiVersion")
    if not isinstance(api_version, str) or api_version.rpartition("/")[0] != _HPA_GROUP:
        return None
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not name:
        return None
    return (namespace if isinstance(namespace, str) and namespace else default_namespace, name)


def hpa_conflict(autoscaler: Mapping[str, Any], hpa: Mapping[str, Any], where: str) -> str | None:
    """Why the SPA `autoscaler` will not manage the HPA of its name `hpa` (found at `where`),
    by the controller's rule (spa/api/adoption.py), or None when it will: the HPA is the SPA's
    already (`kubectl get -o yaml` of both), or the SPA asks to adopt it and may."""
    metadata = hpa.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    spa_metadata = autoscaler.get("metadata") or {}
    for reference in metadata.get("ownerReferences") or ():
        if (
            isinstance(reference, Mapping)
            and reference.get("controller")
            and reference.get("kind") == SCHEDULED_POD_AUTOSCALER
            and reference.get("name") == spa_metadata.get("name")
        ):
            return None  # the SPA's own HPA
    spec = (autoscaler.get("spec") or {}).get("horizontalPodAutoscalerSpec") or {}
    verdict = takeover(
        spa_metadata.get("annotations"),
        wire.typed(wire.HorizontalPodAutoscaler, hpa),
        target=wire.typed(wire.CrossVersionObjectReference, spec.get("scaleTargetRef") or {}),
    )
    taken = (
        f"a HorizontalPodAutoscaler of this name is among the manifests ({where}); once both "
        "are applied, the controller"
    )
    if verdict.takeover is Takeover.ADOPT:
        return None
    if verdict.takeover is Takeover.REFUSE:
        return f"{taken} refuses to adopt it ({verdict.why}): this SPA is Degraded"
    how = (
        f'; annotate this SPA {ADOPT_ANNOTATION}: "true" to adopt it'
        if verdict.why is None
        else f"; it cannot be adopted: {verdict.why}"
    )
    return (
        f"{taken} leaves it untouched and this SPA is Degraded (HPAConflict): remove it from "
        f"the manifests or rename one of them{how}"
    )


def never_starts(window: Window, at: int) -> FieldError | None:
    """Why a valid Schedule's window never opens from `at` on, when the plan found no start in
    the engine's look-ahead and that is not simply far away: a OneShot wholly inside a
    daylight-saving gap, or whose only date its calendar removes, or a recurring window every
    occurrence of which a calendar removes. None when it cannot tell."""
    inner = window.window if isinstance(window, CalendarWindow) else window
    if isinstance(inner, OneShotWindow):
        start, end = inner.span
        if start >= end:
            # Both ends lie in one skipped hour: they map to the same instant.
            before = datetime.fromtimestamp(start - 1, inner.zone) + timedelta(seconds=1)
            after = datetime.fromtimestamp(start, inner.zone)
            return FieldError(
                "spec.startTime",
                f"the window never starts: {inner.start:%Y-%m-%dT%H:%M} to "
                f"{inner.end:%Y-%m-%dT%H:%M} lies wholly inside the daylight-saving gap of "
                f"{inner.zone.key} on {after.date()} (the clocks go from {before:%H:%M} to "
                f"{after:%H:%M}), so it is empty",
            )
        skipped = skipped_between(window, start - 1, start)
        if skipped:
            return FieldError(
                _CAUSE_FIELDS[skipped[0].cause],
                f"the window never starts: its one date is {skipped[0].describe()}",
            )
        if (
            isinstance(window, CalendarWindow)
            and not window.calendar.judge(inner.start.date()).happens
        ):
            return FieldError(
                None,
                f"the window never starts: its one date, {inner.start.date()}, is not among the "
                "dates it is kept to (a holidays or calendar mode Only)",
            )
        return None
    if not isinstance(window, CalendarWindow):
        return None
    bounded = _none_within_bounds(window, at)
    if bounded is not None:
        return bounded
    # A year ahead, never past the end of the calendar (9999-12-31: no date after it exists).
    ahead = min(at + 366 * 86400, LAST_INSTANT)
    first = window.calendar.start_date
    if first is not None and first > datetime.fromtimestamp(ahead, window.zone).date():
        return None  # far ahead, not never
    if not inner.occurrences(at, ahead):
        return None
    skipped = skipped_between(window, at, ahead)
    said = (
        f", the first {skipped[0].describe()}"
        if skipped
        else " (a holidays or calendar mode Only keeps none of its dates in that time)"
    )
    # As the table says it (`no start before 9999-12-31` near the end of the calendar).
    return FieldError(
        None, f"no window starts {look_ahead_from(at)}: its calendars remove every one{said}"
    )


# How much of the window's own occurrences is asked for at a time, looking for one between the
# bounds: the search stops at the first.
_BOUNDS_STEP = 31 * 86400


def _none_within_bounds(window: CalendarWindow, at: int) -> FieldError | None:
    """For a recurring window with an `endDate` within the engine's look-ahead: that its type
    and times give no window on any date from `startDate` (or `at`) to `endDate`, which no
    calendar is needed to explain (a Monday window from a Tuesday to the same Tuesday, a
    29 February cron from December to the next December). None when one is there."""
    first, last = window.calendar.start_date, window.calendar.end_date
    if last is None:
        return None
    zone = window.zone
    horizon = at + DEFAULT_HORIZON_YEARS * 366 * 86400
    after = shift_date(last, 2)
    high = None if after is None else wall_instant(after, time(), zone)
    if high is None or high > horizon:
        return None
    opens = None if first is None else wall_instant(first, time(), zone)
    from_start = opens is not None and opens >= at
    before = None if first is None else shift_date(first, -1)
    begin = None if before is None else wall_instant(before, time(), zone)
    low = begin if begin is not None and from_start else at
    earliest = first or date.min
    while low < high:
        step = min(low + _BOUNDS_STEP, high)
        if any(earliest <= o.day <= last for o in window.window.occurrences(low, step)):
            return None
        low = step
    if from_start:
        said = "the window never starts: its type and times give no window on a date from "
        said += f"startDate {first} to endDate {last}"
    else:
        said = f"no window starts from now to endDate {last}: its type and times give none "
        said += "on those dates"
    return FieldError("spec.endDate", said)


_CAUSE_FIELDS = {
    SkipCause.EXCLUDED: "spec.excludeDates",
    SkipCause.HOLIDAY: "spec.holidays",
    SkipCause.CALENDAR: "spec.calendars",
}
