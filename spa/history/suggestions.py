"""The suggestion of every autoscaler: its windows as Schedule manifests, ready for Git, with
what they came from.

Each window becomes one Schedule named after its autoscaler, days and start (`web-mon-fri-0800`,
`web-daily-1200`, `web-sat-1000-span`), with `minReplicas`, `leadTime`, the autoscaler's zone
and, where the public holidays explained the days the peak did not come, `holidays` or
`excludeDates` (docs/suggest.md, "The output"). Nothing here reads Prometheus: spa/cli/suggest.py
gives the histories.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from spa.api import API_VERSION, SCHEDULE_KIND, SCHEDULED_POD_AUTOSCALER
from spa.history.analysis import (
    Settings,
    SuggestedWindow,
    Suggestion,
    WindowKind,
    describe_days,
    suggest_windows,
)
from spa.history.need import DAY_SECONDS, Need, local_layout
from spa.history.source import Key
from spa.schedule import PublicHolidays, format_instant

__all__ = [
    "AutoscalerSuggestion",
    "Suggestions",
    "clock",
    "go_duration",
    "schedule_body",
    "suggest_all",
]

_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_LONGEST_NAME = 253


@dataclass(slots=True)
class AutoscalerSuggestion:
    namespace: str
    name: str
    zone: ZoneInfo
    suggestion: Suggestion
    schedules: list[dict[str, Any]] = field(default_factory=list)
    """One Schedule manifest per window, in the order of `suggestion.windows`."""
    notes: list[str] = field(default_factory=list)
    need: Need | None = None

    @property
    def key(self) -> Key:
        return self.namespace, self.name


@dataclass(slots=True)
class Suggestions:
    start: int
    until: int
    step: int
    weeks: int
    source: str
    """What the history is, in words (the metric, or the query and its capacity)."""
    query: str
    """The PromQL asked."""
    settings: Settings
    autoscalers: list[AutoscalerSuggestion] = field(default_factory=list)
    errors: list[tuple[Key, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def suggest_all(
    needs: Mapping[Key, Need],
    *,
    bases: Mapping[Key, int],
    zone_of: Callable[[Key], ZoneInfo],
    holidays_of: Callable[[ZoneInfo], PublicHolidays | None],
    settings: Settings,
    start: int,
    until: int,
    step: int,
    weeks: int,
    source: str,
    query: str,
    notes: Mapping[Key, list[str]] | None = None,
) -> Suggestions:
    """The suggestion of every autoscaler of `needs`, in order of namespace and name."""
    result = Suggestions(
        start=start, until=until, step=step, weeks=weeks, source=source, query=query,
        settings=settings,
    )  # fmt: skip
    for key in sorted(needs):
        need = needs[key]
        zone = zone_of(key)
        week = local_layout(start=need.start, step=need.step, count=len(need.values), zone=zone)
        calendar = holidays_of(zone)
        own = replace(settings, holidays=calendar)
        last_day = datetime.fromtimestamp(until, zone).date()
        suggestion = suggest_windows(
            need, week, base=bases.get(key, 1), settings=own, until=last_day
        )
        suggestion.windows = [
            clear_of_clock_changes(window, zone, since=last_day) for window in suggestion.windows
        ]
        names = _names(key[1], suggestion.windows)
        schedules = [
            schedule_body(
                namespace=key[0],
                autoscaler=key[1],
                name=name,
                window=window,
                zone=zone,
                description=_description(window, until=last_day),
            )
            for name, window in zip(names, suggestion.windows, strict=True)
        ]
        result.autoscalers.append(
            AutoscalerSuggestion(
                namespace=key[0],
                name=key[1],
                zone=zone,
                suggestion=suggestion,
                schedules=schedules,
                notes=list((notes or {}).get(key, [])),
                need=need,
            )
        )
    return result


def clear_of_clock_changes(
    window: SuggestedWindow, zone: ZoneInfo, *, since: date, most: int = 900
) -> SuggestedWindow:
    """`window` with its start moved to the end of an hour the clocks repeat on one of its
    days in the year from `since`, when that is at most `most` seconds later, and its lead
    made longer by as much: on every other day it takes effect at the same instant, and on the
    day of the change not an hour early (a start in a repeated hour is its first occurrence:
    docs/schedules.md, "Daylight-saving time"). That is the start of a peak that comes at the
    end of the repeated hour, a few minutes early on some days (docs/suggest.md)."""
    start = window.start % DAY_SECONDS
    for day in _changes_of_clocks(zone, since):
        if day.weekday() not in window.days:
            continue
        moved = start
        while moved < start + most and _repeated(day, moved, zone):
            moved += 60
        if (
            moved == start
            or _repeated(day, moved, zone)
            or window.start + moved - start >= window.end
        ):
            continue
        shift = moved - start
        return replace(window, start=window.start + shift, lead=window.lead + shift, moved=shift)
    return window


def _changes_of_clocks(zone: ZoneInfo, since: date) -> list[date]:
    """The days of the year from `since` on which the zone's offset changes."""
    days = []
    previous = datetime.combine(since, time(0), zone).utcoffset()
    for number in range(1, 367):
        day = since + timedelta(days=number)
        offset = datetime.combine(day, time(0), zone).utcoffset()
        if offset != previous:
            days.append(day - timedelta(days=1))
            previous = offset
    return days


