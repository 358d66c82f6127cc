"""One row per window type: the fields it needs, the fields it refuses, the form of its times.

What a Schedule of each `type` must and must not carry used to be written four times: in the
controller's validation, in the CRD's CEL rules, in the plan's description of a window and in
the docs. This table is now the one place: `spa.api.validation.compile` reads it for what is
required and what is not used, `spa.api.crd` generates the type-dependent CEL rules from it,
and tests/unit/api/test_window_types.py checks that validation, the CEL rules and
docs/schedules.md agree with it. A new window type is a row here, its engine window
(spa.schedule) and its `match` arm in validation and in spa.plan.schedules: mypy's
exhaustiveness check (`typing.assert_never`) names every place a type is dispatched on.

Fields are named as in the API (camelCase), as messages and CEL rules name them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from spa.api.resources import ScheduleType
from spa.schedule.wallclock import HOUR_MINUTE_PATTERN, LOCAL_DATETIME_PATTERN

__all__ = [
    "BLANK_IS_UNSET",
    "WINDOW_FIELDS",
    "WINDOW_TYPES",
    "TimeFormat",
    "WindowType",
    "listed",
    "only_used_by",
    "refusing",
    "requiring",
    "types_phrase",
]


class TimeFormat(Enum):
    """The form of `startTime` and `endTime`: its pattern, its name in the docs, and how a
    message describes it."""

    HOUR_MINUTE = (HOUR_MINUTE_PATTERN, "HH:mm", "HH:mm (00:00 to 23:59)")
    LOCAL_DATETIME = (
        LOCAL_DATETIME_PATTERN,
        "yyyy-MM-ddTHH:mm",
        "yyyy-MM-ddTHH:mm (e.g. 2026-03-08T09:00)",
    )

    def __init__(self, pattern: str, written: str, described: str) -> None:
        self.pattern = pattern
        self.written = written
        self.described = described


# The fields whose presence depends on the type. The day fields take "" for unset (manifests
# exported from the original controller carry it).
WINDOW_FIELDS = (
    "startTime",
    "endTime",
    "startDayOfWeek",
    "endDayOfWeek",
    "schedule",
    "duration",
    "startDate",
    "endDate",
)
BLANK_IS_UNSET = frozenset({"startDayOfWeek", "endDayOfWeek"})


@dataclass(frozen=True, slots=True)
class WindowType:
    """What a Schedule of one type carries. A field of `WINDOW_FIELDS` in neither `required`
    nor `not_used` is optional, or in `ignored` (the day fields of Daily and OneShot always
    were)."""

    type: ScheduleType
    description: str
    """One line: when the window is active; docs/schedules.md's table of the types says the
    same (in Markdown, as here)."""
    time_format: TimeFormat | None
    """The form of startTime and endTime; None for a type that does not use them."""
    required: tuple[str, ...]
    not_used: tuple[str, ...] = ()
    """Fields refused when set: they would mean nothing for this type."""
    not_used_because: str = ""
    """Why, in the message of a field in `not_used` that other types do use."""
    ignored: tuple[str, ...] = ()
    """Fields accepted but meaning nothing for this type (the day fields of Daily and OneShot,
    which the original controller's manifests carry): `spa plan` warns of one that is set."""
    ignored_because: str = ""
    """Why, in that warning."""

    @property
    def ordered_as_text(self) -> bool:
        """Whether endTime must be after startTime as text: true of a fixed-width date-time,
        whose text order is time order (an HH:mm end before its start ends the next day)."""
        return self.time_format is TimeFormat.LOCAL_DATETIME


_NOT_CRON = ("schedule", "duration")
_DAYS = ("startDayOfWeek", "endDayOfWeek")

WINDOW_TYPES: Mapping[ScheduleType, WindowType] = MappingProxyType(
    {
        ScheduleType.Weekly: WindowType(
            ScheduleType.Weekly,
            "from `startTime` to `endTime` on each day from `startDayOfWeek` to `endDayOfWeek`",
            TimeFormat.HOUR_MINUTE,
            required=("startTime", "endTime", "startDayOfWeek", "endDayOfWeek"),
            not_used=_NOT_CRON,
        ),
        ScheduleType.Daily: WindowType(
            ScheduleType.Daily,
            "from `startTime` to `endTime` each day",
            TimeFormat.HOUR_MINUTE,
            required=("startTime", "endTime"),
            not_used=_NOT_CRON,
            ignored=_DAYS,
            ignored_because="it is active every day",
        ),
        ScheduleType.OneShot: WindowType(
            ScheduleType.OneShot,
            "once, from the start to the end date-time",
            TimeFormat.LOCAL_DATETIME,
            required=("startTime", "endTime"),
            not_used=(*_NOT_CRON, "startDate", "endDate"),
            not_used_because="it has its own dates",
            ignored=_DAYS,
            ignored_because="its startTime and endTime are dates and times",
        ),
        ScheduleType.WeeklySpan: WindowType(
            ScheduleType.WeeklySpan,
            "one continuous window a week, from `startDayOfWeek` `startTime` to the next "
            "`endDayOfWeek` `endTime`",
            TimeFormat.HOUR_MINUTE,
            required=("startTime", "endTime", "startDayOfWeek", "endDayOfWeek"),
            not_used=_NOT_CRON,
        ),
        ScheduleType.Cron: WindowType(
            ScheduleType.Cron,
            "a window of `duration` from each time `schedule` matches",
            None,
            required=("schedule", "duration"),
            not_used=("startTime", "endTime", "startDayOfWeek", "endDayOfWeek"),
            not_used_because="its windows start when schedule matches and last duration",
        ),
    }
)


_MISSING = [kind.value for kind in ScheduleType if kind not in WINDOW_TYPES]
if _MISSING:  # a new ScheduleType member: give it its row above
    raise RuntimeError(f"spa.api.window_types has no row for {', '.join(_MISSING)}")


def requiring(field: str) -> tuple[ScheduleType, ...]:
    """The types that require `field`, in the enum's order."""
    return tuple(kind for kind in ScheduleType if field in WINDOW_TYPES[kind].required)


def refusing(field: str) -> tuple[ScheduleType, ...]:
    """The types that refuse `field`, in the enum's order."""
    return tuple(kind for kind in ScheduleType if field in WINDOW_TYPES[kind].not_used)


def only_used_by(field: str) -> tuple[ScheduleType, ...] | None:
    """The types that use `field`, if fewer of them use it than refuse it: a message then says
    `is only used by a Cron schedule` rather than naming the type that refuses it."""
    refused = refusing(field)
    users = tuple(kind for kind in ScheduleType if kind not in refused)
    return users if len(users) < len(refused) else None


def listed(names: tuple[str, ...], last: str = "or") -> str:
    """`a`, `a or b`, `a, b or c` (`last` is the word before the last name)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


def types_phrase(kinds: tuple[ScheduleType, ...]) -> str:
    """`a Cron schedule`, `a Weekly, Daily, OneShot or WeeklySpan schedule`."""
    return f"a {listed(tuple(kind.value for kind in kinds))} schedule"
