"""`spa plan --diff` on plans (spa/plan/diff.py): which transitions are added, removed or
changed, autoscalers added and removed, the values at the start, and time zones across a
daylight-saving change (docs/plan.md, "`--diff`")."""

from __future__ import annotations

import json
from datetime import datetime
from html.parser import HTMLParser
from typing import Any

import pytest

from spa.plan import Document, Plan, build_plan
from spa.plan.diff import (
    Change,
    PlanDiff,
    Side,
    diff_plans,
    render_diff_errors,
    render_diff_json,
    render_diff_table,
)
from spa.plan.html import render_diff_html
from spa.schedule import format_instant, instant_of

GROUP = "autoscaling.d-kuro.github.io/v1"
AT = "2026-11-23T00:00:00Z"  # a Monday; Berlin is UTC+1


def at(text: str) -> int:
    return instant_of(datetime.fromisoformat(text))


def autoscaler(name: str, *, minimum: int = 2, maximum: int = 8) -> dict[str, Any]:
    return {
        "apiVersion": GROUP,
        "kind": "ScheduledPodAutoscaler",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "horizontalPodAutoscalerSpec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                "minReplicas": minimum,
                "maxReplicas": maximum,
            }
        },
    }


def daily(
    name: str,
    target: str,
    *,
    start: str = "09:00",
    end: str = "17:00",
    zone: str = "Europe/Berlin",
    minimum: int = 5,
) -> dict[str, Any]:
    return {
        "apiVersion": GROUP,
        "kind": "Schedule",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "scaleTargetRef": {"name": target},
            "type": "Daily",
            "startTime": start,
            "endTime": end,
            "timeZone": zone,
            "minReplicas": minimum,
        },
    }


def plan(*bodies: dict[str, Any], start: str = AT, days: int = 2, file: str = "x.yaml") -> Plan:
    documents = [Document(file, index, body) for index, body in enumerate(bodies, start=1)]
    begin = at(start)
    return build_plan(documents, [], at=begin, until=begin + days * 86400)


def diff(old: Plan, new: Plan) -> PlanDiff:
    return diff_plans(old, new, old_label="git:main", new_label="deploy")


def changes(found: PlanDiff, name: str) -> list[tuple[str, Change]]:
    (entry,) = [a for a in found.autoscalers if a.name == name]
    return [(format_instant(t.time), t.change) for t in entry.transitions]


def test_the_same_manifests_differ_in_nothing() -> None:
    bodies = (autoscaler("web"), daily("office", "web"))
    found = diff(plan(*bodies), plan(*bodies))
    assert not found.differs
    assert found.autoscalers == []
    assert found.unchanged == [("shop", "web")]


def test_a_moved_start_removes_one_transition_and_adds_another_each_day() -> None:
    found = diff(
        plan(autoscaler("web"), daily("office", "web", start="09:00")),
        plan(autoscaler("web"), daily("office", "web", start="08:00")),
    )
    assert found.differs
    # 08:00 and 09:00 in Berlin (UTC+1) on Monday and Tuesday; the 17:00 ends do not move.
    assert changes(found, "web") == [
        ("2026-11-23T07:00:00Z", Change.ADDED),
        ("2026-11-23T08:00:00Z", Change.REMOVED),
        ("2026-11-24T07:00:00Z", Change.ADDED),
        ("2026-11-24T08:00:00Z", Change.REMOVED),
    ]
    added = found.autoscalers[0].transitions[0]
    assert added.old is None
    assert added.new is not None
    assert (added.new.min_replicas, added.new.active) == (5, ("office",))


def test_other_values_at_the_same_instant_are_a_changed_transition() -> None:
    found = diff(
        plan(autoscaler("web"), daily("office", "web", minimum=5)),
        plan(autoscaler("web"), daily("office", "web", minimum=7)),
    )
    assert changes(found, "web") == [
        ("2026-11-23T08:00:00Z", Change.CHANGED),
        ("2026-11-24T08:00:00Z", Change.CHANGED),
    ]
    entry = found.autoscalers[0].transitions[0]
    assert entry.old is not None
    assert entry.new is not None
    assert (entry.old.min_replicas, entry.new.min_replicas) == (5, 7)
    # The ends at 17:00 return to the same base values on both sides.
    assert found.autoscalers[0].start is None


def test_a_changed_base_changes_the_values_at_the_start_and_every_return_to_it() -> None:
    found = diff(
        plan(autoscaler("web", minimum=2), daily("office", "web")),
        plan(autoscaler("web", minimum=3), daily("office", "web")),
    )
    (entry,) = found.autoscalers
    assert entry.start is not None
    assert entry.start.time == at(AT)
    assert entry.start.old is not None
    assert entry.start.new is not None
    assert (entry.start.old.min_replicas, entry.start.new.min_replicas) == (2, 3)
    assert changes(found, "web") == [
        ("2026-11-23T16:00:00Z", Change.CHANGED),
        ("2026-11-24T16:00:00Z", Change.CHANGED),
    ]


