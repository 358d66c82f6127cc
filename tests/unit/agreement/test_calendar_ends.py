"""The ends of the calendar (docs/schedules.md, "The end of the calendar"): every window type,
with calendars, holidays and lead times that reach 9999-12-31 or 0001-01-01, asked about any
instant up to 9999-12-31T23:59:59Z, answers without an exception, and finds no boundary
outside the engine's instants, so that any answer can be shown in any zone. `spa plan` (every
output), the controller and `kubectl spa status` then say "no start before 9999-12-31" where
the search reaches the end, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spa.api import compile_schedule, parse_schedule
from spa.cli.status_render import render_status
from spa.cli.status_report import build_status
from spa.controller.decide import WakeUp
from spa.plan import Document, build_plan
from spa.plan.html import render_html
from spa.plan.render import render_json, render_table, render_yaml
from spa.plan.schedules import format_local
from spa.schedule import (
    FIRST_INSTANT,
    LAST_INSTANT,
    Base,
    Rule,
    Timeline,
    format_instant,
    next_transition,
    skipped_between,
    state_at,
    transitions_between,
)
from tests.builders import OFFICE_HOURS, autoscaler, calendar, manifests, schedule
from tests.unit.spa_model import OURS, Server
from tests.unit.spa_model import autoscaler as stored_autoscaler
from tests.unit.spa_model import schedule as stored_schedule
from tests.unit.status_objects import live_autoscaler, live_schedule, objects

SPA = Path(sys.executable).parent / "spa"
DAY = 86400


def instant(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


# The zones furthest from UTC at each end of the calendar (+14 and -12 now; America/Sitka's
# local mean time was +14:58 in the year 1), and a few with daylight-saving time.
ZONES = (
    "UTC",
    "Pacific/Kiritimati",
    "Etc/GMT+12",
    "America/Sitka",
    "America/New_York",
    "Europe/Berlin",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
)
# Cron expressions that match often, yearly, rarely, only at the end of a month or a year,
# and never (`*/31` of February on its fifth Monday).
CRONS = (
    "*/30 * * * *",
    "0 9 * * 1-5",
    "@yearly",
    "0 23 31 12 *",
    "0 0 L 12 *",
    "0 0 LW * *",
    "0 0 * 12 5#5",
    "0 0 29 2 1",
    "0 2 * 2 1#5",
    "0 2 */31 2 1#5",
)
# Dates at the ends of the calendar and around them.
EDGE_DATES = (
    "0001-01-01",
    "0001-01-02",
    "0001-01-07",
    "9998-12-31",
    "9999-01-01",
    "9999-12-24",
    "9999-12-30",
    "9999-12-31",
)
clock = st.builds("{:02d}:{:02d}".format, st.integers(0, 23), st.sampled_from([0, 30, 59]))
day_names = st.sampled_from(
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
)


@st.composite
def one_shots(draw: st.DrawFn) -> dict[str, Any]:
    """A OneShot near either end: from a day at an edge, for minutes to a year."""
    year, first = draw(st.sampled_from([(1, 1), (2, 1), (9998, 12), (9999, 1), (9999, 12)]))
    start = datetime(year, first, draw(st.integers(1, 28)), draw(st.integers(0, 23)))
    length = draw(st.sampled_from([60, 3600, 25 * 3600, 40 * DAY, 365 * DAY]))
    end = datetime.fromtimestamp(
        min(start.replace(tzinfo=UTC).timestamp() + length, instant("9999-12-31T23:59")), UTC
    ).replace(tzinfo=None)
    if end <= start:
        end = start.replace(minute=59)
    return {
        "type": "OneShot",
        "startTime": start.strftime("%Y-%m-%dT%H:%M").zfill(16),
        "endTime": end.strftime("%Y-%m-%dT%H:%M").zfill(16),
    }


@st.composite
def windows(draw: st.DrawFn) -> dict[str, Any]:
    """The spec of a Schedule of any type, in any of ZONES, with date rules at the edges."""
    kind = draw(st.sampled_from(["Daily", "Weekly", "WeeklySpan", "OneShot", "Cron"]))
    spec: dict[str, Any] = {"timeZone": draw(st.sampled_from(ZONES)), "minReplicas": 5}
    if kind == "OneShot":
        return spec | draw(one_shots())
    if kind == "Cron":
        spec |= {
            "type": "Cron",
            "schedule": draw(st.sampled_from(CRONS)),
            "duration": draw(st.sampled_from(["1m", "1h", "30h", "744h"])),
        }
    else:
        spec |= {"type": kind, "startTime": draw(clock), "endTime": draw(clock)}
        if kind != "Daily":
            spec |= {"startDayOfWeek": draw(day_names), "endDayOfWeek": draw(day_names)}
    dates = st.sampled_from(EDGE_DATES)
    if draw(st.booleans()):
        spec["startDate"] = draw(dates)
    if draw(st.booleans()):
        spec["endDate"] = draw(dates)
    if draw(st.booleans()):
        spec["excludeDates"] = sorted(draw(st.sets(dates, min_size=1, max_size=3)))
    if draw(st.integers(0, 3)) == 0:
        spec["holidays"] = {"country": "US", "mode": draw(st.sampled_from(["Skip", "Only"]))}
    if draw(st.booleans()):
        spec["leadTime"] = draw(st.sampled_from(["1m", "90m", "24h"]))
    return spec


def compiled_window(spec: dict[str, Any]) -> Any | None:
    """The engine's window of `spec` as the controller compiles it, or None when the spec is
    refused (a startDate after its endDate, a OneShot that is not within the years 1 to 9999
    in UTC): refused with a message, which tests/unit/api/test_validation.py covers."""
    try:
        compiled = compile_schedule(parse_schedule(schedule(**spec)).spec)
    except ValueError:
        return None
    return compiled.applied_window(0)


# Any instant up to the end of 9999-12-31 (and a little beyond), most near the end, some near
# the start of the calendar.
instants = st.one_of(
    st.integers(instant("9950-01-01T00:00"), LAST_INSTANT + DAY - 1),
    st.integers(LAST_INSTANT - 40 * DAY, LAST_INSTANT + DAY - 1),
    st.integers(FIRST_INSTANT - DAY, instant("0003-01-01T00:00")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(windows(), min_size=1, max_size=3), moment=instants)
def test_no_question_to_the_engine_fails_up_to_the_end_of_the_calendar(
    specs: list[dict[str, Any]], moment: int
) -> None:
    rules = [
        Rule(f"s{index}", Timeline(window), min_replicas=index + 4)
        for index, spec in enumerate(specs)
        if (window := compiled_window(spec)) is not None
    ]
    base = Base(min_replicas=2, max_replicas=8)
    for rule in rules:
        timeline = rule.timeline
        found = timeline.next_boundary(moment)
        if found is not None:
            assert moment < found <= LAST_INSTANT
            assert found >= FIRST_INSTANT
            # A boundary flips the window's state, and can be shown in its own zone.
            assert timeline.is_active(found) != timeline.is_active(found - 1)
            format_local(found, timeline.window.zone)
        for boundary in timeline.boundaries_between(moment - 8 * DAY, moment + 8 * DAY):
            assert FIRST_INSTANT <= boundary <= LAST_INSTANT
            format_local(boundary, timeline.window.zone)
        skipped_between(timeline.window, moment, moment + 8 * DAY)
        timeline.window.completed(moment)
    state_at(base, rules, moment)
    upcoming = next_transition(base, rules, moment)
    assert upcoming is None or moment < upcoming <= LAST_INSTANT
    for at, _ in transitions_between(base, rules, moment, moment + 8 * DAY):
        format_instant(at)


def test_the_search_for_a_start_stops_at_the_end_of_the_calendar() -> None:
    """A yearly window whose next start would be in the year 10000 has none; one that opens on
    9999-12-31 in Kiritimati (+14) starts on the 30th in UTC, before the end, and never ends
    within the calendar."""
    yearly = compiled_window({"type": "Cron", "schedule": "@yearly", "duration": "1h"})
    assert yearly is not None
    assert Timeline(yearly).next_boundary(instant("9999-06-01T00:00")) is None
    late = compiled_window(
        {
            "type": "Daily",
            "startTime": "09:00",
            "endTime": "08:00",
            "timeZone": "Pacific/Kiritimati",
        }
    )
    assert late is not None
    timeline = Timeline(late)
    start = instant("9999-12-30T19:00")  # 9999-12-31 09:00 in Kiritimati
    assert timeline.next_boundary(start - 1) == start
    assert timeline.is_active(LAST_INSTANT)
    assert timeline.next_boundary(start) is None
    # After the end of the calendar, the state at its end holds.
    assert timeline.is_active(LAST_INSTANT + 12 * 3600)


def test_an_end_date_on_the_last_day_of_the_calendar_is_a_window_that_goes_on() -> None:
    """endDate 9999-12-31, "for ever", made the controller's compilation overflow."""
    window = compiled_window(
        {"type": "Daily", "startTime": "09:00", "endTime": "17:00", "endDate": "9999-12-31"}
    )
    assert window is not None
    assert not window.completed(instant("2026-11-23T00:00"))
    assert Timeline(window).next_boundary(instant("2026-11-23T00:00")) == instant(
        "2026-11-23T09:00"
    )


