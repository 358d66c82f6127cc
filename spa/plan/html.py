"""`spa plan -o html`: the plan as one self-contained page, a timeline per autoscaler.

Made for pull-request reviews: a reviewer sees the week at a glance (when capacity rises, by how
much, and which Schedule does it) instead of reading a list of instants. The page is one file
with inline CSS and inline SVG, no script and no network access at all, so it can be attached
to a review, opened from a CI artifact or archived, and it shows the same thing everywhere.

Per autoscaler: the base minReplicas and maxReplicas as dashed lines, the effective values as
step lines over the horizon with the band between them shaded, one row of bars per Schedule
(its active windows; suspended ones hatched), and an axis in local time (the zone most of its
Schedules use, named under the axis). Every bar and step carries a tooltip with exact times,
and the transitions and Schedules follow as tables. A pause or an override in force, or a
malformed annotation, is said under the autoscaler's name in the table's words: the chart
draws the schedule, which is not what the controller does while it holds. `spa plan --diff
-o html` draws, in the same style, both sides' step lines and a mark at each instant whose
transition differs.
Hand-written rather than drawn with a plotting library: the drawing is a few rectangles and
polylines, and a plotting library would add a large dependency to the command-line tool.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, time, timedelta
from html import escape
from zoneinfo import ZoneInfo

from spa.plan.diff import AutoscalerDiff, Change, PlanDiff, TransitionChange
from spa.plan.planner import AutoscalerPlan, Plan
from spa.plan.render import (
    describe_error,
    describe_schedule_state,
    incident_lines,
    local_times,
    transition_zones,
)
from spa.plan.schedules import PlannedSchedule, ScheduleState, format_local, zone_name
from spa.schedule import UTC_ZONE, State, format_instant, from_instant, to_instant

__all__ = ["CHANGE_COLORS", "MAX_COLOR", "MIN_COLOR", "render_diff_html", "render_html"]

# Colours are part of the page's contract with its test (tests/integration/test_plan_html.py
# finds the step lines in a screenshot by them), so each is named once here.
MIN_COLOR = "#2563eb"
MAX_COLOR = "#ea580c"
BASE_COLOR = "#6b7280"
BAND_COLOR = "#dbeafe"
_BAR_COLORS = (
    "#0d9488",
    "#7c3aed",
    "#db2777",
    "#16a34a",
    "#ca8a04",
    "#0891b2",
    "#4f46e5",
    "#be123c",
)
_SUSPENDED_COLOR = "#9ca3af"

# Geometry of one timeline, in SVG user units (the SVG scales to the page's width).
_WIDTH = 1100
_LEFT = 190  # Schedule names
_RIGHT = 24
_TOP = 16
_CHART_HEIGHT = 170
_ROW_HEIGHT = 24
_AXIS_HEIGHT = 44
_PLOT_WIDTH = _WIDTH - _LEFT - _RIGHT

_STYLE = """
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111827;
       margin: 24px; background: #ffffff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 4px; }
