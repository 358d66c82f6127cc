"""Lead time (docs/schedules.md, "Lead time"): the engine moves each start instant earlier by a
duration, across daylight-saving changes and into previous windows; the API reads and checks
`leadTime` on both kinds; `spa plan` shows the effective start."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any

import durationpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spa.api import (
    FieldError,
    InvalidObject,
    autoscaler_lead,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
)
from spa.schedule import (
    MAX_LEAD_SECONDS,
    Base,
    Calendar,
    CalendarWindow,
    CronExpression,
    CronWindow,
    LeadWindow,
    OneShotWindow,
    RecurringWindow,
    Rule,
    Timeline,
    WallClockError,
    Weekday,
    WeeklySpanWindow,
    from_instant,
    load_zone,
    next_transition,
    parse_duration,
    parse_hour_minute,
    parse_local_datetime,
    skipped_between,
    state_at,
    to_instant,
    transitions_between,
    weekdays_between,
    with_lead,
)
from tests.builders import autoscaler, schedule
from tests.unit.calendar_reference import (
    HORIZON,
    PROPERTY_SETTINGS,
    Case,
    active_in,
    cases,
    merged,
    reference,
)

HOUR = 3600


def utc(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def daily(start: str, end: str, zone: str = "UTC") -> RecurringWindow:
    return RecurringWindow(
        start=parse_hour_minute(start), end=parse_hour_minute(end), zone=load_zone(zone)
    )


def local(instant: int, zone: str) -> str:
    return from_instant(instant).astimezone(load_zone(zone)).strftime("%Y-%m-%d %H:%M %Z")


# -- the engine -------------------------------------------------------------------------------


def test_the_start_moves_and_the_end_stays() -> None:
    timeline = Timeline(with_lead(daily("08:00", "09:00"), 15 * 60))
    assert not timeline.is_active(utc("2026-11-16T07:44:59"))
    assert timeline.is_active(utc("2026-11-16T07:45:00"))
    assert timeline.is_active(utc("2026-11-16T08:59:59"))
    assert not timeline.is_active(utc("2026-11-16T09:00:00"))
    assert timeline.next_boundary(utc("2026-11-16T07:00:00")) == utc("2026-11-16T07:45:00")
    assert timeline.next_boundary(utc("2026-11-16T07:45:00")) == utc("2026-11-16T09:00:00")


def test_zero_lead_and_always_active_windows_are_unchanged() -> None:
    window = daily("08:00", "09:00")
    assert with_lead(window, 0) is window
    always = daily("00:00", "00:00")
    assert with_lead(always, HOUR) is always
    assert isinstance(with_lead(window, 1), LeadWindow)


@pytest.mark.parametrize("lead", [-1, MAX_LEAD_SECONDS + 1])
def test_lead_out_of_range_is_refused(lead: int) -> None:
    with pytest.raises(ValueError, match="lead time"):
        with_lead(daily("08:00", "09:00"), lead)


def test_spring_forward_moves_the_instant_not_the_wall_clock() -> None:
    # Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST. A 03:30 start with 2 h of lead starts
    # at 00:30 CET: two hours earlier in absolute time, three on the wall clock.
    zone = "Europe/Berlin"
    timeline = Timeline(with_lead(daily("03:30", "05:00", zone), 2 * HOUR))
    start = to_instant(datetime(2026, 3, 29, 3, 30), load_zone(zone))
    effective = timeline.next_boundary(utc("2026-03-28T12:00:00"))
    assert effective == start - 2 * HOUR
    assert local(effective, zone) == "2026-03-29 00:30 CET"
    # The day before, without a change, two hours are two hours of wall clock.
    before = timeline.next_boundary(utc("2026-03-27T12:00:00"))
    assert before is not None
    assert local(before, zone) == "2026-03-28 01:30 CET"


def test_fall_back_counts_the_repeated_hour() -> None:
    # Berlin, 2026-10-25: 03:00 CEST goes back to 02:00 CET. A 04:00 CET start with 3 h of
    # lead starts at 02:00 CEST, the first of the two 02:00s.
    zone = "Europe/Berlin"
    timeline = Timeline(with_lead(daily("04:00", "05:00", zone), 3 * HOUR))
    effective = timeline.next_boundary(utc("2026-10-24T12:00:00"))
    assert effective == utc("2026-10-25T00:00:00")
    assert local(effective, zone) == "2026-10-25 02:00 CEST"


def test_a_start_in_the_skipped_hour_is_resolved_before_the_lead() -> None:
    # 02:30 does not exist in Berlin on 2026-03-29; docs/schedules.md resolves it first, and
    # the lead is then taken from that instant.
    zone = load_zone("Europe/Berlin")
    window = daily("02:30", "04:00", "Europe/Berlin")
    start = to_instant(datetime(2026, 3, 29, 2, 30), zone)
    timeline = Timeline(with_lead(window, 30 * 60))
    assert timeline.next_boundary(utc("2026-03-28T12:00:00")) == start - 30 * 60


def test_a_lead_into_the_previous_interval_joins_the_two() -> None:
    # 08:00-20:00 every day; 12 h of lead starts each one at 20:00 the day before, exactly when
    # the previous one ends: always active, no boundary at all.
    joined = Timeline(with_lead(daily("08:00", "20:00"), 12 * HOUR))
    for hour in range(0, 48, 5):
        assert joined.is_active(utc("2026-11-16T00:00:00") + hour * HOUR)
    assert joined.boundaries_between(utc("2026-11-16T00:00:00"), utc("2026-11-20T00:00:00")) == []
    # 13 h reaches an hour into the previous interval: still joined.
    assert Timeline(with_lead(daily("08:00", "20:00"), 13 * HOUR)).is_active(
        utc("2026-11-16T19:30:00")
    )
    # 11 h leaves a gap from 20:00 to 21:00.
    gap = Timeline(with_lead(daily("08:00", "20:00"), 11 * HOUR))
    assert gap.boundaries_between(utc("2026-11-16T00:00:00"), utc("2026-11-17T00:00:00")) == [
        utc("2026-11-16T20:00:00"),
        utc("2026-11-16T21:00:00"),
    ]


def test_a_lead_overlapping_another_schedules_window() -> None:
    morning = Rule("morning", Timeline(daily("08:00", "09:00")), min_replicas=5)
    # 09:30-10:00 with 1 h of lead: from 08:30, while "morning" is still active.
    peak = Rule("peak", Timeline(with_lead(daily("09:30", "10:00"), HOUR)), min_replicas=10)
    base = Base(min_replicas=2, max_replicas=20)
    rules = [morning, peak]
    at_0845 = state_at(base, rules, utc("2026-11-16T08:45:00"))
    assert at_0845.active == ("morning", "peak")
    assert at_0845.min_replicas == 10
    assert next_transition(base, rules, utc("2026-11-16T08:00:00")) == utc("2026-11-16T08:30:00")
    changes = transitions_between(base, rules, utc("2026-11-16T07:00:00"), utc("2026-11-16T11:00"))
    assert [(from_instant(t).strftime("%H:%M"), s.min_replicas, s.active) for t, s in changes] == [
        ("08:00", 5, ("morning",)),
        ("08:30", 10, ("morning", "peak")),
        ("09:00", 10, ("peak",)),
        ("10:00", 2, ()),
    ]


def test_weekly_lead_reaches_into_the_previous_day() -> None:
    window = RecurringWindow(
        start=parse_hour_minute("00:30"),
        end=parse_hour_minute("02:00"),
        zone=load_zone("UTC"),
        days=weekdays_between(Weekday.Monday, Weekday.Monday),
    )
    timeline = Timeline(with_lead(window, HOUR))
    # 2026-11-15 is a Sunday.
    assert timeline.is_active(utc("2026-11-15T23:30:00"))
    assert not timeline.is_active(utc("2026-11-14T23:30:00"))


def test_oneshot_with_lead_ends_when_it_did() -> None:
    oneshot = OneShotWindow(
        start=parse_local_datetime("2026-12-24T18:00"),
        end=parse_local_datetime("2026-12-24T22:00"),
        zone=load_zone("UTC"),
    )
    timeline = Timeline(with_lead(oneshot, 20 * 60))
    assert timeline.is_active(utc("2026-12-24T17:40:00"))
    assert not timeline.is_active(utc("2026-12-24T17:39:59"))
    assert timeline.next_boundary(utc("2026-12-24T17:40:00")) == utc("2026-12-24T22:00:00")
    assert timeline.next_boundary(utc("2026-12-24T22:00:00")) is None


@settings(max_examples=200, deadline=None)
@given(
    start=st.integers(0, 24 * 60 - 1),
    length=st.integers(1, 24 * 60),
    lead=st.integers(0, MAX_LEAD_SECONDS),
    zone=st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]),
    offset=st.integers(0, 400 * 24 * HOUR),
)
def test_active_exactly_when_some_start_minus_lead_has_come(
    start: int, length: int, lead: int, zone: str, offset: int
) -> None:
    end = (start + length) % (24 * 60)
    window = daily(f"{start // 60:02d}:{start % 60:02d}", f"{end // 60:02d}:{end % 60:02d}", zone)
    instant = utc("2026-01-01T00:00:00") + offset
    # The reference: the window's own occurrences, each one's start moved by hand.
    reference = any(
        o.start - lead <= instant < o.end
        for o in window.occurrences(instant - 3 * 86400, instant + lead + 1)
    )
    assert Timeline(with_lead(window, lead)).is_active(instant) == reference


# -- with calendars and the other window types --------------------------------------------------


def test_an_excluded_date_goes_with_its_lead() -> None:
    # docs/schedules.md, "Lead time": Daily 00:30-06:00, 1 h of lead, 2026-12-25 excluded. The
    # 24th's window applies from 23:30 on the 23rd; the 25th's would from 23:30 on the 24th,
    # but its date is excluded, so nothing does.
    excluded = CalendarWindow(
        daily("00:30", "06:00"), Calendar(excluded=frozenset({date(2026, 12, 25)}))
    )
    timeline = Timeline(with_lead(excluded, HOUR))
    assert timeline.is_active(utc("2026-12-23T23:30:00"))
    assert not timeline.is_active(utc("2026-12-24T23:30:00"))
    assert not timeline.is_active(utc("2026-12-25T00:30:00"))
    assert timeline.next_boundary(utc("2026-12-24T12:00:00")) == utc("2026-12-25T23:30:00")
    # spa plan lists the skipped window where it would have started to apply.
    [skipped] = skipped_between(
        with_lead(excluded, HOUR), utc("2026-12-24T12:00:00"), utc("2026-12-26T00:00:00")
    )
    assert skipped.occurrence.day == date(2026, 12, 25)
    assert skipped.occurrence.start == utc("2026-12-24T23:30:00")
    assert skipped.reason == "excludeDates"


def test_the_start_date_judges_the_window_not_its_lead() -> None:
    # Cron at 00:15 on weekdays, 2 h, startDate Tuesday 2026-11-17, 30 min of lead: Monday's
    # window is outside the dates, lead and all; Tuesday's lead begins on Monday evening.
    window = CalendarWindow(
        CronWindow(CronExpression("15 0 * * MON-FRI"), 2 * HOUR, load_zone("UTC")),
        Calendar(start_date=date(2026, 11, 17)),
    )
    timeline = Timeline(with_lead(window, 30 * 60))
    assert not timeline.is_active(utc("2026-11-15T23:50:00"))
    assert not timeline.is_active(utc("2026-11-16T00:15:00"))
    assert timeline.next_boundary(utc("2026-11-16T00:00:00")) == utc("2026-11-16T23:45:00")
    assert timeline.is_active(utc("2026-11-16T23:45:00"))


def test_weekly_span_moves_its_weekly_start() -> None:
    # Friday 18:00 to Monday 08:00 in New York, 3 h of lead: from Friday 15:00.
    span = WeeklySpanWindow(
        Weekday.Friday,
        parse_hour_minute("18:00"),
        Weekday.Monday,
        parse_hour_minute("08:00"),
        load_zone("America/New_York"),
    )
    timeline = Timeline(with_lead(span, 3 * HOUR))
    # 2026-11-20 is a Friday; New York is UTC-5 then.
    assert timeline.next_boundary(utc("2026-11-19T00:00:00")) == utc("2026-11-20T20:00:00")
    assert timeline.next_boundary(utc("2026-11-20T20:00:00")) == utc("2026-11-23T13:00:00")


@PROPERTY_SETTINGS
@given(
    cases(),
    # Long leads often: they carry a window's start into the day before, where the date rules
    # would bite if they judged the moved start.
    st.one_of(
        st.sampled_from([HOUR, 6 * HOUR, 23 * HOUR, MAX_LEAD_SECONDS]),
        st.integers(0, MAX_LEAD_SECONDS),
    ),
)
def test_lead_with_calendars_matches_the_reference(case_: tuple[int, Case], lead: int) -> None:
    """Every window type with bounds, excluded dates and holidays: the calendar judges each
    window by its date (minute-by-minute reference of test_engine_calendar_properties), and
    only a window that happens opens `lead` seconds early; its end stays."""
    instant, case = case_
    occurrences, _ = reference(case, instant)
    runs = merged([(s - lead, e) for day, s, e in occurrences if case.verdict(day) is None])
    timeline = Timeline(with_lead(case.window(), lead))
    assert timeline.is_active(instant) == active_in(runs, instant)
    # A lead in seconds puts boundaries between minutes: the first edge of a merged run.
    edges = [edge for run in zip(*runs, strict=True) for edge in run]
    expected = min((e for e in edges if instant < e <= instant + HORIZON), default=None)
    assert timeline.next_boundary(instant, horizon=HORIZON) == expected


# -- the API ----------------------------------------------------------------------------------

# Matches the CRD's pattern and length, but is too large for durationpy to read.
HUGE = "99999999999999999999h"


# A Daily Schedule 08:00-09:00 and its SPA (base 1/5), without a namespace as in a manifest
# for `spa plan` (which reads them as in `default`).
_schedule = partial(
    schedule, name="s", namespace=None, type="Daily", startTime="08:00", endTime="09:00"
)
_autoscaler = partial(autoscaler, namespace=None, minReplicas=1, maxReplicas=5, metrics=None)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5m", 300),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("0", 0),
        ("24h", 86400),
        ("1500ms", 2),
        ("0s", 0),
    ],
)
def test_lead_time_reads_go_durations(text: str, seconds: int) -> None:
    assert compile_schedule(parse_schedule(_schedule(leadTime=text)).spec).lead == seconds
    assert autoscaler_lead(parse_scheduled_pod_autoscaler(_autoscaler(leadTime=text))) == seconds


@pytest.mark.parametrize("text", ["90s", "5m", "1h30m", "1.5h", "1.1h", "24h", "0.25h", "2h0m30s"])
def test_a_cron_duration_and_a_lead_time_read_the_same_text_alike(text: str) -> None:
    """One reading of Go durations (durationpy) for both fields; only their ranges differ."""
    lead = compile_schedule(parse_schedule(_schedule(leadTime=text)).spec).lead
    assert parse_duration(text) == lead


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("25h", "spec.leadTime: must be at most 24h, got '25h'"),
        ("24h0m1s", "spec.leadTime: must be at most 24h, got '24h0m1s'"),
        # Too large for durationpy (and timedelta) to read: above 24h all the same.
        ("30000000000h", "spec.leadTime: must be at most 24h, got '30000000000h'"),
        (HUGE, f"spec.leadTime: must be at most 24h, got '{HUGE}'"),
        ("-5m", "spec.leadTime: must be a duration such as 90s, 5m or 1h30m"),
        ("5 m", "spec.leadTime: must be a duration such as 90s, 5m or 1h30m"),
        ("1d", "spec.leadTime: must be a duration such as 90s, 5m or 1h30m"),
        ("PT5M", "spec.leadTime: must be a duration such as 90s, 5m or 1h30m"),
        (300, "spec.leadTime: must be a string, got 300"),
    ],
)
def test_bad_lead_times_name_the_field(value: object, message: str) -> None:
    with pytest.raises(InvalidObject) as schedule_error:
        compile_schedule(parse_schedule(_schedule(leadTime=value)).spec)
    assert str(schedule_error.value).startswith(message)
    with pytest.raises(InvalidObject) as autoscaler_error:
        parse_scheduled_pod_autoscaler(_autoscaler(leadTime=value))
    assert str(autoscaler_error.value).startswith(message)


# A Cron Schedule whose windows open at 02:00 each day and last `duration`.
_cron = partial(_schedule, type="Cron", startTime=None, endTime=None, schedule="0 2 * * *")


@pytest.mark.parametrize("text", ["30000000000h", HUGE])
def test_a_cron_duration_too_large_to_read_is_out_of_range(text: str) -> None:
    """The CRD's pattern accepts any digits, and without CEL (before Kubernetes 1.25) nothing
    bounds them: a duration durationpy cannot hold is above 744h, not a traceback."""
    range_error = f"must be from 1m to 744h (31 days), got {text}"
    with pytest.raises(WallClockError, match=re.escape(range_error)):
        parse_duration(text)
    with pytest.raises(InvalidObject) as error:
        compile_schedule(parse_schedule(_cron(duration=text)).spec)
    assert error.value.errors == (FieldError("spec.duration", range_error),)


@pytest.mark.parametrize(
    "failure",
    [
        OverflowError("Python int too large to convert to C int"),  # durationpy before 0.10
        durationpy.DurationError("Duration out of range"),
    ],
)
def test_a_duration_durationpy_cannot_hold_is_above_either_fields_limit(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    """Whichever way durationpy refuses a value too large for timedelta (the releases setup.cfg
    allows differ), each field reports its own range error."""

    def refuse(text: str) -> None:
        raise failure

    monkeypatch.setattr(durationpy, "from_str", refuse)
    with pytest.raises(WallClockError, match=re.escape("must be from 1m to 744h (31 days)")):
        parse_duration("9999999999h")
    lead_error = FieldError("spec.leadTime", "must be at most 24h, got '9999999999h'")
    with pytest.raises(InvalidObject) as schedule_error:
        compile_schedule(parse_schedule(_schedule(leadTime="9999999999h")).spec)
    assert schedule_error.value.errors == (lead_error,)
    with pytest.raises(InvalidObject) as autoscaler_error:
        parse_scheduled_pod_autoscaler(_autoscaler(leadTime="9999999999h"))
    assert autoscaler_error.value.errors == (lead_error,)


@pytest.mark.parametrize(
    ("documents", "error"),
    [
        (
            [_autoscaler(), _schedule(leadTime=HUGE)],
            f"(document 2) Schedule default/s: spec.leadTime: must be at most 24h, got '{HUGE}'",
        ),
        (
            [_autoscaler(leadTime="30000000000h"), _schedule()],
            "(document 1) ScheduledPodAutoscaler default/web: spec.leadTime: must be at most "
            "24h, got '30000000000h'",
        ),
        (
            [_autoscaler(), _cron(duration=HUGE)],
            "(document 2) Schedule default/s: spec.duration: must be from 1m to 744h (31 days), "
            f"got {HUGE}",
        ),
    ],
)
def test_plan_reports_a_duration_too_large_to_read_as_its_fields_error(
    tmp_path: Path, documents: list[dict[str, Any]], error: str
) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("\n---\n".join(json.dumps(d) for d in documents))
    result = subprocess.run(
        [str(Path(sys.executable).parent / "spa"), "plan", "-f", str(manifest)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    assert f"error: {manifest} {error}\n" in result.stderr


def test_the_schedules_lead_time_overrides_the_autoscalers() -> None:
    spa_lead = autoscaler_lead(parse_scheduled_pod_autoscaler(_autoscaler(leadTime="10m")))
    inherited = compile_schedule(parse_schedule(_schedule()).spec)
    own = compile_schedule(parse_schedule(_schedule(leadTime="2m")).spec)
    none = compile_schedule(parse_schedule(_schedule(leadTime="0")).spec)
    monday_8 = utc("2026-11-16T08:00:00")
    first = {
        name: Timeline(compiled.applied_window(spa_lead)).next_boundary(monday_8 - HOUR)
        for name, compiled in (("inherited", inherited), ("own", own), ("none", none))
    }
    assert first == {"inherited": monday_8 - 600, "own": monday_8 - 120, "none": monday_8}
    assert autoscaler_lead(parse_scheduled_pod_autoscaler(_autoscaler())) == 0


def spa_plan(tmp_path: Path, documents: list[dict[str, Any]], *args: str) -> str:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("\n---\n".join(json.dumps(d) for d in documents))
    result = subprocess.run(
        [str(Path(sys.executable).parent / "spa"), "plan", "-f", str(manifest), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


def test_plan_shows_the_effective_start(tmp_path: Path) -> None:
    documents = [_autoscaler(leadTime="15m"), _schedule(minReplicas=4)]
    output = spa_plan(
        tmp_path, documents, "--at", "2026-11-16T07:00:00Z", "--days", "1", "-o", "json"
    )
    transitions = json.loads(output)["autoscalers"][0]["transitions"]
    assert [(t["time"], t["minReplicas"]) for t in transitions] == [
        ("2026-11-16T07:45:00Z", 4),
        ("2026-11-16T09:00:00Z", 1),
    ]


def test_plan_of_a_cron_schedule_with_lead_and_an_excluded_date(tmp_path: Path) -> None:
    # Cron 00:30 daily for 2 h, 2026-11-17 excluded, the SPA's 5 min of lead: the 16th's and
    # 18th's windows apply from 00:25; the 17th's is listed as skipped at its effective start.
    cron = _schedule(
        type="Cron",
        startTime=None,
        endTime=None,
        schedule="30 0 * * *",
        duration="2h",
        excludeDates=["2026-11-17"],
        minReplicas=4,
    )
    documents = [_autoscaler(leadTime="5m"), cron]
    args = ("--at", "2026-11-15T12:00:00Z", "--days", "3")
    planned = json.loads(spa_plan(tmp_path, documents, *args, "-o", "json"))["autoscalers"][0]
    assert [(t["time"], t["minReplicas"]) for t in planned["transitions"]] == [
        ("2026-11-16T00:25:00Z", 4),
        ("2026-11-16T02:30:00Z", 1),
        ("2026-11-18T00:25:00Z", 4),
        ("2026-11-18T02:30:00Z", 1),
    ]
    assert [(s["time"], s["date"], s["reason"]) for s in planned["skipped"]] == [
        ("2026-11-17T00:25:00Z", "2026-11-17", "excludeDates")
    ]
    # The picture draws each window that happens from its effective start.
    html = spa_plan(tmp_path, documents, *args, "-o", "html")
    bars = re.findall(r'<rect class="window"[^>]*><title>[^<]*\((\S+) to (\S+)\)', html)
    assert bars == [
        ("2026-11-16T00:25:00Z", "2026-11-16T02:30:00Z"),
        ("2026-11-18T00:25:00Z", "2026-11-18T02:30:00Z"),
    ]
