"""Turning untrusted documents into models, with every problem addressed to its field.

Users meet these messages in `spa plan`, in a Schedule's Degraded status and in Warning events,
so each one names the field (`spec.timeZone`) and says what to write instead. Parsing never
raises anything but `InvalidObject`, whatever the input: the controller relies on that to keep
one bad object from stopping the others.

Validation has two stages: the models check structure (types, enums, bounds, unknown fields),
then `compile_schedule` checks what depends on several fields (the time format depends on the
type, Weekly needs its days) and builds the engine's window.

The models are strict, like the CRD schema, and a document is validated as JSON: that is what
the API server receives, and in pydantic's JSON mode a strict enum still reads its string.
Messages are written here rather than taken from pydantic, so that they read the same
everywhere, say what to write instead ("did you mean 'endTime'?"), and never repeat more than a
few dozen characters of the input.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Annotated, Any, Literal, TypeVar, Union, assert_never, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from spa.api.resources import (
    GO_DURATION_PATTERN,
    CalendarReference,
    CapacityMode,
    ClusterCalendar,
    HolidayMode,
    Schedule,
    ScheduledPodAutoscaler,
    ScheduleSpec,
    ScheduleType,
    WeekdayName,
)
from spa.api.resources import (
    Calendar as CalendarObject,
)
from spa.api.window_types import WINDOW_TYPES, TimeFormat, listed, only_used_by, types_phrase
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
from spa.schedule.public_holidays import UnknownSubdivision
from spa.schedule.wallclock import (
    LOCAL_DATETIME_PATTERN,
    WELL_KNOWN_ZONES,
    zone_names,
    zones_abbreviated,
)

__all__ = [
    "SCALE_TO_ZERO_NEEDS",
    "CalendarLookup",
    "CompiledSchedule",
    "FieldError",
    "InvalidObject",
    "WrittenNumber",
    "annotation_field",
    "autoscaler_base",
    "autoscaler_capacity_lead",
    "autoscaler_lead",
    "calendar_dates",
    "capacity_lead_error",
    "compile_schedule",
    "described",
    "duration_seconds",
    "errors_against_autoscaler",
    "ignored_fields",
    "parse_calendar",
    "parse_schedule",
    "parse_scheduled_pod_autoscaler",
    "unknown_status_fields",
    "window_scale_to_zero_error",
]

Model = TypeVar("Model", ScheduledPodAutoscaler, Schedule, CalendarObject, ClusterCalendar)

CalendarLookup = Callable[[CalendarReference], "DateSet | str"]
"""The shared calendar a Schedule's reference names, as the engine's DateSet, or why there is
none (`ClusterCalendar "black-friday" not found`): spa.api.calendars makes these."""


def _no_calendars(reference: CalendarReference) -> DateSet | str:
    kind = reference.kind.value if reference.kind is not None else "Calendar"
    return f'{kind} "{reference.name}" not found'


class WrittenNumber(float):
    """An integer written beyond int64 (`minReplicas: 12345678901234567890123456789012`), which
    kubectl sends as a float64, with the text it was written as.

    `spa plan`'s reader (spa.plan.decoding) makes these so that a message shows the digits the
    user wrote rather than `1.2345678901234567e+31`; to everything else, JSON encoding and the
    models included, it is the float kubectl sends.
    """

    __slots__ = ("text",)
    text: str

    def __new__(cls, value: float, text: str) -> WrittenNumber:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __reduce__(self) -> tuple[type[WrittenNumber], tuple[float, str]]:  # copy, pickle
        return (WrittenNumber, (float(self), self.text))


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem: the dotted path of the field (None for the whole object) and what is wrong."""

    field: str | None
    message: str

    def __str__(self) -> str:
        return self.message if self.field is None else f"{self.field}: {self.message}"


def annotation_field(annotation: str) -> str:
    """Where an error about the annotation `annotation` points, as every FieldError names its
    field: `metadata.annotations["autoscaling.d-kuro.github.io/adopt"]`."""
    return f'metadata.annotations["{annotation}"]'


