"""The plan's view of each Schedule (state over the horizon, window, zone) and local times in the
table: docs/plan.md, "The table"."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

import pytest

from spa.plan import Document, Plan, build_plan, render_table
from spa.plan.render import local_times, transition_zones
from spa.plan.schedules import ScheduleState, format_local
from spa.schedule import instant_of, load_zone
from tests.builders import autoscaler, schedule

AT = "2026-03-08T06:30:00Z"


def at(text: str) -> int:
    return instant_of(datetime.fromisoformat(text))


# The SPA shop/web (base 2/8) and its Schedules, which raise minReplicas to 4 unless they say.
_autoscaler = partial(autoscaler, minReplicas=2, maxReplicas=8, metrics=None)
_schedule = partial(schedule, minReplicas=4)


def plan_of(*bodies: dict[str, Any], start: str = AT, end: str = "2026-03-15T06:30:00Z") -> Plan:
    documents = [Document("m.yaml", index, body) for index, body in enumerate(bodies, 1)]
    plan = build_plan(documents, [], at=at(start), until=at(end))
    assert plan.errors == []
    return plan


def test_every_valid_schedule_is_listed_with_its_state() -> None:
    plan = plan_of(
        _autoscaler(),
        _schedule(name="now", type="Daily", startTime="06:00", endTime="07:00"),
        _schedule(name="soon", type="Daily", startTime="09:00", endTime="10:00"),
        _schedule(
            name="later", type="OneShot", startTime="2026-04-01T09:00", endTime="2026-04-01T10:00"
        ),
        _schedule(
            name="over", type="OneShot", startTime="2026-03-01T09:00", endTime="2026-03-01T10:00"
        ),
        _schedule(name="paused", type="Daily", startTime="09:00", endTime="10:00", suspend=True),
    )
    [web] = plan.autoscalers
    states = {s.name: s.state for s in web.schedules}
    assert states == {
        "later": ScheduleState.LATER,
        "now": ScheduleState.ACTIVE,
        "over": ScheduleState.COMPLETED,
        "paused": ScheduleState.SUSPENDED,
        "soon": ScheduleState.UPCOMING,
    }
    assert [s.name for s in web.schedules] == sorted(states)
    # A suspended Schedule is listed but takes no part in the transitions.
    assert all("paused" not in state.active for _, state in web.transitions)
    table = render_table(plan)
    assert "active until Sun 2026-03-08 07:00 UTC" in table
    assert "starts Sun 2026-03-08 09:00 UTC" in table
    assert "starts Wed 2026-04-01 09:00 UTC, after this period" in table
    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith("  ")}
    assert rows["over"].endswith("completed")
    assert rows["paused"].endswith("suspended")
    assert "2026-04-01T09:00 to 2026-04-01T10:00" in rows["later"]


def test_window_words() -> None:
    plan = plan_of(
        _autoscaler(),
        _schedule(
            name="weekly",
            type="Weekly",
            startDayOfWeek="Friday",
            endDayOfWeek="Monday",
            startTime="22:00",
            endTime="02:00",
            timeZone="Europe/Berlin",
        ),
        _schedule(
            name="one-day",
            type="Weekly",
            startDayOfWeek="Sunday",
            endDayOfWeek="Sunday",
            startTime="8:00",
            endTime="9:00",
        ),
    )
    windows = {s.name: (s.window, s.zone.key) for s in plan.autoscalers[0].schedules}
    assert windows == {
        "weekly": ("Fri-Mon 22:00-02:00", "Europe/Berlin"),
        "one-day": ("Sun 8:00-9:00", "UTC"),
    }


@pytest.mark.parametrize(
    ("instant", "zone", "expected"),
    [
        # The last minute of EST and the first of EDT: the abbreviation tells them apart.
        ("2026-03-08T06:59:00Z", "America/New_York", "Sun 2026-03-08 01:59 EST America/New_York"),
        ("2026-03-08T07:00:00Z", "America/New_York", "Sun 2026-03-08 03:00 EDT America/New_York"),
        ("2026-11-23T02:50:00Z", "Asia/Tokyo", "Mon 2026-11-23 11:50 JST Asia/Tokyo"),
        # A zone without a letter abbreviation shows its offset; UTC is said once.
        ("2026-11-23T02:50:00Z", "Asia/Dubai", "Mon 2026-11-23 06:50 +04 Asia/Dubai"),
        ("2026-11-23T02:50:30Z", "", "Mon 2026-11-23 02:50:30 UTC"),
    ],
)
def test_format_local(instant: str, zone: str, expected: str) -> None:
    assert format_local(at(instant), load_zone(zone)) == expected


def test_local_time_of_a_transition_is_given_in_each_zone_that_changes_then() -> None:
    plan = plan_of(
        _autoscaler(),
        # 13:00 in Tokyo and 23:00 the day before in New York are both 04:00 UTC.
        _schedule(
            name="tokyo", type="Daily", startTime="11:50", endTime="13:00", timeZone="Asia/Tokyo"
        ),
        _schedule(
            name="new-york",
            type="Daily",
            startTime="23:00",
            endTime="01:30",
            timeZone="America/New_York",
            minReplicas=3,
        ),
        start="2026-11-23T00:00:00Z",
        end="2026-11-24T00:00:00Z",
    )
    [web] = plan.autoscalers
    zones = transition_zones(web)
    assert sorted(zones) == [t for t, _ in web.transitions]

    def local(text: str) -> str:
        return local_times(at(text), zones.get(at(text), []))

    assert local("2026-11-23T04:00:00Z") == (
        "Sun 2026-11-22 23:00 EST America/New_York, Mon 2026-11-23 13:00 JST Asia/Tokyo"
    )
    assert local("2026-11-23T02:50:00Z") == "Mon 2026-11-23 11:50 JST Asia/Tokyo"
    assert local("2026-11-23T03:00:00Z") == "-"


# An External metric: what lets an HPA scale to zero (docs/schedules.md, "Scale to zero").
_QUEUE_DEPTH = {
    "type": "External",
    "external": {
        "metric": {"name": "queue_depth"},
        "target": {"type": "AverageValue", "averageValue": "30"},
    },
}
_NIGHT = {"name": "night", "type": "Daily", "startTime": "06:00", "endTime": "07:00"}


def test_a_window_of_zero_is_planned_when_its_autoscaler_can_scale_to_zero() -> None:
    plan = plan_of(
        _autoscaler(metrics=[_QUEUE_DEPTH]),
        _schedule(**_NIGHT, minReplicas=0),
    )
    [web] = plan.autoscalers
    assert (web.state.min_replicas, web.state.active) == (0, ("night",))


def test_a_window_of_zero_is_refused_at_its_field_when_the_autoscaler_cannot() -> None:
    bodies = [_autoscaler(), _schedule(**_NIGHT, minReplicas=0)]
    documents = [Document("m.yaml", index, body) for index, body in enumerate(bodies, 1)]
    plan = build_plan(documents, [], at=at(AT), until=at("2026-03-15T06:30:00Z"))
    [error] = plan.errors
    assert (error.name, error.field) == ("night", "spec.minReplicas")
    assert error.message.startswith(
        "must not be 0: ScheduledPodAutoscaler shop/web has no Object or External metric"
    )
    [web] = plan.autoscalers
    assert web.schedules == []
    assert web.state.min_replicas == 2


def test_a_base_of_zero_is_the_base_not_the_default() -> None:
    [web] = plan_of(_autoscaler(minReplicas=0, metrics=[_QUEUE_DEPTH])).autoscalers
    assert (web.state.min_replicas, web.state.max_replicas) == (0, 8)
