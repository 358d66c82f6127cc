"""The analysis of `spa suggest` on in-memory histories with known truth (tests/history/corpus.py;
docs/suggest.md, "How it decides"): the windows it finds, their levels and leads, what it
reports instead of scheduling, across a change of clocks."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from spa.history.analysis import Settings, SuggestedWindow, Suggestion, suggest_windows
from spa.history.need import Need, NeedError, counter_resets, gaps, local_layout, needed_replicas
from spa.history.suggestions import clear_of_clock_changes, schedule_body
from spa.plan import Document, build_plan
from spa.schedule import PublicHolidays, to_instant
from tests.builders import schedule
from tests.history.corpus import (
    OFFSET,
    Burst,
    Corpus,
    Workload,
    desired_replicas,
    in_memory,
    standard_corpus,
)
from tests.history.pages import suggestions
from tests.history.targets import measure

STEP = 300


def _analyse(
    corpus: Corpus, workload: Workload, *, holidays: PublicHolidays | None = None, **settings: Any
) -> Suggestion:
    need = in_memory(desired_replicas(corpus, workload), start=corpus.start, until=corpus.until)
    week = local_layout(start=need.start, step=need.step, count=len(need.values), zone=corpus.zone)
    until = datetime.fromtimestamp(corpus.until, corpus.zone).date()
    return suggest_windows(
        need,
        week,
        base=workload.base,
        settings=Settings(holidays=holidays, **settings),
        until=until,
    )


def _windows(suggestion: Suggestion) -> list[tuple[str, tuple[int, ...], str, str, int]]:
    return [
        (w.kind, w.days, _clock(w.start), _clock(w.end), w.min_replicas) for w in suggestion.windows
    ]


def _near(
    found: list[tuple[str, tuple[int, ...], str, str, int]],
    expected: list[tuple[str, tuple[int, ...], str, str, int]],
) -> bool:
    """The same windows, each bound within a step of the one expected: a day's demand comes up
    to 4 minutes before or after its window's start (tests/history/corpus.py)."""

    def minutes(clock: str) -> int:
        hours, minutes = clock.split(":")
        return int(hours) * 60 + int(minutes)

    return len(found) == len(expected) and all(
        (a[0], a[1], a[4]) == (b[0], b[1], b[4])
        and abs(minutes(a[2]) - minutes(b[2])) <= 5
        and abs(minutes(a[3]) - minutes(b[3])) <= 5
        for a, b in zip(found, expected, strict=True)
    )


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}"


def _manifests(suggestion: Suggestion, workload: Workload, zone: ZoneInfo) -> list[dict[str, Any]]:
    return [
        schedule_body(
            namespace=workload.namespace,
            autoscaler=workload.name,
            name=f"w{index}",
            window=window,
            zone=zone,
        )
        for index, window in enumerate(suggestion.windows)
    ]


def test_the_standard_corpus_gives_back_its_true_windows() -> None:
    corpus = standard_corpus()
    [web, importer, quiet] = corpus.workloads
    found = _analyse(corpus, web, holidays=PublicHolidays("US"))
    assert _near(
        _windows(found),
        [
            ("Weekly", (0, 1, 2, 3, 4), "08:00", "18:00", 12),
            ("Daily", (0, 1, 2, 3, 4, 5, 6), "12:00", "13:30", 20),
            ("Weekly", (4,), "18:00", "22:00", 16),
            ("WeeklySpan", (5,), "10:00", "44:00", 8),  # Saturday 10:00 to Sunday 20:00
        ],
    ), _windows(found)
    assert [w.lead for w in found.windows] == [STEP] * 4
    office = found.windows[0]
    assert office.holidays is not None
    assert office.holidays.exclude_dates == ()
    assert [(d.day, d.holiday) for d in office.dips] == [(date(2026, 10, 12), "Columbus Day")]
    assert office.weeks == tuple(
        date(2026, 10, 12 + 7 * n) if n < 3 else date(2026, 11, 2) for n in range(4)
    )
    assert (found.base, found.quiet, found.threshold) == (2, 2, 4.0)
    assert [_clock_local(s.start, corpus) for s in found.spikes] == ["2026-10-29 03:00"]
    nightly = _windows(_analyse(corpus, importer))
    assert _near(nightly, [("Daily", (0, 1, 2, 3, 4, 5, 6), "01:00", "02:30", 6)]), nightly
    assert _analyse(corpus, quiet).windows == []


