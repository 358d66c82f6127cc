"""The text faces of `spa backtest`: a table for people and the JSON of docs/suggest.md, each of
one replay or of two compared (`--compare`).

The table says per autoscaler what a reviewer asks of a schedule: did the floor come before
the demand (and how early), how long was it short, what did it cost, and which windows were
never needed; then every peak, one a line.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from spa.history.backtest import AutoscalerBacktest, Backtest, Peak, WindowUse
from spa.history.suggestions import go_duration, history_head
from spa.plan.render import columns, describe_error, encode, error_fields, join_lines
from spa.plan.schedules import format_local
from spa.schedule import format_instant

__all__ = [
    "render_backtest_errors",
    "render_backtest_json",
    "render_backtest_table",
    "render_compare_json",
    "render_compare_table",
]


def _heading(backtest: Backtest) -> str:
    return (
        f"Backtest of {backtest.label} from {format_instant(backtest.start)} until "
        f"{format_instant(backtest.until)} ({backtest.weeks} week(s), steps of "
        f"{go_duration(backtest.step)}) on {backtest.source}"
    )


def render_backtest_table(backtest: Backtest) -> str:
    lines = [_heading(backtest)]
    if not backtest.autoscalers:
        lines += ["", "No ScheduledPodAutoscaler with a history to replay."]
    for autoscaler in backtest.autoscalers:
        lines.append("")
        lines.extend(_summary(autoscaler))
        lines.extend(_peak_rows(autoscaler))
    return "\n".join(lines)


def _minutes(seconds: int) -> str:
    return f"{seconds // 60} min"


def _summary(autoscaler: AutoscalerBacktest) -> list[str]:
    zone = autoscaler.zone.key or "UTC"
    recurring = autoscaler.recurring
    one_offs = len(autoscaler.peaks) - len(recurring)
    leads = sorted(
        p.raised_before for p in recurring if p.raised_before is not None and not p.after_gap
    )
    raised = (
        f", the floor raised {go_duration(leads[0])} to {go_duration(leads[-1])} before the demand"
        if leads
        else ""
    )
    never = [use for use in autoscaler.windows if use.never_needed]
    return [
        f"{autoscaler.namespace}/{autoscaler.name} ({zone}; base {autoscaler.base}, a peak is "
        f"{autoscaler.threshold:g} replicas or more)",
        f"  recurring peaks held: {autoscaler.held} of {len(recurring)}{raised}",
        f"  under-provisioned: {_minutes(autoscaler.shortfall)} at recurring peaks"
        + (
            f", {_minutes(autoscaler.one_off_shortfall)} at {one_offs} one-off peak(s) (no "
            "Schedule can hold those)"
            if one_offs
            else ""
        ),
        f"  replica-hours added above the need: {autoscaler.added:.1f} (the cost of the Schedules)",
        "  windows never needed: "
        + (", ".join(f"{use.schedule} ({use.windows} window(s))" for use in never) or "none")
        + _unneeded(autoscaler.windows),
    ]


def _unneeded(uses: list[WindowUse]) -> str:
    some = [use for use in uses if use.unneeded and not use.never_needed]
    if not some:
        return ""
    return "; windows without a peak: " + ", ".join(
        f"{use.schedule} on {', '.join(day.isoformat() for day in use.unneeded[:3])}"
        + (f" and {len(use.unneeded) - 3} more" if len(use.unneeded) > 3 else "")
        for use in some
    )


def _peak_rows(autoscaler: AutoscalerBacktest) -> list[str]:
    if not autoscaler.peaks:
        return ["  no peak in the history"]
    rows = [["  PEAK (LOCAL)", "UNTIL", "MOST", "FLOOR", "FLOOR RAISED", "SHORT"]]
    for peak in autoscaler.peaks:
        rows.append(
            [
                "  " + format_local(peak.start, autoscaler.zone, with_name=False),
                _until(peak, autoscaler),
                f"{peak.highest:g}",
                str(peak.floor),
                _raised(peak, autoscaler),
                _short(peak),
            ]
        )
    return columns(rows)


def _until(peak: Peak, autoscaler: AutoscalerBacktest) -> str:
    """The end's time, with its weekday when it is not the start's day."""
    start = datetime.fromtimestamp(peak.start, autoscaler.zone)
    end = datetime.fromtimestamp(peak.end, autoscaler.zone)
    if (end - start).days or end.date() == start.date():
        return end.strftime("%H:%M") if end.date() == start.date() else end.strftime("%a %H:%M")
    return end.strftime("%a %H:%M")


def _short(peak: Peak) -> str:
    if peak.one_off:
        return f"{_minutes(peak.one_off_shortfall)} (one-off)"
    if peak.one_off_shortfall:
        return f"{_minutes(peak.shortfall)} (+{_minutes(peak.one_off_shortfall)} one-off)"
    return _minutes(peak.shortfall)


def _raised(peak: Peak, autoscaler: AutoscalerBacktest) -> str:
    if peak.raised_before is not None:
        if peak.start == autoscaler.need.start:
            return "from the start"
        if peak.after_gap:
            return "after a gap"
        return f"{go_duration(peak.raised_before)} before"
    if peak.late_by is not None:
        return f"{go_duration(peak.late_by)} late"
    return "not raised"


def render_backtest_json(backtest: Backtest) -> str:
    return _document(backtest, [encode(_fields(a)) for a in backtest.autoscalers])


def _document(
    backtest: Backtest, autoscalers: list[str], extra: dict[str, Any] | None = None
) -> str:
    head = {**history_head(backtest), **(extra or {"manifests": backtest.label})}
    lines = ["{"]
    lines.extend(f"  {encode(key)}: {encode(value)}," for key, value in head.items())
    lines.append(f'  "autoscalers": {join_lines(autoscalers, depth=2)},')
    lines.append(f'  "errors": {join_lines(_errors(backtest), depth=2)}')
    lines.append("}")
    return "\n".join(lines)


def _errors(backtest: Backtest, side: str | None = None) -> list[str]:
    found = [
        encode({**({"side": side} if side else {}), **error_fields(error)})
        for error in backtest.plan_errors
    ]
    found.extend(
        encode({**({"side": side} if side else {}), "namespace": key[0], "name": key[1],
                "message": message})
        for key, message in backtest.errors
    )  # fmt: skip
    return found


def _fields(autoscaler: AutoscalerBacktest) -> dict[str, Any]:
    return {
        "namespace": autoscaler.namespace,
        "name": autoscaler.name,
        "timeZone": autoscaler.zone.key or "UTC",
        "minReplicas": autoscaler.base,
        "peakThreshold": autoscaler.threshold,
        "recurringPeaks": len(autoscaler.recurring),
        "held": autoscaler.held,
        "shortfallMinutes": autoscaler.shortfall // 60,
        "oneOffShortfallMinutes": autoscaler.one_off_shortfall // 60,
        "replicaHoursAdded": round(autoscaler.added, 2),
        "schedules": [
            {
                "name": use.schedule,
                "windows": use.windows,
                "needed": use.needed,
                "neverNeeded": use.never_needed,
                "unneeded": [day.isoformat() for day in use.unneeded],
            }
            for use in autoscaler.windows
        ],
        "peaks": [
            {
                "start": format_instant(peak.start),
                "end": format_instant(peak.end),
                "highest": peak.highest,
                "floor": peak.floor,
                "raisedBefore": None
                if peak.raised_before is None
                else go_duration(peak.raised_before),
                "lateBy": None if peak.late_by is None else go_duration(peak.late_by),
                "shortfallMinutes": peak.shortfall // 60,
                "oneOffShortfallMinutes": peak.one_off_shortfall // 60,
                "oneOff": peak.one_off,
                "afterGap": peak.after_gap,
            }
            for peak in autoscaler.peaks
        ],
    }


def render_backtest_errors(backtest: Backtest, side: str | None = None) -> str:
    prefix = f"{side}: " if side else ""
    lines = [f"error: {prefix}{describe_error(error)}" for error in backtest.plan_errors]
    lines.extend(f"error: {prefix}{key[0]}/{key[1]}: {message}" for key, message in backtest.errors)
    return "\n".join(lines)


def render_compare_table(old: Backtest, new: Backtest) -> str:
    """Both replays side by side, per autoscaler of either."""
    lines = [
        f"Backtest from {format_instant(new.start)} until {format_instant(new.until)} "
        f"({new.weeks} week(s)) on {new.source}",
        f"--- old: {old.label}",
        f"+++ new: {new.label}",
    ]
    olds = {a.key: a for a in old.autoscalers}
    news = {a.key: a for a in new.autoscalers}
    for key in sorted(olds.keys() | news.keys()):
        before, after = olds.get(key), news.get(key)
        lines.append("")
        lines.append(f"{key[0]}/{key[1]}")
        rows = [["  ", "OLD", "NEW"]]
        for label, value in _COMPARED:
            rows.append([f"  {label}", _cell(before, value), _cell(after, value)])
        lines.extend(columns(rows))
    return "\n".join(lines)


def _cell(autoscaler: AutoscalerBacktest | None, value: Any) -> str:
    return "-" if autoscaler is None else str(value(autoscaler))


_COMPARED: list[tuple[str, Any]] = [
    ("recurring peaks held", lambda a: f"{a.held} of {len(a.recurring)}"),
    ("under-provisioned at recurring peaks", lambda a: _minutes(a.shortfall)),
    ("under-provisioned at one-off peaks", lambda a: _minutes(a.one_off_shortfall)),
    ("replica-hours added above the need", lambda a: f"{a.added:.1f}"),
    ("windows never needed", lambda a: sum(1 for u in a.windows if u.never_needed)),
]


def render_compare_json(old: Backtest, new: Backtest) -> str:
    sides = [
        f'{{"side": "old", "manifests": {encode(old.label)}, "autoscalers": '
        f"{join_lines([encode(_fields(a)) for a in old.autoscalers], depth=3)}}}",
        f'{{"side": "new", "manifests": {encode(new.label)}, "autoscalers": '
        f"{join_lines([encode(_fields(a)) for a in new.autoscalers], depth=3)}}}",
    ]
    head = history_head(new)
    lines = ["{"]
    lines.extend(f"  {encode(key)}: {encode(value)}," for key, value in head.items())
    lines.append(f'  "sides": {join_lines(sides, depth=2)},')
    errors = _errors(old, "old") + _errors(new, "new")
    lines.append(f'  "errors": {join_lines(errors, depth=2)}')
    lines.append("}")
    return "\n".join(lines)