class InvalidObject(ValueError):
    """An object that cannot be used, with every problem found in it."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(str(error) for error in errors))
        self.errors = tuple(errors)


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

    def applied_window(self, default_lead: int) -> Window:
        """The window as it applies: moved by the Schedule's leadTime, else `default_lead`
        (its ScheduledPodAutoscaler's)."""
        return with_lead(self.window, default_lead if self.lead is None else self.lead)


def parse_scheduled_pod_autoscaler(document: Mapping[str, Any]) -> ScheduledPodAutoscaler:
    """A ScheduledPodAutoscaler from its JSON/YAML form, checked as a whole.

    Every problem is reported at once: if the document fails structurally, the checks that
    span fields (lead times, minReplicas against maxReplicas, the name's length) still run on
    the fields that are fine, as `parse_schedule` does for a Schedule."""
    try:
        autoscaler = _parse(ScheduledPodAutoscaler, document)
    except InvalidObject as invalid:
        reported = {error.field for error in invalid.errors}
        more = _autoscaler_also_wrong(document, reported) if isinstance(document, Mapping) else []
        if not more:
            raise
        raise InvalidObject([*invalid.errors, *more]) from None
    spec = autoscaler.spec.horizontal_pod_autoscaler_spec
    capacity = autoscaler.spec.capacity
    errors = _autoscaler_checks(
        name=autoscaler.metadata.name,
        lead_time=autoscaler.spec.lead_time,
        capacity_lead_time=None if capacity is None else capacity.lead_time,
        capacity_mode=None if capacity is None else (capacity.mode or CapacityMode.Auto),
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
    )
    if spec.min_replicas == 0 and not spec.scales_to_zero():
        errors.append(FieldError(_MIN_REPLICAS_FIELD, SCALE_TO_ZERO_NEEDS))
    if errors:
        raise InvalidObject(errors)
    return autoscaler


_MIN_REPLICAS_FIELD = "spec.horizontalPodAutoscalerSpec.minReplicas"

# The longest SPA name that its node capacity objects can carry (docs/schedules.md, "Node
# capacity"): the placeholder pods' label `capacity-for=<name>` takes a label value (63
# characters at most), and the CapacityBuffer's name `<name>-capacity` a name (253).
_LONGEST_NAME_WITH_PLACEHOLDERS = 63
_LONGEST_NAME_WITH_BUFFER = 253 - len("-capacity")


def _autoscaler_checks(
    *,
    name: object,
    lead_time: object,
    capacity_lead_time: object,
    capacity_mode: CapacityMode | None,
    min_replicas: object,
    max_replicas: object,
) -> list[FieldError]:
    """The checks of a ScheduledPodAutoscaler that span fields, each on values of the right
    type only (`_UNCHECKED` or anything else is skipped: already reported)."""
    errors: list[FieldError] = []
    lead = 0
    if isinstance(lead_time, str):
        read = _lead_seconds("spec.leadTime", lead_time)
        if isinstance(read, FieldError):
            errors.append(read)
        else:
            lead = read
    if isinstance(capacity_lead_time, str):
        capacity = _capacity_lead_seconds(capacity_lead_time, lead)
        if isinstance(capacity, FieldError):
            errors.append(capacity)
    if (
        isinstance(min_replicas, int)
        and isinstance(max_replicas, int)
        and min_replicas > max_replicas
    ):
        errors.append(
            FieldError(
                _MIN_REPLICAS_FIELD,
                f"must not be greater than maxReplicas ({max_replicas}), got {min_replicas}",
            )
        )
    if isinstance(name, str) and capacity_mode is not None:
        errors.extend(_capacity_name_errors(name, capacity_mode))
    return errors


def _capacity_name_errors(name: str, mode: CapacityMode) -> list[FieldError]:
    """A name the node capacity objects cannot carry: the API server would refuse every write
    of them, so the SPA is refused instead, with one message (docs/schedules.md, "Node
    capacity")."""
    if mode is CapacityMode.CapacityBuffer:
        if len(name) <= _LONGEST_NAME_WITH_BUFFER:
            return []
        return [
            FieldError(
                "metadata.name",
                f"must be at most {_LONGEST_NAME_WITH_BUFFER} characters with spec.capacity "
                f"(its CapacityBuffer is named <name>-capacity, at most 253 characters), got "
                f"{len(name):,}",
            )
        ]
    if len(name) <= _LONGEST_NAME_WITH_PLACEHOLDERS:
        return []
    pods = (
        "its placeholder pods carry"
        if mode is CapacityMode.Placeholder
        else "placeholder pods, which mode Auto uses where no CapacityBuffer API is served, carry"
    )
    return [
        FieldError(
            "metadata.name",
            f"must be at most {_LONGEST_NAME_WITH_PLACEHOLDERS} characters with spec.capacity "
            f"({pods} the label autoscaling.d-kuro.github.io/capacity-for=<name>, and a label "
            f"value is at most 63 characters), got {len(name):,}",
        )
    ]


def _autoscaler_also_wrong(
    document: Mapping[str, Any], reported: set[str | None]
) -> list[FieldError]:
    """The checks of `_autoscaler_checks` on the fields of a document that failed
    structurally, for those that did not: every problem is seen in one round of fixes."""

    def at(*path: str) -> object:
        value: object = document
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        field = ".".join(path)
        if any(wrong == field or (wrong or "").startswith(f"{field}.") for wrong in reported):
            return _UNCHECKED
        return value

    hpa = ("spec", "horizontalPodAutoscalerSpec")
    mode = at("spec", "capacity", "mode")
    capacity = at("spec", "capacity")
    capacity_mode = None
    if isinstance(capacity, Mapping) and (mode is None or mode in set(CapacityMode)):
        capacity_mode = CapacityMode(mode) if isinstance(mode, str) else CapacityMode.Auto
    minimum, maximum = at(*hpa, "minReplicas"), at(*hpa, "maxReplicas")
    return [
        error
        for error in _autoscaler_checks(
            name=at("metadata", "name"),
            lead_time=at("spec", "leadTime"),
            capacity_lead_time=at("spec", "capacity", "leadTime"),
            capacity_mode=capacity_mode,
            min_replicas=None if isinstance(minimum, bool) else minimum,
            max_replicas=None if isinstance(maximum, bool) else maximum,
        )
        if error.field not in reported
    ]


SCALE_TO_ZERO_NEEDS = (
    "must not be 0 without an Object or External metric in horizontalPodAutoscalerSpec.metrics "
    "(scale to zero: the API server requires such a metric, and its HPAScaleToZero feature "
    'gate; docs/schedules.md, "Scale to zero")'
)
"""Why minReplicas 0 is refused for an SPA whose metrics all come from the target's pods."""


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


def parse_schedule(document: Mapping[str, Any]) -> Schedule:
    """A Schedule from its JSON/YAML form; `compile_schedule` checks the window itself.

    If the document fails structurally, the window checks of `compile_schedule` still run on
    the fields that are fine, and their errors are reported too.
    """
    try:
        return _parse(Schedule, document)
    except InvalidObject as invalid:
        reported = {error.field for error in invalid.errors}
        more = _also_wrong(document, reported) if isinstance(document, Mapping) else []
        if not more:
            raise
        raise InvalidObject([*invalid.errors, *more]) from None


def unknown_status_fields(
    model: type[ScheduledPodAutoscaler | Schedule], document: Mapping[str, Any]
) -> list[FieldError]:
    """Unknown fields in the `status` of a document a user would create or update.

    The API server drops such a status (both kinds have a status subresource), so its values
    are never checked, but its strict field validation refuses a field the schema does not
    know, even there. The models are lenient about status for the controller's sake (a newer
    writer must not make an object unreadable); this is the check a manifest gets.
    """
    status = document.get("status")
    annotation = model.model_fields["status"].annotation
    errors: list[FieldError] = []
    pending: list[tuple[Any, object, str]] = [(annotation, status, "status")]
    while pending:
        declared, value, path = pending.pop()
        declared = _unwrap(declared)
        if isinstance(declared, type) and issubclass(declared, BaseModel):
            if not isinstance(value, Mapping):
                continue
            fields = {
                info.alias or name: info.annotation for name, info in declared.model_fields.items()
            }
            for key, child in value.items():
                if key in fields:
                    pending.append((fields[key], child, f"{path}.{key}"))
                else:
                    message = "unknown field" + _suggestion(str(key), fields)
                    errors.append(FieldError(f"{path}.{_shortened(str(key))}", message))
        elif get_origin(declared) is list and isinstance(value, list):
            element = get_args(declared)[0]
            pending.extend((element, child, f"{path}[{n}]") for n, child in enumerate(value))
    return errors[:_MOST_ERRORS_SHOWN]


def autoscaler_base(autoscaler: ScheduledPodAutoscaler) -> Base:
    spec = autoscaler.spec.horizontal_pod_autoscaler_spec
    return Base(min_replicas=spec.min_replicas, max_replicas=spec.max_replicas)


def autoscaler_lead(autoscaler: ScheduledPodAutoscaler) -> int:
    """The SPA's leadTime in seconds (0 when unset), the default of its Schedules.

    InvalidObject for one above 24h, which `parse_scheduled_pod_autoscaler` refuses anyway."""
    if autoscaler.spec.lead_time is None:
        return 0
    lead = _lead_seconds("spec.leadTime", autoscaler.spec.lead_time)
    if isinstance(lead, FieldError):
        raise InvalidObject([lead])
    return lead


def duration_seconds(text: str) -> int | None:
    """A duration the models' pattern accepted, in whole seconds, rounded up (the engine counts
    in seconds, and a lead time rounded down would make capacity late); None when it is too
    large to read at all (`go_duration_seconds`), which is above any field's limit."""
    total = go_duration_seconds(text)
    return None if total is None else math.ceil(total)


def _lead_seconds(field: str, text: str) -> int | FieldError:
    """A leadTime in seconds, or the error of `field`: above 24h, or too large to read."""
    seconds = duration_seconds(text)
    if seconds is not None and seconds <= MAX_LEAD_SECONDS:
        return seconds
    return FieldError(field, f"must be at most 24h, got {described(text)}")


def parse_calendar(document: Mapping[str, Any]) -> CalendarObject | ClusterCalendar:
    """A Calendar or ClusterCalendar from its JSON/YAML form (by its kind), checked as a
    whole: every date real, listed once, each range in order, the holidays' country known.
    A structural error does not hide those of the dates: they are checked on the fields that
    are fine, and reported together."""
    kind = document.get("kind") if isinstance(document, Mapping) else None
    parsed: CalendarObject | ClusterCalendar
    try:
        if kind == "ClusterCalendar":
            parsed = _parse(ClusterCalendar, document)
        else:
            parsed = _parse(CalendarObject, document)
    except InvalidObject as invalid:
        reported = {error.field for error in invalid.errors}
        more = _calendar_also_wrong(document, reported) if isinstance(document, Mapping) else []
        if not more:
            raise
        raise InvalidObject([*invalid.errors, *more]) from None
    calendar_dates(parsed)
    return parsed


def calendar_dates(calendar: CalendarObject | ClusterCalendar) -> DateSet:
    """The engine's named date set of a parsed calendar, or InvalidObject naming every bad
    field. Its name is `Kind/name`, as the skipped windows say it."""
    spec = calendar.spec
    errors: list[FieldError] = []
    days, ranges, holidays = _calendar_rules(
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


def _calendar_rules(
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


def _calendar_also_wrong(
    document: Mapping[str, Any], reported: set[str | None]
) -> list[FieldError]:
    """The date checks of a calendar that failed structurally, on the dates, ranges and
    holidays that did not: every problem is seen in one round of fixes."""
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        return []

    def fine(field: str) -> bool:
        return not any(
            wrong is not None and (wrong == field or wrong.startswith((f"{field}.", f"{field}[")))
            for wrong in reported
        )

    dates = spec.get("dates")
    ranges = spec.get("dateRanges")
    holidays = spec.get("holidays")
    errors: list[FieldError] = []
    _calendar_rules(
        dates=[
            (n, text)
            for n, text in enumerate(dates if isinstance(dates, list) else ())
            if isinstance(text, str) and fine(f"spec.dates[{n}]")
        ],
        ranges=[
            (n, pair["start"], pair["end"])
            for n, pair in enumerate(ranges if isinstance(ranges, list) else ())
            if isinstance(pair, Mapping)
            and isinstance(pair.get("start"), str)
            and isinstance(pair.get("end"), str)
            and fine(f"spec.dateRanges[{n}]")
        ],
        holidays=(holidays["country"], holidays.get("subdivision"))
        if isinstance(holidays, Mapping)
        and isinstance(holidays.get("country"), str)
        and isinstance(holidays.get("subdivision"), str | None)
        and fine("spec.holidays")
        else None,
        errors=errors,
    )
    return [error for error in errors if error.field not in reported]


def autoscaler_capacity_lead(autoscaler: ScheduledPodAutoscaler) -> int | None:
    """The SPA's capacity.leadTime in seconds, the default of its Schedules; None when it
    orders no node capacity. InvalidObject where `parse_scheduled_pod_autoscaler` refuses it."""
    if autoscaler.spec.capacity is None:
        return None
    capacity = _capacity_lead_seconds(
        autoscaler.spec.capacity.lead_time, autoscaler_lead(autoscaler)
    )
    if isinstance(capacity, FieldError):
        raise InvalidObject([capacity])
    return capacity


def _capacity_lead_seconds(text: str, lead: int) -> int | FieldError:
    """A capacity.leadTime in seconds, or the error of `spec.capacity.leadTime`: above 24h, or
    shorter than the pod lead `lead` of the same object (docs/schedules.md, "Node capacity":
    nodes ordered after the pods would come too late to help them)."""
    seconds = _lead_seconds(CAPACITY_LEAD_FIELD, text)
    if isinstance(seconds, FieldError) or seconds >= lead:
        return seconds
    return FieldError(CAPACITY_LEAD_FIELD, _shorter_than_lead(text, lead))


CAPACITY_LEAD_FIELD = "spec.capacity.leadTime"


def _shorter_than_lead(text: str, lead: int) -> str:
    return f"must be at least leadTime ({seconds_as_duration(lead)}), got {described(text)}"


def seconds_as_duration(seconds: int) -> str:
    """Whole seconds as the Go duration a user would write: 90 is 1m30s, 3600 is 1h, 0 is 0s."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


def capacity_lead_error(
    compiled: CompiledSchedule, autoscaler: ScheduledPodAutoscaler, *, owner: str
) -> FieldError | None:
    """A Schedule whose capacity lead, its own or its SPA's, is shorter than its pod lead, its
    own or its SPA's: nodes ordered after the pods could not help them. The controller and
    `spa plan` refuse the Schedule with this one message (docs/schedules.md, "Node capacity").
    A Schedule compiled with both of its own was checked by `compile_schedule`."""
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
    window, errors = _check_window(
        _WindowFields(
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
                else _Holidays(spec.holidays.country, spec.holidays.subdivision, spec.holidays.mode)
            ),
            shared=tuple(shared),
        )
    )
    errors.extend(reference_errors)
    lead: int | None = None
    if spec.lead_time is not None:
        read = _lead_seconds("spec.leadTime", spec.lead_time)
        if isinstance(read, FieldError):
            errors.append(read)
        else:
            lead = read
    capacity_lead: int | None = None
    if spec.capacity is not None:
        capacity = _capacity_lead_seconds(spec.capacity.lead_time, lead or 0)
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
    )


_UNCHECKED = object()


@dataclass(frozen=True, slots=True)
class _WindowFields:
    """The fields a window is built from. `_UNCHECKED` marks one whose structural error was
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
    holidays: _Holidays | object | None = None
    shared: tuple[CalendarRule, ...] = ()


@dataclass(frozen=True, slots=True)
class _Holidays:
    country: str
    subdivision: str | None
    mode: HolidayMode | None


def _check_window(fields: _WindowFields) -> tuple[Window | None, list[FieldError]]:
    errors: list[FieldError] = []

    def attempt(field: str, check: Any, value: Any) -> Any:
        if value is _UNCHECKED:  # already reported
            return None
        if value is None:
            if _required(fields.type, field):
                errors.append(FieldError(field, f"is required for a {fields.type} schedule"))
            return None
        try:
            return check(value)
        except WallClockError as error:
            hint = _midnight_hint(field, value, fields) or _time_form_hint(field, value)
            errors.append(FieldError(field, f"{error}{hint}"))
            return None

    def hours() -> tuple[Any, Any] | None:
        """startTime and endTime as times of day (both checked), if they and the zone are valid."""
        start = attempt("spec.startTime", parse_hour_minute, fields.start_time)
        end = attempt("spec.endTime", parse_hour_minute, fields.end_time)
        return None if start is None or end is None or zone is None else (start, end)

    def weekdays() -> tuple[Weekday, Weekday] | None:
        """startDayOfWeek and endDayOfWeek (both checked), if both are set and valid."""
        first = _weekday(fields.start_day, "spec.startDayOfWeek", errors, fields.type)
        last = _weekday(fields.end_day, "spec.endDayOfWeek", errors, fields.type)
        return None if first is None or last is None else (first, last)

    zone = attempt("spec.timeZone", _load_zone, fields.time_zone or "")
    window: Window | None = None
    errors.extend(_unused_fields(fields))
    # Each type's engine window; what each type requires and refuses is in
    # spa.api.window_types.
    match fields.type:
        case None:  # already reported
            pass
        case ScheduleType.Cron:
            expression = attempt("spec.schedule", CronExpression, fields.schedule)
            duration = attempt("spec.duration", parse_duration, fields.duration)
            if expression is not None and duration is not None and zone is not None:
                window = CronWindow(expression=expression, duration=duration, zone=zone)
        case ScheduleType.OneShot:
            start = attempt("spec.startTime", parse_local_datetime, fields.start_time)
            end = attempt("spec.endTime", parse_local_datetime, fields.end_time)
            if (start is None or end is None) and _ordered_wrongly(
                fields.start_time, fields.end_time
            ):
                # One is not a real date (30 February), but both have the format: the API server's
                # rule compares them as text (fixed width, so text order is time order), and so
                # does this, so that the plan reports what `kubectl apply` will.
                errors.append(
                    FieldError("spec.endTime", f"must be after startTime ({fields.start_time})")
                )
            if start is not None and end is not None and end <= start:
                errors.append(
                    FieldError("spec.endTime", f"must be after startTime ({fields.start_time})")
                )
            elif start is not None and end is not None and zone is not None:
                # Each end converted on its own, so that the one that cannot be is the one named.
                convertible = True
                for field, wall, text in (
                    ("spec.startTime", start, fields.start_time),
                    ("spec.endTime", end, fields.end_time),
                ):
                    try:
                        to_instant(wall, zone)
                    except (OverflowError, ValueError, OSError):
                        convertible = False
                        errors.append(
                            FieldError(
                                field,
                                f"'{text}' in {zone.key} falls outside the years 1 to 9999 in UTC",
                            )
                        )
                if convertible:
                    window = OneShotWindow(start=start, end=end, zone=zone)
        case ScheduleType.Daily:
            times = hours()
            if times is not None:
                window = RecurringWindow(start=times[0], end=times[1], zone=zone, days=None)
        case ScheduleType.Weekly:
            times, days = hours(), weekdays()
            if times is not None and days is not None:
                between = weekdays_between(*days)
                window = RecurringWindow(start=times[0], end=times[1], zone=zone, days=between)
        case ScheduleType.WeeklySpan:
            times, days = hours(), weekdays()
            if times is not None and days is not None:
                window = WeeklySpanWindow(days[0], times[0], days[1], times[1], zone)
        case _:
            assert_never(fields.type)
    calendar = _check_calendar(fields, errors)
    if window is not None and calendar is not None and not calendar.empty:
        window = CalendarWindow(window, calendar)
    if (
        fields.min_replicas is not None
        and fields.max_replicas is not None
        and fields.min_replicas > fields.max_replicas
    ):
        errors.append(
            FieldError(
                "spec.maxReplicas",
                f"must not be less than minReplicas ({fields.min_replicas}), "
                f"got {fields.max_replicas}",
            )
        )
    return window, errors


_LOCAL_DATETIME = re.compile(LOCAL_DATETIME_PATTERN)
_MIDNIGHT_AT_END = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T24:00")


def _midnight_hint(field: str, value: object, fields: _WindowFields) -> str:
    """How to write a time of `24:00` (midnight at the end of a day), which the API does not
    accept, for the type of the Schedule; nothing for any other value."""
    match fields.type:
        case None | ScheduleType.Cron:
            return ""
        case ScheduleType.OneShot:
            return _midnight_date_hint(value)
        case _ if value != "24:00":
            return ""
        case ScheduleType.Daily | ScheduleType.Weekly if field == "spec.endTime":
            # docs/schedules.md, "Crossing midnight" and "24 hours".
            rule = (
                "an endTime equal to startTime makes a 24-hour window"
                if fields.start_time in ("00:00", "0:00")
                else "an endTime earlier than startTime ends on the next day"
            )
            return f"; for a window that ends at midnight write 00:00 ({rule})"
        case ScheduleType.Daily:
            return "; for a window that starts at midnight write 00:00"
        case ScheduleType.WeeklySpan:
            where, name = ("ends", "endDayOfWeek")
            if field == "spec.startTime":
                where, name = ("starts", "startDayOfWeek")
            next_day = _day_after(fields.end_day if where == "ends" else fields.start_day)
            then = f"{name} {next_day}" if next_day else f"the day after {name}"
            return f"; for a window that {where} at midnight write 00:00 and {then}"
        case ScheduleType.Weekly:
            # A start at midnight at the end of each day is at 00:00 of the days after.
            first, last = _day_after(fields.start_day), _day_after(fields.end_day)
            then = (
                f"startDayOfWeek {first} and endDayOfWeek {last}"
                if first and last
                else "startDayOfWeek and endDayOfWeek one day later"
            )
            return f"; for a window that starts at midnight write 00:00 with {then}"
        case _:
            assert_never(fields.type)


# A time of day or a date-time as other formats write it: with seconds (`08:00:00`, a fraction
# too) or a UTC offset (`08:00+02:00`, `2026-03-08T08:00Z`), a space for the `T`.
_TIME_SHAPE = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ])?(?P<time>[0-9]{1,2}:[0-9]{2})"
    r"(?P<seconds>:[0-9]{2}(?:[.,][0-9]+)?)?(?P<offset>[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
_TIME_FIELDS = ("spec.startTime", "spec.endTime")


def _time_form_hint(field: str, value: object) -> str:
    """Why a startTime or endTime with seconds or a UTC offset is not of the form the API takes
    (HH:mm, or yyyy-MM-ddTHH:mm for a OneShot), and what to write: the seconds go, and the
    zone is `spec.timeZone`'s, never the time's own (docs/schedules.md, "Time zones");
    nothing for any other value."""
    found = _TIME_SHAPE.fullmatch(value) if isinstance(value, str) else None
    if field not in _TIME_FIELDS or found is None or not (found["seconds"] or found["offset"]):
        return ""
    date = found["date"][:10] + "T" if found["date"] else ""
    parts = []
    if found["seconds"]:
        parts.append("seconds")
    if found["offset"]:
        parts.append(f"a UTC offset ({found['offset']})")
    fix = f"write {date}{found['time']}"
    if found["offset"]:
        fix += " and give the zone in spec.timeZone (an IANA name such as Europe/Berlin)"
    return f"; it has {' and '.join(parts)}, which the API does not take: {fix}"


def _midnight_date_hint(value: object) -> str:
    """For `2026-12-31T24:00`: the next date at 00:00; nothing for any other value."""
    found = _MIDNIGHT_AT_END.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return ""
    try:
        day = parse_date(found[1])
        after = (day + timedelta(days=1)).isoformat()
    except (WallClockError, OverflowError):
        return ""
    return f"; midnight at the end of {day} is {after}T00:00: write that"


def _day_after(name: object) -> str | None:
    """The weekday after the one named, if `name` is one."""
    if not isinstance(name, str) or name not in Weekday.__members__:
        return None
    return Weekday((Weekday[name].value + 1) % 7).name


def _ordered_wrongly(start: object, end: object) -> bool:
    return (
        isinstance(start, str)
        and isinstance(end, str)
        and _LOCAL_DATETIME.match(start) is not None
        and _LOCAL_DATETIME.match(end) is not None
        and end <= start
    )


def _load_zone(name: str) -> Any:
    try:
        return load_zone(name)
    except WallClockError as error:
        raise WallClockError(f"{error}{_zone_hint(name)}") from None


# How many zones an abbreviation's message names before "and N more".
_ZONES_NAMED = 4


def _zone_hint(name: str) -> str:
    """What to write instead of an unknown zone: for a UTC offset (`UTC+1`, `+01:00`, `Z`),
    the zones with that offset; for a zone name in the wrong case, or for a typo, the closest
    name; for an abbreviation (CEST, PST), the zones that use it."""
    offset = _offset_hint(name)
    if offset is not None:
        return offset
    names = zone_names()
    if name.casefold() not in {zone.casefold() for zone in names}:
        users = zones_abbreviated(name) if len(name) <= 8 else ()
        if users:
            named = ", ".join(users[:_ZONES_NAMED])
            if len(users) > _ZONES_NAMED:
                named += f" and {len(users) - _ZONES_NAMED} more"
            return (
                f"; it is an abbreviation, used by {named}: write the IANA name of the zone you"
                " mean"
            )
    return _suggestion(name, names)


# A UTC offset written where a zone belongs: `Z`, `+01:00`, `-0530`, `UTC+1`, `GMT-5`.
_OFFSET = re.compile(
    r"(?i:z|(?:utc|gmt|z)?(?P<sign>[+-])(?P<hours>[0-9]{1,2})(?::?(?P<minutes>[0-9]{2}))?)\Z"
)
# The instants at which a place's standard offset is read: fixed, so that the same input gets
# the same message whenever it is checked.
_SEASONS = (datetime(2026, 1, 15, 12, tzinfo=UTC), datetime(2026, 7, 15, 12, tzinfo=UTC))


def _offset_hint(name: str) -> str | None:
    """For a UTC offset where a zone belongs: the Etc/GMT zone of that offset, whose sign is
    POSIX's and so the opposite of the offset's (Etc/GMT-1 is UTC+01:00), and a place on that
    standard offset (docs/schedules.md, "Time zones"). A suggestion by spelling offered a zone
    an hour off (`UTC+1`: 'UTC'; `Z`: 'NZ'). None for anything that is not an offset."""
    found = _OFFSET.fullmatch(name)
    if found is None:
        return None
    if found["sign"] is None:
        minutes = 0
    else:
        minutes = int(found["hours"]) * 60 + int(found["minutes"] or 0)
        minutes *= -1 if found["sign"] == "-" else 1
    if minutes == 0:
        return "; a UTC offset is not a zone: write UTC (or Etc/UTC)"
    hours, rest = divmod(abs(minutes), 60)
    shown = f"UTC{'+' if minutes > 0 else '-'}{hours:02d}:{rest:02d}"
    place = next((zone for zone in WELL_KNOWN_ZONES if _standard_minutes(zone) == minutes), None)
    if rest == 0 and -12 <= minutes // 60 <= 14:
        etc = f"Etc/GMT{'-' if minutes > 0 else '+'}{hours}"
        also = "" if place is None else f" or the zone of the place you mean, such as {place}"
        return (
            f"; a UTC offset is not a zone: use an IANA zone such as {etc} (the sign is "
            f"inverted: {etc} is {shown}){also}"
        )
    such = "" if place is None else f", such as {place}"
    return f"; a UTC offset is not a zone: use the IANA zone of the place you mean{such} ({shown})"


def _standard_minutes(zone: str) -> int:
    """The standard offset of `zone` in minutes east of UTC: the smaller of its offsets in
    January and in July (daylight saving time adds an hour in either hemisphere; tzdata's
    Europe/Dublin has a negative one in winter, which makes `dst()` useless here)."""
    offsets = [
        (instant.astimezone(load_zone(zone)).utcoffset() or timedelta(0)) for instant in _SEASONS
    ]
    return int(min(offsets).total_seconds()) // 60


def _weekday(
    name: str | object | None, field: str, errors: list[FieldError], kind: ScheduleType | None
) -> Weekday | None:
    if name is _UNCHECKED:
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


# The attributes of `_WindowFields` that hold the fields of the table of window types.
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


def _unused_fields(fields: _WindowFields) -> list[FieldError]:
    """The fields set that the type refuses (spa.api.window_types). The day fields of Daily
    and OneShot were always ignored (the original controller's manifests carry them), so they
    are not refused."""
    if fields.type is None:
        return []
    kind = WINDOW_TYPES[fields.type]
    errors: list[FieldError] = []
    for name in kind.not_used:
        value = getattr(fields, _ATTRIBUTES[name])
        if value in (None, "") or value is _UNCHECKED:
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


def _check_calendar(fields: _WindowFields, errors: list[FieldError]) -> Calendar | None:
    """The date rules (docs/schedules.md, "Calendars"), or None if one of them is invalid."""
    valid = True

    def date_of(field: str, value: object) -> Any:
        nonlocal valid
        if value is None or value is _UNCHECKED:
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
    elif fields.exclude_dates is _UNCHECKED:
        valid = False
    holidays = None
    mode = EngineHolidayMode.SKIP
    if isinstance(fields.holidays, _Holidays):
        try:
            holidays = PublicHolidays(fields.holidays.country, fields.holidays.subdivision)
        except WallClockError as error:
            field = "subdivision" if isinstance(error, UnknownSubdivision) else "country"
            errors.append(FieldError(f"spec.holidays.{field}", str(error)))
            valid = False
        if fields.holidays.mode is HolidayMode.Only:
            mode = EngineHolidayMode.ONLY
    elif fields.holidays is _UNCHECKED:
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


def _also_wrong(document: Mapping[str, Any], reported: set[str | None]) -> list[FieldError]:
    """The window errors of a Schedule that failed structurally, for the fields that did not:
    so that one round of fixes is enough, a user sees every problem at once."""
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        return []

    def value(name: str, kind: type | tuple[type, ...], allowed: Any = None) -> Any:
        raw = spec.get(name)
        if f"spec.{name}" in reported or raw is None:
            return _UNCHECKED if f"spec.{name}" in reported else None
        if not isinstance(raw, kind) or (allowed is not None and raw not in allowed):
            return _UNCHECKED
        return raw

    kind = spec.get("type")
    if "spec.type" in reported or not isinstance(kind, str) or kind not in set(ScheduleType):
        kind = None
    integers = (int,)
    minimum, maximum = value("minReplicas", integers), value("maxReplicas", integers)
    holidays = value("holidays", Mapping)
    if isinstance(holidays, Mapping):
        holidays = _holidays_of(holidays, reported)
    excluded = value("excludeDates", list)
    if isinstance(excluded, list) and not all(isinstance(day, str) for day in excluded):
        excluded = _UNCHECKED
    _, errors = _check_window(
        _WindowFields(
            type=ScheduleType(kind) if kind else None,
            start_time=value("startTime", str),
            end_time=value("endTime", str),
            start_day=value("startDayOfWeek", str, {"", *WeekdayName}),
            end_day=value("endDayOfWeek", str, {"", *WeekdayName}),
            time_zone=value("timeZone", str),
            min_replicas=minimum if isinstance(minimum, int) else None,
            max_replicas=maximum if isinstance(maximum, int) else None,
            schedule=value("schedule", str),
            duration=value("duration", str),
            start_date=value("startDate", str),
            end_date=value("endDate", str),
            exclude_dates=excluded,
            holidays=holidays,
        )
    )
    return [error for error in errors if error.field not in reported]


# Deeper than any field of the two kinds: anything below is wrong whatever it holds, and cutting
# it off keeps the JSON encoder and parser away from their recursion limits.
_DEEPEST_FIELD = 32

# Every field of a Kubernetes ObjectMeta (meta/v1): the API server refuses any other in
# metadata, while the models read only the few the controller needs.
_OBJECT_META = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)

