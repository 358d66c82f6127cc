"""`spa plan -o html` as a browser shows it: headless Chromium parses the page (one timeline per
ScheduledPodAutoscaler in its DOM) and renders it to a PNG that is not blank and shows each
timeline's step lines (docs/plan.md, "-o html")."""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from spa.api.incident import PAUSED_UNTIL_ANNOTATION
from spa.plan.html import MAX_COLOR, MIN_COLOR
from tests.browser.chromium import dump_dom, screenshot
from tests.browser.pixels import bands
from tests.builders import OFFICE_HOURS, autoscaler, manifests, schedule

pytestmark = pytest.mark.browser

SPA = Path(sys.executable).parent / "spa"

MANIFESTS = manifests(
    autoscaler(
        metadata={"annotations": {PAUSED_UNTIL_ANNOTATION: "2026-11-24T06:00:00Z"}},
        minReplicas=2,
        maxReplicas=8,
        metrics=None,
    ),
    schedule(name="office-hours", minReplicas=5, maxReplicas=12, **OFFICE_HOURS),
    autoscaler(name="api", minReplicas=None, maxReplicas=4, metrics=None),
    schedule(
        name="weekday-mornings",
        target="api",
        type="Weekly",
        startDayOfWeek="Monday",
        endDayOfWeek="Friday",
        startTime="08:00",
        endTime="10:00",
        timeZone="America/New_York",
        minReplicas=3,
    ),
    schedule(
        name="paused",
        target="api",
        type="Daily",
        startTime="20:00",
        endTime="22:00",
        minReplicas=4,
        suspend=True,
    ),
    autoscaler(name="worker", namespace="batch", minReplicas=1, maxReplicas=3, metrics=None),
    schedule(
        name="launch",
        namespace="batch",
        target="worker",
        type="OneShot",
        startTime="2026-11-25T19:00",
        endTime="2026-11-26T02:00",
        timeZone="Asia/Tokyo",
        minReplicas=6,
        maxReplicas=6,
    ),
)
TIMELINES = ["batch/worker", "shop/api", "shop/web"]
# What the table says under shop/web's name, and the page too (docs/plan.md).
PAUSED = "paused until 2026-11-24T06:00:00Z: the controller leaves the HPA as it is"


class _Timelines(HTMLParser):
    """Counts what the browser built: timeline sections, their charts and step lines."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.charts = 0
        self.steps: list[str] = []
        # The incident lines (pause, override) of each timeline, as the browser holds them.
        self.incidents: dict[str, list[str]] = {}
        self._incident: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "section" and "timeline" in classes:
            self.sections.append(str(found.get("data-autoscaler")))
        elif tag == "svg" and "chart" in classes:
            self.charts += 1
        elif tag == "polyline":
            self.steps.extend(classes)
        elif tag == "p" and "incident" in classes:
            self._incident = ""

    def handle_data(self, data: str) -> None:
        if self._incident is not None:
            self._incident += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._incident is not None:
            self.incidents.setdefault(self.sections[-1], []).append(self._incident)
            self._incident = None


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("plan-html")
    (directory / "manifests.yaml").write_text(MANIFESTS)
    result = subprocess.run(
        [
            str(SPA),
            "plan",
            "-f",
            str(directory / "manifests.yaml"),
            "--at",
            "2026-11-23T00:00:00Z",
            "-o",
            "html",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    page = directory / "plan.html"
    page.write_text(result.stdout)
    return page


def test_chromium_builds_one_timeline_per_autoscaler(page: Path) -> None:
    parsed = _Timelines()
    parsed.feed(dump_dom(page))
    assert parsed.sections == TIMELINES
    assert parsed.charts == len(TIMELINES)
    assert sorted(parsed.steps) == sorted(["min", "max"] * len(TIMELINES))
    assert parsed.incidents == {"shop/web": [PAUSED]}


def test_the_screenshot_shows_a_timeline_per_autoscaler(page: Path, tmp_path: Path) -> None:
    png = tmp_path / "plan.png"
    screenshot(page, png, width=1280, height=1800)
    image = Image.open(png).convert("RGB")
    assert image.size == (1280, 1800)
    # Not blank: a good share of the page is drawn, in many colours.
    colors = image.getcolors(maxcolors=1 << 20)
    assert colors is not None
    white = sum(count for count, rgb in colors if rgb == (255, 255, 255))
    assert white < 0.9 * 1280 * 1800
    assert len(colors) > 50
    # Each timeline's effective min and max step lines, in their own colours, one block per
    # autoscaler from the top of the page down.
    assert len(bands(image, MAX_COLOR)) == len(TIMELINES)
    assert len(bands(image, MIN_COLOR)) == len(TIMELINES)
