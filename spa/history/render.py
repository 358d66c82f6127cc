"""The text faces of `spa suggest`: the Schedules as YAML for Git, each with a comment saying
where it came from, and the JSON of docs/suggest.md for tools.

The YAML is what a reviewer reads in a pull request, so each window says in words which weeks
it came from, what its minReplicas is the quantile of, why its leadTime, and what it skips;
what was found and not scheduled (one-off peaks, dips no calendar explains, gaps) is said in
the comment that heads each autoscaler's Schedules. Keys of the JSON are only ever added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

import yaml

from spa.history.analysis import Dip, SuggestedWindow, WindowKind, describe_days
from spa.history.suggestions import (
    AutoscalerSuggestion,
    Suggestions,
    clock,
    go_duration,
    history_head,
)
from spa.plan.render import encode, join_lines
from spa.plan.schedules import format_local
from spa.schedule import format_instant

__all__ = [
    "describe_window",
    "render_errors",
    "render_suggestion_json",
    "render_suggestion_yaml",
    "window_words",
]

_WIDTH = 96


def render_suggestion_yaml(suggestions: Suggestions) -> str:
    """Every suggested Schedule, one YAML document each, commented."""
    first_day = _day(suggestions.start, suggestions)
    last_day = _day(suggestions.until, suggestions)
    documents = [
        _comment(
            f"Suggested by `spa suggest` from {suggestions.weeks} week(s) of "
            f"{suggestions.source}, {first_day} to {last_day} (docs/suggest.md). Review "
            "each window before you commit it: the history cannot know a peak that has not "
            "happened yet."
        )
    ]
    if not suggestions.autoscalers:
        documents[0] += "\n" + _comment("No autoscaler had a usable history.")
    for autoscaler in suggestions.autoscalers:
        documents.append(_autoscaler_comment(autoscaler, suggestions))
        for window, body in zip(autoscaler.suggestion.windows, autoscaler.schedules, strict=True):
            documents.append(
                _comment(window_words(window, autoscaler))
                + "\n"
                + yaml.dump(
                    body, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=_WIDTH
                ).rstrip()
            )
    # A comment-only document is not a document: the comments go before the next one.
    return _join(documents)


class _Dumper(yaml.SafeDumper):
    """Times and dates in double quotes (`"08:00"`, `"2027-10-11"`), as docs/schedules.md writes
    them: unquoted, some of them read as numbers in YAML 1.1 and PyYAML quotes those alone."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    quoted = _TIME_OR_DATE.fullmatch(value) is not None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if quoted else None)


_TIME_OR_DATE = re.compile(r"[0-9]{1,2}:[0-9]{2}|[0-9]{4}-[0-9]{2}-[0-9]{2}")
_Dumper.add_representer(str, _string)


def _join(parts: list[str]) -> str:
    text: list[str] = []
    pending: list[str] = []
    for part in parts:
        if all(line.startswith("#") for line in part.splitlines()):
            pending.append(part)
            continue
        if text:
            text.append("---")
        text.extend(pending)
        pending = []
        text.append(part)
    text.extend(pending)
    return "\n".join(text)


def _day(instant: int, suggestions: Suggestions) -> str:
    zone = suggestions.autoscalers[0].zone if suggestions.autoscalers else None
    return datetime.fromtimestamp(instant, zone or UTC).date().isoformat()


def _comment(text: str) -> str:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        words = paragraph.split(" ")
        line = "#"
        for word in words:
            if len(line) + 1 + len(word) > _WIDTH and line != "#":
                lines.append(line)
                line = "#"
            line += " " + word
        lines.append(line)
    return "\n".join(lines)


def _autoscaler_comment(autoscaler: AutoscalerSuggestion, suggestions: Suggestions) -> str:
    suggestion = autoscaler.suggestion
    zone = autoscaler.zone.key or "UTC"
    count = len(suggestion.windows)
    lines = [
        f"{autoscaler.namespace}/{autoscaler.name} ({zone}): "
        + (f"{count} Schedule(s)." if count else "no recurring peak, so no Schedule.")
        + f" The HPA's minReplicas is {suggestion.base}; it held {suggestion.quiet} or less"
        f" at least a quarter of the time; a peak is {suggestion.threshold:g} replicas or more."
        + (
            f" The Schedules apply to the ScheduledPodAutoscaler {autoscaler.name} (which makes"
            f" the HPA {autoscaler.name})."
            if count
            else ""
        )
    ]
    if suggestion.quiet > suggestion.base:
        lines.append(
            f"The HPA never went below {suggestion.quiet} most of the time: consider "
            f"minReplicas {suggestion.quiet} on the ScheduledPodAutoscaler itself."
        )
    for spike in suggestion.spikes:
        lines.append(
            "Not scheduled, seen once: "
            f"{format_local(spike.start, autoscaler.zone, with_name=False)} to "
            f"{clock_of(spike.end, autoscaler)}, up to {spike.highest:g} replicas."
        )
    for dip in suggestion.unexplained_dips:
        lines.append(
            f"The peak did not come on {_weekday(dip.day)} {dip.day.isoformat()}, which no "
            "public holiday of the calendar explains: left out, not excluded."
        )
    lines.extend(autoscaler.notes)
    return _comment("\n".join(lines))


def clock_of(instant: int, autoscaler: AutoscalerSuggestion) -> str:
    return datetime.fromtimestamp(instant, autoscaler.zone).strftime("%H:%M")


def _weekday(day: date) -> str:
    return day.strftime("%a")


