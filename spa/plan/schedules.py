"""What a plan says about each Schedule of an autoscaler, beyond the effective values.

A reviewer asks "why is nothing happening on Friday?" as often as "what happens on Monday?": a
suspended Schedule, a OneShot that is over, or a window that only starts after the horizon is
invisible in the list of transitions. So every valid Schedule of a planned autoscaler is kept
here with its window in words, its time zone and its state over the horizon; renderers (the
table, the HTML timeline, `kubectl spa status`) show them, and they show local times with the
zone of the Schedule that caused each transition.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import assert_never
from zoneinfo import ZoneInfo

from spa.api import CompiledSchedule, ScheduleSpec
from spa.api.resources import HolidayMode, ScheduleType, WeekdayName
from spa.schedule import LAST_INSTANT, UTC_ZONE, Timeline, format_instant, with_lead
from spa.schedule.windows import DEFAULT_HORIZON_SECONDS, DEFAULT_HORIZON_YEARS

__all__ = [
    "PlannedSchedule",
    "ScheduleState",
    "format_local",
    "look_ahead_from",
    "plan_schedule",
    "zone_name",
]


class ScheduleState(enum.StrEnum):
    """Where a Schedule stands at the start of the horizon."""

    ACTIVE = "active"
    """Its window is active at the start of the horizon."""
    UPCOMING = "upcoming"
    """Its window starts within the horizon."""
    LATER = "later"
    """Its window does not start within the horizon (a OneShot further ahead, or a window that
    starts more than the engine's look-ahead of 41 years later, `DEFAULT_HORIZON_YEARS`, or
    not before the end of the calendar)."""
    SUSPENDED = "suspended"
    """`spec.suspend` is true: it never applies."""
    COMPLETED = "completed"
    """A OneShot whose end has passed."""


@dataclass(frozen=True, slots=True)
class PlannedSchedule:
    """One valid Schedule of a planned autoscaler."""

    name: str
    type: str
    window: str
    """The window in the Schedule's own words, e.g. `Mon-Wed 11:50-13:00`."""
    zone: ZoneInfo
    min_replicas: int | None
    max_replicas: int | None
    state: ScheduleState
    timeline: Timeline
    next_change: int | None
    """When it next starts (or, while active, ends), if within the engine's look-ahead; None
    for suspended and completed Schedules."""
    capacity_from: int | None = None
    """When node capacity is next ordered for it (its next start less its capacity lead,
    docs/schedules.md "Node capacity"), while it is not active; None without a capacity
    lead."""
    look_ahead: str = f"in the next {DEFAULT_HORIZON_YEARS} years"
    """How far ahead `next_change` was looked for, as `no start ...` ends: `look_ahead_from(at)`."""


def look_ahead_from(at: int) -> str:
    """How far ahead from `at` the engine looks for a start: `in the next 41 years`, or
    `before 9999-12-31` where the end of the calendar comes first (docs/schedules.md, "The
    end of the calendar")."""
    if at + DEFAULT_HORIZON_SECONDS <= LAST_INSTANT:
        return f"in the next {DEFAULT_HORIZON_YEARS} years"
    return f"before {format_instant(LAST_INSTANT)[:10]}"


def plan_schedule(
    name: str,
    spec: ScheduleSpec,
    compiled: CompiledSchedule,
    *,
    at: int,
    until: int,
    lead: int = 0,
    capacity_lead: int | None = None,
) -> PlannedSchedule:
    """The Schedule `name` as seen from `at`, over the horizon `(at, until]`; `lead` is its
    SPA's leadTime in seconds (the Schedule's own wins), so its starts are the effective ones;
    `capacity_lead` its SPA's capacity.leadTime (the Schedule's own wins; None: none)."""
    timeline = Timeline(compiled.applied_window(lead))
    window = compiled.window
    # Every window type keeps the zone its wall-clock times are in.
    zone: ZoneInfo = getattr(window, "zone", UTC_ZONE)
    next_change: int | None = None
    if compiled.suspend:
        state = ScheduleState.SUSPENDED
    elif window.completed(at):  # a OneShot past its end, a Schedule past its endDate
        state = ScheduleState.COMPLETED
    else:
        next_change = timeline.next_boundary(at)
        if timeline.is_active(at):
            state = ScheduleState.ACTIVE
        elif next_change is not None and next_change <= until:
            state = ScheduleState.UPCOMING
        else:
            state = ScheduleState.LATER
    capacity = capacity_lead if compiled.capacity_lead is None else compiled.capacity_lead
    capacity_from: int | None = None
    if capacity is not None and next_change is not None and state is not ScheduleState.ACTIVE:
        ordered = Timeline(with_lead(window, capacity))
        capacity_from = at if ordered.is_active(at) else ordered.next_boundary(at)
    return PlannedSchedule(
        name=name,
        type=spec.type.value,
        window=_describe_window(spec) + _describe_dates(spec),
        zone=zone,
        min_replicas=compiled.min_replicas,
        max_replicas=compiled.max_replicas,
        state=state,
        timeline=timeline,
        next_change=next_change,
        capacity_from=capacity_from,
        look_ahead=look_ahead_from(at),
    )