# A list with thousands of bad items gets the first ones named, not a line each.
_MOST_ERRORS_SHOWN = 20

# metadata.name of a custom resource is a DNS subdomain, metadata.namespace a DNS label.
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*\Z")
_DNS_LABEL_ONLY = re.compile(rf"{_DNS_LABEL}\Z")


def _holidays_of(raw: Mapping[str, Any], reported: set[str | None]) -> _Holidays | object:
    country, subdivision, mode = raw.get("country"), raw.get("subdivision"), raw.get("mode")
    if any(field.startswith("spec.holidays") for field in reported if field) or not (
        isinstance(country, str)
        and (subdivision is None or isinstance(subdivision, str))
        and (mode is None or mode in set(HolidayMode))
    ):
        return _UNCHECKED
    return _Holidays(country, subdivision, HolidayMode(mode) if mode else None)


def _parse(model: type[Model], document: Mapping[str, Any]) -> Model:
    if not isinstance(document, Mapping):
        raise InvalidObject([FieldError(None, "the document is not a mapping (an object)")])
    errors = _metadata_errors(document)
    try:
        parsed = _validate(model, document)
    except ValidationError as error:
        raise _invalid(model, error, errors, document) from None
    except (TypeError, ValueError):
        raise InvalidObject(
            [FieldError(None, "holds a value JSON cannot carry (NaN, infinity or a non-text key)")]
        ) from None
    if errors:
        raise InvalidObject(errors)
    return parsed


