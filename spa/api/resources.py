"""The custom resources: ScheduledPodAutoscaler, Schedule, and the shared calendars Calendar
and ClusterCalendar (docs/api.md).

Field names, enums and optionality follow the original Go controller's
`autoscaling.d-kuro.github.io/v1` API, so manifests written for it parse unchanged; the status
fields after `condition` and `lastTransitionTime` are this project's additions.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from spa.api.base import ApiModel, LenientModel
from spa.api.hpa import HorizontalPodAutoscalerSpec, MinReplicas, Replicas

__all__ = [
    "API_VERSION",
    "AUTO_LEAD_TIME",
    "CALENDAR_KIND",
    "CLUSTER_CALENDAR_KIND",
    "GO_DURATION_PATTERN",
    "GROUP",
    "LEAD_TIME_PATTERN",
    "MAX_WINDOWS",
    "SCHEDULED_POD_AUTOSCALER",
    "SCHEDULE_KIND",
    "VERSION",
    "Calendar",
    "CalendarHolidaysSpec",
    "CalendarKind",
    "CalendarReference",
    "CalendarSpec",
    "CapacityMode",
    "CapacitySpec",
    "ClusterCalendar",
    "Condition",
    "DateRange",
    "HolidayMode",
    "HolidaysSpec",
    "LeadInForce",
    "LeadTimeBounds",
    "ObjectMeta",
    "OwnerReference",
    "Schedule",
    "ScheduleCapacitySpec",
    "ScheduleCondition",
    "ScheduleSpec",
    "ScheduleStatus",
    "ScheduleTargetRef",
    "ScheduleType",
    "ScheduledPodAutoscaler",
    "ScheduledPodAutoscalerCondition",
    "ScheduledPodAutoscalerSpec",
    "ScheduledPodAutoscalerStatus",
    "WeekdayName",
    "WindowRecord",
]

GROUP = "autoscaling.d-kuro.github.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
SCHEDULED_POD_AUTOSCALER = "ScheduledPodAutoscaler"
SCHEDULE_KIND = "Schedule"
CALENDAR_KIND = "Calendar"
CLUSTER_CALENDAR_KIND = "ClusterCalendar"


# Go's duration syntax (Kubernetes' metav1.Duration), unsigned, with the ASCII units: 90s, 5m,
# 1h30m, 1.5h. The CRD and the parser use this one pattern; the range is checked apart.
GO_DURATION_PATTERN = r"^(0|([0-9]+([.][0-9]+)?(h|m|s|ms|us|ns))+)$"
Duration = Annotated[str, Field(max_length=32, pattern=GO_DURATION_PATTERN)]

AUTO_LEAD_TIME = "Auto"
"""The leadTime that is learned from the measured windows (docs/schedules.md, "Auto lead
times") rather than written as a duration."""
# A lead time: a duration as above, or Auto. The CRD and the parser use this one pattern.
LEAD_TIME_PATTERN = (
    f"^({AUTO_LEAD_TIME}|{GO_DURATION_PATTERN.removeprefix('^').removesuffix('$')})$"
)
LeadTime = Annotated[str, Field(max_length=32, pattern=LEAD_TIME_PATTERN)]


class OwnerReference(LenientModel):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(LenientModel):
    """The parts of metadata this project reads."""

    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    generation: int | None = None
    resource_version: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None


class Condition(LenientModel):
    """A standard `metav1.Condition`."""

    type: str
    status: Literal["True", "False", "Unknown"]
    last_transition_time: str
    reason: str
    message: str = ""
    observed_generation: int | None = None


class ScheduledPodAutoscalerCondition(StrEnum):
    Available = "Available"
    Degraded = "Degraded"


class CapacityMode(StrEnum):
    """How node capacity is ordered ahead of a window (docs/schedules.md, "Node capacity")."""

    Auto = "Auto"
    CapacityBuffer = "CapacityBuffer"
    Placeholder = "Placeholder"


class LeadTimeBounds(ApiModel):
    """The bounds of an Auto lead time (docs/schedules.md, "Auto lead times")."""

    min: Duration | None = None
    """The shortest lead Auto may learn (Go duration; 0 to 24h; default 0): a fixed floor."""
    max: Duration | None = None
    """The longest lead Auto may learn (Go duration; 0 to 24h; default 30m), so that a broken
    target cannot move the raise hours early; at least min."""


class CapacitySpec(ApiModel):
    """Node capacity ordered ahead of each window, before its pods (docs/schedules.md, "Node
    capacity")."""

    lead_time: LeadTime
    """How long before each window's start to order node capacity for the pods the window
    will add (Go duration such as 10m; 0 to 24h; at least leadTime), for the Schedules that
    set no capacity.leadTime themselves. Auto: learned from how long the pods of recent
    windows waited for nodes (docs/schedules.md, "Auto lead times"; default 3m until
    measured)."""
    lead_time_bounds: LeadTimeBounds | None = None
    """The bounds of capacity.leadTime: Auto, for this SPA and its Schedules (default 0 to
    30m)."""
    mode: CapacityMode | None = None
    """CapacityBuffer (a CapacityBuffer of the autoscaling.x-k8s.io API, which Karpenter and
    cluster-autoscaler serve), Placeholder (low-priority pause pods) or Auto (default: a
    CapacityBuffer where the API server serves the API, else placeholders)."""


class ScheduleCapacitySpec(ApiModel):
    """A Schedule's own node capacity lead."""

    lead_time: LeadTime
    """How long before this window's start to order node capacity (Go duration; 0 to 24h; at
    least the window's leadTime; or Auto, learned within the ScheduledPodAutoscaler's
    capacity.leadTimeBounds). Default: the ScheduledPodAutoscaler's capacity.leadTime."""


class ScheduledPodAutoscalerSpec(ApiModel):
    """The desired state: the base spec of the HorizontalPodAutoscaler."""

    horizontal_pod_autoscaler_spec: HorizontalPodAutoscalerSpec
    """A complete autoscaling/v2 HorizontalPodAutoscalerSpec: the base spec of the HPA."""
    lead_time: LeadTime | None = None
    """How long before each window's start its values take effect (Go duration such as 90s,
    5m or 1h30m; 0 to 24h; default 0), for the Schedules that set no leadTime themselves.
    Auto: learned from how long the target took to be Ready in recent windows
    (docs/schedules.md, "Auto lead times"; default 2m until measured)."""
    lead_time_bounds: LeadTimeBounds | None = None
    """The bounds of leadTime: Auto, for this SPA and its Schedules (default 0 to 30m)."""
    capacity: CapacitySpec | None = None
    """Node capacity ordered ahead of each window (docs/schedules.md, "Node capacity"); unset:
    none."""
    scale_up_immediately: bool | None = None
    """When a window raises minReplicas above the target's replicas, also raise the target
    through its /scale subresource at once instead of waiting for the HPA controller's next
    sync (never down, never above maxReplicas, never from 0 unless minReplicas rises from 0).
    Unset means true."""


MAX_WINDOWS = 10
"""status.windows keeps the last this many window starts (docs/api.md, "status.windows")."""

# Status strings are plain strings in the models (the values are listed in docs/api.md), and no
# field of an entry is required: a newer controller adding an outcome, or an entry somebody
# else wrote, must not make an SPA unreadable; an entry without its boundary, Schedule or
# outcome is ignored.
StatusText = Annotated[str, Field(max_length=64)]
Timestamp = Annotated[str, Field(max_length=40)]


class LeadInForce(LenientModel):
    """A lead time in force and where it comes from (docs/schedules.md, "Auto lead times")."""

    seconds: int | None = None
    """The lead, in seconds."""
    source: StatusText | None = None
    """Fixed (written as a duration), Default (Auto before any window was measured) or
    Learned (Auto, from status.windows)."""
    explanation: Annotated[str, Field(max_length=128)] | None = None
    """In words: "fixed 5m", "default 2m until measured", "learned: p90 of 8 windows 38 s +
    15 s"."""


class WindowRecord(LenientModel):
    """One window start and how ready the target was for it (docs/api.md, "status.windows")."""

    schedule: Annotated[str, Field(max_length=253)] | None = None
    """The Schedule whose window started."""
    boundary: Timestamp | None = None
    """B: when the window starts (RFC 3339, UTC), before any lead."""
    min_replicas: int | None = None
    """The window's minReplicas: Ready means this many ready replicas."""
    lead: LeadInForce | None = None
    """The pod lead in force for this window."""
    capacity_lead: LeadInForce | None = None
    """The node capacity lead in force for this window, when one applies."""
    raised_at: Timestamp | None = None
    """When the HPA's minReplicas was raised to the window's (unset on an entry made when node
    capacity was held, until the raise)."""
    replicas_at: Timestamp | None = None
    """When the target's spec.replicas reached the window's minimum."""
    ready_at: Timestamp | None = None
    """When the target's status.readyReplicas reached the window's minimum."""
    capacity_held_at: Timestamp | None = None
    """When node capacity was first held for the window (capacity lead only)."""
    capacity_released_at: Timestamp | None = None
    """When that capacity was handed over to the window's pods or released."""
    nodes_ready_at: Timestamp | None = None
    """When the ordered capacity stood on nodes: its placeholder pods all Ready (not measured
    for a CapacityBuffer)."""
    pods_waited_seconds: int | None = None
    """The longest time one of the window's new pods waited for a node (Pending,
    unschedulable), in seconds from its creation to its binding: measured when capacity was
    held for the window and nodesReadyAt was not, where the controller may list pods."""
    ready_seconds: int | None = None
    """Ready relative to the boundary, in seconds: negative is early (Ready at B-42 s)."""
    outcome: StatusText | None = None
    """Early (Ready by B), Late (Ready after B, before the window ended), Missed (not Ready
    before the window ended) or Pending (being measured)."""
    reason: StatusText | None = None
    """Why a window was missed: NotReadable, NoTarget, NoReadyReplicas, Paused, MaxReplicas,
    Overridden, NotScaled, Quota, FailedCreate, PodsPending or NotReady; on a Pending window,
    what holds it back so far (Paused, MaxReplicas, Overridden)."""
    message: Annotated[str, Field(max_length=256)] | None = None
    """The reason in words."""


class ScheduledPodAutoscalerStatus(LenientModel):
    """What the controller observed and applied; written by the controller only."""

    condition: ScheduledPodAutoscalerCondition | None = None
    """Available or Degraded."""
    last_transition_time: str | None = None
    """When condition last changed."""
    conditions: list[Condition] | None = None
    """Standard conditions; type Ready says whether the HPA has the desired spec, type
    ImmediateScaleUp how the last immediate scale-up went (scaleUpImmediately), types Paused
    and Overridden whether a pause or an override holds (the annotations below)."""
    observed_generation: int | None = None
    """The generation last acted on."""
    min_replicas: int | None = None
    """The minReplicas in force on the HPA now (base, scheduled or overridden; while
    paused, what the HPA keeps)."""
    max_replicas: int | None = None
    """The maxReplicas in force on the HPA now (base, scheduled or overridden; while
    paused, what the HPA keeps)."""
    active_schedules: list[str] | None = None
    """Names of the Schedules active now, sorted."""
    next_transition_time: str | None = None
    """When the effective values or the active Schedules next change (RFC 3339, UTC)."""
    lead_time: LeadInForce | None = None
    """The SPA's leadTime in force now and where it comes from (with leadTime: Auto)."""
    capacity_lead_time: LeadInForce | None = None
    """The SPA's capacity.leadTime in force now and where it comes from (with Auto)."""
    windows: Annotated[list[WindowRecord], Field(max_length=MAX_WINDOWS)] | None = None
    """The last window starts, newest first, at most 10, and how ready the target was for
    each (docs/api.md, "status.windows"). Informational: no condition depends on it."""


class ScheduledPodAutoscaler(ApiModel):
    api_version: Literal["autoscaling.d-kuro.github.io/v1"] = "autoscaling.d-kuro.github.io/v1"
    kind: Literal["ScheduledPodAutoscaler"] = "ScheduledPodAutoscaler"
    metadata: ObjectMeta = ObjectMeta()
    spec: ScheduledPodAutoscalerSpec
    status: ScheduledPodAutoscalerStatus | None = None


class ScheduleType(StrEnum):
    Weekly = "Weekly"
    Daily = "Daily"
    OneShot = "OneShot"
    WeeklySpan = "WeeklySpan"
    Cron = "Cron"


class HolidayMode(StrEnum):
    Skip = "Skip"
    Only = "Only"


class WeekdayName(StrEnum):
    Sunday = "Sunday"
    Monday = "Monday"
    Tuesday = "Tuesday"
    Wednesday = "Wednesday"
    Thursday = "Thursday"
    Friday = "Friday"
    Saturday = "Saturday"


def _blank_is_unset(value: object) -> object:
    # Manifests exported from the original controller may carry "" for an unused weekday.
    return None if value == "" else value


OptionalWeekday = Annotated[WeekdayName | None, BeforeValidator(_blank_is_unset)]


class ScheduleTargetRef(ApiModel):
    """The ScheduledPodAutoscaler, in the Schedule's own namespace, that the window applies to."""

    name: Annotated[str, Field(min_length=1, max_length=253)]
    """Name of the ScheduledPodAutoscaler."""
    api_version: Literal["autoscaling.d-kuro.github.io/v1"] | None = None
    kind: Literal["ScheduledPodAutoscaler"] | None = None


class CalendarHolidaysSpec(ApiModel):
    """Public holidays of a country, as the `holidays` library defines them (observed days
    included); the same as a Schedule's holidays, without its mode."""

    country: Annotated[str, Field(max_length=2)]
    """ISO 3166-1 alpha-2 code, such as DE, JP or US."""
    subdivision: Annotated[str, Field(max_length=32)] | None = None
    """A state, province or region of the country, such as BY for Bavaria; unset means the
    holidays of the whole country."""


class HolidaysSpec(CalendarHolidaysSpec):
    """Public holidays of a country, as the `holidays` library defines them (observed days
    included)."""

    mode: HolidayMode | None = None
    """Skip (default): windows starting on a holiday do not happen. Only: only those happen."""


class CalendarKind(StrEnum):
    Calendar = "Calendar"
    ClusterCalendar = "ClusterCalendar"


class CalendarReference(ApiModel):
    """A shared calendar whose dates the Schedule skips, or the only dates it happens on."""

    kind: CalendarKind | None = None
    """Calendar (default: in the Schedule's own namespace) or ClusterCalendar."""
    name: Annotated[str, Field(min_length=1, max_length=253)]
    """Name of the Calendar or ClusterCalendar."""
    mode: HolidayMode | None = None
    """Skip (default): windows starting on one of the calendar's dates do not happen. Only:
    only those happen (with several Only calendars, on a date of at least one of them)."""


class ScheduleSpec(ApiModel):
    """A time window and the replica bounds that apply during it."""

    scale_target_ref: ScheduleTargetRef
    type: ScheduleType
    """Weekly, Daily, OneShot, WeeklySpan or Cron."""
    start_time: Annotated[str, Field(max_length=16)] | None = None
    """HH:mm for Weekly, Daily and WeeklySpan, yyyy-MM-ddTHH:mm for OneShot, in timeZone;
    required except for Cron."""
    end_time: Annotated[str, Field(max_length=16)] | None = None
    """HH:mm for Weekly, Daily and WeeklySpan, yyyy-MM-ddTHH:mm for OneShot, in timeZone;
    required except for Cron."""
    start_day_of_week: OptionalWeekday = None
    """First day of a Weekly window, or the day a WeeklySpan starts; ignored by Daily and
    OneShot."""
    end_day_of_week: OptionalWeekday = None
    """Last day of a Weekly window (inclusive, may wrap past Saturday), or the day a
    WeeklySpan ends; ignored by Daily and OneShot."""
    schedule: Annotated[str, Field(max_length=128)] | None = None
    """Cron only: a 5-field cron expression (minute hour day-of-month month day-of-week) or
    a macro such as @daily, in timeZone; a window of `duration` starts at each match."""
    duration: Annotated[str, Field(max_length=32)] | None = None
    """Cron only: how long each window lasts, a duration such as 1h30m, from 1m to 744h."""
    exclude_dates: (
        Annotated[list[Annotated[str, Field(max_length=10)]], Field(max_length=366)] | None
    ) = None
    """Dates (yyyy-MM-dd) in timeZone on which no window starts."""
    holidays: HolidaysSpec | None = None
    """Public holidays on which no window starts (mode Skip) or the only days on which
    windows start (mode Only)."""
    calendars: Annotated[list[CalendarReference], Field(max_length=16)] | None = None
    """Shared calendars (Calendar, ClusterCalendar) whose dates no window starts on (mode
    Skip) or the only dates windows start on (mode Only). A Schedule referring to one that
    does not exist or is invalid does not apply (Degraded) until it does."""
    start_date: Annotated[str, Field(max_length=10)] | None = None
    """yyyy-MM-dd in timeZone: no window starts before this date. Not for OneShot."""
    end_date: Annotated[str, Field(max_length=10)] | None = None
    """yyyy-MM-dd in timeZone: no window starts after this date (inclusive); once it has passed
    and the last window has ended, the Schedule is Completed. Not for OneShot."""
    time_zone: Annotated[str, Field(max_length=64)] | None = None
    """IANA time zone such as Asia/Tokyo; default UTC. Case-sensitive."""
    min_replicas: MinReplicas | None = None
    """minReplicas while the window is active; unset leaves the base value. 0 (scale to zero)
    needs an Object or External metric on the ScheduledPodAutoscaler and the API server's
    HPAScaleToZero feature gate."""
    max_replicas: Replicas | None = None
    """maxReplicas while the window is active; unset leaves the base value."""
    lead_time: LeadTime | None = None
    """How long before its start the window's values take effect (Go duration such as 90s,
    5m or 1h30m; 0 to 24h; or Auto, learned within the ScheduledPodAutoscaler's
    leadTimeBounds); the end is unchanged. Default: the ScheduledPodAutoscaler's leadTime,
    else 0."""
    capacity: ScheduleCapacitySpec | None = None
    """This window's node capacity lead; unset: the ScheduledPodAutoscaler's capacity."""
    suspend: bool = False
    """A suspended Schedule never applies."""
    description: Annotated[str, Field(max_length=1024)] | None = None
    """Free text."""


class ScheduleCondition(StrEnum):
    Available = "Available"
    Progressing = "Progressing"
    Suspend = "Suspend"
    Completed = "Completed"
    Degraded = "Degraded"


class ScheduleStatus(LenientModel):
    """What the controller observed; written by the controller only."""

    condition: ScheduleCondition | None = None
    """Available (not active now), Progressing (active and applied), Suspend, Completed (a
    OneShot whose end, or a Schedule whose endDate, has passed) or Degraded (invalid or could
    not be applied)."""
    last_transition_time: str | None = None
    """When condition last changed."""
    message: str | None = None
    """Why, for Degraded."""
    observed_generation: int | None = None
    """The generation last acted on."""
    next_transition_time: str | None = None
    """When the window next starts or ends (RFC 3339, UTC)."""


class Schedule(ApiModel):
    api_version: Literal["autoscaling.d-kuro.github.io/v1"] = "autoscaling.d-kuro.github.io/v1"
    kind: Literal["Schedule"] = "Schedule"
    metadata: ObjectMeta = ObjectMeta()
    spec: ScheduleSpec
    status: ScheduleStatus | None = None


DateText = Annotated[str, Field(max_length=10)]


class DateRange(ApiModel):
    """Every date from `start` to `end`, both included."""

    start: DateText
    """yyyy-MM-dd: the first date."""
    end: DateText
    """yyyy-MM-dd: the last date (inclusive), not before start."""


class CalendarSpec(ApiModel):
    """A named set of dates: the single dates, the ranges and the public holidays listed."""

    description: Annotated[str, Field(max_length=1024)] | None = None
    """Free text."""
    dates: Annotated[list[DateText], Field(max_length=366)] | None = None
    """Single dates (yyyy-MM-dd)."""
    date_ranges: Annotated[list[DateRange], Field(max_length=64)] | None = None
    """Inclusive ranges of dates."""
    holidays: CalendarHolidaysSpec | None = None
    """The public holidays of a country are dates of the calendar too."""


class Calendar(ApiModel):
    api_version: Literal["autoscaling.d-kuro.github.io/v1"] = "autoscaling.d-kuro.github.io/v1"
    kind: Literal["Calendar"] = "Calendar"
    metadata: ObjectMeta = ObjectMeta()
    spec: CalendarSpec


class ClusterCalendar(ApiModel):
    api_version: Literal["autoscaling.d-kuro.github.io/v1"] = "autoscaling.d-kuro.github.io/v1"
    kind: Literal["ClusterCalendar"] = "ClusterCalendar"
    metadata: ObjectMeta = ObjectMeta()
    spec: CalendarSpec
