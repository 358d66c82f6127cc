"""A valid Schedule compiled to the engine's window, and the checks that span fields.

The models check structure; `compile_schedule` checks what depends on several fields (the time
format depends on the type, Weekly needs its days, the dates are real, the capacity lead is not
shorter than the pod lead) and builds the engine's window. What each window type requires and
refuses is the table of spa.api.window_types. The lead times of an SPA and what a Schedule
cannot be on its SPA (`errors_against_autoscaler`) are read here too, as the engine counts them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from spa.api.resources import Calendar as CalendarObject
from spa.api.resources import (
    CalendarReference,
    ClusterCalendar,
    HolidayMode,
    ScheduledPodAutoscaler,
    ScheduleSpec,
    ScheduleType,
)
from spa.api.validation.hints import midnight_hint, time_form_hint, zone_hint
from spa.api.validation.leads import (
    autoscaler_leads,
    is_auto,
    learned_node_lead,
    learned_pod_lead,
)
from spa.api.validation.messages import FieldError, InvalidObject, described, seconds_as_duration
from spa.api.window_types import WINDOW_TYPES, only_used_by, types_phrase
from spa.schedule import (
    MAX_LEAD_SECONDS,
    Base,
    Calendar,
    CalendarRule,
    CalendarWindow,
    CronExpression,
    CronWindow,
    DateSet,
    OneShotWindow,
    PublicHolidays,
    RecurringWindow,
    WallClockError,
    Weekday,
    WeeklySpanWindow,
    Window,
    go_duration_seconds,
    load_zone,
    parse_date,
    parse_duration,
    parse_hour_minute,
    parse_local_datetime,
    to_instant,
    weekdays_between,
    with_lead,
)
from spa.schedule import HolidayMode as EngineHolidayMode
from spa.schedule.learned_lead import (
    DEFAULT_NODE_LEAD_SECONDS,
    DEFAULT_POD_LEAD_SECONDS,
    fixed_lead,
)
from spa.schedule.public_holidays import UnknownSubdivision
from spa.schedule.wallclock import LOCAL_DATETIME_PATTERN

__all__ = [
    "CAPACITY_LEAD_FIELD",
    "UNCHECKED",
    "CalendarLookup",
    "CompiledSchedule",
    "HolidayFields",
    "WindowFields",
    "autoscaler_base",
    "autoscaler_capacity_lead",
    "autoscaler_lead",
    "calendar_dates",
    "calendar_rules",
    "capacity_lead_error",
    "capacity_lead_seconds",
    "check_window",
    "compile_schedule",
    "duration_seconds",
    "errors_against_autoscaler",
    "ignored_fields",
    "lead_seconds",
    "load_time_zone",
    "window_scale_to_zero_error",
    "with_learned_leads",
]

CalendarLookup = Callable[[CalendarReference], "DateSet | str"]
"""The shared calendar a Schedule's reference names, as the engine's DateSet, or why there is
none (`ClusterCalendar "black-friday" not found`): spa.api.calendars makes these."""


def _no_calendars(reference: CalendarReference) -> DateSet | str:
    kind = reference.kind.value if reference.kind is not None else "Calendar"
    return f'{kind} "{reference.name}" not found'


@dataclass(frozen=True, slots=True)
class CompiledSchedule:
    """A valid Schedule reduced to what the engine needs."""

    window: Window
    min_replicas: int | None
    max_replicas: int | None
    suspend: bool
    lead: int | None = None
    """The Schedule's own leadTime in seconds; None: its ScheduledPodAutoscaler's applies."""
    capacity_lead: int | None = None
    """The Schedule's own capacity.leadTime in seconds; None: its ScheduledPodAutoscaler's."""
    lead_auto: bool = False
    """leadTime: Auto: `lead` is the default until the learned lead is passed in
    (docs/schedules.md, "Auto lead times")."""
    capacity_lead_auto: bool = False
    """capacity.leadTime: Auto: `capacity_lead` is the default until the learned one is
    passed in."""

    def applied_window(self, default_lead: int) -> Window:
        """The window as it applies: moved by the Schedule's leadTime, else `default_lead`
        (its ScheduledPodAutoscaler's)."""
        return with_lead(self.window, default_lead if self.lead is None else self.lead)


def with_learned_leads(
    compiled: CompiledSchedule, autoscaler: ScheduledPodAutoscaler
) -> CompiledSchedule:
    """A Schedule whose own leadTime or capacity.leadTime is Auto, with the lead its SPA
    learned from its status.windows in place of the default (docs/schedules.md, "Auto lead
    times"); any other Schedule unchanged. The capacity lead is never below the pod lead."""
    if not compiled.lead_auto and not compiled.capacity_lead_auto:
        return compiled
    pods = learned_pod_lead(autoscaler) if compiled.lead_auto else None
    lead = compiled.lead if pods is None else pods.seconds
    if pods is None:
        # The pod lead in force for this Schedule: its own fixed one, else its SPA's.
        pods = fixed_lead(autoscaler_lead(autoscaler) if lead is None else lead)
    capacity = compiled.capacity_lead
    if compiled.capacity_lead_auto:
        capacity = learned_node_lead(autoscaler, pods)[0].seconds
    if capacity is not None:
        capacity = max(capacity, pods.seconds)
    return dataclasses.replace(compiled, lead=lead, capacity_lead=capacity)


def window_scale_to_zero_error(
    min_replicas: int | None, autoscaler: ScheduledPodAutoscaler, *, owner: str
) -> FieldError | None:
    """A Schedule's minReplicas 0 on an SPA whose metrics cannot scale to zero: the API server
    would refuse the HPA when the window starts, so the controller and `spa plan` refuse the
    Schedule instead (docs/schedules.md, "Scale to zero")."""
    spec = autoscaler.spec.horizontal_pod_autoscaler_spec
    if min_replicas != 0 or spec.scales_to_zero():
        return None
    return FieldError(
        "spec.minReplicas",
        f"must not be 0: ScheduledPodAutoscaler {owner} has no Object or External metric "
        "(scale to zero: the API server requires such a metric, and its HPAScaleToZero "
        'feature gate; docs/schedules.md, "Scale to zero")',
    )


def autoscaler_base(autoscaler: ScheduledPodAutoscaler) -> Base:
    spec = autoscaler.spec.horizontal_pod_autoscaler_spec
    return Base(min_replicas=spec.min_replicas, max_replicas=spec.max_replicas)


def autoscaler_lead(autoscaler: ScheduledPodAutoscaler) -> int:
    """The SPA's leadTime in seconds (0 when unset), the default of its Schedules; Auto:
    learned from its status.windows (spa.api.validation.leads).

    InvalidObject for one above 24h, which `parse_scheduled_pod_autoscaler` refuses anyway."""
    if autoscaler.spec.lead_time is None:
        return 0
    if is_auto(autoscaler.spec.lead_time):
        return autoscaler_leads(autoscaler).pods.seconds
    lead = lead_seconds("spec.leadTime", autoscaler.spec.lead_time)
    if isinstance(lead, FieldError):
        raise InvalidObject([lead])
    return lead


def duration_seconds(text: str) -> int | None:
    """A duration the models' pattern accepted, in whole seconds, rounded up (the engine counts
    in seconds, and a lead time rounded down would make capacity late); None when it is too
    large to read at all (`go_duration_seconds`), which is above any field's limit."""
    total = go_duration_seconds(text)
    return None if total is None else math.ceil(total)


def lead_seconds(field: str, text: str) -> int | FieldError:
    """A leadTime in seconds, or the error of `field`: above 24h, or too large to read."""
    seconds = duration_seconds(text)
    if seconds is not None and seconds <= MAX_LEAD_SECONDS:
        return seconds
    return FieldError(field, f"must be at most 24h, got {described(text)}")


def calendar_dates(calendar: CalendarObject | ClusterCalendar) -> DateSet:
    """The engine's named date set of a parsed calendar, or InvalidObject naming every bad
    field. Its name is `Kind/name`, as the skipped windows say it."""
    spec = calendar.spec
    errors: list[FieldError] = []
    days, ranges, holidays = calendar_rules(
        dates=list(enumerate(spec.dates or ())),
        ranges=[(n, pair.start, pair.end) for n, pair in enumerate(spec.date_ranges or ())],
        holidays=None
        if spec.holidays is None
        else (spec.holidays.country, spec.holidays.subdivision),
        errors=errors,
    )
    if errors:
        raise InvalidObject(errors)
    return DateSet(
        name=f"{calendar.kind}/{calendar.metadata.name}",
        days=frozenset(days),
        ranges=tuple(ranges),
        holidays=holidays,
    )


def calendar_rules(
    *,
    dates: Sequence[tuple[int, str]],
    ranges: Sequence[tuple[int, str, str]],
    holidays: tuple[str, str | None] | None,
    errors: list[FieldError],
) -> tuple[set[Any], list[tuple[Any, Any]], PublicHolidays | None]:
    """A calendar's dates (by their index in `spec.dates`), ranges (by theirs in
    `spec.dateRanges`) and holidays, read; each problem added to `errors`."""

    def date_of(field: str, text: str) -> Any:
        try:
            return parse_date(text)
        except WallClockError as error:
            errors.append(FieldError(field, str(error)))
            return None

    days = set()
    for index, text in dates:
        day = date_of(f"spec.dates[{index}]", text)
        if day in days:
            errors.append(FieldError(f"spec.dates[{index}]", f"{text} is listed twice"))
        elif day is not None:
            days.add(day)
    read = []
    for index, start, end in ranges:
        first = date_of(f"spec.dateRanges[{index}].start", start)
        last = date_of(f"spec.dateRanges[{index}].end", end)
        if first is not None and last is not None:
            if last < first:
                errors.append(
                    FieldError(
                        f"spec.dateRanges[{index}].end", f"must not be before start ({first})"
                    )
                )
            else:
                read.append((first, last))
    found = None
    if holidays is not None:
        try:
            found = PublicHolidays(*holidays)
        except WallClockError as error:
            field = "subdivision" if isinstance(error, UnknownSubdivision) else "country"
            errors.append(FieldError(f"spec.holidays.{field}", str(error)))
    return days, read, found


def autoscaler_capacity_lead(autoscaler: ScheduledPodAutoscaler) -> int | None:
    """The SPA's capacity.leadTime in seconds, the default of its Schedules; None when it
    orders no node capacity. InvalidObject where `parse_scheduled_pod_autoscaler` refuses it."""
    if autoscaler.spec.capacity is None:
        return None
    if is_auto(autoscaler.spec.capacity.lead_time) or is_auto(autoscaler.spec.lead_time):
        # Learned, or a fixed capacity lead that a learned pod lead may raise.
        nodes = autoscaler_leads(autoscaler).nodes
        return None if nodes is None else nodes.seconds
    capacity = capacity_lead_seconds(
        autoscaler.spec.capacity.lead_time, autoscaler_lead(autoscaler)
    )
    if isinstance(capacity, FieldError):
        raise InvalidObject([capacity])
    return capacity


def capacity_lead_seconds(text: str, lead: int) -> int | FieldError:
    """A capacity.leadTime in seconds, or the error of `spec.capacity.leadTime`: above 24h, or
    shorter than the pod lead `lead` of the same object (docs/schedules.md, "Node capacity":
    nodes ordered after the pods would come too late to help them)."""
    seconds = lead_seconds(CAPACITY_LEAD_FIELD, text)
    if isinstance(seconds, FieldError) or seconds >= lead:
        return seconds
    return FieldError(CAPACITY_LEAD_FIELD, _shorter_than_lead(text, lead))


CAPACITY_LEAD_FIELD = "spec.capacity.leadTime"


def _shorter_than_lead(text: str, lead: int) -> str:
    return f"must be at least leadTime ({seconds_as_duration(lead)}), got {described(text)}"


def capacity_lead_error(
    compiled: CompiledSchedule, autoscaler: ScheduledPodAutoscaler, *, owner: str
) -> FieldError | None:
    """A Schedule whose capacity lead, its own or its SPA's, is shorter than its pod lead, its
    own or its SPA's: nodes ordered after the pods could not help them. The controller and
    `spa plan` refuse the Schedule with this one message (docs/schedules.md, "Node capacity").
    A Schedule compiled with both of its own was checked by `compile_schedule`. An Auto lead
    on either side is never refused: the capacity lead in force is never below the pod lead
    (docs/schedules.md, "Auto lead times")."""
    spec = autoscaler.spec
    if (
        compiled.lead_auto
        or compiled.capacity_lead_auto
        or (compiled.lead is None and is_auto(spec.lead_time))
        or (
            compiled.capacity_lead is None
            and spec.capacity is not None
            and is_auto(spec.capacity.lead_time)
        )
    ):
        return None
    pod = autoscaler_lead(autoscaler) if compiled.lead is None else compiled.lead
    own = compiled.capacity_lead
    capacity = autoscaler_capacity_lead(autoscaler) if own is None else own
    if capacity is None or capacity >= pod:
        return None
    if own is not None:
        return FieldError(
            CAPACITY_LEAD_FIELD,
            f"must be at least the leadTime of ScheduledPodAutoscaler {owner} "
            f"({seconds_as_duration(pod)}), got {seconds_as_duration(own)}",
        )
    return FieldError(
        "spec.leadTime",
        f"must be at most the capacity.leadTime of ScheduledPodAutoscaler {owner} "
        f"({seconds_as_duration(capacity)}), got {seconds_as_duration(pod)} (or set "
        "spec.capacity.leadTime on this Schedule)",
    )


def errors_against_autoscaler(
    compiled: CompiledSchedule, autoscaler: ScheduledPodAutoscaler, *, owner: str
) -> list[FieldError]:
    """What a valid Schedule cannot be on its ScheduledPodAutoscaler `owner`, every problem at
    once (each of the controller's and `spa plan`'s one message): minReplicas 0 without a
    metric that can scale to zero, a capacity lead shorter than the pod lead."""
    found = (
        window_scale_to_zero_error(compiled.min_replicas, autoscaler, owner=owner),
        capacity_lead_error(compiled, autoscaler, owner=owner),
    )
    return [error for error in found if error is not None]


def compile_schedule(
    spec: ScheduleSpec, *, calendars: CalendarLookup = _no_calendars
) -> CompiledSchedule:
    """The engine's window for a Schedule spec, or InvalidObject naming every bad field.

    `calendars` finds the shared calendars the spec refers to (spa.api.calendars); a
    reference it cannot resolve is an error of `spec.calendars[i]`."""
    shared: list[CalendarRule] = []
    reference_errors: list[FieldError] = []
    for index, reference in enumerate(spec.calendars or ()):
        found = calendars(reference)
        if isinstance(found, str):
            reference_errors.append(FieldError(f"spec.calendars[{index}]", found))
            continue
        mode = EngineHolidayMode.ONLY if reference.mode is HolidayMode.Only else None
        shared.append(CalendarRule(found, mode or EngineHolidayMode.SKIP))
    window, errors = check_window(
        WindowFields(
            type=spec.type,
            start_time=spec.start_time,
            end_time=spec.end_time,
            start_day=spec.start_day_of_week,
            end_day=spec.end_day_of_week,
            time_zone=spec.time_zone,
            min_replicas=spec.min_replicas,
            max_replicas=spec.max_replicas,
            schedule=spec.schedule,
            duration=spec.duration,
            start_date=spec.start_date,
            end_date=spec.end_date,
            exclude_dates=spec.exclude_dates,
            holidays=(
                None
                if spec.holidays is None
                else HolidayFields(
                    spec.holidays.country, spec.holidays.subdivision, spec.holidays.mode
                )
            ),
            shared=tuple(shared),
        )
    )
    errors.extend(reference_errors)
    lead: int | None = None
    lead_auto = is_auto(spec.lead_time)
    if lead_auto:
        lead = DEFAULT_POD_LEAD_SECONDS
    elif spec.lead_time is not None:
        read = lead_seconds("spec.leadTime", spec.lead_time)
        if isinstance(read, FieldError):
            errors.append(read)
        else:
            lead = read
    capacity_lead: int | None = None
    capacity_lead_auto = spec.capacity is not None and is_auto(spec.capacity.lead_time)
    if capacity_lead_auto:
        capacity_lead = max(DEFAULT_NODE_LEAD_SECONDS, lead or 0)
    elif spec.capacity is not None and lead_auto:
        # Never below the pod lead in force (docs/schedules.md, "Auto lead times").
        read = lead_seconds(CAPACITY_LEAD_FIELD, spec.capacity.lead_time)
        if isinstance(read, FieldError):
            errors.append(read)
        else:
            capacity_lead = max(read, lead or 0)
    elif spec.capacity is not None:
        capacity = capacity_lead_seconds(spec.capacity.lead_time, lead or 0)
        if isinstance(capacity, FieldError):
            errors.append(capacity)
        else:
            capacity_lead = capacity
    if errors or window is None:
        raise InvalidObject(errors or [FieldError("spec", "is not a valid schedule")])
    return CompiledSchedule(
        window=window,
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
        suspend=spec.suspend,
        lead=lead,
        capacity_lead=capacity_lead,
        lead_auto=lead_auto,
        capacity_lead_auto=capacity_lead_auto,
    )


UNCHECKED = object()


@dataclass(frozen=True, slots=True)
class WindowFields:
    """The fields a window is built from. `UNCHECKED` marks one whose structural error was
    already reported, so that it is neither checked again nor called missing."""

    type: ScheduleType | None
    start_time: str | object | None
    end_time: str | object | None
    start_day: str | object | None
    end_day: str | object | None
    time_zone: str | object | None
    min_replicas: int | None
    max_replicas: int | None
    schedule: str | object | None = None
    duration: str | object | None = None
    start_date: str | object | None = None
    end_date: str | object | None = None
    exclude_dates: list[str] | object | None = None
    holidays: HolidayFields | object | None = None
    shared: tuple[CalendarRule, ...] = ()


@dataclass(frozen=True, slots=True)
class HolidayFields:
    """A Schedule's `spec.holidays`, read."""

    country: str
    subdivision: str | None
    mode: HolidayMode | None


def check_window(fields: WindowFields) -> tuple[Window | None, list[FieldError]]:
    """The engine's window of `fields`, and every problem found in them, in this order: the
    zone, the fields the type refuses, the type's own fields, the date rules, the bounds. The
    window is None where a problem keeps it from being built."""
    read = _FieldReader(fields)
    zone = read.checked("spec.timeZone", load_time_zone, fields.time_zone or "")
    read.errors.extend(_unused_fields(fields))
    window = _type_window(read, zone)
    calendar = _check_calendar(fields, read.errors)
    if window is not None and calendar is not None and not calendar.empty:
        window = CalendarWindow(window, calendar)
    if (
        fields.min_replicas is not None
        and fields.max_replicas is not None
        and fields.min_replicas > fields.max_replicas
    ):
        read.errors.append(
            FieldError(
                "spec.maxReplicas",
                f"must not be less than minReplicas ({fields.min_replicas}), "
                f"got {fields.max_replicas}",
            )
        )
    return window, read.errors


@dataclass(frozen=True, slots=True)
class _FieldReader:
    """Reads the fields of a window, each problem added to `errors` with its hint."""

    fields: WindowFields
    errors: list[FieldError] = field(default_factory=list)

    def checked(self, name: str, check: Any, value: Any) -> Any:
        """`check(value)` for the field `name`, or None: unset (an error if the type requires
        it), already reported, or refused by `check` (an error with what to write instead)."""
        if value is UNCHECKED:  # already reported
            return None
        kind = self.fields.type
        if value is None:
            if _required(kind, name):
                self.errors.append(FieldError(name, f"is required for a {kind} schedule"))
            return None
        try:
            return check(value)
        except WallClockError as error:
            hint = midnight_hint(
                name,
                value,
                kind=kind,
                start_time=self.fields.start_time,
                start_day=self.fields.start_day,
                end_day=self.fields.end_day,
            ) or time_form_hint(name, value, one_shot=kind is ScheduleType.OneShot)
            self.errors.append(FieldError(name, f"{error}{hint}"))
            return None

    def hours(self, zone: Any) -> tuple[Any, Any] | None:
        """startTime and endTime as times of day (both checked), if they and the zone are valid."""
        start = self.checked("spec.startTime", parse_hour_minute, self.fields.start_time)
        end = self.checked("spec.endTime", parse_hour_minute, self.fields.end_time)
        return None if start is None or end is None or zone is None else (start, end)

    def weekdays(self) -> tuple[Weekday, Weekday] | None:
        """startDayOfWeek and endDayOfWeek (both checked), if both are set and valid."""
        kind = self.fields.type
        first = _weekday(self.fields.start_day, "spec.startDayOfWeek", self.errors, kind)
        last = _weekday(self.fields.end_day, "spec.endDayOfWeek", self.errors, kind)
        return None if first is None or last is None else (first, last)


def _type_window(read: _FieldReader, zone: Any) -> Window | None:
    """The engine window of the Schedule's type, if its fields are valid; what each type
    requires and refuses is in spa.api.window_types."""
    fields = read.fields
    match fields.type:
        case None:  # already reported
            return None
        case ScheduleType.Cron:
            expression = read.checked("spec.schedule", CronExpression, fields.schedule)
            duration = read.checked("spec.duration", parse_duration, fields.duration)
            if expression is not None and duration is not None and zone is not None:
                return CronWindow(expression=expression, duration=duration, zone=zone)
            return None
        case ScheduleType.OneShot:
            return _one_shot_window(read, zone)
        case ScheduleType.Daily:
            times = read.hours(zone)
            if times is not None:
                return RecurringWindow(start=times[0], end=times[1], zone=zone, days=None)
            return None
        case ScheduleType.Weekly:
            times, days = read.hours(zone), read.weekdays()
            if times is not None and days is not None:
                between = weekdays_between(*days)
                return RecurringWindow(start=times[0], end=times[1], zone=zone, days=between)
            return None
        case ScheduleType.WeeklySpan:
            times, days = read.hours(zone), read.weekdays()
            if times is not None and days is not None:
                return WeeklySpanWindow(days[0], times[0], days[1], times[1], zone)
            return None
        case _:
            assert_never(fields.type)


def _one_shot_window(read: _FieldReader, zone: Any) -> Window | None:
    """A OneShot's window: both ends real date-times in order, each an instant in the zone."""
    fields, errors = read.fields, read.errors
    start = read.checked("spec.startTime", parse_local_datetime, fields.start_time)
    end = read.checked("spec.endTime", parse_local_datetime, fields.end_time)
    if (start is None or end is None) and _ordered_wrongly(fields.start_time, fields.end_time):
        # One is not a real date (30 February), but both have the format: the API server's
        # rule compares them as text (fixed width, so text order is time order), and so
        # does this, so that the plan reports what `kubectl apply` will.
        errors.append(FieldError("spec.endTime", f"must be after startTime ({fields.start_time})"))
    if start is not None and end is not None and end <= start:
        errors.append(FieldError("spec.endTime", f"must be after startTime ({fields.start_time})"))
        return None
    if start is None or end is None or zone is None:
        return None
    # Each end converted on its own, so that the one that cannot be is the one named.
    convertible = True
    for name, wall, text in (
        ("spec.startTime", start, fields.start_time),
        ("spec.endTime", end, fields.end_time),
    ):
        try:
            to_instant(wall, zone)
        except (OverflowError, ValueError, OSError):
            convertible = False
            errors.append(
                FieldError(name, f"'{text}' in {zone.key} falls outside the years 1 to 9999 in UTC")
            )
    return OneShotWindow(start=start, end=end, zone=zone) if convertible else None


_LOCAL_DATETIME = re.compile(LOCAL_DATETIME_PATTERN)


def _ordered_wrongly(start: object, end: object) -> bool:
    return (
        isinstance(start, str)
        and isinstance(end, str)
        and _LOCAL_DATETIME.match(start) is not None
        and _LOCAL_DATETIME.match(end) is not None
        and end <= start
    )


def load_time_zone(name: str) -> Any:
    """The zone `name`, or a WallClockError that says what to write instead (docs/schedules.md)."""
    try:
        return load_zone(name)
    except WallClockError as error:
        raise WallClockError(f"{error}{zone_hint(name)}") from None


def _weekday(
    name: str | object | None, field: str, errors: list[FieldError], kind: ScheduleType | None
) -> Weekday | None:
    if name is UNCHECKED:
        return None
    if not name:
        if _required(kind, field):
            message = f"is required for a {kind} schedule (Sunday to Saturday)"
            errors.append(FieldError(field, message))
        return None
    return Weekday[str(name)]


def _required(kind: ScheduleType | None, field: str) -> bool:
    """Whether a Schedule of type `kind` requires `field` (`spec.startTime`), by the table."""
    return kind is not None and field.removeprefix("spec.") in WINDOW_TYPES[kind].required


# The attributes of `WindowFields` that hold the fields of the table of window types.
_ATTRIBUTES = {
    "startTime": "start_time",
    "endTime": "end_time",
    "startDayOfWeek": "start_day",
    "endDayOfWeek": "end_day",
    "schedule": "schedule",
    "duration": "duration",
    "startDate": "start_date",
    "endDate": "end_date",
}


def _unused_fields(fields: WindowFields) -> list[FieldError]:
    """The fields set that the type refuses (spa.api.window_types). The day fields of Daily
    and OneShot were always ignored (the original controller's manifests carry them), so they
    are not refused."""
    if fields.type is None:
        return []
    kind = WINDOW_TYPES[fields.type]
    errors: list[FieldError] = []
    for name in kind.not_used:
        value = getattr(fields, _ATTRIBUTES[name])
        if value in (None, "") or value is UNCHECKED:
            continue
        users = only_used_by(name)
        if users is not None:
            message = f"is only used by {types_phrase(users)}"
        else:
            why = f": {kind.not_used_because}" if kind.not_used_because else ""
            message = f"is not used by {types_phrase((fields.type,))}{why}"
        errors.append(FieldError(f"spec.{name}", message))
    return errors


def ignored_fields(spec: ScheduleSpec) -> list[FieldError]:
    """The fields set that the Schedule's type accepts but ignores (spa.api.window_types,
    `ignored`): warnings, as the object is valid and means what it meant, but a reader may
    think the field does something (docs/plan.md, "Warnings")."""
    kind = WINDOW_TYPES[spec.type]
    found = []
    attributes = {info.alias or name: name for name, info in ScheduleSpec.model_fields.items()}
    for name in kind.ignored:
        value = getattr(spec, attributes[name])
        if value in (None, ""):
            continue
        why = f": {kind.ignored_because}" if kind.ignored_because else ""
        found.append(FieldError(f"spec.{name}", f"is ignored by {types_phrase((spec.type,))}{why}"))
    return found


def _check_calendar(fields: WindowFields, errors: list[FieldError]) -> Calendar | None:
    """The date rules (docs/schedules.md, "Calendars"), or None if one of them is invalid."""
    valid = True

    def date_of(field: str, value: object) -> Any:
        nonlocal valid
        if value is None or value is UNCHECKED:
            valid = valid and value is None
            return None
        try:
            return parse_date(str(value))
        except WallClockError as error:
            errors.append(FieldError(field, str(error)))
            valid = False
            return None

    start_date = date_of("spec.startDate", fields.start_date)
    end_date = date_of("spec.endDate", fields.end_date)
    if start_date is not None and end_date is not None and end_date < start_date:
        errors.append(FieldError("spec.endDate", f"must not be before startDate ({start_date})"))
        valid = False
    excluded = set()
    if isinstance(fields.exclude_dates, list):
        for index, text in enumerate(fields.exclude_dates):
            day = date_of(f"spec.excludeDates[{index}]", text)
            if day in excluded:
                errors.append(FieldError(f"spec.excludeDates[{index}]", f"{text} is listed twice"))
                valid = False
            elif day is not None:
                excluded.add(day)
    elif fields.exclude_dates is UNCHECKED:
        valid = False
    holidays = None
    mode = EngineHolidayMode.SKIP
    if isinstance(fields.holidays, HolidayFields):
        try:
            holidays = PublicHolidays(fields.holidays.country, fields.holidays.subdivision)
        except WallClockError as error:
            field = "subdivision" if isinstance(error, UnknownSubdivision) else "country"
            errors.append(FieldError(f"spec.holidays.{field}", str(error)))
            valid = False
        if fields.holidays.mode is HolidayMode.Only:
            mode = EngineHolidayMode.ONLY
    elif fields.holidays is UNCHECKED:
        valid = False
    if not valid:
        return None
    return Calendar(
        start_date=start_date,
        end_date=end_date,
        excluded=frozenset(excluded),
        holidays=holidays,
        holiday_mode=mode,
        shared=fields.shared,
    )