def _clock_local(instant: int, corpus: Corpus) -> str:
    return datetime.fromtimestamp(instant, corpus.zone).strftime("%Y-%m-%d %H:%M")


def test_a_monthly_batch_and_spikes_are_reported_not_scheduled() -> None:
    corpus = standard_corpus()
    importer = corpus.workloads[1]
    found = _analyse(corpus, importer)
    # The batch on the 1st, in the hour after the clocks went back, and the Wednesday spike.
    assert [
        (_clock_local(s.start, corpus), _clock_local(s.end, corpus), s.highest)
        for s in found.spikes
    ] == [
        ("2026-10-21 15:00", "2026-10-21 15:40", 25),
        ("2026-11-01 02:00", "2026-11-01 04:00", 30),
    ]


def _berlin(
    weeks: int, *, spikes: list[Burst] | None = None, **truth: Any
) -> tuple[Corpus, Workload]:
    """One workload in Europe/Berlin over `weeks` weeks from Monday 2026-10-05, across the
    change of clocks of 2026-10-25."""
    zone = ZoneInfo("Europe/Berlin")
    window = {"type": "Weekly", "startDayOfWeek": "Monday", "endDayOfWeek": "Friday",
              "startTime": "09:00", "endTime": "17:00", "timeZone": "Europe/Berlin",
              "leadTime": "5m", "minReplicas": 10, **truth}  # fmt: skip
    workload = Workload(
        namespace="eu", name="app", base=2, spikes=spikes or [],
        schedules=[schedule(name="office", namespace="eu", target="app", **window)],
    )  # fmt: skip
    start = to_instant(datetime(2026, 10, 5), zone)
    return Corpus(
        zone=zone, start=start, until=start + weeks * 7 * 86400, workloads=[workload]
    ), workload


def test_windows_keep_their_wall_clock_time_across_a_change_of_clocks() -> None:
    corpus, workload = _berlin(4)
    found = _analyse(corpus, workload, holidays=PublicHolidays("DE"))
    assert _near(_windows(found), [("Weekly", (0, 1, 2, 3, 4), "09:00", "17:00", 10)])
    measured = measure(
        workload.manifests(),
        [*workload.manifests(schedules=False), *_manifests(found, workload, corpus.zone)],
        namespace="eu", name="app", base=2, start=corpus.start, until=corpus.until,
    )  # fmt: skip
    assert measured.starts_missed == []
    assert measured.coverage == 1.0
    assert measured.added <= 0.05


def test_a_peak_of_half_the_weeks_does_not_recur_three_of_four_do() -> None:
    corpus, workload = _berlin(4, minReplicas=10, excludeDates=["2026-10-07", "2026-10-14"])
    found = _analyse(corpus, workload, holidays=None)
    # Wednesdays: two of four weeks had the peak, so it is no Weekly window's day.
    assert _near(
        _windows(found),
        [("Weekly", (0, 1), "09:00", "17:00", 10), ("Weekly", (3, 4), "09:00", "17:00", 10)],
    ), _windows(found)
    # The Wednesdays with the peak are one-off peaks, from about 09:00 to 17:00.
    spikes = [(s.start, s.end) for s in found.spikes]
    expected = [
        (
            to_instant(datetime(2026, 10, day, 9), corpus.zone),
            to_instant(datetime(2026, 10, day, 17), corpus.zone),
        )
        for day in (21, 28)
    ]
    assert len(spikes) == 2
    assert all(
        abs(a - c) <= STEP and b == d for (a, b), (c, d) in zip(spikes, expected, strict=True)
    )
    once = _analyse(*_berlin(4, excludeDates=["2026-10-07"]), holidays=None)
    assert _near(_windows(once), [("Weekly", (0, 1, 2, 3, 4), "09:00", "17:00", 10)])
    # A day without the peak that no calendar explains is said, not excluded.
    assert [dip.day for dip in once.unexplained_dips] == [date(2026, 10, 7)]
    assert once.windows[0].holidays is None
    # Unless every week is asked for.
    assert len(_analyse(*_berlin(4, excludeDates=["2026-10-07"]), recurrence=1.0).windows) == 2