def _repeated(day: date, seconds: int, zone: ZoneInfo) -> bool:
    """Whether `seconds` after midnight of `day` is a wall-clock time that comes twice."""
    local = datetime.combine(day, time(0)) + timedelta(seconds=seconds)
    first, second = local.replace(tzinfo=zone, fold=0), local.replace(tzinfo=zone, fold=1)
    return first.utcoffset() != second.utcoffset()


def _names(autoscaler: str, windows: list[SuggestedWindow]) -> list[str]:
    """A name per window, unique, valid as a Schedule's name."""
    names: list[str] = []
    for window in windows:
        days = "daily" if window.kind == WindowKind.DAILY else describe_days(window.days).lower()
        stem = f"{autoscaler}-{days}-{clock(window.start).replace(':', '')}"
        if window.kind == WindowKind.WEEKLY_SPAN:
            stem += "-span"
        stem = re.sub(r"[^a-z0-9.-]", "-", stem.lower())[: _LONGEST_NAME - 4].strip("-.")
        name, number = stem, 2
        while name in names:
            name = f"{stem}-{number}"
            number += 1
        names.append(name)
    return names


def clock(seconds: int) -> str:
    """`HH:mm` of a number of seconds after a midnight (modulo a day)."""
    seconds %= DAY_SECONDS
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}"


class HistoryRun(Protocol):
    """What a suggestion or a backtest read: the range, its step and the history asked."""

    @property
    def start(self) -> int: ...
    @property
    def until(self) -> int: ...
    @property
    def step(self) -> int: ...
    @property
    def weeks(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def query(self) -> str: ...


def history_head(run: HistoryRun) -> dict[str, Any]:
    """The keys that open the JSON of `spa suggest` and `spa backtest` (docs/suggest.md)."""
    return {
        "from": format_instant(run.start),
        "until": format_instant(run.until),
        "step": go_duration(run.step),
        "weeks": run.weeks,
        "history": run.source,
        "query": run.query,
    }


def go_duration(seconds: int) -> str:
    """A duration as Kubernetes writes it: `5m`, `1h30m`, `45s`, `0s`."""
    if seconds <= 0:
        return "0s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return (
        (f"{hours}h" if hours else "")
        + (f"{minutes}m" if minutes else "")
        + (f"{secs}s" if secs else "")
    )


def _description(window: SuggestedWindow, *, until: date) -> str:
    return (
        f"suggested by spa suggest from {window.came} peak(s) in the weeks to {until.isoformat()}"
    )


def schedule_body(
    *,
    namespace: str,
    autoscaler: str,
    name: str,
    window: SuggestedWindow,
    zone: ZoneInfo,
    description: str | None = None,
) -> dict[str, Any]:
    """The Schedule manifest of `window` (docs/schedules.md's fields, in the usual order)."""
    spec: dict[str, Any] = {
        "scaleTargetRef": {
            "apiVersion": API_VERSION,
            "kind": SCHEDULED_POD_AUTOSCALER,
            "name": autoscaler,
        }
    }
    if description:
        spec["description"] = description
    spec["type"] = window.kind
    if window.kind == WindowKind.WEEKLY:
        spec["startDayOfWeek"] = _DAY_NAMES[window.days[0]]
        spec["endDayOfWeek"] = _DAY_NAMES[window.days[-1]]
    elif window.kind == WindowKind.WEEKLY_SPAN:
        spec["startDayOfWeek"] = _DAY_NAMES[window.days[0]]
        spec["endDayOfWeek"] = _DAY_NAMES[(window.days[0] + window.end // DAY_SECONDS) % 7]
    spec["startTime"] = clock(window.start)
    spec["endTime"] = clock(window.end)
    spec["timeZone"] = zone.key or "UTC"
    spec["leadTime"] = go_duration(window.lead)
    spec["minReplicas"] = window.min_replicas
    proposal = window.holidays
    if proposal is not None:
        if proposal.exclude_dates:
            spec["excludeDates"] = [day.isoformat() for day in proposal.exclude_dates]
        else:
            holidays: dict[str, Any] = {"country": proposal.country}
            if proposal.subdivision is not None:
                holidays["subdivision"] = proposal.subdivision
            spec["holidays"] = holidays
    return {
        "apiVersion": API_VERSION,
        "kind": SCHEDULE_KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
