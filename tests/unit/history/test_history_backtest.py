"""The replay of `spa backtest` on in-memory histories of the corpus (tests/history/corpus.py):
the true Schedules hold every recurring peak, with their lead, at no shortfall; no Schedule
holds none; a Schedule no peak needs is said (docs/suggest.md, "spa backtest")."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from spa.history.analysis import Settings
from spa.history.backtest import AutoscalerBacktest, backtest
from spa.history.report import render_backtest_json, render_backtest_table, render_compare_table
from spa.plan import Document, build_plan
from spa.schedule import PublicHolidays, to_instant
from tests.builders import schedule
from tests.history.corpus import Corpus, desired_replicas, in_memory, standard_corpus
from tests.history.targets import occurrences

CORPUS = standard_corpus()


def _replay(
    manifests: list[dict[str, Any]], corpus: Corpus = CORPUS
) -> dict[str, AutoscalerBacktest]:
    documents = [Document(file="m", index=n, body=b) for n, b in enumerate(manifests, start=1)]
    plan = build_plan(documents, [], at=corpus.start, until=corpus.until)
    assert not plan.errors, plan.errors
    needs = {
        (w.namespace, w.name): in_memory(
            desired_replicas(corpus, w), start=corpus.start, until=corpus.until
        )
        for w in corpus.workloads
    }
    result = backtest(
        plan, needs, label="m", source="s", query="q", weeks=4, step=300,
        zone_of=lambda autoscaler: corpus.zone, holidays_of=lambda zone: PublicHolidays("US"),
        settings=Settings(),
    )  # fmt: skip
    return {f"{a.namespace}/{a.name}": a for a in result.autoscalers}


def _all(schedules: bool) -> list[dict[str, Any]]:
    return [m for w in CORPUS.workloads for m in w.manifests(schedules=schedules)]


def test_the_true_schedules_hold_every_recurring_peak_before_it_comes() -> None:
    found = _replay(_all(True))
    for key in ("shop/web", "batch/importer"):
        replay = found[key]
        assert replay.shortfall == 0, key
        assert replay.held == len(replay.recurring) > 0, key
        # Raised the lead (5 minutes) before each peak that starts from the quiet level.
        assert {p.raised_before for p in replay.recurring if p.start != replay.need.start} >= {300}
        assert [u.schedule for u in replay.windows if u.never_needed] == []
    web = found["shop/web"]
    # The one-off peak is the one that was short, and said to be one.
    [one_off] = [p for p in web.peaks if p.one_off]
    assert one_off.start == to_instant(datetime(2026, 10, 29, 3), CORPUS.zone)
    assert one_off.one_off_shortfall == 30 * 60
    assert web.one_off_shortfall == 30 * 60
    # The monthly batch rides on the nightly window: its excess is one-off.
    importer = found["batch/importer"]
    assert importer.one_off_shortfall == (120 + 40) * 60
    assert found["shop/quiet"].peaks == []


def test_no_schedule_reports_every_peak_short() -> None:
    found = _replay(_all(False))
    for workload in CORPUS.workloads[:2]:
        replay = found[workload.key]
        assert replay.held == 0
        assert all(p.raised_before is None and p.late_by is None for p in replay.peaks)
        assert all(p.shortfall > 0 for p in replay.recurring)
        # Every true window's start is inside a peak reported short.
        for start, _ in occurrences(
            workload.manifests(), namespace=workload.namespace, name=workload.name,
            start=CORPUS.start, until=CORPUS.until,
        ):  # fmt: skip
            if replay.need.values[(start - CORPUS.start) // 300] is None:
                continue  # in a gap of the history
            assert any(p.start <= start < p.end and p.shortfall for p in replay.recurring), start
    assert found["shop/web"].added == 0


def test_a_window_no_peak_needs_is_said_and_costs() -> None:
    sunday = schedule(
        name="sunday-night", target="web", type="Weekly", startDayOfWeek="Sunday",
        endDayOfWeek="Sunday", startTime="22:00", endTime="23:00",
        timeZone="America/New_York", minReplicas=10,
    )  # fmt: skip
    found = _replay([*_all(True), sunday])
    web = found["shop/web"]
    [use] = [u for u in web.windows if u.schedule == "sunday-night"]
    assert use.never_needed
    assert use.unneeded == (
        date(2026, 10, 18),
        date(2026, 10, 25),
        date(2026, 11, 1),
        date(2026, 11, 8),
    )
    truth = _replay(_all(True))["shop/web"]
    # Four hours at 10 instead of what was needed (2 or 3).
    assert 4 * 7 <= web.added - truth.added <= 4 * 8 + 1e-6


def test_late_floors_are_late_and_short() -> None:
    late = [
        {**body, "spec": {**body["spec"], "leadTime": "0s", "startTime": "08:30"}}
        if body["metadata"]["name"] == "office"
        else body
        for body in _all(True)
    ]
    web = _replay(late)["shop/web"]
    mornings = [p for p in web.recurring if p.late_by is not None]
    assert mornings
    # The floor comes at 08:30; the demand 4 minutes before or after 08:00.
    assert {p.late_by for p in mornings} <= {25 * 60, 30 * 60, 35 * 60}
    assert web.shortfall >= 30 * 60 * len(mornings)


def test_the_reports() -> None:
    documents = [Document(file="m", index=n, body=b) for n, b in enumerate(_all(True), start=1)]
    plan = build_plan(documents, [], at=CORPUS.start, until=CORPUS.until)
    needs = {
        (w.namespace, w.name): in_memory(
            desired_replicas(CORPUS, w), start=CORPUS.start, until=CORPUS.until
        )
        for w in CORPUS.workloads
    }
    replay = backtest(
        plan, needs, label="deploy/", source="the desired replicas", query="q", weeks=4,
        step=300, zone_of=lambda autoscaler: CORPUS.zone,
        holidays_of=lambda zone: PublicHolidays("US"), settings=Settings(),
    )  # fmt: skip
    table = render_backtest_table(replay)
    assert "shop/web (America/New_York; base 2, a peak is 4 replicas or more)" in table
    # To the step: a demand that came in the step the floor rose is "0s before".
    assert "  recurring peaks held: 24 of 24, the floor raised 0s to " in table
    assert "  Sat 2026-10-17 10:00 EDT   Sun 20:00   20     8       5m before      0 min" in table
    assert (
        "  Thu 2026-10-29 03:00 EDT   03:30       30     2       not raised     30 min (one-off)"
        in table
    )
    document = json.loads(render_backtest_json(replay))
    [web] = [a for a in document["autoscalers"] if a["name"] == "web"]
    assert (web["shortfallMinutes"], web["oneOffShortfallMinutes"]) == (0, 30)
    compared = render_compare_table(replay, replay)
    assert "  under-provisioned at recurring peaks   0 min      0 min" in compared


def test_a_gap_inside_a_peak_does_not_split_it() -> None:
    """shop/web has no data on Tuesday 2026-10-20 from 09:00 to 13:00 (tests/history/corpus.py),
    in the middle of its office hours: one peak, whose floor was raised before the demand came
    at 08:00, not a second one 'raised 5 hours before' the end of the gap."""
    web = _replay(_all(True))["shop/web"]
    tuesday = [
        p
        for p in web.recurring
        if datetime.fromtimestamp(p.start, CORPUS.zone).date() == date(2026, 10, 20)
    ]
    assert [(p.start, p.end) for p in tuesday] == [
        (
            to_instant(datetime(2026, 10, 20, 7, 55), CORPUS.zone),
            to_instant(datetime(2026, 10, 20, 18), CORPUS.zone),
        )
    ], [(datetime.fromtimestamp(p.start, CORPUS.zone), p.raised_before) for p in tuesday]
    assert tuesday[0].raised_before is not None
    assert tuesday[0].raised_before <= 300
    # 19 office days, the lunch of Columbus Day and 4 weekends.
    assert len(web.recurring) == web.held == 24


def test_a_peak_that_starts_in_a_gap_is_said_to_come_after_it() -> None:
    """No data on Wednesday 2026-10-21 from 07:00 to 09:00: the office hours' demand came in
    the gap, when is not known. Its peak starts at 09:00 with the floor up, 'after a gap', not
    'raised 1h5m before the demand', and its lead is not in the summary's range."""
    [web, *others] = CORPUS.workloads
    gapped = replace(web, gaps=[(datetime(2026, 10, 21, 7), datetime(2026, 10, 21, 9))])
    corpus = replace(CORPUS, workloads=[gapped, *others])
    replay = _replay([m for w in corpus.workloads for m in w.manifests()], corpus)["shop/web"]
    nine = to_instant(datetime(2026, 10, 21, 9), CORPUS.zone)
    [after] = [p for p in replay.recurring if p.start == nine]
    assert after.after_gap
    assert not any(p.after_gap for p in replay.peaks if p is not after)
    assert replay.held == len(replay.recurring)
    result = backtest(
        build_plan([Document("m", n, b) for n, b in enumerate(
            [m for w in corpus.workloads for m in w.manifests()], start=1)], [],
            at=corpus.start, until=corpus.until),
        {("shop", "web"): replay.need}, label="m", source="s", query="q", weeks=4, step=300,
        zone_of=lambda autoscaler: CORPUS.zone, holidays_of=lambda zone: PublicHolidays("US"),
        settings=Settings(),
    )  # fmt: skip
    table = render_backtest_table(result)
    assert "  recurring peaks held: 24 of 24, the floor raised 0s to 5m before the demand" in table
    assert "  Wed 2026-10-21 09:00 EDT   18:00       20     12      after a gap    0 min" in table
    [peak] = [
        p for p in json.loads(render_backtest_json(result))["autoscalers"][0]["peaks"]
        if p["afterGap"]
    ]  # fmt: skip
    assert peak["start"] == "2026-10-21T13:00:00Z"