def _validate(model: type[Model], document: Mapping[str, Any]) -> Model:
    try:
        return model.model_validate_json(json.dumps(document, allow_nan=False))
    except (RecursionError, ValidationError) as error:
        if not _too_deep(error):
            raise
    # Only now, as it is rarely needed: cut what lies below every field of the kinds (wrong
    # whatever it holds) so that the encoder and the parser stay within their recursion
    # limits, and validate again.
    pruned = _cut_below(document, _DEEPEST_FIELD)
    return model.model_validate_json(json.dumps(pruned, allow_nan=False))


def _too_deep(error: Exception) -> bool:
    if isinstance(error, RecursionError):
        return True
    assert isinstance(error, ValidationError)
    if error.error_count() != 1:  # a parse failure is the only error
        return False
    [detail] = error.errors(include_url=False, include_input=False)
    return detail["type"] == "json_invalid" and "recursion" in detail["msg"]


def _invalid(
    model: type[BaseModel],
    error: ValidationError,
    errors: list[FieldError],
    document: Mapping[str, Any],
) -> InvalidObject:
    """The errors of a failed validation, after those already found, in our words; the first
    ones only when there are many (a list with thousands of bad items)."""
    reported = {field.field for field in errors}
    details = error.errors(include_url=False, include_context=True, include_input=True)
    for detail in details[:_MOST_ERRORS_SHOWN]:
        found = _field_error(detail, model, _written_number(document, detail["loc"]))
        if found.field not in reported:
            errors.append(found)
    if len(details) > _MOST_ERRORS_SHOWN:
        hidden = len(details) - _MOST_ERRORS_SHOWN
        errors.append(FieldError(None, f"{hidden:,} more problems in this object not shown"))
    return InvalidObject(errors)


