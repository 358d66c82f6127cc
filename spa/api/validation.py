"""Turning untrusted documents into models, with every problem addressed to its field.

Users meet these messages in `spa plan`, in a Schedule's Degraded status and in Warning events,
so each one names the field (`spec.timeZone`) and says what to write instead. Parsing never
raises anything but `InvalidObject`, whatever the input: the controller relies on that to keep
one bad object from stopping the others.

Validation has two stages: the models check structure (types, enums, bounds, unknown fields),
then `compile_schedule` checks what depends on several fields (the time format depends on the
type, Weekly needs its days) and builds the engine's window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from spa.api.resources import (
    Schedule,
    ScheduledPodAutoscaler,
    ScheduleSpec,
    ScheduleType,
    WeekdayName,
)
from spa.schedule import (
    Base,
    OneShotWindow,
    RecurringWindow,
    WallClockError,
    Weekday,
    Window,
    load_zone,
    parse_hour_minute,
    parse_local_datetime,
    weekdays_between,
)

__all__ = [
    "CompiledSchedule",
    "FieldError",
    "InvalidObject",
    "autoscaler_base",
    "compile_schedule",
    "parse_schedule",
    "parse_scheduled_pod_autoscaler",
]

Model = TypeVar("Model", ScheduledPodAutoscaler, Schedule)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem: the dotted path of the field (None for the whole object) and what is wrong."""

    field: str | None
    message: str

    def __str__(self) -> str:
        return self.message if self.field is None else f"{self.field}: {self.message}"


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


def parse_scheduled_pod_autoscaler(document: Mapping[str, Any]) -> ScheduledPodAutoscaler:
    """A ScheduledPodAutoscaler from its JSON/YAML form, checked as a whole."""
    autoscaler = _parse(ScheduledPodAutoscaler, document)
    spec = autoscaler.spec.horizontal_pod_autoscaler_spec
    if spec.min_replicas is not None and spec.min_replicas > spec.max_replicas:
        raise InvalidObject(
            [
                FieldError(
                    "spec.horizontalPodAutoscalerSpec.minReplicas",
                    f"must not be greater than maxReplicas ({spec.max_replicas}), "
                    f"got {spec.min_replicas}",
                )
            ]
        )
    return autoscaler


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


def autoscaler_base(autoscaler: ScheduledPodAutoscaler) -> Base:
    spec = autoscaler.spec.horizontal_pod_autoscaler_spec
    return Base(min_replicas=spec.min_replicas, max_replicas=spec.max_replicas)


def compile_schedule(spec: ScheduleSpec) -> CompiledSchedule:
    """The engine's window for a Schedule spec, or InvalidObject naming every bad field."""
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
        )
    )
    if errors or window is None:
        raise InvalidObject(errors or [FieldError("spec", "is not a valid schedule")])
    return CompiledSchedule(
        window=window,
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
        suspend=spec.suspend,
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


def _check_window(fields: _WindowFields) -> tuple[Window | None, list[FieldError]]:
    errors: list[FieldError] = []

    def attempt(field: str, check: Any, value: Any) -> Any:
        if value is _UNCHECKED:
            return None
        try:
            return check(value)
        except WallClockError as error:
            errors.append(FieldError(field, str(error)))
            return None

    zone = attempt("spec.timeZone", load_zone, fields.time_zone or "")
    window: Window | None = None
    if fields.type is ScheduleType.OneShot:
        start = attempt("spec.startTime", parse_local_datetime, fields.start_time)
        end = attempt("spec.endTime", parse_local_datetime, fields.end_time)
        if start is not None and end is not None and end <= start:
            errors.append(
                FieldError("spec.endTime", f"must be after startTime ({fields.start_time})")
            )
        elif start is not None and end is not None and zone is not None:
            try:
                window = OneShotWindow(start=start, end=end, zone=zone)
            except (OverflowError, ValueError, OSError):
                errors.append(FieldError("spec.startTime", "is outside the supported years"))
    elif fields.type is not None:
        start_of_day = attempt("spec.startTime", parse_hour_minute, fields.start_time)
        end_of_day = attempt("spec.endTime", parse_hour_minute, fields.end_time)
        days = None
        if fields.type is ScheduleType.Weekly:
            first = _weekday(fields.start_day, "spec.startDayOfWeek", errors)
            last = _weekday(fields.end_day, "spec.endDayOfWeek", errors)
            if first is not None and last is not None:
                days = weekdays_between(first, last)
        if (
            start_of_day is not None
            and end_of_day is not None
            and zone is not None
            and (fields.type is ScheduleType.Daily or days is not None)
        ):
            window = RecurringWindow(start=start_of_day, end=end_of_day, zone=zone, days=days)
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


def _weekday(name: str | object | None, field: str, errors: list[FieldError]) -> Weekday | None:
    if name is _UNCHECKED:
        return None
    if not name:
        errors.append(FieldError(field, "is required for a Weekly schedule (Sunday to Saturday)"))
        return None
    return Weekday[str(name)]


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
    if "spec.type" in reported or kind not in {member.value for member in ScheduleType}:
        kind = None
    integers = (int,)
    minimum, maximum = value("minReplicas", integers), value("maxReplicas", integers)
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
        )
    )
    return [error for error in errors if error.field not in reported]


def _parse(model: type[Model], document: Mapping[str, Any]) -> Model:
    if not isinstance(document, Mapping):
        raise InvalidObject([FieldError(None, "the document is not a mapping (an object)")])
    try:
        parsed = model.model_validate(document)
    except ValidationError as error:
        raise InvalidObject([_field_error(detail) for detail in error.errors()]) from None
    if not parsed.metadata.name:
        raise InvalidObject([FieldError("metadata.name", "is required")])
    return parsed


def _field_error(detail: ErrorDetails) -> FieldError:
    path = ""
    for part in detail["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    kind = detail["type"]
    if kind == "extra_forbidden":
        message = "unknown field"
    elif kind == "missing":
        message = "is required"
    else:
        message = detail["msg"].removeprefix("Value error, ")
        message = message[:1].lower() + message[1:]
        if isinstance(detail.get("input"), str | int | float | bool) and kind != "value_error":
            message += f", got {detail['input']!r}"
    return FieldError(path or None, message)
