"""A problem as a user reads it: `FieldError`, `InvalidObject`, and pydantic's errors in our
words.

Messages are written here rather than taken from pydantic, so that they read the same
everywhere, say what to write instead ("did you mean 'endTime'?"), and never repeat more than a
few dozen characters of the input (`described`).
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from spa.api.hpa import (
    ContainerResourceMetricSource,
    ExternalMetricSource,
    HorizontalPodAutoscalerSpec,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)
from spa.api.resources import (
    GO_DURATION_PATTERN,
    LEAD_TIME_PATTERN,
    CalendarHolidaysSpec,
    CalendarReference,
    CalendarSpec,
    ScheduleCapacitySpec,
    ScheduleSpec,
    ScheduleTargetRef,
    WeekdayName,
)
from spa.api.validation.hints import (
    TIME_SHAPE,
    country_hint,
    date_form_hint,
    is_date_field,
    number_hint,
    suggestion,
    time_form_hint,
)
from spa.api.window_types import TimeFormat, listed
from spa.schedule import MAX_LEAD_SECONDS

__all__ = [
    "MOST_ERRORS_SHOWN",
    "FieldError",
    "InvalidObject",
    "WrittenNumber",
    "annotation_field",
    "described",
    "invalid_object",
    "seconds_as_duration",
    "shortened",
    "unwrap",
]


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


def seconds_as_duration(seconds: int) -> str:
    """Whole seconds as the Go duration a user would write: 90 is 1m30s, 3600 is 1h, 0 is 0s."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


# A list with thousands of bad items gets the first ones named, not a line each.
MOST_ERRORS_SHOWN = 20


