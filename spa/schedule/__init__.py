"""The pure schedule engine: time windows, calendars, daylight-saving rules and effective
replica bounds.

It imports nothing from Kubernetes or from the API models, so it can be tested exhaustively
and reused by the controller and by `spa plan` alike. Instants are integer seconds since the
Unix epoch (UTC); `from_instant` turns one into a datetime at the edges.
"""

from spa.schedule.calendar import (
    Calendar,
    CalendarRule,
    CalendarWindow,
    DateSet,
    HolidayCalendar,
    HolidayMode,
    SkipCause,
    Skipped,
    skipped_between,
)
from spa.schedule.cron import CronExpression, CronWindow, go_duration_seconds, parse_duration
from spa.schedule.effective import Base, Rule, State, next_transition, state_at, transitions_between
from spa.schedule.lead import MAX_LEAD_SECONDS, LeadWindow, with_lead
from spa.schedule.public_holidays import PublicHolidays, country_code, holiday_countries
from spa.schedule.wallclock import (
    FIRST_INSTANT,
    LAST_INSTANT,
    UTC_ZONE,
    WallClockError,
    Weekday,
    format_instant,
    from_instant,
    instant_of,
    load_zone,
    parse_date,
    parse_hour_minute,
    parse_local_datetime,
    to_instant,
    weekdays_between,
)
from spa.schedule.windows import (
    Occurrence,
    OneShotWindow,
    RecurringWindow,
    Timeline,
    WeeklySpanWindow,
    Window,
)

__all__ = [
    "FIRST_INSTANT",
    "LAST_INSTANT",
    "MAX_LEAD_SECONDS",
    "UTC_ZONE",
    "Base",
    "Calendar",
    "CalendarRule",
    "CalendarWindow",
    "CronExpression",
    "CronWindow",
    "DateSet",
    "HolidayCalendar",
    "HolidayMode",
    "LeadWindow",
    "Occurrence",
    "OneShotWindow",
    "PublicHolidays",
    "RecurringWindow",
    "Rule",
    "SkipCause",
    "Skipped",
    "State",
    "Timeline",
    "WallClockError",
    "Weekday",
    "WeeklySpanWindow",
    "Window",
    "country_code",
    "format_instant",
    "from_instant",
    "go_duration_seconds",
    "holiday_countries",
    "instant_of",
    "load_zone",
    "next_transition",
    "parse_date",
    "parse_duration",
    "parse_hour_minute",
    "parse_local_datetime",
    "skipped_between",
    "state_at",
    "to_instant",
    "transitions_between",
    "weekdays_between",
    "with_lead",
]