# -- spa plan -----------------------------------------------------------------------------------

PLAN_LIMIT = instant("9999-01-01T00:00")  # the last --at and --until of spa plan (docs/plan.md)
FAR = calendar(name="far", dateRanges=[{"start": "9990-01-01", "end": "9999-12-31"}])


def planned(specs: list[dict[str, Any]], at: int, until: int) -> list[str]:
    """Every output of the plan of web with Schedules of `specs` and FAR."""
    bodies = [FAR, autoscaler(leadTime="10m")]
    bodies += [schedule(name=f"s{index}", **spec) for index, spec in enumerate(specs)]
    documents = [Document("edge.yaml", index, body) for index, body in enumerate(bodies, 1)]
    plan = build_plan(documents, [], at=at, until=until)
    return [render(plan) for render in (render_table, render_json, render_yaml, render_html)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(windows(), min_size=1, max_size=3),
    at=st.one_of(
        st.integers(instant("9950-01-01T00:00"), PLAN_LIMIT - DAY),
        st.integers(PLAN_LIMIT - 30 * DAY, PLAN_LIMIT - DAY),
    ),
    days=st.integers(1, 30),
    shared=st.booleans(),
)
def test_every_output_of_a_plan_near_the_end_is_made(
    specs: list[dict[str, Any]], at: int, days: int, shared: bool
) -> None:
    if shared:
        specs = [
            spec | {"calendars": [{"kind": "ClusterCalendar", "name": "far"}]} for spec in specs
        ]
    table, document, _, page = planned(specs, at, min(at + days * DAY, PLAN_LIMIT))
    assert json.loads(document)["autoscalers"][0]["name"] == "web"
    assert page.rstrip().endswith("</html>")
    assert "Plan from" in table