def _metadata_errors(document: Mapping[str, Any]) -> list[FieldError]:
    """What the API server checks in metadata before the schema: the name and namespace."""
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping):
        return [] if metadata is not None else [FieldError("metadata.name", "is required")]
    errors = [
        FieldError(
            f"metadata.{_shortened(str(key))}",
            "unknown field" + _suggestion(str(key), _OBJECT_META),
        )
        for key in metadata
        if key not in _OBJECT_META
    ][:_MOST_ERRORS_SHOWN]
    name = metadata.get("name")
    if name is None or name == "":
        errors.append(FieldError("metadata.name", "is required"))
    elif isinstance(name, str) and (len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
        errors.append(
            FieldError(
                "metadata.name",
                "must be at most 253 characters of lowercase letters, digits, '-' and '.', "
                f"starting and ending with a letter or digit, got {described(name)}",
            )
        )
    namespace = metadata.get("namespace")
    if (
        isinstance(namespace, str)
        and namespace
        and (len(namespace) > 63 or not _DNS_LABEL_ONLY.match(namespace))
    ):
        errors.append(
            FieldError(
                "metadata.namespace",
                "must be at most 63 characters of lowercase letters, digits and '-', starting "
                f"and ending with a letter or digit, got {described(namespace)}",
            )
        )
    return errors


def _cut_below(document: Mapping[str, Any], depth: int) -> object:
    """`document`, or a copy of it with every list and object deeper than `depth` emptied."""
    stack: list[tuple[object, int]] = [(document, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, Mapping | list):
            if level > depth:
                break
            children = value.values() if isinstance(value, Mapping) else value
            stack.extend((child, level + 1) for child in children)
    else:
        return document

    def cut(value: object, level: int) -> object:
        if isinstance(value, Mapping):
            if level > depth:
                return {}
            return {key: cut(child, level + 1) for key, child in value.items()}
        if isinstance(value, list):
            if level > depth:
                return []
            return [cut(child, level + 1) for child in value]
        return value

    return cut(document, 1)  # recursion bounded by `depth`


def _written_number(document: object, loc: tuple[int | str, ...]) -> WrittenNumber | None:
    """The value at `loc` in the document as it was read, if it is a `WrittenNumber`: the
    models saw it through JSON, as a plain float."""
    value = document
    for part in loc:
        in_mapping = isinstance(value, Mapping) and isinstance(part, str) and part in value
        in_list = isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)
        if not (in_mapping or in_list):
            return None
        value = value[part]  # type: ignore[index]
    return value if isinstance(value, WrittenNumber) else None


def _field_error(
    detail: ErrorDetails, model: type[BaseModel], written: WrittenNumber | None = None
) -> FieldError:
    """One pydantic error in our words; `written` is the input as the user wrote it, if the
    reader kept it."""
    loc = detail["loc"]
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    kind = detail["type"]
    value = detail.get("input") if written is None else written
    context = detail.get("ctx") or {}
    got = f", got {described(value)}"
    if kind == "extra_forbidden":
        names = _field_names(_annotation_at(model, loc[:-1]))
        message = "unknown field" + _suggestion(str(loc[-1]), names)
    elif kind == "missing":
        message = "is required"
    elif kind in _EXPECTED:
        units = _DURATION_UNITS.get(tuple(loc)) if kind == "string_type" else None
        hint = (
            (units and _duration_hint(units, value))
            or _hint(kind, value)
            or _date_hint(kind, loc, value)
        )
        message = f"must be {_EXPECTED[kind]}{got}{hint}"
    elif kind in ("enum", "literal_error"):
        choices = _choices(_annotation_at(model, loc))
        listed = ", ".join(choices) if choices else str(context.get("expected", ""))
        message = f"must be {listed}{got}" if len(choices) == 1 else f"must be one of {listed}{got}"
        if isinstance(value, str):
            message += _suggestion(value, choices)
    elif kind in _BOUNDS:
        word, key = _BOUNDS[kind]
        message = f"must be {word} {context.get(key)}{got}"
    elif kind == "string_too_long" and isinstance(value, str) and _time_form_hint(path, value):
        # A date-time with seconds or an offset: its form, rather than only its length.
        form = _TIME_SHAPE.fullmatch(value)
        time_format = TimeFormat.LOCAL_DATETIME
        if form is not None and form["date"] is None:
            time_format = TimeFormat.HOUR_MINUTE
        message = f"must be {time_format.described}{got}{_time_form_hint(path, value)}"
    elif kind == "string_too_long" and isinstance(value, str):
        message = f"must be at most {context.get('max_length')} characters, got {len(value):,}"
    elif kind == "too_long":
        noun = _ITEM_NOUNS.get(str(loc[-1]), "items") if loc else "items"
        actual = context.get("actual_length")
        message = f"must have at most {context.get('max_length')} {noun}" + (
            f", got {actual:,}" if isinstance(actual, int) else ""
        )
    elif kind == "string_too_short":
        minimum = context.get("min_length")
        message = "must not be empty" if minimum == 1 else f"needs {minimum} characters or more"
    elif kind == "value_error":
        message = f"{context.get('error', 'is not valid')}{got}"
    elif kind == "string_pattern_mismatch" and context.get("pattern") == GO_DURATION_PATTERN:
        message = (
            "must be a duration such as 90s, 5m or 1h30m (units h, m, s, ms, us, ns; "
            f"no sign, no spaces){got}"
        )
    else:
        message = f"is not valid{got}"
    return FieldError(path or None, message)


_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dict_type": "an object",
    "list_type": "a list",
}
# What the items of a bounded list are called in its message (`must have at most 366 dates`).
_ITEM_NOUNS = {"excludeDates": "dates"}
_BOUNDS = {
    "greater_than_equal": ("at least", "ge"),
    "less_than_equal": ("at most", "le"),
    "greater_than": ("more than", "gt"),
    "less_than": ("less than", "lt"),
}


