"""Lead time: a window whose values take effect a fixed duration before its start.

Capacity is only useful if it is ready when the peak arrives, and pods take time to start;
`leadTime` moves each start of a window earlier by that much (docs/schedules.md, "Lead time").
The lead is subtracted from the start *instant*, after the time-zone rules have made it one, so
across a daylight-saving change it is still exactly that many seconds (not that many minutes
of wall clock). The end is unchanged. A lead that reaches back into the window's previous
interval joins the two into one, which the Timeline does for any overlapping intervals.

It wraps a window rather than changing the window types, so every kind of window gets it the
same way and the windows themselves stay the wall-clock description the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

from spa.schedule.windows import Interval, RecurringWindow, Window

__all__ = ["MAX_LEAD_SECONDS", "LeadWindow", "with_lead"]

# docs/schedules.md: a lead of at most a day (a longer one would be a different window).
MAX_LEAD_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class LeadWindow:
    """`window` with each interval's start moved `lead` seconds earlier."""

    window: Window
    lead: int

    def intervals(self, low: int, high: int) -> list[Interval]:
        # An interval starting up to `lead` after `high` starts before `high` once moved.
        return [
            (start - self.lead, end)
            for start, end in self.window.intervals(low, high + self.lead)
            if start - self.lead < high
        ]

    def last_instant(self) -> int | None:
        return self.window.last_instant()


def with_lead(window: Window, lead: int) -> Window:
    """The window as it applies with `lead` seconds of lead time (0 to MAX_LEAD_SECONDS)."""
    if not 0 <= lead <= MAX_LEAD_SECONDS:
        raise ValueError(f"lead time must be 0 to {MAX_LEAD_SECONDS} seconds, got {lead}")
    if lead == 0 or (isinstance(window, RecurringWindow) and window.always_active):
        # Nothing moves: an always-active window has no start to move, and the Timeline
        # recognises it only unwrapped (it then never looks for a boundary).
        return window
    return LeadWindow(window, lead)
