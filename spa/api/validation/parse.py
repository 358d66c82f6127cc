"""Reading untrusted documents into models, every problem reported at once.

Parsing never raises anything but `InvalidObject`, whatever the input: the controller relies on
that to keep one bad object from stopping the others. The models are strict, like the CRD
schema, and a document is validated as JSON: that is what the API server receives, and in
pydantic's JSON mode a strict enum still reads its string. A document that fails structurally
still gets the checks that span fields (spa.api.validation.compile) on the fields that are
fine, so that one round of fixes is enough.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from spa.api.resources import Calendar as CalendarObject
from spa.api.resources import (
    CapacityMode,
    ClusterCalendar,
    HolidayMode,
    Schedule,
    ScheduledPodAutoscaler,
    ScheduleType,
    WeekdayName,
)
from spa.api.validation.compile import (
    UNCHECKED,
    HolidayFields,
    WindowFields,
    calendar_dates,
    calendar_rules,
    capacity_lead_seconds,
    check_window,
    lead_seconds,
)
from spa.api.validation.hints import suggestion
from spa.api.validation.leads import bounds_errors, is_auto
from spa.api.validation.messages import (
    MOST_ERRORS_SHOWN,
    FieldError,
    InvalidObject,
    described,
    invalid_object,
    shortened,
    unwrap,
)

__all__ = [
    "SCALE_TO_ZERO_NEEDS",
    "parse_calendar",
    "parse_schedule",
    "parse_scheduled_pod_autoscaler",
    "unknown_status_fields",
]

Model = TypeVar("Model", ScheduledPodAutoscaler, Schedule, CalendarObject, ClusterCalendar)


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
    errors.extend(bounds_errors(autoscaler.spec.lead_time_bounds, "spec.leadTimeBounds"))
    if capacity is not None:
        errors.extend(bounds_errors(capacity.lead_time_bounds, "spec.capacity.leadTimeBounds"))
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
    type only (`UNCHECKED` or anything else is skipped: already reported)."""
    errors: list[FieldError] = []
    lead = 0
    if isinstance(lead_time, str) and not is_auto(lead_time):
        read = lead_seconds("spec.leadTime", lead_time)
        if isinstance(read, FieldError):
            errors.append(read)
        else:
            lead = read
    if isinstance(capacity_lead_time, str) and not is_auto(capacity_lead_time):
        # With leadTime: Auto, the capacity lead in force is raised to the pod lead instead
        # (docs/schedules.md, "Auto lead times"): only its range is checked.
        capacity = capacity_lead_seconds(capacity_lead_time, 0 if is_auto(lead_time) else lead)
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
            return UNCHECKED
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
        declared = unwrap(declared)
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
                    message = "unknown field" + suggestion(str(key), fields)
                    errors.append(FieldError(f"{path}.{shortened(str(key))}", message))
        elif get_origin(declared) is list and isinstance(value, list):
            element = get_args(declared)[0]
            pending.extend((element, child, f"{path}[{n}]") for n, child in enumerate(value))
    return errors[:MOST_ERRORS_SHOWN]


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
    calendar_rules(
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


def _also_wrong(document: Mapping[str, Any], reported: set[str | None]) -> list[FieldError]:
    """The window errors of a Schedule that failed structurally, for the fields that did not:
    so that one round of fixes is enough, a user sees every problem at once."""
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        return []

    def value(name: str, kind: type | tuple[type, ...], allowed: Any = None) -> Any:
        raw = spec.get(name)
        if f"spec.{name}" in reported or raw is None:
            return UNCHECKED if f"spec.{name}" in reported else None
        if not isinstance(raw, kind) or (allowed is not None and raw not in allowed):
            return UNCHECKED
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
        excluded = UNCHECKED
    _, errors = check_window(
        WindowFields(
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


# metadata.name of a custom resource is a DNS subdomain, metadata.namespace a DNS label.
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"


_DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*\Z")


_DNS_LABEL_ONLY = re.compile(rf"{_DNS_LABEL}\Z")


def _holidays_of(raw: Mapping[str, Any], reported: set[str | None]) -> HolidayFields | object:
    country, subdivision, mode = raw.get("country"), raw.get("subdivision"), raw.get("mode")
    if any(field.startswith("spec.holidays") for field in reported if field) or not (
        isinstance(country, str)
        and (subdivision is None or isinstance(subdivision, str))
        and (mode is None or mode in set(HolidayMode))
    ):
        return UNCHECKED
    return HolidayFields(country, subdivision, HolidayMode(mode) if mode else None)


def _parse(model: type[Model], document: Mapping[str, Any]) -> Model:
    if not isinstance(document, Mapping):
        raise InvalidObject([FieldError(None, "the document is not a mapping (an object)")])
    errors = _metadata_errors(document)
    try:
        parsed = _validate(model, document)
    except ValidationError as error:
        raise invalid_object(model, error, errors, document) from None
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


def _metadata_errors(document: Mapping[str, Any]) -> list[FieldError]:
    """What the API server checks in metadata before the schema: the name and namespace."""
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping):
        return [] if metadata is not None else [FieldError("metadata.name", "is required")]
    errors = [
        FieldError(
            f"metadata.{shortened(str(key))}",
            "unknown field" + suggestion(str(key), _OBJECT_META),
        )
        for key in metadata
        if key not in _OBJECT_META
    ][:MOST_ERRORS_SHOWN]
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