def _describe_window(spec: ScheduleSpec) -> str:
    """The window in the Schedule's own words; `spec` is valid (compile_schedule accepted it),
    so the fields its type requires are set."""
    times = f"{spec.start_time}-{spec.end_time}"
    match spec.type:
        case ScheduleType.Cron:
            return f"cron '{spec.schedule}' for {spec.duration}"
        case ScheduleType.WeeklySpan:
            first, last = _day(spec.start_day_of_week), _day(spec.end_day_of_week)
            return f"{first} {spec.start_time} to {last} {spec.end_time}"
        case ScheduleType.OneShot:
            return f"{spec.start_time} to {spec.end_time}"
        case ScheduleType.Weekly:
            first, last = _day(spec.start_day_of_week), _day(spec.end_day_of_week)
            days = first if first == last else f"{first}-{last}"
            return f"{days} {times}"
        case ScheduleType.Daily:
            return f"daily {times}"
        case _:
            assert_never(spec.type)


def _describe_dates(spec: ScheduleSpec) -> str:
    """`, only on US holidays, skipping Calendar/freeze`: the holiday rule and the shared
    calendars the window keeps to, in the order they compose (docs/schedules.md, "How the date
    rules compose"); empty without any."""
    only: list[str] = []
    skip: list[str] = []
    for reference in spec.calendars or ():
        kind = reference.kind.value if reference.kind is not None else "Calendar"
        (only if reference.mode is HolidayMode.Only else skip).append(f"{kind}/{reference.name}")
    holidays = spec.holidays
    words = []
    if holidays is not None:
        where = holidays.country
        if holidays.subdivision is not None:
            where += f"-{holidays.subdivision}"
        if holidays.mode is HolidayMode.Only:
            # Both must hold: a holiday, and on one of the Only calendars.
            on = f" that are on {' or '.join(only)}" if only else ""
            words.append(f"only on {where} holidays{on}")
            only = []
        else:
            skip.insert(0, f"{where} holidays")
    if only:
        words.append(f"only on {' or '.join(only)}")
    if skip:
        words.append(f"skipping {', '.join(skip)}")
    return "".join(f", {word}" for word in words)


def _day(name: WeekdayName | None) -> str:
    """`Mon`; `?` for a day that is not set, which a valid Weekly or WeeklySpan has."""
    return "?" if name is None else name.value[:3]


def zone_name(zone: ZoneInfo) -> str:
    """The IANA name of a zone (`UTC` for the default)."""
    return zone.key or "UTC"


def format_local(instant: int, zone: ZoneInfo, *, with_name: bool = True) -> str:
    """`Mon 2026-11-23 11:50 JST Asia/Tokyo`: the weekday, date and wall-clock time in `zone`,
    its abbreviation then in force (which tells EST from EDT) and, `with_name`, the zone's name.

    Seconds are shown only when not zero: boundaries fall on whole minutes, only `--at` may not.
    """
    # Formatted by hand: strftime would be most of the time of a large fleet's table.
    local = datetime.fromtimestamp(instant, zone)
    clock = f"{local.hour:02d}:{local.minute:02d}"
    if local.second:
        clock += f":{local.second:02d}"
    name = zone_name(zone)
    abbreviation = local.tzname() or name
    label = f"{abbreviation} {name}" if with_name and abbreviation != name else abbreviation
    day = _WEEKDAYS[local.weekday()]
    return f"{day} {local.year:04d}-{local.month:02d}-{local.day:02d} {clock} {label}"


_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