# The fields that hold a Go duration as text (leadTime and capacity.leadTime of both kinds, a
# Cron Schedule's duration): the units a number written there may take, and the field's range
# in seconds.
_DURATION_UNITS: dict[tuple[int | str, ...], tuple[tuple[str, ...], int, int]] = {
    ("spec", "leadTime"): (("s", "m", "h"), 0, MAX_LEAD_SECONDS),
    ("spec", "capacity", "leadTime"): (("s", "m", "h"), 0, MAX_LEAD_SECONDS),
    ("spec", "duration"): (("m", "h"), 60, 744 * 3600),
}
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _duration_hint(field: tuple[tuple[str, ...], int, int], value: object) -> str:
    """For a plain number where a duration belongs (`leadTime: 600`, which YAML reads as an
    integer and the API server refuses, as the CRD types the field as a string): the
    durations to write instead, only those within the field's range, each with its plainer
    spelling (`600s (10m)`); nothing for other values."""
    units, low, high = field
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    text = repr(value)
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return ""
    if value == 0 and low == 0:
        return " (a duration needs a unit: write 0s)"
    written = []
    for unit in units:
        seconds = value * _UNIT_SECONDS[unit]
        if not low <= seconds <= high:
            continue
        plain = seconds_as_duration(int(seconds)) if seconds == int(seconds) else None
        same = plain is None or plain in (f"{text}{unit}", f"{int(value)}{unit}")
        written.append(f"{text}{unit}" if same else f"{text}{unit} ({plain})")
    if not written:
        return (
            f" (a duration needs a unit, such as {_EXAMPLES[units]}; "
            f"from {seconds_as_duration(low)} to {seconds_as_duration(high)})"
        )
    return f" (a duration needs a unit: write {listed(tuple(written))})"


