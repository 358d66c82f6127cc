"""`spa plan -o html` offline: one self-contained page, a timeline per autoscaler, everything
from the manifests escaped. tests/browser renders it with Chromium."""

from __future__ import annotations

import re
from datetime import datetime
from functools import partial
from html.parser import HTMLParser
from typing import Any

from spa.api.incident import OVERRIDE_ANNOTATION, PAUSED_UNTIL_ANNOTATION
from spa.plan import Document, Plan, PlanError, build_plan, render_html, render_table
from spa.plan.html import axis_zone
from spa.schedule import instant_of
from tests.builders import autoscaler, schedule


def at(text: str) -> int:
    return instant_of(datetime.fromisoformat(text))


# SPAs with base 2/8, and Schedules raising minReplicas to 5 each day from 09:00 to 17:00.
_autoscaler = partial(autoscaler, minReplicas=2, maxReplicas=8, metrics=None)
_daily = partial(schedule, type="Daily", startTime="09:00", endTime="17:00", minReplicas=5)


def plan_of(*bodies: dict[str, Any]) -> Plan:
    documents = [Document("m.yaml", index, body) for index, body in enumerate(bodies, 1)]
    return build_plan(
        documents, [], at=at("2026-11-23T00:00:00Z"), until=at("2026-11-26T00:00:00Z")
    )


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.polylines: dict[str, list[str]] = {}
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.add(tag)
        if tag == "section" and found.get("class") == "timeline":
            self.sections.append(str(found["data-autoscaler"]))
        if tag == "polyline":
            key = f"{self.sections[-1]} {found['class']}"
            self.polylines[key] = str(found["points"]).split()


def test_one_self_contained_page_with_a_timeline_per_autoscaler() -> None:
    plan = plan_of(
        _autoscaler(name="web"),
        _autoscaler(name="api"),
        _autoscaler(name="web", namespace="other"),
        _daily(name="office", target="web", timeZone="Europe/Berlin"),
    )
    text = render_html(plan)
    page = Page()
    page.feed(text)
    assert page.sections == ["other/web", "shop/api", "shop/web"]
    # Nothing to fetch: no scripts, stylesheets, images, fonts or links of any kind.
    assert "http" not in text
    assert not page.tags & {"script", "link", "img", "iframe", "object", "a"}
    assert re.findall(r"url\(([^)]*)\)", text) == ["#suspended"] * text.count("url(")
    # shop/web: 2/8, raised to 5 from 09:00 to 17:00 Berlin time on three days: six
    # transitions, so seven steps of two points each.
    assert len(page.polylines["shop/web min"]) == 2 * 7
    heights = {point.split(",")[1] for point in page.polylines["shop/web min"]}
    assert len(heights) == 2
    # No Schedule: one flat step.
    assert len(page.polylines["shop/api max"]) == 2


def test_text_from_the_manifests_is_escaped() -> None:
    plan = plan_of(_autoscaler(name="web"), _daily(name="office", target="web", timeZone="UTC"))
    plan.errors.append(PlanError("<b>evil</b>.yaml", 1, "bad <script>alert(1)</script>"))
    text = render_html(plan)
    assert "<script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;b&gt;evil&lt;/b&gt;.yaml" in text


def test_the_axis_is_in_the_zone_most_schedules_use() -> None:
    plan = plan_of(
        _autoscaler(name="web"),
        _autoscaler(name="api"),
        _daily(name="a", target="web", timeZone="Asia/Tokyo"),
        _daily(name="b", target="web", timeZone="Europe/Berlin"),
        _daily(name="c", target="web", timeZone="Europe/Berlin", startTime="10:00"),
    )
    zones = {f"{a.namespace}/{a.name}": axis_zone(a).key for a in plan.autoscalers}
    assert zones == {"shop/api": "UTC", "shop/web": "Europe/Berlin"}
    assert "local time in Europe/Berlin (UTC+01:00 at the start)" in render_html(plan)


def test_no_autoscaler() -> None:
    assert "No valid ScheduledPodAutoscaler found." in render_html(plan_of())


class Paragraphs(HTMLParser):
    """The text of each `<p>` by its class, per autoscaler section, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str]] = []
        self._section = ""
        self._open: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and found.get("class") == "timeline":
            self._section = str(found["data-autoscaler"])
        if tag == "p":
            self._open, self._text = str(found.get("class") or ""), ""
        if tag == "svg" and self._section:
            self.found.append((self._section, "svg", ""))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._open is not None:
            self.found.append((self._section, self._open, self._text))
            self._open = None


def test_a_pause_an_override_and_a_malformed_annotation_are_said_as_the_table_says_them() -> None:
    """The page draws the schedule; while a pause or an override holds, the controller does
    something else, and the table says so under the SPA's name (docs/plan.md): the page says
    the same, in the same words, under the name and before the chart."""
    until = "2026-11-24T12:00:00Z"
    paused = _autoscaler(name="web", metadata={"annotations": {PAUSED_UNTIL_ANNOTATION: until}})
    overridden = _autoscaler(
        name="api",
        metadata={
            "annotations": {
                OVERRIDE_ANNOTATION: f"min=20,max=40,until={until}",
                PAUSED_UNTIL_ANNOTATION: "<later>",
            }
        },
    )
    plan = plan_of(paused, overridden, _autoscaler(name="plain"))
    table = render_table(plan)
    page = Paragraphs()
    page.feed(render_html(plan))
    said = {
        title: [
            line.strip()
            for line in table.split(f"\n{title} (base: min 2, max 8):\n")[1]
            .split("\n\n")[0]
            .splitlines()
            if line.startswith(("  paused", "  overridden", "  ignored"))
        ]
        for title in ("shop/web", "shop/api", "shop/plain")
    }
    assert said["shop/web"] == [f"paused until {until}: the controller leaves the HPA as it is"]
    assert len(said["shop/api"]) == 2
    for title, lines in said.items():
        shown = [(kind, text) for section, kind, text in page.found if section == title]
        assert shown[0][0] == "summary"
        incidents = shown[1 : 1 + len(lines)]
        assert incidents == [
            ("incident ignored" if line.startswith("ignored") else "incident", line)
            for line in lines
        ]
        assert shown[1 + len(lines)] == ("svg", "")
    assert "&lt;later&gt;" in render_html(plan)