def test_a_renamed_schedule_changes_which_schedule_is_active() -> None:
    found = diff(
        plan(autoscaler("web"), daily("office", "web")),
        plan(autoscaler("web"), daily("office-hours", "web")),
    )
    entry = found.autoscalers[0].transitions[0]
    assert entry.change is Change.CHANGED
    assert entry.old is not None
    assert entry.new is not None
    assert (entry.old.active, entry.new.active) == (("office",), ("office-hours",))


def test_an_autoscaler_added_or_removed_is_shown_whole() -> None:
    old = plan(autoscaler("web"), autoscaler("api"), daily("api-day", "api"))
    new = plan(autoscaler("web"), autoscaler("batch"), daily("batch-day", "batch", start="10:00"))
    found = diff(old, new)
    kinds = {a.name: a.change for a in found.autoscalers}
    assert kinds == {"api": Change.REMOVED, "batch": Change.ADDED}
    assert found.unchanged == [("shop", "web")]
    added = next(a for a in found.autoscalers if a.name == "batch")
    assert added.old is None
    assert added.new is not None
    assert [t.time for t in added.transitions] == [t for t, _ in added.new.transitions]
    assert all(t.old is None and t.change is Change.ADDED for t in added.transitions)
    assert added.start is not None
    assert added.start.new == added.new.state
    removed = next(a for a in found.autoscalers if a.name == "api")
    assert removed.old is not None
    assert len(removed.transitions) == len(removed.old.transitions) == 4
    assert all(t.new is None and t.change is Change.REMOVED for t in removed.transitions)


def test_a_zone_change_moves_the_transitions_only_while_the_offsets_differ() -> None:
    # London is UTC+1 until 25 October 2026, then UTC: the same wall-clock Schedule in UTC and
    # in London differs on the 24th and is the same on the 26th.
    start = "2026-10-24T00:00:00Z"
    found = diff(
        plan(autoscaler("web"), daily("office", "web", zone="UTC"), start=start, days=3),
        plan(autoscaler("web"), daily("office", "web", zone="Europe/London"), start=start, days=3),
    )
    moved = changes(found, "web")
    assert moved == [
        ("2026-10-24T08:00:00Z", Change.ADDED),
        ("2026-10-24T09:00:00Z", Change.REMOVED),
        ("2026-10-24T16:00:00Z", Change.ADDED),
        ("2026-10-24T17:00:00Z", Change.REMOVED),
    ]
    assert not any(time.startswith(("2026-10-25", "2026-10-26")) for time, _ in moved)


def test_errors_say_which_side_they_come_from() -> None:
    bad = daily("office", "web", zone="Europe/Berln")
    old = plan(autoscaler("web"), bad, file="old.yaml")
    new = plan(autoscaler("web"), daily("office", "web"), file="new.yaml")
    found = diff(old, new)
    assert [(e.side, e.error.file, e.error.field) for e in found.errors] == [
        (Side.OLD, "old.yaml", "spec.timeZone")
    ]
    text = render_diff_errors(found)
    assert text.startswith("error: old (git:main): old.yaml (document 2) Schedule shop/office: ")
    assert "spec.timeZone: " in text
    assert json.loads(render_diff_json(found))["errors"][0]["side"] == "old"


def test_plans_of_other_ranges_are_not_compared() -> None:
    with pytest.raises(ValueError, match="different ranges"):
        diff(plan(autoscaler("web")), plan(autoscaler("web"), days=3))


def test_the_table_marks_each_row_and_shows_old_and_new_values() -> None:
    found = diff(
        plan(autoscaler("web", minimum=2), daily("office", "web"), autoscaler("api")),
        plan(autoscaler("web", minimum=3), daily("office", "web", start="08:00")),
    )
    lines = render_diff_table(found).splitlines()
    assert lines[1:3] == ["--- old: git:main", "+++ new: deploy"]
    rows = [line for line in lines if line[:1] in "+-!" and line[1:2] == " "]
    marks = [(row[0], row.split()[1]) for row in rows]
    assert marks == [
        ("-", "2026-11-23T00:00:00Z"),  # api, removed: its values at the start
        ("!", "2026-11-23T00:00:00Z"),  # web: base min 2 -> 3
        ("+", "2026-11-23T07:00:00Z"),
        ("-", "2026-11-23T08:00:00Z"),
        ("!", "2026-11-23T16:00:00Z"),
        ("+", "2026-11-24T07:00:00Z"),
        ("-", "2026-11-24T08:00:00Z"),
        ("!", "2026-11-24T16:00:00Z"),
    ]
    assert "2 -> 3" in rows[1]
    assert "Mon 2026-11-23 08:00 CET Europe/Berlin" in rows[2]
    assert any(line.startswith("shop/api: removed") for line in lines)
    assert lines[-1] == "No ScheduledPodAutoscaler unchanged."


