"""Pause and override for incidents: the two annotations on a ScheduledPodAutoscaler, and the
one rule of what they mean at an instant (docs/api.md, "Annotations"; docs/operations.md,
"Incidents: pause and override").

Why annotations, and why here: during an incident an operator must hold the HPA without a
pull request, yet the spec stays what Git says. Annotations can be written with one merge
patch (`kubectl spa pause`, `override`, `resume`) and told apart by a GitOps tool, and the
controller never writes them. The rule lives in spa.api because three readers must agree on
it: the controller's pure decision, `kubectl spa status` and `spa plan --from-cluster`, and
spa.api is the layer all of them may import. It is pure: the instant is an argument.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from spa.api.resources import GO_DURATION_PATTERN, GROUP
from spa.api.validation.messages import FieldError, annotation_field, described
from spa.schedule import format_instant, go_duration_seconds

__all__ = [
    "INDEFINITE",
    "MAX_FOR_SECONDS",
    "MAX_REPLICAS",
    "OVERRIDE_ANNOTATION",
    "PAUSED_UNTIL_ANNOTATION",
    "Incident",
    "Override",
    "Pause",
    "describe_override",
    "describe_pause",
    "incident_at",
    "override_value",
    "parse_for",
    "pause_value",
]

PAUSED_UNTIL_ANNOTATION = f"{GROUP}/paused-until"
OVERRIDE_ANNOTATION = f"{GROUP}/override"
# The value of paused-until for a pause without an end (until `kubectl spa resume`).
INDEFINITE = "indefinite"
# The HPA's own limits on its bounds (minReplicas >= 1 without the HPAScaleToZero gate).
MIN_REPLICAS = 1
MAX_REPLICAS = 2**31 - 1
# `--for` at most 31 days, as a Schedule's `duration`: an incident measure is short, and a
# longer hold belongs in Git (or in an indefinite pause, which says so).
MAX_FOR_SECONDS = 31 * 24 * 3600

_OVERRIDE_KEYS = ("min", "max", "until")
# RFC 3339 with seconds and an offset: what `datetime.fromisoformat` reads too, less the
# forms RFC 3339 does not have (no offset, a week date, hours alone).
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


@dataclass(frozen=True, slots=True)
class Pause:
    """The controller leaves the HPA alone until `until` (epoch seconds; None: until resumed)."""

    until: int | None


@dataclass(frozen=True, slots=True)
class Override:
    """The HPA holds these bounds instead of the schedule's until `until` (epoch seconds)."""

    min_replicas: int
    max_replicas: int
    until: int


@dataclass(frozen=True, slots=True)
class Incident:
    """What the annotations of one SPA mean at one instant.

    `pause` and `override` are those in force; `expired_pause` and `expired_override` those
    whose annotation is still there but whose end has come (the controller never removes an
    annotation: it is the user's, or their GitOps tool's). `errors` name the annotation of
    each malformed value, which is then ignored: the schedule keeps applying.
    """

    pause: Pause | None = None
    override: Override | None = None
    expired_pause: Pause | None = None
    expired_override: Override | None = None
    errors: tuple[FieldError, ...] = ()

    @property
    def wake_at(self) -> int | None:
        """The next instant at which this changes by itself: the earliest end in force."""
        ends = [
            until
            for until in (
                self.pause.until if self.pause is not None else None,
                self.override.until if self.override is not None else None,
            )
            if until is not None
        ]
        return min(ends) if ends else None


def incident_at(annotations: Mapping[str, str] | None, *, base_max: int, instant: int) -> Incident:
    """The pause and override of `annotations` at `instant` (epoch seconds).

    A pause or an override is in force while `instant` is before its end, so it ends exactly
    at its `until` second. An override without `max` holds max(min, `base_max`), the SPA's
    base maxReplicas (docs/api.md, "Annotations")."""
    annotations = annotations or {}
    errors: list[FieldError] = []
    pause = expired_pause = None
    override = expired_override = None
    if (text := annotations.get(PAUSED_UNTIL_ANNOTATION)) is not None:
        read = _pause(text)
        if isinstance(read, FieldError):
            errors.append(read)
        elif read.until is None or instant < read.until:
            pause = read
        else:
            expired_pause = read
    if (text := annotations.get(OVERRIDE_ANNOTATION)) is not None:
        found = _override(text, base_max=base_max)
        if isinstance(found, FieldError):
            errors.append(found)
        elif instant < found.until:
            override = found
        else:
            expired_override = found
    return Incident(
        pause=pause,
        override=override,
        expired_pause=expired_pause,
        expired_override=expired_override,
        errors=tuple(errors),
    )


