"""The pure schedule engine: time windows, daylight-saving rules and effective replica bounds.

It imports nothing from Kubernetes or from the API models, so it can be tested exhaustively
and reused by the controller and by `spa plan` alike. Instants are integer seconds since the
Unix epoch (UTC); `from_instant` turns one into a datetime at the edges.
"""

from spa.schedule.effective import Base, Rule, State, next_transition, state_at, transitions_between
from spa.schedule.lead import MAX_LEAD_SECONDS, LeadWindow, with_lead
from spa.schedule.wallclock import (
    UTC_ZONE,
    WallClockError,
    Weekday,
    format_instant,
    from_instant,
    instant_of,
    load_zone,
    parse_hour_minute,
    parse_local_datetime,
    to_instant,
    weekdays_between,
)
from spa.schedule.windows import OneShotWindow, RecurringWindow, Timeline, Window

__all__ = [
    "MAX_LEAD_SECONDS",
    "UTC_ZONE",
    "Base",
    "LeadWindow",
    "OneShotWindow",
    "RecurringWindow",
    "Rule",
    "State",
    "Timeline",
    "WallClockError",
    "Weekday",
    "Window",
    "format_instant",
    "from_instant",
    "instant_of",
    "load_zone",
    "next_transition",
    "parse_hour_minute",
    "parse_local_datetime",
    "state_at",
    "to_instant",
    "transitions_between",
    "weekdays_between",
    "with_lead",
]