def test_a_holiday_some_weeks_kept_becomes_exclude_dates_ahead() -> None:
    # In Berlin, 2026-10-05 to 2026-11-23: no federal holiday on a weekday but Reformation Day
    # in Brandenburg (2026-10-31, a Saturday) ... so New York: Columbus Day dips, Veterans Day
    # (2026-11-11) keeps the peak.
    zone = ZoneInfo("America/New_York")
    workload = Workload(
        namespace="us", name="api", base=2,
        schedules=[schedule(name="office", namespace="us", target="api", type="Weekly",
                            startDayOfWeek="Monday", endDayOfWeek="Friday", startTime="08:00",
                            endTime="18:00", timeZone="America/New_York", minReplicas=12,
                            excludeDates=["2026-10-12"])],
    )  # fmt: skip
    start = to_instant(datetime(2026, 10, 12), zone)
    corpus = Corpus(
        zone=zone, start=start, until=to_instant(datetime(2026, 11, 16), zone), workloads=[workload]
    )
    found = _analyse(corpus, workload, holidays=PublicHolidays("US"))
    [office] = found.windows
    assert office.holidays is not None
    assert office.holidays.exclude_dates == (date(2027, 10, 11),)
    assert office.holidays.kept == ((date(2026, 11, 11), "Veterans Day"),)
    body = _manifests(found, workload, zone)[0]
    assert body["spec"]["excludeDates"] == ["2027-10-11"]
    assert "holidays" not in body["spec"]


def test_min_increase_and_the_quiet_level() -> None:
    corpus, workload = _berlin(2, minReplicas=4)
    assert _analyse(corpus, workload).windows  # 2 above the base of 2: a peak
    assert _analyse(corpus, workload, min_increase=3).windows == []


def test_a_one_off_spike_gets_no_window() -> None:
    zone = ZoneInfo("Europe/Berlin")
    spike = Burst(datetime(2026, 10, 14, 3, 0), datetime(2026, 10, 14, 4, 0), 40)
    corpus, workload = _berlin(4, spikes=[spike])
    found = _analyse(corpus, workload)
    assert len(found.windows) == 1
    assert [(s.start, s.end, s.highest) for s in found.spikes] == [
        (to_instant(spike.start, zone), to_instant(spike.end, zone), 40)
    ]


def test_the_grid_of_needs() -> None:
    points = [(600, 3.0), (900, float("nan")), (1200, 41.0), (1200, 2.0), (99999, 5.0)]
    need = needed_replicas(points, start=0, step=300, count=4)
    assert need.values == [None, 3.0, None, 41.0]
    per_pod = needed_replicas(points, start=0, step=300, count=4, per_pod=20)
    assert per_pod.values == [None, 1, None, 3]
    assert gaps(Need(0, 300, [1.0, None, None, 2.0, None]), shortest=2) == [(300, 900)]
    with pytest.raises(NeedError, match="a negative value"):
        needed_replicas([(300, -1.0)], start=0, step=300, count=2)


def test_a_counter_is_told_from_a_load() -> None:
    counter = [float(n * 10 % 2000) for n in range(1000)]  # grows, and falls back 4 times
    assert counter_resets(Need(0, 300, list(counter))) == 4
    assert counter_resets(Need(0, 300, [float(n % 7) for n in range(200)])) is None