_EXAMPLES = {("s", "m", "h"): "90s, 10m or 1h", ("m", "h"): "90m or 8h"}


# The Schedule's date fields (format: date in the CRD).
_DATE_FIELDS = frozenset({"startDate", "endDate", "excludeDates"})


def _date_hint(kind: str, loc: Sequence[int | str], value: object) -> str:
    """A list in a date field: the API server's check of `format: date` lets a list through
    (`endDate: [1]` is stored as written), so nothing but this check stops it before the
    controller refuses the Schedule; say so (docs/plan-input.md, "What only spa plan knows")."""
    if kind == "string_type" and isinstance(value, list) and _DATE_FIELDS & set(map(str, loc)):
        return " (the API server admits a list in a date field; the controller refuses it)"
    return ""


def _hint(kind: str, value: object) -> str:
    """What to change when YAML read the value as another type than the one wanted."""
    if kind == "string_type" and isinstance(value, bool):
        return " (YAML reads unquoted yes, no, on, off, y, n, true and false as booleans: quote it)"
    if kind == "string_type" and isinstance(value, int | float):
        return " (quote it to keep it text)"
    if kind in ("int_type", "int_parsing") and isinstance(value, str) and value.isdigit():
        # Up to 18 digits is an integer to kubectl; more than float64 holds is text.
        return " (write it without quotes)" if len(value) <= 18 else " (too large for a number)"
    if kind == "bool_type" and isinstance(value, str):
        return " (write true or false without quotes)"
    if kind.startswith("int_") and isinstance(value, WrittenNumber):
        return " (too large: kubectl sends an integer beyond 64 bits as a floating-point number)"
    return ""