def describe_window(window: SuggestedWindow) -> str:
    """`Mon-Fri 08:00-18:00`, `daily 12:00-13:30`, `Sat 10:00 to Sun 20:00`."""
    if window.kind == WindowKind.WEEKLY_SPAN:
        end_day = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[
            (window.days[0] + window.end // 86400) % 7
        ]
        first = f"{describe_days(window.days)} {clock(window.start)}"
        return f"{first} to {end_day} {clock(window.end)}"
    return f"{describe_days(window.days)} {clock(window.start)}-{clock(window.end)}"


def window_words(window: SuggestedWindow, autoscaler: AutoscalerSuggestion) -> str:
    """The comment of one window: where it came from and why its values."""
    zone = autoscaler.zone.key or "UTC"
    when = describe_window(window)
    weeks = [week.isoformat() for week in window.weeks]
    listed = (
        ", ".join(weeks[:-1]) + (" and " if len(weeks) > 1 else "") + (weeks[-1] if weeks else "")
    )
    lines = [
        f"{when} {zone}: from the weeks of {listed} ({len(weeks)} of {window.weeks_total}; the "
        f"peak came on {window.came} of the {window.occurrences} days with data).",
        f"minReplicas {window.min_replicas}: the {_ordinal(window.quantile)} percentile of the "
        f"{window.steps:,} steps it alone holds (median {window.median:g}, most "
        f"{window.highest:g}).",
        f"leadTime {go_duration(window.lead)}: the need reached that level within "
        f"{go_duration(window.climb)} of the starts (the median of the days).",
    ]
    if window.moved:
        lines.append(
            f"startTime {clock(window.start)}, {go_duration(window.moved)} later than the peaks "
            "came, and the lead as much longer: the same instant on every day, and on the day "
            "the clocks go back no start in the hour they repeat."
        )
    proposal = window.holidays
    if proposal is not None:
        explained = _dips(proposal.explained)
        where = proposal.country + (f"-{proposal.subdivision}" if proposal.subdivision else "")
        if proposal.exclude_dates:
            kept = ", ".join(f"{day.isoformat()} ({name})" for day, name in proposal.kept)
            lines.append(
                f"excludeDates: the peak did not come on {explained}, public holidays of "
                f"{where}, but came on {kept}: so only the next of the first."
            )
        else:
            lines.append(
                f"holidays {where}: the peak did not come on {explained}, public holiday(s)."
            )
    return "\n".join(lines)


def _dips(dips: Iterable[Dip]) -> str:
    return ", ".join(
        f"{dip.day.isoformat()}" + (f" ({dip.holiday})" if dip.holiday else "") for dip in dips
    )


def _ordinal(share: float) -> str:
    number = round(share * 100, 1)
    text = f"{number:g}"
    if text.endswith("1") and not text.endswith("11"):
        return text + "st"
    if text.endswith("2") and not text.endswith("12"):
        return text + "nd"
    if text.endswith("3") and not text.endswith("13"):
        return text + "rd"
    return text + "th"


def render_suggestion_json(suggestions: Suggestions) -> str:
    """The document of docs/suggest.md, "-o json", one autoscaler a line."""
    settings = suggestions.settings
    autoscalers = [encode(_autoscaler_fields(a, suggestions)) for a in suggestions.autoscalers]
    errors = [
        encode({"namespace": key[0], "name": key[1], "message": message})
        for key, message in suggestions.errors
    ]
    head = {
        **history_head(suggestions),
        "quantile": settings.quantile,
        "recurrence": settings.recurrence,
    }
    lines = ["{"]
    lines.extend(f"  {encode(k)}: {encode(v)}," for k, v in head.items())
    lines.append(f'  "autoscalers": {join_lines(autoscalers, depth=2)},')
    lines.append(f'  "errors": {join_lines(errors, depth=2)},')
    lines.append(f'  "warnings": {encode(suggestions.warnings)}')
    lines.append("}")
    return "\n".join(lines)


def _autoscaler_fields(
    autoscaler: AutoscalerSuggestion, suggestions: Suggestions
) -> dict[str, Any]:
    suggestion = autoscaler.suggestion
    return {
        "namespace": autoscaler.namespace,
        "name": autoscaler.name,
        "timeZone": autoscaler.zone.key or "UTC",
        "minReplicas": suggestion.base,
        "quietLevel": suggestion.quiet,
        "peakThreshold": suggestion.threshold,
        "schedules": [
            {
                "manifest": body,
                "weeks": [week.isoformat() for week in window.weeks],
                "days": window.occurrences,
                "peaks": window.came,
                "minReplicas": {
                    "quantile": window.quantile,
                    "steps": window.steps,
                    "median": window.median,
                    "highest": window.highest,
                },
                "climb": go_duration(window.climb),
                "dips": [_dip_fields(dip) for dip in window.dips],
            }
            for window, body in zip(suggestion.windows, autoscaler.schedules, strict=True)
        ],
        "oneOffs": [
            {
                "start": format_instant(spike.start),
                "end": format_instant(spike.end),
                "highest": spike.highest,
            }
            for spike in suggestion.spikes
        ],
        "unexplainedDips": [_dip_fields(dip) for dip in suggestion.unexplained_dips],
        "notes": autoscaler.notes,
    }


def _dip_fields(dip: Dip) -> dict[str, Any]:
    return {"date": dip.day.isoformat(), "holiday": dip.holiday}


def render_errors(suggestions: Suggestions) -> str:
    return "\n".join(
        f"error: {namespace}/{name}: {message}" for (namespace, name), message in suggestions.errors
    )
