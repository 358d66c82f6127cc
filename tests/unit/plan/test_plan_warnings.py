"""`spa plan`'s warnings (docs/plan.md, "Warnings"): manifests the API server and the controller
take, but that will not do what they look like they do. Each case was silent before: exit 0,
nothing said, and the surprise on the cluster."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa.api.resources import ScheduleType
from spa.api.window_types import WINDOW_TYPES
from spa.plan import Document, Plan, build_plan
from spa.plan.html import render_html
from spa.plan.render import render_json
from tests.builders import autoscaler, calendar, schedule

NOW = int(dt.datetime(2026, 3, 8, tzinfo=dt.UTC).timestamp())
WEEK = 7 * 86400
PREFIX = "autoscaling.d-kuro.github.io"
DAILY: dict[str, Any] = {
    "type": "Daily",
    "startTime": "08:00",
    "endTime": "10:00",
    "minReplicas": 5,
}
HPA: dict[str, Any] = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 4,
    },
}


def plan_of(*bodies: dict[str, Any]) -> Plan:
    documents = [Document("all.yaml", index, body) for index, body in enumerate(bodies, 1)]
    return build_plan(documents, [], at=NOW, until=NOW + WEEK)


def warned(plan: Plan) -> list[tuple[str | None, str | None, str]]:
    return [(w.name, w.field, w.message) for w in plan.warnings]


def annotated(annotations: dict[str, str], **more: Any) -> dict[str, Any]:
    return autoscaler(metadata={"annotations": annotations}, **more)


# -- an HPA of the SPA's name -------------------------------------------------------------------


def test_an_hpa_of_the_autoscalers_name_is_a_conflict() -> None:
    plan = plan_of(autoscaler(), HPA, schedule(**DAILY))
    assert plan.errors == []
    [(name, field, message)] = warned(plan)
    assert (name, field) == ("web", "metadata.name")
    assert message.startswith(
        "a HorizontalPodAutoscaler of this name is among the manifests (all.yaml, document 2); "
        "once both are applied, the controller leaves it untouched and this SPA is Degraded "
        "(HPAConflict)"
    )
    assert f'annotate this SPA {PREFIX}/adopt: "true" to adopt it' in message
    # The plan itself is the SPA's, as the controller's once the HPA is gone.
    assert [a.name for a in plan.autoscalers] == ["web"]


def test_an_hpa_that_is_not_the_autoscalers_is_no_conflict() -> None:
    elsewhere = {**HPA, "metadata": {"name": "web", "namespace": "other"}}
    other_name = {**HPA, "metadata": {"name": "api", "namespace": "shop"}}
    # What `kubectl get spa,hpa -o yaml` prints: the SPA's own HPA.
    own = {
        **HPA,
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "ownerReferences": [
                {
                    "apiVersion": f"{PREFIX}/v1",
                    "kind": "ScheduledPodAutoscaler",
                    "name": "web",
                    "uid": "u",
                    "controller": True,
                }
            ],
        },
    }
    assert plan_of(autoscaler(), elsewhere, other_name).warnings == []
    assert plan_of(autoscaler(), own).warnings == []
    # Asked to adopt it, and it may: no conflict.
    assert plan_of(annotated({f"{PREFIX}/adopt": "true"}), HPA).warnings == []


def test_an_hpa_the_autoscaler_may_not_adopt_says_why() -> None:
    theirs = {**HPA, "spec": {**HPA["spec"], "scaleTargetRef": {"kind": "Deployment", "name": "x"}}}
    [(_, field, message)] = warned(plan_of(annotated({f"{PREFIX}/adopt": "true"}), theirs))
    assert field == "metadata.name"
    assert "the controller refuses to adopt it (its scaleTargetRef is Deployment/x" in message


# -- annotations ------------------------------------------------------------------------------


def test_misspelt_and_misplaced_annotations_are_warned_of() -> None:
    plan = plan_of(
        annotated(
            {
                f"{PREFIX}/pause-until": "indefinite",
                f"{PREFIX}/overide": "min=5,until=2026-03-09T00:00:00Z",
                f"{PREFIX}/adopt": "yes",
                "example.com/pause-until": "x",  # another prefix: not ours to judge
            }
        ),
        schedule(metadata={"annotations": {f"{PREFIX}/paused-until": "indefinite"}}, **DAILY),
    )
    field = f'metadata.annotations["{PREFIX}/%s"]'
    assert warned(plan) == [
        (
            "web",
            field % "pause-until",
            "unknown annotation: the controller does not read it; did you mean "
            f"'{PREFIX}/paused-until'?",
        ),
        (
            "web",
            field % "overide",
            "unknown annotation: the controller does not read it; did you mean "
            f"'{PREFIX}/override'?",
        ),
        (
            "web",
            field % "adopt",
            'must be "true" or "false", not \'yes\': the controller refuses to adopt an HPA '
            "with it",
        ),
        (
            "noon",
            field % "paused-until",
            "acts only on a ScheduledPodAutoscaler: the controller ignores it on a Schedule "
            "(annotate the Schedule's ScheduledPodAutoscaler)",
        ),
    ]
    assert plan.errors == []


@pytest.mark.parametrize("separator", [".", "-"])
def test_our_group_with_another_separator_than_a_slash_is_warned_of(separator: str) -> None:
    """`autoscaling.d-kuro.github.io.adopt` is a key without a prefix, which the controller
    never reads: it was passed over in silence, as a key of another prefix is."""
    key = f"{PREFIX}{separator}paused-until"
    plan = plan_of(annotated({key: "indefinite"}))
    assert warned(plan) == [
        (
            "web",
            f'metadata.annotations["{key}"]',
            "unknown annotation: the controller does not read it; did you mean "
            f"'{PREFIX}/paused-until'?",
        )
    ]


def test_well_written_annotations_are_not_warned_of() -> None:
    plan = plan_of(
        annotated(
            {
                f"{PREFIX}/paused-until": "indefinite",
                f"{PREFIX}/override": "min=5,until=2026-03-09T00:00:00Z",
                f"{PREFIX}/adopt": "false",
            }
        )
    )
    assert plan.warnings == []


# -- fields a window type ignores ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name"),
    [(kind, name) for kind in ScheduleType for name in WINDOW_TYPES[kind].ignored],
)
def test_a_field_its_type_ignores_is_warned_of(kind: ScheduleType, name: str) -> None:
    spec: dict[str, Any] = {"type": kind.value, "minReplicas": 5}
    if kind is ScheduleType.OneShot:
        spec |= {"startTime": "2026-03-10T08:00", "endTime": "2026-03-10T10:00"}
    else:
        spec |= {"startTime": "08:00", "endTime": "10:00"}
    [(_, field, message)] = warned(plan_of(autoscaler(), schedule(**(spec | {name: "Monday"}))))
    assert field == f"spec.{name}"
    assert message.startswith(f"is ignored by a {kind.value} schedule: ")
    # Blank is unset (the original controller's manifests carry it): nothing to say.
    assert plan_of(autoscaler(), schedule(**(spec | {name: ""}))).warnings == []


def test_the_ignored_fields_are_the_days_of_daily_and_oneshot() -> None:
    days = ("startDayOfWeek", "endDayOfWeek")
    assert {
        kind: WINDOW_TYPES[kind].ignored for kind in ScheduleType if WINDOW_TYPES[kind].ignored
    } == {
        ScheduleType.Daily: days,
        ScheduleType.OneShot: days,
    }


# -- windows that never start -----------------------------------------------------------------


def oneshot(name: str, start: str, end: str, **more: Any) -> dict[str, Any]:
    return schedule(name=name, type="OneShot", startTime=start, endTime=end, minReplicas=5, **more)


def test_a_window_that_can_never_start_says_why() -> None:
    plan = plan_of(
        autoscaler(),
        oneshot("gap", "2026-03-29T02:10", "2026-03-29T02:50", timeZone="Europe/Berlin"),
        oneshot("excluded", "2026-12-20T08:00", "2026-12-20T10:00", excludeDates=["2026-12-20"]),
        oneshot("holiday", "2026-12-25T08:00", "2026-12-25T10:00", holidays={"country": "DE"}),
        calendar(name="sundays", dates=["2026-03-15", "2026-03-22"]),
        schedule(
            name="mondays-only-on-sundays",
            type="Weekly",
            startDayOfWeek="Monday",
            endDayOfWeek="Monday",
            startTime="08:00",
            endTime="10:00",
            minReplicas=5,
            calendars=[{"kind": "ClusterCalendar", "name": "sundays", "mode": "Only"}],
        ),
        oneshot("later", "2027-12-20T08:00", "2027-12-20T10:00"),  # far, not never
    )
    assert plan.errors == []
    assert warned(plan) == [
        (
            "gap",
            "spec.startTime",
            "the window never starts: 2026-03-29T02:10 to 2026-03-29T02:50 lies wholly inside "
            "the daylight-saving gap of Europe/Berlin on 2026-03-29 (the clocks go from 02:00 "
            "to 03:00), so it is empty",
        ),
        (
            "excluded",
            "spec.excludeDates",
            "the window never starts: its one date is excluded 2026-12-20 (excludeDates)",
        ),
        (
            "holiday",
            "spec.holidays",
            "the window never starts: its one date is excluded 2026-12-25 (holiday: Christmas Day)",
        ),
        (
            "mondays-only-on-sundays",
            None,
            "no window starts in the next 41 years: its calendars remove every one (a holidays "
            "or calendar mode Only keeps none of its dates in that time)",
        ),
    ]


def test_a_window_no_calendar_lets_start_before_the_end_says_so_as_the_table() -> None:
    """In the last decades of the calendar the look-ahead ends at 9999-12-31: the warning says
    so as the table does (`no start before 9999-12-31`), not "in the next 41 years", and names
    the first window removed plainly (it said "; the first of the next year, excluded ...")."""
    at = int(dt.datetime(9998, 12, 20, tzinfo=dt.UTC).timestamp())
    documents = [
        Document("all.yaml", number, body)
        for number, body in enumerate(
            [
                autoscaler(),
                schedule(**DAILY, calendars=[{"name": "far"}]),
                calendar(
                    name="far",
                    namespace="shop",
                    dateRanges=[{"start": "9998-12-01", "end": "9999-12-31"}],
                ),
            ],
            1,
        )
    ]
    plan = build_plan(documents, [], at=at, until=at + WEEK)
    [planned] = [planned for each in plan.autoscalers for planned in each.schedules]
    assert (planned.look_ahead, planned.next_change) == ("before 9999-12-31", None)
    assert warned(plan) == [
        (
            "noon",
            None,
            "no window starts before 9999-12-31: its calendars remove every one, the first "
            "excluded 9998-12-20 (calendar: Calendar/far)",
        )
    ]


def test_a_window_its_bounds_hold_none_of_says_so_on_end_date() -> None:
    """startDate and endDate around no date the type and times give: the warning names the
    bounds, not calendars the Schedule does not have (it said "its calendars remove every one
    (a holidays or calendar mode Only keeps none of its dates)" of the Monday window, and
    nothing of the 29 February one, which has no occurrence in the year the old check looked
    at). NOW is Sunday 2026-03-08."""
    mondays: dict[str, Any] = {
        "type": "Weekly",
        "startDayOfWeek": "Monday",
        "endDayOfWeek": "Monday",
        "startTime": "08:00",
        "endTime": "10:00",
        "minReplicas": 5,
    }
    leap_day: dict[str, Any] = {
        "type": "Cron",
        "schedule": "0 9 29 2 *",
        "duration": "1h",
        "minReplicas": 5,
    }
    plan = plan_of(
        autoscaler(),
        schedule(name="a-tuesday", startDate="2026-03-10", endDate="2026-03-10", **mondays),
        schedule(name="no-leap-day", startDate="2026-03-09", endDate="2027-12-31", **leap_day),
        schedule(name="over", startDate="2026-03-01", endDate="2026-03-08", **mondays),
        schedule(name="leap-day-2028", endDate="2028-12-31", **leap_day),  # starts in 2028
    )
    assert plan.errors == []
    assert warned(plan) == [
        (
            "a-tuesday",
            "spec.endDate",
            "the window never starts: its type and times give no window on a date from "
            "startDate 2026-03-10 to endDate 2026-03-10",
        ),
        (
            "no-leap-day",
            "spec.endDate",
            "the window never starts: its type and times give no window on a date from "
            "startDate 2026-03-09 to endDate 2027-12-31",
        ),
        (
            "over",
            "spec.endDate",
            "no window starts from now to endDate 2026-03-08: its type and times give none on "
            "those dates",
        ),
    ]


# -- how they are shown -------------------------------------------------------------------------


def test_warnings_are_in_every_output_and_leave_the_exit_status(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all([autoscaler(), HPA]), encoding="utf-8")
    plan = plan_of(autoscaler(), HPA)
    assert json.loads(render_json(plan))["warnings"][0]["field"] == "metadata.name"
    assert '<section class="warnings"><h2>1 warning(s)</h2>' in render_html(plan)
    result = subprocess.run(
        [sys.executable, "-m", "spa.cli", "plan", "-f", str(path), "--at", "2026-03-08T00:00:00Z"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(
        f"warning: {path} (document 1) ScheduledPodAutoscaler shop/web: metadata.name: a "
        "HorizontalPodAutoscaler of this name is among the manifests"
    )
    assert "warning" not in result.stdout