def test_a_start_in_the_hour_the_clocks_repeat_moves_out_of_it() -> None:
    # A nightly peak from 01:55 in New York: on 2026-11-01 01:55 comes twice, and a Schedule
    # starting then would start at the first, an hour before the demand.
    zone = ZoneInfo("America/New_York")
    window = SuggestedWindow(
        kind="Daily", days=(0, 1, 2, 3, 4, 5, 6), start=(1 * 60 + 55) * 60, end=(3 * 60 + 30) * 60,
        min_replicas=6, lead=300, climb=0, quantile=0.95, steps=1, median=6, highest=6,
        weeks=(), weeks_total=4, occurrences=28, came=28,
    )  # fmt: skip
    moved = clear_of_clock_changes(window, zone, since=date(2026, 10, 26))
    assert (moved.start, moved.lead, moved.moved) == (2 * 3600, 600, 300)
    # The same instant on an ordinary day; on the day of the change, after the repeated hour.
    body = schedule_body(namespace="b", autoscaler="i", name="n", window=moved, zone=zone)
    spa = {"apiVersion": "autoscaling.d-kuro.github.io/v1", "kind": "ScheduledPodAutoscaler",
           "metadata": {"name": "i", "namespace": "b"},
           "spec": {"horizontalPodAutoscalerSpec": {"maxReplicas": 9, "scaleTargetRef": {
               "apiVersion": "apps/v1", "kind": "Deployment", "name": "i"}}}}  # fmt: skip
    plan = build_plan(
        [Document("m", 1, spa), Document("m", 2, body)], [],
        at=to_instant(datetime(2026, 10, 31), zone), until=to_instant(datetime(2026, 11, 2), zone),
    )  # fmt: skip
    starts = [t for t, state in plan.autoscalers[0].transitions if state.min_replicas == 6]
    assert starts == [
        to_instant(datetime(2026, 10, 31, 1, 50), zone),
        to_instant(datetime(2026, 11, 1, 1, 50, fold=1), zone),
    ]
    # A window of a weekday without a change of clocks is left as it is.
    weekly = replace(window, kind="Weekly", days=(0, 1, 2, 3, 4))
    assert clear_of_clock_changes(weekly, zone, since=date(2026, 10, 26)) == weekly


def test_a_nightly_peak_at_the_end_of_the_repeated_hour_starts_on_time_that_day() -> None:
    # The standard importer's nightly window, an hour later (02:00-03:30): its demand comes up
    # to 4 minutes early, so the peaks start at 01:55, in the hour repeated on 2026-11-01.
    corpus = standard_corpus()
    importer = corpus.workloads[1]
    body = importer.schedules[0]
    later = {**body, "spec": {**body["spec"], "startTime": "02:00", "endTime": "03:30"}}
    shifted = Workload(namespace="batch", name="importer", base=1, schedules=[later])
    corpus.workloads = [shifted]
    found = suggestions(corpus)
    manifests = [*shifted.manifests(schedules=False), *found.autoscalers[0].schedules]
    measured = measure(
        shifted.manifests(), manifests, namespace="batch", name="importer", base=1,
        start=corpus.start, until=corpus.until,
    )  # fmt: skip
    assert measured.starts_missed == []


def _reached(workload: Workload, *, window: int) -> int:
    """Seconds from a true window's start to the first scrape at which the HPA wanted 90 % of
    its level, for a workload whose demand comes on time: tests/history/corpus.py's linear
    climb from the base, scraped OFFSET seconds after each minute, each scrape a minute ahead,
    rounded up to whole replicas."""
    level = workload.schedules[window]["spec"]["minReplicas"]
    before = workload.base
    for scrape in range(OFFSET, workload.climb, 60):
        wanted = before + (level - before) * (scrape + 60) / workload.climb
        if math.ceil(wanted) >= 0.9 * level:
            return scrape
    return workload.climb


@pytest.mark.parametrize("climb", [300, 600, 900, 1200, 1800])
def test_the_lead_is_how_long_the_hpa_took_to_climb(climb: int) -> None:
    """docs/suggest.md, "How it decides", 6: the suggested leadTime is the climb the HPA
    needed at the window's starts (to 90 % of the level), to the end of the step in which it
    got there: never shorter than the climb."""
    corpus = standard_corpus()
    web = replace(corpus.workloads[0], climb=climb, jitter=0)
    importer = replace(corpus.workloads[1], climb=climb, jitter=0)
    for workload in (web, importer):
        found = _analyse(corpus, workload, holidays=PublicHolidays("US")).windows[0]
        reached = _reached(workload, window=0)
        hours, minutes = workload.schedules[0]["spec"]["startTime"].split(":")
        # A window starts when the need reaches a peak: a step late when the first step of a
        # slow climb is not one yet (from the importer's base of 1, 30 minutes to 6).
        late = found.start - (int(hours) * 3600 + int(minutes) * 60)
        said = (workload.key, climb, found.lead, late, reached)
        assert late in (0, STEP), said
        assert found.lead == ((reached - late) // STEP + 1) * STEP, said
        assert found.lead == found.climb, said
        assert found.lead > reached - late, said
