"""Auto lead times: the lead that would have made the recent windows Ready by their boundary.

`leadTime: Auto` and `capacity.leadTime: Auto` (docs/schedules.md, "Auto lead times") are
learned from what each window measured, never from process memory, so the value is the same on
every replica and after a restart. This module is the rule alone, on plain numbers: which
windows count and how their timestamps become a need is spa/controller/decide/readiness.py's.

The rule, per lead:

- each measured window gives a *need*: the seconds the lead had to be for that window to be
  Ready by its boundary. A need may be *censored*: only known to be at most that much (the
  window was in time, the lead in force was enough, and nothing measured how much less would
  have done);
- a target per window is its need plus a margin (15 s, or a tenth of the need when that is
  more); a censored need gets no margin: it is a lead that already was enough, and adding a
  margin to it would make the lead grow a little at every window in which nothing changed;
- the lead is the 90th percentile (nearest rank) of the targets of the last `HISTORY`
  windows, but never the largest one of four or more: one outlier is ignored, unless it is
  the newest window's. A change (a slower node pool, a bigger image) shows first as the
  newest window's measured need; ignoring it made a second window late in a row on real Karpenter
  (docs/performance.md, "Ready before the peak"). A fluke in the newest window raises the
  next lead once, and is ignored as soon as a newer window is measured;
- bounded: at least `floor` (a fixed lead it must not undercut), at most `ceiling` (so a
  broken target cannot move the raise hours early); `floor` wins when the two cross;
- before any window is measured, the default.

Every step is monotone in each need, so a slower target never shortens the lead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "DEFAULT_MAX_LEAD_SECONDS",
    "DEFAULT_NODE_LEAD_SECONDS",
    "DEFAULT_POD_LEAD_SECONDS",
    "HISTORY",
    "MIN_MARGIN_SECONDS",
    "LeadSource",
    "LearnedLead",
    "Need",
    "fixed_lead",
    "learned_lead",
    "spoken_seconds",
]

DEFAULT_POD_LEAD_SECONDS = 120
"""`leadTime: Auto` before any window was measured (docs/schedules.md, "Auto lead times")."""
DEFAULT_NODE_LEAD_SECONDS = 180
"""`capacity.leadTime: Auto` before any window was measured."""
DEFAULT_MAX_LEAD_SECONDS = 1800
"""The upper bound of an Auto lead when `leadTimeBounds.max` is unset."""
HISTORY = 10
"""The windows learned from: the last ones, as many as status.windows keeps."""
MIN_MARGIN_SECONDS = 15
_MARGIN_FRACTION = 10  # a tenth of the need
_QUANTILE_PERCENT = 90
_OUTLIER_FROM = 4  # with this many windows or more, the largest one is never the lead


class LeadSource(StrEnum):
    """Where the lead in force comes from (status.leadTime.source, status.windows[].lead)."""

    Fixed = "Fixed"
    Default = "Default"
    Learned = "Learned"


@dataclass(frozen=True, slots=True)
class Need:
    """What one window needed, in seconds: exactly (`censored` False) or at most."""

    seconds: float
    censored: bool = False

    def target(self) -> int:
        """The lead this window asks for: the need plus the margin (none if censored)."""
        need = max(0, math.ceil(self.seconds))
        if self.censored:
            return need
        return need + margin_for(need)


def margin_for(need: int) -> int:
    """The margin over an exact need: 15 s, or a tenth of the need when more."""
    return max(MIN_MARGIN_SECONDS, math.ceil(need / _MARGIN_FRACTION))


@dataclass(frozen=True, slots=True)
class LearnedLead:
    """A lead in force and why."""

    seconds: int
    source: LeadSource
    windows: int = 0
    """How many windows it was learned from."""
    need: int | None = None
    """The need of the window whose target is the lead (before the bounds)."""
    margin: int = 0
    bound: str | None = None
    """"at least 1m" or "at most 30m" when a bound moved the lead."""

    def explanation(self) -> str:
        """One line: "learned: p90 of 8 windows 38 s + 15 s", "default 2m until measured",
        "fixed 5m"."""
        if self.source is LeadSource.Fixed:
            text = f"fixed {spoken_seconds(self.seconds)}"
        elif self.source is LeadSource.Default:
            text = f"default {spoken_seconds(self.seconds)} until measured"
        else:
            plural = "window" if self.windows == 1 else "windows"
            text = f"learned: p{_QUANTILE_PERCENT} of {self.windows} {plural} {self.need} s"
            if self.margin:
                text += f" + {self.margin} s"
        if self.bound is not None and self.source is not LeadSource.Fixed:
            text += f" ({self.bound})"
        return text


def spoken_seconds(seconds: int) -> str:
    """90 -> "1m30s", 120 -> "2m", 45 -> "45s" (Go duration text, as the fields are written)."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return text + (f"{secs}s" if secs or not text else "")


def fixed_lead(seconds: int) -> LearnedLead:
    """A lead written as a duration."""
    return LearnedLead(seconds=seconds, source=LeadSource.Fixed)


def _rank(count: int) -> int:
    """The 1-based ascending rank of the lead among `count` targets."""
    rank = math.ceil(count * _QUANTILE_PERCENT / 100)
    if count >= _OUTLIER_FROM:
        rank = min(rank, count - 1)
    return rank


def learned_lead(
    needs: Sequence[Need], *, default: int, ceiling: int, floor: int = 0
) -> LearnedLead:
    """The Auto lead from the needs of the measured windows, newest first (only the first
    `HISTORY` count); `default` before there is one."""
    recent = list(needs[:HISTORY])
    if not recent:
        seconds, source, need, margin = default, LeadSource.Default, None, 0
    else:
        ordered = sorted(recent, key=lambda n: (n.target(), n.censored))
        chosen = ordered[_rank(len(ordered)) - 1]
        if not recent[0].censored and recent[0].target() > chosen.target():
            # The newest window's measured need is never the outlier ignored; a censored one
            # only repeats the lead that was in force, and must not keep it up.
            chosen = recent[0]
        seconds, source = chosen.target(), LeadSource.Learned
        need = max(0, math.ceil(chosen.seconds))
        margin = seconds - need
    bound = None
    if seconds > ceiling:
        seconds, bound = ceiling, f"at most {spoken_seconds(ceiling)}"
    if seconds < floor:
        seconds, bound = floor, f"at least {spoken_seconds(floor)}"
    return LearnedLead(
        seconds=seconds,
        source=source,
        windows=len(recent),
        need=need,
        margin=margin,
        bound=bound,
    )