def invalid_object(
    model: type[BaseModel],
    error: ValidationError,
    errors: list[FieldError],
    document: Mapping[str, Any],
) -> InvalidObject:
    """The errors of a failed validation, after those already found, in our words; the first
    ones only when there are many (a list with thousands of bad items)."""
    reported = {field.field for field in errors}
    details = error.errors(include_url=False, include_context=True, include_input=True)
    spec = document.get("spec")
    one_shot = isinstance(spec, Mapping) and spec.get("type") == "OneShot"
    for detail in details[:MOST_ERRORS_SHOWN]:
        found = _field_error(
            detail, model, _written_number(document, detail["loc"]), one_shot=one_shot
        )
        if found.field not in reported:
            errors.append(found)
    if len(details) > MOST_ERRORS_SHOWN:
        hidden = len(details) - MOST_ERRORS_SHOWN
        errors.append(FieldError(None, f"{hidden:,} more problems in this object not shown"))
    return InvalidObject(errors)


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
    detail: ErrorDetails,
    model: type[BaseModel],
    written: WrittenNumber | None = None,
    *,
    one_shot: bool = False,
) -> FieldError:
    """One pydantic error in our words; `written` is the input as the user wrote it, if the
    reader kept it; `one_shot`: the object is a OneShot Schedule (its times are dates and
    times)."""
    loc = detail["loc"]
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    kind = detail["type"]
    value = detail.get("input") if written is None else written
    context = detail.get("ctx") or {}
    got = f", got {described(value)}"
    if kind == "extra_forbidden":
        parent = _annotation_at(model, loc[:-1])
        key = str(loc[-1])
        message = "unknown field" + (
            _UNKNOWN_FIELD_HINTS.get((parent, key))
            or _belongs_under(parent, key, loc[:-1])
            or suggestion(key, _field_names(parent))
        )
    elif kind == "missing":
        message = "is required"
    elif kind in _EXPECTED:
        units = _DURATION_UNITS.get(tuple(loc)) if kind == "string_type" else None
        hint = (
            (units and _duration_hint(units, value))
            or _hint(kind, value, path, one_shot=one_shot)
            or _date_hint(kind, loc, value)
        )
        message = f"must be {_EXPECTED[kind]}{got}{hint}"
    elif kind in ("enum", "literal_error"):
        annotation = _annotation_at(model, loc)
        choices = _choices(annotation)
        listed = ", ".join(choices) if choices else str(context.get("expected", ""))
        message = f"must be {listed}{got}" if len(choices) == 1 else f"must be one of {listed}{got}"
        days = _DAY_RANGE.fullmatch(value) if isinstance(value, str) else None
        if annotation is WeekdayName and days is not None:
            first, last = (_weekday(days[part]) for part in ("first", "last"))
            if first is not None and last is not None:
                message += f"; a range is two fields: startDayOfWeek {first}, endDayOfWeek {last}"
            else:
                message += suggestion(str(value), choices)
        elif isinstance(value, str):
            message += suggestion(value, choices)
        elif annotation is WeekdayName and type(value) is int and 0 <= value <= 7:
            # Cron's numbers: 0 and 7 are Sunday.
            message += f"; did you mean '{list(WeekdayName)[value % 7].value}'?"
    elif kind in _BOUNDS:
        word, key = _BOUNDS[kind]
        message = f"must be {word} {context.get(key)}{got}"
    elif kind == "string_too_long" and isinstance(value, str) and time_form_hint(path, value):
        # A date-time with seconds or an offset: its form, rather than only its length.
        form = TIME_SHAPE.fullmatch(value)
        time_format = TimeFormat.LOCAL_DATETIME
        if form is not None and form["date"] is None:
            time_format = TimeFormat.HOUR_MINUTE
        message = f"must be {time_format.described}{got}{time_form_hint(path, value)}"
    elif kind == "string_too_long" and isinstance(value, str) and path.endswith("holidays.country"):
        message = (
            f"must be the two capital letters of an ISO 3166-1 alpha-2 code{got}"
            f"{country_hint(value)}"
        )
    elif kind == "string_too_long" and isinstance(value, str) and is_date_field(path):
        # A date with a time, an offset or a long year: its form, rather than only its length.
        message = f"must be a date in the form yyyy-MM-dd{got}{date_form_hint(value)}"
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
    elif kind == "string_pattern_mismatch" and context.get("pattern") == LEAD_TIME_PATTERN:
        auto = isinstance(value, str) and value.strip().lower() == "auto" and value != "Auto"
        message = (
            "must be Auto or a duration such as 90s, 5m or 1h30m (units h, m, s, ms, us, ns; "
            f"no sign, no spaces){got}" + (" (write Auto, with a capital A)" if auto else "")
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


def _hint(kind: str, value: object, path: str, *, one_shot: bool) -> str:
    """What to change when YAML read the value as another type than the one wanted: quoting
    it where that makes it right, else what to write (`timeZone: +1`, `startTime: 9`)."""
    if kind == "string_type" and isinstance(value, bool):
        return " (YAML reads unquoted yes, no, on, off, y, n, true and false as booleans: quote it)"
    if kind == "string_type" and isinstance(value, int | float):
        instead = number_hint(path, value, one_shot=one_shot)
        return f" ({instead.removeprefix('; ')})" if instead else " (quote it to keep it text)"
    if kind in ("int_type", "int_parsing") and isinstance(value, str) and value.isdigit():
        # Up to 18 digits is an integer to kubectl; more than float64 holds is text.
        return " (write it without quotes)" if len(value) <= 18 else " (too large for a number)"
    if kind == "bool_type" and isinstance(value, str):
        return " (write true or false without quotes)"
    if kind.startswith("int_") and isinstance(value, WrittenNumber):
        return " (too large: kubectl sends an integer beyond 64 bits as a floating-point number)"
    return ""


_V2 = "that is the form of autoscaling/v2beta1; in autoscaling/v2 write"
_TARGET_HINTS = {
    "targetAverageUtilization": f"; {_V2} target: {{type: Utilization, averageUtilization: N}}",
    "targetAverageValue": f"; {_V2} target: {{type: AverageValue, averageValue: Q}}",
    "targetValue": f"; {_V2} target: {{type: Value, value: Q}}",
    "metricName": f"; {_V2} metric: {{name: NAME}}",
    "metricSelector": f"; {_V2} metric: {{name: NAME, selector: ...}}",
}
_WHOLE_WEEK_DAYS = (
    "; a Weekly window's days are a range, startDayOfWeek to endDayOfWeek (Monday and Friday "
    "for the working week)"
)
_CALENDAR_MODE = (
    "; a calendar has no mode: each Schedule that refers to it says Skip or Only, in its "
    "spec.calendars (name: ..., mode: Only)"
)

# Fields a newcomer writes that the API has elsewhere or in another form: what to write
# instead, where a suggestion by spelling would mislead (`namespace` is not a misspelt
# `name`) or say nothing of why.
_UNKNOWN_FIELD_HINTS: dict[tuple[Any, str], str] = {
    (ScheduleTargetRef, "namespace"): (
        "; a Schedule applies to a ScheduledPodAutoscaler of its own namespace: create the "
        "Schedule in that namespace"
    ),
    (CalendarReference, "namespace"): (
        "; a Calendar serves the Schedules of its own namespace only: refer to one there, or "
        "to a ClusterCalendar (kind: ClusterCalendar), which serves every namespace"
    ),
    (CalendarHolidaysSpec, "mode"): _CALENDAR_MODE,
    (CalendarSpec, "mode"): _CALENDAR_MODE,
    **{(ScheduleSpec, name): _WHOLE_WEEK_DAYS for name in ("days", "daysOfWeek", "weekdays")},
    (ScheduleCapacitySpec, "mode"): (
        "; the capacity mode is the ScheduledPodAutoscaler's (its spec.capacity.mode), for all "
        "its Schedules; a Schedule sets only its own capacity.leadTime"
    ),
    (ScheduleSpec, "leadTimeBounds"): (
        "; the bounds of leadTime: Auto are the ScheduledPodAutoscaler's (its "
        "spec.leadTimeBounds), for all its Schedules"
    ),
    (HorizontalPodAutoscalerSpec, "targetCPUUtilizationPercentage"): (
        "; that is the field of autoscaling/v1; in autoscaling/v2 write metrics: [{type: "
        "Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: N}}}]"
    ),
    **{
        (source, name): hint
        for source, names in (
            (ResourceMetricSource, ("targetAverageUtilization", "targetAverageValue")),
            (ContainerResourceMetricSource, ("targetAverageUtilization", "targetAverageValue")),
            (PodsMetricSource, ("metricName", "targetAverageValue")),
            (ObjectMetricSource, ("metricName", "targetValue")),
            (
                ExternalMetricSource,
                ("metricName", "metricSelector", "targetValue", "targetAverageValue"),
            ),
        )
        for name in names
        for hint in (_TARGET_HINTS[name],)
    },
}


# Days written as a range in one field (`Mon-Fri`, `Monday to Friday`).
_DAY_RANGE = re.compile(
    r"(?P<first>[A-Za-z]{2,})\s*(?:-|\u2013|to|through|\.\.)\s*(?P<last>[A-Za-z]{2,})"
)


def _weekday(text: str) -> str | None:
    """The weekday `text` abbreviates or names (any case), if one."""
    folded = text.casefold()
    found = [day.value for day in WeekdayName if day.value.casefold().startswith(folded)]
    return found[0] if len(found) == 1 else None


def _belongs_under(parent: Any, key: str, where: tuple[int | str, ...]) -> str | None:
    """For a field written one level too high (a Schedule's `type` beside `spec`, an SPA's
    `minReplicas` beside `horizontalPodAutoscalerSpec`): where it belongs, if exactly one
    object field of `parent` has a field of that name; None otherwise."""
    if not (isinstance(parent, type) and issubclass(parent, BaseModel)):
        return None
    homes = [
        info.alias or name
        for name, info in parent.model_fields.items()
        if key in _field_names(unwrap(info.annotation))
    ]
    if len(homes) != 1:
        return None
    home = ""
    for part in (*where, homes[0]):
        home += f"[{part}]" if isinstance(part, int) else (f".{part}" if home else str(part))
    return f"; it belongs under {home}: {home}.{key}"


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


def shortened(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:40]}..."


def unwrap(annotation: Any) -> Any:
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
        current = unwrap(current)
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
    return unwrap(current)


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
