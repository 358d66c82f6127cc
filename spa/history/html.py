"""The pages of `spa suggest -o html` and `spa backtest -o html`, in the style of `spa plan -o
html` (spa/plan/html.py: its page, colours and scales): one self-contained file, inline CSS and
SVG, no script, nothing fetched.

`spa suggest`: per autoscaler, one chart per weekday over the 24 hours of its zone: the band
between the least and the most that was needed at each time of day over the weeks, their
median, and the suggested floor as a step line over them (the base dashed), then the Schedules
and the one-off peaks. `spa backtest`: per autoscaler, the whole history as a timeline: what was
needed, the floor of the Schedules, and a mark under the chart at every step the need was above
the floor (red at a recurring peak, amber at a one-off one); `--compare` draws both floors.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from datetime import datetime
from html import escape

from spa.history.analysis import WEEKDAYS, SuggestedWindow
from spa.history.backtest import AutoscalerBacktest, Backtest
from spa.history.render import describe_window, window_words
from spa.history.suggestions import AutoscalerSuggestion, Suggestions, go_duration
from spa.plan.html import _STYLE, BAND_COLOR, BASE_COLOR, MIN_COLOR, _nice_ceiling, _page
from spa.plan.render import describe_error
from spa.plan.schedules import format_local
from spa.schedule import format_instant

__all__ = [
    "MEDIAN_COLOR",
    "NEED_COLOR",
    "ONE_OFF_COLOR",
    "SHORT_COLOR",
    "render_backtest_html",
    "render_compare_html",
    "render_suggestion_html",
]

# Colours are part of the pages' contract with their test (tests/browser), which finds the
# lines and marks in a screenshot by them.
MEDIAN_COLOR = "#64748b"
NEED_COLOR = "#0d9488"
SHORT_COLOR = "#dc2626"
ONE_OFF_COLOR = "#d97706"
OLD_COLOR = "#7c3aed"
Scale = Callable[[float], float]
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

_EXTRA_STYLE = """
div.weekdays { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr));
               gap: 4px 16px; max-width: 1100px; }
svg.weekday { width: 100%; height: auto; display: block; }
pre.why { font: 12px/1.4 ui-monospace, monospace; color: #374151; margin: 2px 0 8px;
          white-space: pre-wrap; }