def test_a_window_kept_to_holidays_within_a_year_of_the_end_is_planned() -> None:
    """Found by the property above: the plan's warning that a window never starts looked a
    year ahead of `at`, past 9999-12-31, with a start date that made it look at all."""
    only_holidays = {
        "type": "Daily",
        "startTime": "00:00",
        "endTime": "00:00",
        "startDate": "0001-01-01",
        "holidays": {"country": "US", "mode": "Only"},
    }
    at = instant("9998-12-31T00:00")
    table, document, _, page = planned([only_holidays], at, at + DAY)
    assert json.loads(document)["autoscalers"][0]["name"] == "web"
    assert page.rstrip().endswith("</html>")
    assert "Plan from" in table


def test_a_plan_says_where_the_search_stopped() -> None:
    """41 years ahead of 9960 is past the calendar: a window that does not start before its end
    says so, rather than that it was looked for over 41 years."""
    never = {"type": "Cron", "schedule": "0 2 */31 2 1#5", "duration": "1h"}
    at = instant("9960-01-01T00:00")
    table = planned([never], at, at + 7 * DAY)[0]
    assert "no start before 9999-12-31" in table
    earlier = instant("2026-01-01T00:00")
    assert "no start in the next 41 years" in planned([never], earlier, earlier + 7 * DAY)[0]


EDGE = manifests(
    autoscaler(minReplicas=2, maxReplicas=8, metrics=None),
    calendar(name="far", dateRanges=[{"start": "9990-01-01", "end": "9999-12-31"}]),
    schedule(
        name="office-hours",
        minReplicas=5,
        **{**OFFICE_HOURS, "timeZone": "Pacific/Kiritimati"},
        calendars=[{"kind": "ClusterCalendar", "name": "far", "mode": "Only"}],
        endDate="9999-12-31",
    ),
    schedule(name="leap-monday", type="Cron", schedule="0 0 * 2 1#5", duration="1h", minReplicas=4),
)