def described(value: object) -> str:
    """The input, as a message shows it: short, and never the whole of a large value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, WrittenNumber):
        return _clipped(value.text, quoted=False)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _clipped(value, quoted=True)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return "a value of another type"


def _clipped(text: str, *, quoted: bool) -> str:
    """`text` (quoted, for a string value) as a message shows it: at most 40 characters, then
    how long it is."""
    shown = repr if quoted else str
    if len(text) <= 40:
        return shown(text)
    return f"{shown(text[:40])}... ({len(text):,} characters)"


def _shortened(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:40]}..."


def _suggestion(word: str, choices: Iterable[str]) -> str:
    """ "; did you mean 'X'?" for the choice closest to `word`, or nothing."""
    if len(word) > 64:
        return ""
    folded = {choice.casefold(): choice for choice in choices}
    match = folded.get(word.casefold())
    if match is None:
        close = difflib.get_close_matches(word.casefold(), list(folded), n=1, cutoff=0.6)
        match = folded[close[0]] if close else None
    return f"; did you mean '{match}'?" if match is not None and match != word else ""


def _unwrap(annotation: Any) -> Any:
    """The type inside Annotated[...] and Optional[...]."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [member for member in get_args(annotation) if member is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _annotation_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> Any:
    """The declared type at a pydantic error location, or None where it cannot be followed."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int) and get_origin(current) is list:
            current = get_args(current)[0]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            found = [
                info for name, info in current.model_fields.items() if part in (info.alias, name)
            ]
            if not found:
                return None
            current = found[0].annotation
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    return _unwrap(current)


def _field_names(annotation: Any) -> list[str]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [info.alias or name for name, info in annotation.model_fields.items()]
    return []


def _choices(annotation: Any) -> list[str]:
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return [str(member.value) for member in annotation]
    if get_origin(annotation) is Literal:
        return [str(value) for value in get_args(annotation)]
    return []