"""

# A weekday's chart, in SVG user units.
_W = 540
_H = 150
_L = 44
_R = 20
_T = 22
_B = 22
_PW = _W - _L - _R
_PH = _H - _T - _B

# The backtest's timeline.
_TW = 1100
_TL = 60
_TR = 20
_TT = 16
_TH = 190
_MARKS = 18
_TPW = _TW - _TL - _TR


def _legend(*items: tuple[str, str, str]) -> str:
    """A legend line: (colour, style, label) per item; style `band`, `dashed` or `line`."""
    spans = []
    for color, style, label in items:
        if style == "band":
            mark = f'<i style="border-top:8px solid {color}"></i>'
        elif style == "dashed":
            mark = f'<i style="border-color:{color};border-top-style:dashed"></i>'
        else:
            mark = f'<i style="border-color:{color}"></i>'
        spans.append(f"<span>{mark}{escape(label)}</span>")
    return f'<p class="meta legend">{"".join(spans)}</p>'


def render_suggestion_html(suggestions: Suggestions) -> str:
    heading = (
        f"Suggested Schedules from {suggestions.weeks} week(s) of history, "
        f"{format_instant(suggestions.start)} to {format_instant(suggestions.until)}"
    )
    body = [
        f"<h1>{escape(heading)}</h1>",
        f'<p class="meta">history: <code>{escape(suggestions.source)}</code></p>',
        _legend(
            (BAND_COLOR, "band", "least to most needed over the weeks"),
            (MEDIAN_COLOR, "line", "median"),
            (MIN_COLOR, "line", "suggested floor (minReplicas)"),
            (BASE_COLOR, "dashed", "HPA minReplicas"),
        ),
    ]
    if not suggestions.autoscalers:
        body.append("<p>No autoscaler had a usable history.</p>")
    body.extend(_suggestion_section(a) for a in suggestions.autoscalers)
    if suggestions.errors:
        items = "".join(
            f"<li>{escape(f'{key[0]}/{key[1]}: {message}')}</li>"
            for key, message in suggestions.errors
        )
        body.append(
            f'<section class="errors"><h2>{len(suggestions.errors)} error(s)</h2>'
            f"<ul>{items}</ul></section>"
        )
    return _page(heading, _STYLE + _EXTRA_STYLE, body)


def _suggestion_section(autoscaler: AutoscalerSuggestion) -> str:
    suggestion = autoscaler.suggestion
    title = f"{autoscaler.namespace}/{autoscaler.name}"
    zone = autoscaler.zone.key or "UTC"
    summary = [
        f"{len(suggestion.windows)} Schedule(s)",
        f"times in {zone}",
        f"HPA minReplicas {suggestion.base}",
        f"a peak is {suggestion.threshold:g} or more",
        f"{len(suggestion.spikes)} one-off peak(s)",
    ]
    per_day = len(suggestion.table[0]) if suggestion.table else 0
    weekday_of = []
    if autoscaler.need is not None and suggestion.table:
        first = datetime.fromtimestamp(autoscaler.need.start, autoscaler.zone).date()
        weekday_of = [(first.weekday() + n) % WEEKDAYS for n in range(len(suggestion.table))]
    charts = [
        _weekday_chart(autoscaler, weekday, weekday_of, per_day) for weekday in range(WEEKDAYS)
    ]
    rows = "".join(
        "<tr>"
        f"<td>{escape(body['metadata']['name'])}</td>"
        f"<td>{escape(describe_window(window))}</td>"
        f'<td class="num">{window.min_replicas}</td>'
        f"<td>{escape(go_duration(window.lead))}</td>"
        f"<td>{escape(_skips(window))}</td>"
        "</tr>"
        f'<tr><td colspan="5"><pre class="why">{escape(window_words(window, autoscaler))}'
        "</pre></td></tr>"
        for window, body in zip(suggestion.windows, autoscaler.schedules, strict=True)
    )
    table = (
        "<table><tr><th>Schedule</th><th>window</th><th>minReplicas</th><th>leadTime</th>"
        f"<th>skips</th></tr>{rows}</table>"
        if rows
        else "<p>No recurring peak: no Schedule.</p>"
    )
    spikes = "".join(
        f"<li>{escape(format_local(s.start, autoscaler.zone))} to "
        f"{escape(datetime.fromtimestamp(s.end, autoscaler.zone).strftime('%H:%M'))}: up to "
        f"{s.highest:g} replicas</li>"
        for s in suggestion.spikes
    )
    notes = "".join(f"<li>{escape(note)}</li>" for note in autoscaler.notes)
    return "\n".join(
        [
            f'<section class="suggestion" data-autoscaler="{escape(title)}">',
            f"<h2>{escape(title)}</h2>",
            f'<p class="summary">{escape(" · ".join(summary))}</p>',
            f'<div class="weekdays">{"".join(charts)}</div>',
            table,
            f"<p>One-off peaks, not scheduled:</p><ul>{spikes}</ul>" if spikes else "",
            f"<ul>{notes}</ul>" if notes else "",
            "</section>",
        ]
    )


def _skips(window: SuggestedWindow) -> str:
    proposal = window.holidays
    if proposal is None:
        return "-"
    if proposal.exclude_dates:
        return "excludeDates " + ", ".join(day.isoformat() for day in proposal.exclude_dates)
    return f"holidays {proposal.country}" + (
        f"-{proposal.subdivision}" if proposal.subdivision else ""
    )


def _weekday_chart(
    autoscaler: AutoscalerSuggestion, weekday: int, weekday_of: list[int], per_day: int
) -> str:
    suggestion = autoscaler.suggestion
    rows = [row for row, day in zip(suggestion.table, weekday_of, strict=False) if day == weekday]
    floor = suggestion.floor[weekday * per_day : (weekday + 1) * per_day] if per_day else []
    low: list[float | None] = []
    high: list[float | None] = []
    middle: list[float | None] = []
    for slot in range(per_day):
        seen = sorted(v for row in rows if (v := row[slot]) is not None)
        low.append(seen[0] if seen else None)
        high.append(seen[-1] if seen else None)
        middle.append(statistics.median(seen) if seen else None)
    values = [v for v in high if v is not None] + floor + [suggestion.base]
    ceiling = _nice_ceiling(int(max(values, default=1)) or 1)

    def x(slot: float) -> float:
        return round(_L + _PW * slot / max(1, per_day), 1)

    def y(value: float) -> float:
        return float(round(_T + _PH * (1 - value / ceiling)))

    parts = [
        f'<svg class="weekday" data-weekday="{_DAY_NAMES[weekday]}" viewBox="0 0 {_W} {_H}" '
        f'width="{_W}" height="{_H}" role="img" '
        f'aria-label="{escape(f"{_DAY_NAMES[weekday]}s of {_title(autoscaler)}")}">',
        f'<text class="name" x="{_L}" y="14">{_DAY_NAMES[weekday]} ({len(rows)} day(s))</text>',
        f'<rect x="{_L}" y="{_T}" width="{_PW}" height="{_PH}" fill="#f9fafb" stroke="#e5e7eb"/>',
    ]
    step = max(1, ceiling // 4)
    for value in range(0, ceiling + 1, step):
        parts.append(
            f'<line x1="{_L}" x2="{_L + _PW}" y1="{y(value)}" y2="{y(value)}" stroke="#e5e7eb" '
            f'shape-rendering="crispEdges"/><text x="{_L - 4}" y="{y(value) + 4}" '
            f'text-anchor="end">{value}</text>'
        )
    for hour in range(0, 25, 6):
        position = x(hour * per_day / 24)
        parts.append(
            f'<line x1="{position}" x2="{position}" y1="{_T}" y2="{_T + _PH + 3}" '
            f'stroke="#d1d5db"/><text x="{position}" y="{_H - 6}" text-anchor="middle">'
            f"{hour:02d}:00</text>"
        )
    parts.append(_band(low, high, x, y))
    parts.append(_line(middle, x, y, MEDIAN_COLOR, "median", width=1.2))
    parts.append(
        f'<line class="base" x1="{_L}" x2="{_L + _PW}" y1="{y(suggestion.base)}" '
        f'y2="{y(suggestion.base)}" stroke="{BASE_COLOR}" stroke-width="1.5" '
        'stroke-dasharray="6 4" shape-rendering="crispEdges"><title>HPA minReplicas '
        f"{suggestion.base}</title></line>"
    )
    if floor:
        points = []
        for slot, value in enumerate(floor):
            points += [f"{x(slot)},{y(value)}", f"{x(slot + 1)},{y(value)}"]
        parts.append(
            f'<polyline class="floor" points="{" ".join(points)}" fill="none" '
            f'stroke="{MIN_COLOR}" stroke-width="2.5" shape-rendering="crispEdges">'
            "<title>suggested floor</title></polyline>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _title(autoscaler: AutoscalerSuggestion | AutoscalerBacktest) -> str:
    return f"{autoscaler.namespace}/{autoscaler.name}"


def _band(
    low: Sequence[float | None], high: Sequence[float | None], to_x: Scale, to_y: Scale
) -> str:
    """The area between `low` and `high` (one polygon per run of slots with data)."""
    shapes = []
    run: list[int] = []
    for slot in [*range(len(low)), -1]:
        if slot >= 0 and low[slot] is not None:
            run.append(slot)
            continue
        if run:
            top = [
                f"{to_x(s)},{to_y(_known(high[s]))} {to_x(s + 1)},{to_y(_known(high[s]))}"
                for s in run
            ]
            bottom = [
                f"{to_x(s + 1)},{to_y(_known(low[s]))} {to_x(s)},{to_y(_known(low[s]))}"
                for s in reversed(run)
            ]
            shapes.append(
                f'<polygon class="band" points="{" ".join(top + bottom)}" fill="{BAND_COLOR}"/>'
            )
            run = []
    return "".join(shapes)


def _known(value: float | None) -> float:
    return 0.0 if value is None else value


def _line(
    values: Sequence[float | None], to_x: Scale, to_y: Scale, color: str, css: str, *, width: float
) -> str:
    lines = []
    points: list[str] = []
    for slot in [*range(len(values)), -1]:
        value = values[slot] if slot >= 0 else None
        if value is not None:
            points.append(f"{to_x(slot + 0.5)},{to_y(value)}")
            continue
        if points:
            lines.append(
                f'<polyline class="{css}" points="{" ".join(points)}" fill="none" '
                f'stroke="{color}" stroke-width="{width}"/>'
            )
            points = []
    return "".join(lines)


def render_backtest_html(backtest: Backtest) -> str:
    return _backtest_page([backtest])


def render_compare_html(old: Backtest, new: Backtest) -> str:
    return _backtest_page([old, new])


def _backtest_page(sides: list[Backtest]) -> str:
    new = sides[-1]
    heading = (
        f"Backtest from {format_instant(new.start)} until {format_instant(new.until)} "
        f"({new.weeks} week(s))"
    )
    legend: list[tuple[str, str, str]] = [
        (NEED_COLOR, "line", "needed (the most of each step)"),
        (MIN_COLOR, "line", f"floor of {new.label}"),
    ]
    if len(sides) == 2:
        legend.append((OLD_COLOR, "dashed", f"floor of {sides[0].label}"))
    legend += [
        (SHORT_COLOR, "band", "need above the floor at a recurring peak"),
        (ONE_OFF_COLOR, "band", "... at a one-off peak"),
    ]
    body = [
        f"<h1>{escape(heading)}</h1>",
        f'<p class="meta">history: <code>{escape(new.source)}</code></p>',
        _legend(*legend),
    ]
    olds = {a.key: a for a in sides[0].autoscalers} if len(sides) == 2 else {}
    if not new.autoscalers:
        body.append("<p>No ScheduledPodAutoscaler with a history to replay.</p>")
    for autoscaler in new.autoscalers:
        body.append(_backtest_section(autoscaler, olds.get(autoscaler.key)))
    errors = [
        f"{side.label}: {key[0]}/{key[1]}: {message}"
        for side in sides
        for key, message in side.errors
    ]
    errors += [
        f"{side.label}: {describe_error(error)}" for side in sides for error in side.plan_errors
    ]
    if errors:
        items = "".join(f"<li>{escape(error)}</li>" for error in errors)
        body.append(
            f'<section class="errors"><h2>{len(errors)} error(s)</h2><ul>{items}</ul></section>'
        )
    return _page(heading, _STYLE + _EXTRA_STYLE, body)


def _backtest_section(autoscaler: AutoscalerBacktest, old: AutoscalerBacktest | None) -> str:
    title = f"{autoscaler.namespace}/{autoscaler.name}"
    recurring = autoscaler.recurring
    summary = [
        f"recurring peaks held: {autoscaler.held} of {len(recurring)}",
        f"under-provisioned {autoscaler.shortfall // 60} min (+{autoscaler.one_off_shortfall // 60}"
        " min at one-off peaks)",
        f"replica-hours added {autoscaler.added:.1f}",
        f"windows never needed: {sum(1 for u in autoscaler.windows if u.never_needed)}",
    ]
    if old is not None:
        summary.insert(
            0,
            f"old: held {old.held} of {len(old.recurring)}, {old.shortfall // 60} min short, "
            f"{old.added:.1f} replica-hours",
        )
    rows = "".join(
        f"<tr><td>{escape(format_local(p.start, autoscaler.zone))}</td>"
        f'<td class="num">{p.highest:g}</td><td class="num">{p.floor}</td>'
        f"<td>{escape(_raised_text(p.raised_before, p.late_by, after_gap=p.after_gap))}</td>"
        f'<td class="num">{p.shortfall // 60}</td><td>{"one-off" if p.one_off else ""}</td></tr>'
        for p in autoscaler.peaks
    )
    return "\n".join(
        [
            f'<section class="backtest" data-autoscaler="{escape(title)}">',
            f"<h2>{escape(title)}</h2>",
            f'<p class="summary">{escape(" · ".join(summary))}</p>',
            _timeline(autoscaler, old),
            f"<details><summary>{len(autoscaler.peaks)} peak(s)</summary><table><tr>"
            "<th>peak (local)</th><th>most</th><th>floor</th><th>floor raised</th>"
            f"<th>short (min)</th><th></th></tr>{rows}</table></details>",
            "</section>",
        ]
    )


def _raised_text(before: int | None, late: int | None, *, after_gap: bool = False) -> str:
    if before is not None:
        return "after a gap" if after_gap else f"{go_duration(before)} before"
    if late is not None:
        return f"{go_duration(late)} late"
    return "not raised"


def _timeline(autoscaler: AutoscalerBacktest, old: AutoscalerBacktest | None) -> str:
    need = autoscaler.need
    count = len(need.values)
    values = [v for v in need.values if v is not None]
    ceiling = _nice_ceiling(int(max([*values, *autoscaler.floor, 1])))

    def x(index: float) -> float:
        return round(_TL + _TPW * index / max(1, count), 1)

    def y(value: float) -> float:
        return float(round(_TT + _TH * (1 - value / ceiling)))

    marks_top = _TT + _TH + 4
    axis_top = marks_top + _MARKS * (2 if old is not None else 1)
    height = axis_top + 40
    parts = [
        f'<svg class="chart" viewBox="0 0 {_TW} {height}" width="{_TW}" height="{height}" '
        f'role="img" aria-label="{escape(f"History of {_title(autoscaler)}")}">',
        f'<rect x="{_TL}" y="{_TT}" width="{_TPW}" height="{_TH}" fill="#f9fafb" '
        'stroke="#e5e7eb"/>',
    ]
    step = max(1, ceiling // 5)
    for value in range(0, ceiling + 1, step):
        parts.append(
            f'<line x1="{_TL}" x2="{_TL + _TPW}" y1="{y(value)}" y2="{y(value)}" '
            f'stroke="#e5e7eb" shape-rendering="crispEdges"/><text x="{_TL - 6}" '
            f'y="{y(value) + 4}" text-anchor="end">{value}</text>'
        )
    # Local midnights, a label on a few of them.
    days = max(1, count * need.step // 86400)
    every = max(1, -(-days // 14))
    previous_day = None
    labelled = 0
    for index in range(count):
        moment = datetime.fromtimestamp(need.instant(index), autoscaler.zone)
        if moment.date() == previous_day or (moment.hour, moment.minute) != (0, 0):
            continue
        previous_day = moment.date()
        position = x(index)
        parts.append(
            f'<line x1="{position}" x2="{position}" y1="{_TT}" y2="{axis_top}" '
            'stroke="#e5e7eb" shape-rendering="crispEdges"/>'
        )
        if labelled % every == 0 and position < _TL + _TPW - 60:
            parts.append(
                f'<text x="{position + 2}" y="{axis_top + 16}">{moment.strftime("%a %d %b")}</text>'
            )
        labelled += 1
    # The need: the most of the steps that fall on each pixel.
    pixels: dict[int, float] = {}
    for index, found in enumerate(need.values):
        if found is not None:
            column = int(x(index))
            pixels[column] = max(pixels.get(column, 0.0), found)
    points = " ".join(f"{column},{y(most)}" for column, most in sorted(pixels.items()))
    parts.append(
        f'<polyline class="need" points="{points}" fill="none" stroke="{NEED_COLOR}" '
        'stroke-width="1" shape-rendering="crispEdges"><title>needed</title></polyline>'
    )
    if old is not None:
        parts.append(_floor_line(old.floor, x, y, OLD_COLOR, "old-floor", dashed=True))
    parts.append(_floor_line(autoscaler.floor, x, y, MIN_COLOR, "floor", dashed=False))
    parts.append(
        f'<line class="base" x1="{_TL}" x2="{_TL + _TPW}" y1="{y(autoscaler.base)}" '
        f'y2="{y(autoscaler.base)}" stroke="{BASE_COLOR}" stroke-width="1" '
        'stroke-dasharray="6 4"/>'
    )
    rows = [("new" if old is not None else "short", autoscaler)]
    if old is not None:
        rows.insert(0, ("old", old))
    for number, (label, side) in enumerate(rows):
        top = marks_top + number * _MARKS
        parts.append(f'<text x="{_TL - 6}" y="{top + 12}" text-anchor="end">{label}</text>')
        for css, color, steps in (
            ("short", SHORT_COLOR, side.short_steps),
            ("one-off", ONE_OFF_COLOR, side.one_off_steps),
        ):
            for start, end in _runs(sorted(steps)):
                width = max(2.0, round(x(end) - x(start), 1))
                title = (
                    f"{format_local(need.instant(start), autoscaler.zone)} to "
                    f"{datetime.fromtimestamp(need.instant(end), autoscaler.zone):%H:%M}: need "
                    "above the floor"
                )
                parts.append(
                    f'<rect class="mark {css}" x="{x(start)}" y="{top + 2}" width="{width}" '
                    f'height="{_MARKS - 5}" fill="{color}"><title>{escape(title)}</title></rect>'
                )
    zone = autoscaler.zone.key or "UTC"
    parts.append(f'<text x="{_TL}" y="{height - 2}">local time in {escape(zone)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    runs: list[list[int]] = []
    for index in indices:
        if runs and index == runs[-1][1]:
            runs[-1][1] = index + 1
        else:
            runs.append([index, index + 1])
    return [(a, b) for a, b in runs]


def _floor_line(
    floor: list[int], to_x: Scale, to_y: Scale, color: str, css: str, *, dashed: bool
) -> str:
    points: list[str] = []
    previous: int | None = None
    ends: list[int | None] = [*floor, None]
    for index, value in enumerate(ends):
        if value != previous:
            if previous is not None:
                points.append(f"{to_x(index)},{to_y(previous)}")
            if value is not None:
                points.append(f"{to_x(index)},{to_y(value)}")
            previous = value
    stroke = 'stroke-width="1.5" stroke-dasharray="7 4"' if dashed else 'stroke-width="2"'
    return (
        f'<polyline class="{css}" points="{" ".join(points)}" fill="none" stroke="{color}" '
        f'{stroke} shape-rendering="crispEdges"><title>{css.replace("-", " ")}</title></polyline>'
    )