p.summary, p.meta { margin: 0 0 8px; color: #374151; }
svg.chart { width: 100%; max-width: 1100px; height: auto; display: block; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; fill: #374151; }
svg text.name { font-weight: 600; fill: #111827; }
table { border-collapse: collapse; margin: 6px 0 0; }
th, td { text-align: left; padding: 2px 10px 2px 0; vertical-align: top; }
th { font-weight: 600; border-bottom: 1px solid #d1d5db; }
td.num { text-align: right; }
.legend span { display: inline-block; margin-right: 16px; }
.legend i { display: inline-block; width: 18px; height: 0; vertical-align: middle;
            margin-right: 6px; border-top: 2px solid; }
details { margin: 6px 0 0; }
section.errors li { color: #991b1b; }
section.warnings li { color: #92400e; }
p.incident { margin: 0 0 8px; padding: 4px 8px; background: #fef3c7;
             border-left: 3px solid #d97706; }
p.incident.ignored { background: #fee2e2; border-left-color: #dc2626; }
"""


def render_html(plan: Plan) -> str:
    """The whole page for `plan`."""
    heading = f"Plan from {format_instant(plan.at)} until {format_instant(plan.until)}"
    body = [
        f"<h1>{escape(heading)}</h1>",
        '<p class="meta legend">'
        f'<span><i style="border-color:{MIN_COLOR}"></i>effective minReplicas</span>'
        f'<span><i style="border-color:{MAX_COLOR}"></i>effective maxReplicas</span>'
        f'<span><i style="border-color:{BASE_COLOR};border-top-style:dashed"></i>'
        "base min / max</span>"
        "<span>bars: when each Schedule is active (hatched: suspended)</span></p>",
    ]
    if not plan.autoscalers:
        body.append("<p>No valid ScheduledPodAutoscaler found.</p>")
    body.extend(_section(plan, autoscaler) for autoscaler in plan.autoscalers)
    if plan.errors:
        items = "".join(f"<li>{escape(describe_error(error))}</li>" for error in plan.errors)
        body.append(_errors_section(len(plan.errors), items))
    if plan.warnings:
        items = "".join(f"<li>{escape(describe_error(found))}</li>" for found in plan.warnings)
        body.append(
            f'<section class="warnings"><h2>{len(plan.warnings)} warning(s)</h2>'
            f"<ul>{items}</ul></section>"
        )
    return _page(heading, _STYLE, body)


def _errors_section(count: int, items: str) -> str:
    """The section that lists a page's errors (`items`, as `<li>` elements)."""
    return f'<section class="errors"><h2>{count} error(s)</h2><ul>{items}</ul></section>'


def _page(heading: str, style: str, body: Sequence[str]) -> str:
    """A whole page, self-contained (its style inline, nothing fetched): the plan's and the
    diff's."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f"<title>{escape(heading)}</title>",
            f"<style>{style}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def axis_zone(autoscaler: AutoscalerPlan) -> ZoneInfo:
    """The zone of the time axis: the one most of the autoscaler's Schedules are written in
    (ties broken by name), UTC if it has none."""
    counts = Counter(zone_name(schedule.zone) for schedule in autoscaler.schedules)
    if not counts:
        return UTC_ZONE
    best = min(counts, key=lambda name: (-counts[name], name))
    return next(s.zone for s in autoscaler.schedules if zone_name(s.zone) == best)


def _section(plan: Plan, autoscaler: AutoscalerPlan) -> str:
    title = f"{autoscaler.namespace}/{autoscaler.name}"
    state = autoscaler.state
    summary = [f"now: min {state.min_replicas}, max {state.max_replicas}"]
    if autoscaler.base is not None:
        base_min = autoscaler.base.min_replicas
        shown = "unset (1)" if base_min is None else str(base_min)
        summary.insert(0, f"base: min {shown}, max {autoscaler.base.max_replicas}")
    summary.append("active: " + (", ".join(state.active) or "none"))
    summary.append(f"{len(autoscaler.transitions)} transition(s) in this period")
    return "\n".join(
        [
            f'<section class="timeline" data-autoscaler="{escape(title)}">',
            f"<h2>{escape(title)}</h2>",
            f'<p class="summary">{escape(" · ".join(summary))}</p>',
            *_incident(autoscaler),
            _chart(plan, autoscaler),
            _schedule_table(autoscaler),
            _transition_table(autoscaler),
            "</section>",
        ]
    )


def _incident(autoscaler: AutoscalerPlan) -> list[str]:
    """A pause, an override and malformed annotations under the autoscaler's name, in the
    words of the table (docs/plan.md): what the controller does instead of, or besides, the
    schedule the chart draws."""
    lines = incident_lines(autoscaler.incident)
    # The malformed annotations come last, one line each.
    held = len(lines) - len(autoscaler.incident.errors)
    return [
        f'<p class="incident{"" if index < held else " ignored"}">{escape(line)}</p>'
        for index, line in enumerate(lines)
    ]


class _Scale:
    def __init__(self, plan: Plan, top: float, ceiling: int) -> None:
        self.low, self.high = plan.at, plan.until
        self.top = top
        self.ceiling = ceiling

    def x(self, instant: int) -> float:
        share = (instant - self.low) / (self.high - self.low)
        return round(_LEFT + share * _PLOT_WIDTH, 1)

    def y(self, replicas: int) -> float:
        # Whole units, so that horizontal lines fall on whole pixels and stay crisp.
        return float(round(self.top + _CHART_HEIGHT * (1 - replicas / self.ceiling)))


def _chart(plan: Plan, autoscaler: AutoscalerPlan) -> str:
    steps = [(plan.at, autoscaler.state), *autoscaler.transitions]
    values = [v for _, s in steps for v in (s.min_replicas, s.max_replicas)]
    if autoscaler.base is not None:
        values.append(autoscaler.base.max_replicas)
    ceiling = _nice_ceiling(max(values, default=1))
    scale = _Scale(plan, _TOP, ceiling)
    rows_top = _TOP + _CHART_HEIGHT + 14
    rows = autoscaler.schedules
    axis_top = rows_top + max(1, len(rows)) * _ROW_HEIGHT + 6
    height = axis_top + _AXIS_HEIGHT
    zone = axis_zone(autoscaler)
    parts = [
        f'<svg class="chart" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" '
        f'height="{height}" role="img" '
        f'aria-label="{escape(f"Timeline of {autoscaler.namespace}/{autoscaler.name}")}">',
        "<defs>"
        '<pattern id="suspended" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)">'
        f'<rect width="3" height="6" fill="{_SUSPENDED_COLOR}"/></pattern></defs>',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{_PLOT_WIDTH}" height="{_CHART_HEIGHT}" '
        'fill="#f9fafb" stroke="#e5e7eb"/>',
    ]
    parts.extend(_grid(scale))
    parts.extend(_days(plan, zone, scale, _TOP, axis_top))
    parts.append(_band(steps, plan.until, scale))
    parts.append(_steps("max", MAX_COLOR, steps, plan.until, scale, lambda s: s.max_replicas))
    parts.append(_steps("min", MIN_COLOR, steps, plan.until, scale, lambda s: s.min_replicas))
    # The base lines go on top: dashed, they let the step lines show through where equal.
    if autoscaler.base is not None:
        base = autoscaler.base
        for label, value in (
            ("base minReplicas", base.min_replicas or 1),
            ("base maxReplicas", base.max_replicas),
        ):
            parts.append(
                f'<line class="base" x1="{_LEFT}" x2="{_LEFT + _PLOT_WIDTH}" '
                f'y1="{scale.y(value)}" y2="{scale.y(value)}" stroke="{BASE_COLOR}" '
                'stroke-width="1.5" stroke-dasharray="6 4" shape-rendering="crispEdges">'
                f"<title>{escape(f'{label}: {value}')}</title></line>"
            )
    for index, schedule in enumerate(rows):
        parts.extend(_schedule_row(plan, schedule, index, rows_top + index * _ROW_HEIGHT, scale))
    if not rows:
        parts.append(
            f'<text x="{_LEFT}" y="{rows_top + 16}">no Schedule: the base values apply</text>'
        )
    parts.append(_zone_footer(plan.at, zone, height))
    parts.append("</svg>")
    return "\n".join(parts)


def _zone_footer(at: int, zone: ZoneInfo, height: int) -> str:
    """The chart's last line: which zone its times are in, and its offset at the start."""
    offset = from_instant(at).astimezone(zone).strftime("%z")
    return (
        f'<text x="{_LEFT}" y="{height - 4}">local time in {escape(zone_name(zone))} '
        f"(UTC{offset[:3]}:{offset[3:]} at the start)</text>"
    )


def _nice_ceiling(value: int) -> int:
    """The top of the replica axis: a little above `value`, on a round number."""
    target = max(1.0, value * 1.15)
    magnitude = 10.0 ** math.floor(math.log10(target))
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= target:
            return max(1, math.ceil(step * magnitude))
    return math.ceil(target)


def _grid_step(ceiling: int) -> int:
    """The smallest round step (1, 2, 5, 10, 20, 25, 50, ...) giving at most six grid lines."""
    magnitude = 1
    while True:
        for step in (magnitude, 2 * magnitude, 5 * magnitude):
            if ceiling / step <= 6:
                return step
        magnitude *= 10


def _grid(scale: _Scale) -> list[str]:
    step = _grid_step(scale.ceiling)
    parts = []
    for value in range(0, scale.ceiling + 1, step):
        y = scale.y(value)
        parts.append(
            f'<line x1="{_LEFT}" x2="{_LEFT + _PLOT_WIDTH}" y1="{y}" y2="{y}" stroke="#e5e7eb" '
            'shape-rendering="crispEdges"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4}" text-anchor="end">{value}</text>'
        )
    parts.append(f'<text x="{_LEFT - 28}" y="{_TOP + 4}" text-anchor="end">replicas</text>')
    return parts


def _days(plan: Plan, zone: ZoneInfo, scale: _Scale, top: float, axis_top: float) -> list[str]:
    """Local midnights as vertical lines, each day's weekday and date under its middle, and
    06/12/18 h ticks when the horizon is short enough for them to be told apart."""
    days = max(1.0, (plan.until - plan.at) / 86400)
    label_every = max(1, math.ceil(days / 21))
    hours = (6, 12, 18) if days <= 10 else ()
    parts = []
    day = from_instant(plan.at).astimezone(zone).date()
    index = 0
    while True:
        midnight = to_instant(datetime.combine(day, time(0)), zone)
        if midnight > plan.until:
            break
        following = to_instant(datetime.combine(day + timedelta(days=1), time(0)), zone)
        if midnight >= plan.at:
            x = scale.x(midnight)
            parts.append(
                f'<line x1="{x}" x2="{x}" y1="{top}" y2="{axis_top + 6}" stroke="#d1d5db" '
                'shape-rendering="crispEdges"/>'
            )
        left, right = scale.x(max(midnight, plan.at)), scale.x(min(following, plan.until))
        # A day cut short by either end of the horizon is named only if its name fits.
        if index % label_every == 0 and right - left >= 64:
            parts.append(
                f'<text x="{round((left + right) / 2, 1)}" y="{axis_top + 18}" '
                f'text-anchor="middle">{day.strftime("%a %d %b")}</text>'
            )
        index += 1
        for hour in hours:
            tick = to_instant(datetime.combine(day, time(hour)), zone)
            if plan.at <= tick <= plan.until:
                x = scale.x(tick)
                parts.append(
                    f'<line x1="{x}" x2="{x}" y1="{axis_top}" y2="{axis_top + 4}" '
                    'stroke="#9ca3af"/>'
                )
                if days <= 3:
                    parts.append(
                        f'<text x="{x}" y="{axis_top + 30}" text-anchor="middle">{hour:02d}</text>'
                    )
        day += timedelta(days=1)
    return parts


def _segments(steps: Sequence[tuple[int, State]], until: int) -> Iterable[tuple[int, int, State]]:
    for index, (start, state) in enumerate(steps):
        end = steps[index + 1][0] if index + 1 < len(steps) else until
        yield start, end, state


def _steps(
    css: str,
    color: str,
    steps: Sequence[tuple[int, State]],
    until: int,
    scale: _Scale,
    value_of: Callable[[State], int],
    *,
    label: str | None = None,
    dashed: bool = False,
) -> str:
    points: list[str] = []
    for start, end, state in _segments(steps, until):
        value = value_of(state)
        points += [f"{scale.x(start)},{scale.y(value)}", f"{scale.x(end)},{scale.y(value)}"]
    label = label or f"effective {css}Replicas"
    # The diff view draws the old side dashed and thinner, under the new side's solid line.
    stroke = 'stroke-width="1.5" stroke-dasharray="7 4"' if dashed else 'stroke-width="2.5"'
    return (
        f'<polyline class="{css}" points="{" ".join(points)}" fill="none" stroke="{color}" '
        f'{stroke} stroke-linejoin="miter" shape-rendering="crispEdges">'
        f"<title>{escape(label)}</title></polyline>"
    )


def _band(steps: Sequence[tuple[int, State]], until: int, scale: _Scale) -> str:
    rects = []
    for start, end, state in _segments(steps, until):
        top, bottom = scale.y(state.max_replicas), scale.y(state.min_replicas)
        width = round(scale.x(end) - scale.x(start), 1)
        rects.append(
            f'<rect x="{scale.x(start)}" y="{top}" width="{width}" height="{bottom - top}" '
            f'fill="{BAND_COLOR}">'
            f"<title>{escape(_step_title(start, end, state))}</title></rect>"
        )
    return "".join(rects)


def _step_title(start: int, end: int, state: State) -> str:
    active = ", ".join(state.active) or "no Schedule"
    return (
        f"{format_instant(start)} to {format_instant(end)}: min {state.min_replicas}, "
        f"max {state.max_replicas} ({active})"
    )


def _schedule_row(
    plan: Plan, schedule: PlannedSchedule, index: int, top: float, scale: _Scale
) -> list[str]:
    color = _BAR_COLORS[index % len(_BAR_COLORS)]
    suspended = schedule.state is ScheduleState.SUSPENDED
    label = f"{schedule.name} (suspended)" if suspended else schedule.name
    shown = label if len(label) <= 30 else f"{label[:29]}…"
    parts = [
        f'<text class="name" x="{_LEFT - 8}" y="{top + 16}" text-anchor="end">{escape(shown)}'
        f"<title>{escape(label)}</title></text>",
        f'<line x1="{_LEFT}" x2="{_LEFT + _PLOT_WIDTH}" y1="{top + _ROW_HEIGHT}" '
        f'y2="{top + _ROW_HEIGHT}" stroke="#f3f4f6" shape-rendering="crispEdges"/>',
    ]
    intervals = (
        []
        if schedule.state is ScheduleState.COMPLETED
        else _merged(
            (o.start, o.end) for o in schedule.timeline.window.occurrences(plan.at, plan.until)
        )
    )
    for start, end in intervals:
        start, end = max(start, plan.at), min(end, plan.until)
        x = scale.x(start)
        width = max(1.5, round(scale.x(end) - x, 1))
        fill = "url(#suspended)" if suspended else color
        title = _bar_title(schedule, start, end)
        parts.append(
            f'<rect class="window" x="{x}" y="{top + 5}" width="{width}" height="14" rx="2" '
            f'fill="{fill}"><title>{escape(title)}</title></rect>'
        )
    if not intervals:
        note = describe_schedule_state(schedule)
        parts.append(f'<text x="{_LEFT + 6}" y="{top + 16}">{escape(note)}</text>')
    return parts


def _merged(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _bar_title(schedule: PlannedSchedule, start: int, end: int) -> str:
    bounds = []
    if schedule.min_replicas is not None:
        bounds.append(f"min {schedule.min_replicas}")
    if schedule.max_replicas is not None:
        bounds.append(f"max {schedule.max_replicas}")
    suspended = " (suspended: does not apply)" if schedule.state is ScheduleState.SUSPENDED else ""
    return (
        f"{schedule.name}{suspended}: {format_local(start, schedule.zone)} to "
        f"{format_local(end, schedule.zone)} ({format_instant(start)} to {format_instant(end)}); "
        + ", ".join(bounds)
    )


def _schedule_table(autoscaler: AutoscalerPlan) -> str:
    if not autoscaler.schedules:
        return ""
    rows = "".join(
        "<tr>"
        f"<td>{escape(s.name)}</td><td>{escape(s.type)}</td><td>{escape(s.window)}</td>"
        f"<td>{escape(zone_name(s.zone))}</td>"
        f'<td class="num">{"-" if s.min_replicas is None else s.min_replicas}</td>'
        f'<td class="num">{"-" if s.max_replicas is None else s.max_replicas}</td>'
        f"<td>{escape(describe_schedule_state(s))}</td>"
        "</tr>"
        for s in autoscaler.schedules
    )
    return (
        "<table><tr><th>Schedule</th><th>type</th><th>window</th><th>time zone</th>"
        f"<th>min</th><th>max</th><th>state</th></tr>{rows}</table>"
    )


def _transition_table(autoscaler: AutoscalerPlan) -> str:
    if not autoscaler.transitions:
        return "<p>No transition in this period.</p>"
    zones = transition_zones(autoscaler)
    rows = "".join(
        "<tr>"
        f"<td>{format_instant(instant)}</td>"
        f'<td class="num">{state.min_replicas}</td><td class="num">{state.max_replicas}</td>'
        f"<td>{escape(', '.join(state.active) or '-')}</td>"
        f"<td>{escape(local_times(instant, zones.get(instant, [])))}</td>"
        "</tr>"
        for instant, state in autoscaler.transitions
    )
    return (
        f"<details><summary>{len(autoscaler.transitions)} transition(s)</summary>"
        "<table><tr><th>from (UTC)</th><th>min</th><th>max</th><th>active Schedules</th>"
        f"<th>local time</th></tr>{rows}</table></details>"
    )


# The diff view (`spa plan --diff -o html`, docs/plan.md "`--diff`"): per autoscaler that
# differs, the old side's step lines dashed under the new side's solid ones, a mark under the
# chart at every instant that differs, and the differing transitions as a table.
CHANGE_COLORS = {Change.ADDED: "#16a34a", Change.REMOVED: "#dc2626", Change.CHANGED: "#d97706"}
_MARK_ROW = 22

_DIFF_STYLE = """
tr.added td { background: #dcfce7; }
tr.removed td { background: #fee2e2; }
tr.changed td { background: #fef3c7; }
p.unchanged { margin: 28px 0 0; color: #374151; }
"""


def render_diff_html(diff: PlanDiff) -> str:
    """The whole page for `diff`, in the style of `render_html`."""
    heading = f"Plan diff from {format_instant(diff.at)} until {format_instant(diff.until)}"
    marks = "".join(
        f'<span><i style="border-color:{CHANGE_COLORS[change]};border-top-width:6px"></i>'
        f"transition {change.value}</span>"
        for change in Change
    )
    body = [
        f"<h1>{escape(heading)}</h1>",
        f'<p class="meta">old: <code>{escape(diff.old_label)}</code> · new: '
        f"<code>{escape(diff.new_label)}</code></p>",
        '<p class="meta legend">'
        f'<span><i style="border-color:{MIN_COLOR}"></i>minReplicas</span>'
        f'<span><i style="border-color:{MAX_COLOR}"></i>maxReplicas</span>'
        f'<span><i style="border-color:{BASE_COLOR}"></i>new: solid</span>'
        f'<span><i style="border-color:{BASE_COLOR};border-top-style:dashed"></i>old: dashed'
        f"</span>{marks}</p>",
    ]
    if not diff.differs:
        body.append("<p>No transition differs.</p>")
    body.extend(_diff_section(diff, autoscaler) for autoscaler in diff.autoscalers)
    unchanged = ", ".join(f"{namespace}/{name}" for namespace, name in diff.unchanged)
    body.append(
        f'<p class="unchanged">Unchanged: {len(diff.unchanged)} ScheduledPodAutoscaler(s)'
        + (f" ({escape(unchanged)})" if unchanged else "")
        + "</p>"
    )
    if diff.errors:
        items = "".join(
            f"<li>{escape(found.side.value)}: {escape(describe_error(found.error))}</li>"
            for found in diff.errors
        )
        body.append(_errors_section(len(diff.errors), items))
    return _page(heading, _STYLE + _DIFF_STYLE, body)


def _diff_section(diff: PlanDiff, autoscaler: AutoscalerDiff) -> str:
    if autoscaler.change is Change.CHANGED:
        counts = [
            f"{autoscaler.count(change)} {change.value}"
            for change in Change
            if autoscaler.count(change)
        ]
        if autoscaler.start is not None:
            counts.insert(0, "values at the start changed")
    else:
        counts = [f"{len(autoscaler.transitions)} transition(s) in the range"]
    summary = [autoscaler.change.value, *counts]
    return "\n".join(
        [
            f'<section class="diff" data-autoscaler="{escape(autoscaler.title)}" '
            f'data-change="{autoscaler.change.value}">',
            f"<h2>{escape(autoscaler.title)}</h2>",
            f'<p class="summary">{escape(" · ".join(summary))}</p>',
            _diff_chart(diff, autoscaler),
            _diff_table(autoscaler),
            "</section>",
        ]
    )


def _diff_chart(diff: PlanDiff, autoscaler: AutoscalerDiff) -> str:
    sides = (("old", autoscaler.old), ("new", autoscaler.new))
    drawn = [(side, plan) for side, plan in sides if plan is not None]
    steps_of = {side: [(diff.at, plan.state), *plan.transitions] for side, plan in drawn}
    values = [
        v for steps in steps_of.values() for _, s in steps for v in (s.min_replicas, s.max_replicas)
    ]
    ceiling = _nice_ceiling(max(values, default=1))
    scale = _Scale(diff.new, _TOP, ceiling)
    marks_top = _TOP + _CHART_HEIGHT + 4
    axis_top = marks_top + _MARK_ROW
    height = axis_top + _AXIS_HEIGHT
    zone = axis_zone(drawn[-1][1])  # the new side's, or the old one's for a removed autoscaler
    parts = [
        f'<svg class="chart" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" '
        f'height="{height}" role="img" '
        f'aria-label="{escape(f"Changes of {autoscaler.title}")}">',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{_PLOT_WIDTH}" height="{_CHART_HEIGHT}" '
        'fill="#f9fafb" stroke="#e5e7eb"/>',
    ]
    parts.extend(_grid(scale))
    parts.extend(_days(diff.new, zone, scale, _TOP, axis_top))
    if "new" in steps_of:
        parts.append(_band(steps_of["new"], diff.until, scale))
    for side, steps in steps_of.items():
        dashed = side == "old"
        for css, color, value_of in (
            ("max", MAX_COLOR, _max_of),
            ("min", MIN_COLOR, _min_of),
        ):
            parts.append(
                _steps(
                    f"{side}-{css}",
                    color,
                    steps,
                    diff.until,
                    scale,
                    value_of,
                    label=f"{side} effective {css}Replicas",
                    dashed=dashed,
                )
            )
    parts.append(f'<text x="{_LEFT - 8}" y="{marks_top + 14}" text-anchor="end">changes</text>')
    for entry in autoscaler.transitions:
        x = scale.x(entry.time)
        parts.append(
            f'<rect class="mark {entry.change.value}" x="{round(x - 3, 1)}" y="{marks_top + 3}" '
            f'width="6" height="14" fill="{CHANGE_COLORS[entry.change]}">'
            f"<title>{escape(_mark_title(entry))}</title></rect>"
        )
    parts.append(_zone_footer(diff.at, zone, height))
    parts.append("</svg>")
    return "\n".join(parts)


def _min_of(state: State) -> int:
    return state.min_replicas


def _max_of(state: State) -> int:
    return state.max_replicas


def _describe_state(state: State | None) -> str:
    if state is None:
        return "no transition"
    active = ", ".join(state.active) or "no Schedule"
    return f"min {state.min_replicas}, max {state.max_replicas} ({active})"


def _mark_title(entry: TransitionChange) -> str:
    return (
        f"{format_instant(entry.time)} {entry.change.value}: old {_describe_state(entry.old)}; "
        f"new {_describe_state(entry.new)}"
    )


def _diff_table(autoscaler: AutoscalerDiff) -> str:
    zones = {
        side: transition_zones(plan)
        for side, plan in (("old", autoscaler.old), ("new", autoscaler.new))
        if plan is not None
    }
    entries = [autoscaler.start] if autoscaler.start is not None else []
    rows = []
    for entry in [*entries, *autoscaler.transitions]:
        if entry is autoscaler.start:
            local = "start of the range"
        else:
            side = "new" if entry.new is not None else "old"
            local = local_times(entry.time, zones[side].get(entry.time, []))
        rows.append(
            f'<tr class="{entry.change.value}">'
            f"<td>{_MARKS_HTML[entry.change]}</td><td>{format_instant(entry.time)}</td>"
            f"<td>{escape(_describe_state(entry.old))}</td>"
            f"<td>{escape(_describe_state(entry.new))}</td>"
            f"<td>{escape(local)}</td></tr>"
        )
    return (
        "<table><tr><th></th><th>from (UTC)</th><th>old</th><th>new</th><th>local time</th>"
        f"</tr>{''.join(rows)}</table>"
    )


_MARKS_HTML = {Change.ADDED: "+", Change.REMOVED: "&minus;", Change.CHANGED: "!"}