def parse_for(text: str) -> int:
    """Seconds of a `--for` duration: a Go duration such as 90m, 2h or 1h30m (read as
    leadTime and a Schedule's duration are), rounded up to whole seconds, more than 0 and at
    most 744h. ValueError says why not."""
    if re.fullmatch(GO_DURATION_PATTERN, text) is None:
        raise ValueError(
            f"{described(text)} is not a duration: write it as Go does, such as 90m, 2h or 1h30m"
        )
    total = go_duration_seconds(text)  # None: too large to read, far above the limit
    if total is None or not 0 < total <= MAX_FOR_SECONDS:
        raise ValueError(f"must be more than 0 and at most 744h (31 days), got {described(text)}")
    return math.ceil(total)


def pause_value(until: int | None) -> str:
    """The paused-until annotation's value for a pause until `until` (None: indefinite)."""
    return INDEFINITE if until is None else format_instant(until)


def override_value(*, min_replicas: int, max_replicas: int | None, until: int) -> str:
    """The override annotation's value (`max` left out: max(min, the base maxReplicas))."""
    bounds = f"min={min_replicas}" + (f",max={max_replicas}" if max_replicas is not None else "")
    return f"{bounds},until={format_instant(until)}"


def describe_pause(pause: Pause) -> str:
    """How status, Events and `kubectl spa status` say a pause, in the same words."""
    end = "until resumed" if pause.until is None else f"until {format_instant(pause.until)}"
    return f"paused {end}"


def describe_override(override: Override) -> str:
    """How status, Events and `kubectl spa status` say an override, in the same words."""
    return (
        f"overridden to minReplicas {override.min_replicas}, maxReplicas "
        f"{override.max_replicas} until {format_instant(override.until)}"
    )


def _pause(text: str) -> Pause | FieldError:
    if text.strip() == INDEFINITE:
        return Pause(None)
    until = _instant(text)
    if until is None:
        return FieldError(
            annotation_field(PAUSED_UNTIL_ANNOTATION),
            f"must be an RFC 3339 time {_WITHIN} such as 2026-11-25T15:00:00Z, or "
            f"{INDEFINITE!r}; got {described(text)}",
        )
    return Pause(until)


def _override(text: str, *, base_max: int) -> Override | FieldError:
    """`min=N[,max=M],until=RFC3339`, keys in any order, each once."""
    name = annotation_field(OVERRIDE_ANNOTATION)
    fields: dict[str, str] = {}
    for part in text.split(","):
        key, equals, value = part.partition("=")
        key = key.strip()
        if not equals or key not in _OVERRIDE_KEYS or key in fields:
            return FieldError(
                name,
                "must be min=N,max=M,until=TIME (max optional), such as "
                f"min=20,max=40,until=2026-11-25T15:00:00Z; got {described(text)}",
            )
        fields[key] = value.strip()
    if "min" not in fields or "until" not in fields:
        missing = "min" if "min" not in fields else "until"
        return FieldError(name, f"{missing} is required; got {described(text)}")
    minimum = _replicas(fields["min"])
    if minimum is None:
        return FieldError(
            name,
            f"min must be an integer from {MIN_REPLICAS} to {MAX_REPLICAS}; "
            f"got {described(fields['min'])}",
        )
    maximum = max(minimum, base_max)
    if "max" in fields:
        given = _replicas(fields["max"])
        if given is None or given < minimum:
            return FieldError(
                name,
                f"max must be an integer from min ({minimum}) to {MAX_REPLICAS}; "
                f"got {described(fields['max'])}",
            )
        maximum = given
    until = _instant(fields["until"])
    if until is None:
        return FieldError(
            name,
            f"until must be an RFC 3339 time {_WITHIN} such as 2026-11-25T15:00:00Z; "
            f"got {described(fields['until'])}",
        )
    return Override(minimum, maximum, until)


def _replicas(text: str) -> int | None:
    if re.fullmatch(r"[0-9]{1,10}", text) is None:
        return None
    value = int(text)
    return value if MIN_REPLICAS <= value <= MAX_REPLICAS else None


# A time of another year in UTC (9999-12-31T23:00:00-05:00 is in the year 10000) could be
# neither compared with the schedule's instants nor written back (docs/schedules.md, "The end
# of the calendar").
_WITHIN = "within the years 1 to 9999 in UTC"


def _instant(text: str) -> int | None:
    """Epoch seconds of an RFC 3339 time with its offset (`Z` or `+09:00`), rounded up to the
    second so that nothing ends before the time written; None when it is not one, or is not
    within the years 1 to 9999 in UTC."""
    text = text.strip()
    if _RFC3339.fullmatch(text) is None:
        return None
    try:
        moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
        return math.ceil(moment.astimezone(UTC).timestamp())
    except (ValueError, OverflowError):
        return None