def test_the_unchanged_autoscalers_are_one_line() -> None:
    names = [f"web-{number:02d}" for number in range(25)]
    found = diff(plan(*map(autoscaler, names)), plan(*map(autoscaler, names)))
    text = render_diff_table(found)
    last = text.splitlines()[-1]
    assert last.startswith("Unchanged: 25 ScheduledPodAutoscaler(s) (shop/web-00, shop/web-01")
    assert last.endswith("shop/web-19 and 5 more)")
    assert "shop/web-20" not in text
    assert len(json.loads(render_diff_json(found))["unchanged"]) == 25


def test_the_json_holds_each_side_of_each_change() -> None:
    found = diff(
        plan(autoscaler("web"), daily("office", "web", minimum=5)),
        plan(autoscaler("web"), daily("office", "web", minimum=7), autoscaler("api")),
    )
    document = json.loads(render_diff_json(found))
    assert (document["at"], document["old"], document["new"]) == (AT, "git:main", "deploy")
    by_name = {a["name"]: a for a in document["autoscalers"]}
    assert by_name["api"]["change"] == "added"
    assert by_name["api"]["start"]["old"] is None
    assert by_name["api"]["start"]["new"]["maxReplicas"] == 8
    web = by_name["web"]
    assert web["start"] is None
    first = web["transitions"][0]
    assert first["change"] == "changed"
    assert (first["old"]["minReplicas"], first["new"]["minReplicas"]) == (5, 7)
    assert first["new"]["activeSchedules"] == ["office"]
    assert document["unchanged"] == []


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[tuple[str | None, str | None]] = []
        self.lines: list[str] = []
        self.marks: list[str] = []
        self.rows: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "section" and "diff" in classes:
            self.sections.append((found.get("data-autoscaler"), found.get("data-change")))
        elif tag == "polyline":
            self.lines.extend(classes)
        elif tag == "rect" and "mark" in classes:
            self.marks.append(classes[1])
        elif tag == "tr" and classes:
            self.rows.append(classes[0])


def test_the_page_draws_both_sides_and_marks_each_change() -> None:
    found = diff_plans(
        plan(autoscaler("web"), daily("office", "web"), autoscaler("api")),
        plan(autoscaler("web"), daily("office", "web", start="08:00"), autoscaler("batch")),
        old_label="git:main",
        new_label="deploy/<b>",
    )
    page = render_diff_html(found)
    parsed = _Page()
    parsed.feed(page)
    assert parsed.sections == [
        ("shop/api", "removed"),
        ("shop/batch", "added"),
        ("shop/web", "changed"),
    ]
    # An added autoscaler has only new lines, a removed one only old ones, a changed one both.
    assert parsed.lines == [
        *("old-max", "old-min"),
        *("new-max", "new-min"),
        *("old-max", "old-min", "new-max", "new-min"),
    ]
    assert parsed.marks == ["added", "removed", "added", "removed"]
    # The values at the start of each one-sided autoscaler, then web's changed transitions.
    assert parsed.rows == ["removed", "added", *parsed.marks]
    assert "deploy/&lt;b&gt;" in page
    assert "<b>" not in page
    assert "http" not in page.lower()  # nothing is fetched


def test_an_edit_of_a_shared_calendar_alone_shows_in_every_schedule_that_follows_it() -> None:
    """docs/schedules.md, "Shared calendars": moving a date in a ClusterCalendar is the whole
    pull request; the diff shows what it does to each SPA whose Schedule keeps to it."""

    def peak_days(*days: str) -> dict[str, Any]:
        return {
            "apiVersion": GROUP,
            "kind": "ClusterCalendar",
            "metadata": {"name": "peak"},
            "spec": {"dates": list(days)},
        }

    def following(name: str) -> dict[str, Any]:
        schedule = daily(f"{name}-peak", name)
        schedule["spec"]["calendars"] = [
            {"kind": "ClusterCalendar", "name": "peak", "mode": "Only"}
        ]
        return schedule

    services = (autoscaler("web"), following("web"), autoscaler("api"), following("api"))
    found = diff(plan(peak_days("2026-11-23"), *services), plan(peak_days("2026-11-24"), *services))
    # Monday's window (09:00-17:00 in Berlin) goes, Tuesday's comes, for both services.
    expected = [
        ("2026-11-23T08:00:00Z", Change.REMOVED),
        ("2026-11-23T16:00:00Z", Change.REMOVED),
        ("2026-11-24T08:00:00Z", Change.ADDED),
        ("2026-11-24T16:00:00Z", Change.ADDED),
    ]
    assert changes(found, "web") == expected
    assert changes(found, "api") == expected
