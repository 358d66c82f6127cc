"""Schedule statuses with calendars (docs/schedules.md, "Calendars"): nextTransitionTime skips
excluded dates, holidays and dates outside the bounds, and a Schedule whose endDate has passed
is Completed. The decision is driven by the API-server model of tests/unit/spa_model.py."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.unit.spa_model import OURS, Server, autoscaler, schedule


def on(day: int, hour: int, minute: int = 0) -> int:
    """An instant of November 2026, UTC."""
    return int(dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.UTC).timestamp())


def settled(server: Server, instant: int) -> dict[str, Any]:
    """The Schedule's status once the reconciler has nothing left to do at `instant`."""
    _, memory, _ = server.reconcile(instant)
    server.reconcile(instant, memory)
    return dict(server.schedules[0]["status"])


def bounds(server: Server) -> tuple[int, int]:
    assert server.hpa is not None
    return server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # Monday 16 and Tuesday 17 excluded: Wednesday's window is the next.
        ({"excludeDates": ["2026-11-16", "2026-11-17"]}, "2026-11-18T10:00:00Z"),
        # Not before Friday 20.
        ({"startDate": "2026-11-20"}, "2026-11-20T10:00:00Z"),
        # Thanksgiving (Thursday 26) is a US public holiday; Only keeps that day alone.
        ({"holidays": {"country": "US", "mode": "Only"}}, "2026-11-26T10:00:00Z"),
    ],
)
def test_next_transition_time_skips_what_the_calendar_removes(
    spec: dict[str, Any], expected: str
) -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS, **spec)])
    status = settled(server, on(16, 9))
    assert status["condition"] == "Available"
    assert status["nextTransitionTime"] == expected


def test_a_holiday_keeps_the_base_and_points_to_the_next_working_day() -> None:
    server = Server(
        autoscaler(), [schedule("peak", owner=OURS, holidays={"country": "US", "mode": "Skip"})]
    )
    assert settled(server, on(25, 10, 30))["condition"] == "Progressing"
    assert bounds(server) == (5, 20)
    # Thanksgiving: the window of 10:00 does not happen, so the HPA goes back to its base.
    status = settled(server, on(26, 10, 30))
    assert status["condition"] == "Available"
    assert status["nextTransitionTime"] == "2026-11-27T10:00:00Z"
    assert bounds(server) == (3, 10)


def test_a_schedule_is_completed_once_its_end_date_and_last_window_have_passed() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS, endDate="2026-11-16")])
    status = settled(server, on(16, 9))
    assert status["condition"] == "Available"
    assert status["nextTransitionTime"] == "2026-11-16T10:00:00Z"
    status = settled(server, on(16, 10, 30))
    assert status["condition"] == "Progressing"
    assert status["nextTransitionTime"] == "2026-11-16T11:00:00Z"
    # The last window of the end date is over; the next day's would be after endDate.
    status = settled(server, on(17, 0))
    assert status["condition"] == "Completed"
    assert status.get("nextTransitionTime") is None
    assert bounds(server) == (3, 10)


def test_an_end_date_window_across_midnight_is_completed_when_it_ends() -> None:
    server = Server(
        autoscaler(),
        [schedule("night", owner=OURS, start="22:00", end="02:00", endDate="2026-11-16")],
    )
    # The window of the 16th runs into the 17th: still in force after the date has passed.
    status = settled(server, on(17, 1))
    assert status["condition"] == "Progressing"
    assert status["nextTransitionTime"] == "2026-11-17T02:00:00Z"
    assert settled(server, on(17, 2))["condition"] == "Completed"


def test_a_cron_expression_only_the_controller_can_check_is_degraded_alone() -> None:
    """The CRD checks the field count; the hour 25 is the controller's to refuse."""
    bad = schedule("bad", owner=OURS, type="Cron", schedule="0 25 * * *", duration="1h")
    del bad["spec"]["startTime"], bad["spec"]["endTime"]
    server = Server(autoscaler(), [bad, schedule("good", owner=OURS)])
    settled(server, on(16, 10, 30))
    bad, good = server.schedules
    assert bad["status"]["condition"] == "Degraded"
    assert bad["status"]["message"] == (
        "spec.schedule: '0 25 * * *' is not a valid cron expression: bad hour field '25'"
    )
    assert good["status"]["condition"] == "Progressing"
    assert bounds(server) == (5, 20)