@pytest.mark.parametrize("output", ["table", "json", "yaml", "html"])
@pytest.mark.parametrize("at", ["9998-12-20T00:00:00Z", "9960-01-01T00:00:00Z"])
def test_spa_plan_near_the_end_writes_its_output(tmp_path: Path, at: str, output: str) -> None:
    """The two commands of the report: a calendar up to 9999-12-31, and a 41-year search from
    9960; each output is complete, and nothing is on standard error."""
    (tmp_path / "edge.yaml").write_text(EDGE)
    result = subprocess.run(
        [str(SPA), "plan", "-f", "edge.yaml", "--at", at, "-o", output],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert (result.returncode, result.stderr) == (0, "")
    if output == "json":
        assert json.loads(result.stdout)["autoscalers"][0]["name"] == "web"
    elif output == "yaml":
        assert yaml.safe_load(result.stdout)["autoscalers"][0]["name"] == "web"
    elif output == "html":
        assert result.stdout.rstrip().endswith("</html>")
    else:
        assert "leap-monday" in result.stdout


def test_a_plan_of_days_past_its_last_instant_ends_there(tmp_path: Path) -> None:
    """`--at` a few days before 9999-01-01 with the default 7 days plans up to 9999-01-01; an
    `--at` outside the instants a plan covers is one line of error, never a traceback."""
    (tmp_path / "edge.yaml").write_text(EDGE)

    def plan(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SPA), "plan", "-f", "edge.yaml", *arguments],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    result = plan("--at", "9998-12-30T00:00:00Z", "-o", "json")
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout)["until"] == "9999-01-01T00:00:00Z"
    for at in ("9999-01-01T00:00:00Z", "9999-12-31T23:59:00Z", "0001-01-01T00:00:00Z"):
        refused = plan("--at", at)
        assert (refused.returncode, refused.stdout) == (2, "")
        assert "Traceback" not in refused.stderr
        assert refused.stderr.splitlines()[-1].startswith("spa")


# -- the controller and kubectl spa status ------------------------------------------------------


@pytest.mark.parametrize(
    "window",
    [
        {"type": "Daily", "start": "20:00", "end": "04:00"},
        {"type": "Weekly", "startDayOfWeek": "Friday", "endDayOfWeek": "Monday"},
        {"type": "WeeklySpan", "startDayOfWeek": "Friday", "endDayOfWeek": "Monday"},
        {"type": "OneShot", "start": "9999-12-30T10:00", "end": "9999-12-31T10:00"},
        {
            "type": "Cron",
            "schedule": "0 0 29 2 1",
            "duration": "30h",
            "startTime": None,
            "endTime": None,
        },
    ],
    ids=lambda window: window["type"],
)
@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Etc/GMT+12"])
def test_the_controller_reconciles_up_to_the_end_of_the_calendar(
    window: dict[str, Any], zone: str
) -> None:
    """Reconciled at instants up to the last of 9999-12-31, with a calendar that reaches it:
    every pass ends, the next wake-up (if any) is within the calendar, and every status is
    written."""
    fields = {"endDate": "9999-12-31", "excludeDates": ["9999-12-31"], "timeZone": zone} | window
    if window["type"] == "OneShot":
        del fields["endDate"], fields["excludeDates"]
    server = Server(stored_autoscaler(), [stored_schedule("edge", owner=OURS, **fields)])
    memory = None
    for moment in (
        "9998-12-20T00:00",
        "9999-12-29T00:00",
        "9999-12-30T19:00",
        "9999-12-31T00:00",
        "9999-12-31T23:59",
    ):
        for _ in range(3):  # the HPA, then the statuses
            plan, memory, _ = server.reconcile(instant(moment), memory)
        assert server.schedules[0]["status"]["condition"] != "Degraded", server.schedules[0]
        assert isinstance(plan.requeue, WakeUp), plan
        assert not plan.requeue.backoff
        assert plan.requeue.at is None or plan.requeue.at <= LAST_INSTANT
        assert server.autoscaler is not None
        upcoming = server.autoscaler["status"].get("nextTransitionTime")
        assert upcoming is None or upcoming <= "9999-12-31T00:00:00Z"
    # At the end of the calendar, no transition is coming: the key waits for a change.
    assert plan.requeue == WakeUp(at=None)
    assert server.autoscaler is not None
    assert server.autoscaler["status"].get("nextTransitionTime") is None


@pytest.mark.parametrize("moment", ["9999-12-24T00:00", "9999-12-31T00:00", "9999-12-31T23:59"])
def test_kubectl_spa_status_near_the_end_of_the_calendar(moment: str) -> None:
    """Its eight days ahead reach past the calendar: they stop at its end."""
    edge = live_schedule(
        name="edge",
        type="Daily",
        startTime="09:00",
        endTime="08:00",
        timeZone="Pacific/Kiritimati",
        minReplicas=10,
        endDate="9999-12-31",
    )
    report = build_status(
        objects(autoscalers=[live_autoscaler()], schedules=[edge]), at=instant(moment)
    )
    (entry,) = report.autoscalers
    assert entry.plan is not None
    for output in ("table", "json", "yaml", "wide"):
        render_status(report, output)
    document = json.loads(render_status(report, "json"))
    assert all(
        t["time"] <= "9999-12-31T00:00:00Z" for t in document["autoscalers"][0]["transitions"]
    )
