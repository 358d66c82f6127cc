"""`spa plan --diff -o html` as a browser shows it: headless Chromium parses the page (one
section per ScheduledPodAutoscaler that differs, with both sides' step lines) and renders it
with the marks of added and removed transitions in their colours (docs/plan.md, "`--diff`").
A missing Chromium fails it with the command that installs it (tests/browser/chromium.py), as
the plan's own page test."""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from spa.plan.diff import Change
from spa.plan.html import CHANGE_COLORS, MIN_COLOR
from tests.browser.chromium import dump_dom, screenshot
from tests.builders import OFFICE_HOURS, autoscaler, manifests, schedule

pytestmark = pytest.mark.browser

SPA = Path(sys.executable).parent / "spa"

WEB = autoscaler(minReplicas=2, maxReplicas=8, metrics=None)
OLD = manifests(WEB, schedule(name="office-hours", minReplicas=5, **OFFICE_HOURS))
NEW = manifests(
    WEB, schedule(name="office-hours", minReplicas=5, **{**OFFICE_HOURS, "startTime": "07:00"})
)
AT = ("--at", "2026-11-23T00:00:00Z")


class _Sections(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str | None] = []
        self.lines: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and found.get("class") == "diff":
            self.sections.append(found.get("data-change"))
        elif tag == "polyline":
            self.lines.append(str(found.get("class")))


def test_chromium_shows_both_sides_and_the_marks_of_the_changes(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(OLD)
    (tmp_path / "new.yaml").write_text(NEW)
    result = subprocess.run(
        [str(SPA), "plan", "--diff", "old.yaml", "-f", "new.yaml", "-o", "html", *AT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    page = tmp_path / "diff.html"
    page.write_text(result.stdout)
    parsed = _Sections()
    parsed.feed(dump_dom(page))
    assert parsed.sections == ["changed"]
    assert sorted(parsed.lines) == ["new-max", "new-min", "old-max", "old-min"]
    png = tmp_path / "diff.png"
    screenshot(page, png, width=1280, height=900)
    colors = {rgb for _, rgb in Image.open(png).convert("RGB").getcolors(maxcolors=1 << 20) or []}
    wanted = {
        name: tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))
        for name, color in [
            ("min", MIN_COLOR),
            ("added", CHANGE_COLORS[Change.ADDED]),
            ("removed", CHANGE_COLORS[Change.REMOVED]),
        ]
    }
    assert {name for name, rgb in wanted.items() if rgb in colors} == set(wanted)
