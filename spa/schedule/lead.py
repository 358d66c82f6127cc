"""Lead time: a window whose values take effect a fixed duration before its start.

Capacity is only useful if it is ready when the peak arrives, and pods take time to start;
`leadTime` moves each start of a window earlier by that much (docs/schedules.md, "Lead time").
The lead is subtracted from the start *instant*, after the time-zone rules have made it one, so
across a daylight-saving change it is still exactly that many seconds (not that many minutes
of wall clock). The end is unchanged. A lead that reaches back into the window's previous
occurrence joins the two into one, which the Timeline does for any overlapping occurrences.

It wraps a window rather than changing the window types, so every kind of window (Daily,
Weekly, WeeklySpan, Cron, OneShot) gets it the same way and the windows themselves stay the
wall-clock description the user wrote. It wraps the calendar too (spa/schedule/calendar.py):
the calendar decides whether an occurrence happens by its date (`Occurrence.day`, unchanged
here), and only then is its start moved, so an occurrence dropped by its date is dropped with
its lead, and the lead of a kept one may begin on the day before, even before `startDate`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo

from spa.schedule.calendar import Skipped, skipped_between
from spa.schedule.windows import Occurrence, Window

__all__ = ["MAX_LEAD_SECONDS", "LeadWindow", "with_lead"]

# docs/schedules.md: a lead of at most a day (a longer one would be a different window).
MAX_LEAD_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class LeadWindow:
    """`window` with each occurrence's start moved `lead` seconds earlier."""

    window: Window
    lead: int

    @property
    def zone(self) -> ZoneInfo:
        return self.window.zone

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        # An occurrence starting up to `lead` after `high` starts before `high` once moved.
        return [
            replace(occurrence, start=occurrence.start - self.lead)
            for occurrence in self.window.occurrences(low, high + self.lead)
            if occurrence.start - self.lead < high
        ]

    def skipped(self, low: int, high: int) -> list[Skipped]:
        """The skipped occurrences whose moved start is in `(low, high]`, moved (`spa plan`
        shows where each would have started to apply)."""
        return [
            replace(
                skipped,
                occurrence=replace(skipped.occurrence, start=skipped.occurrence.start - self.lead),
            )
            for skipped in skipped_between(self.window, low + self.lead, high + self.lead)
        ]

    def last_instant(self) -> int | None:
        # Moving starts earlier adds no boundary after the last one.
        return self.window.last_instant()

    def completed(self, instant: int) -> bool:
        # The ends are unchanged, and so is the instant after which nothing is left.
        return self.window.completed(instant)

    @property
    def always_active(self) -> bool:
        return self.window.always_active


def with_lead(window: Window, lead: int) -> Window:
    """The window as it applies with `lead` seconds of lead time (0 to MAX_LEAD_SECONDS)."""
    if not 0 <= lead <= MAX_LEAD_SECONDS:
        raise ValueError(f"lead time must be 0 to {MAX_LEAD_SECONDS} seconds, got {lead}")
    if lead == 0 or window.always_active:
        # Nothing moves: an always-active window has no start to move.
        return window
    return LeadWindow(window, lead)
