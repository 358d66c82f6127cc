"""`spa suggest -o html` and `spa backtest -o html` as a browser shows them (docs/suggest.md,
"The pages"): headless Chromium parses each page (a chart per weekday per autoscaler; a
timeline per autoscaler) and renders it to a picture that shows the suggested floor of every
weekday, and the shortfalls of a replay with no Schedule but none with the true ones."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from spa.history.html import (
    NEED_COLOR,
    SHORT_COLOR,
    render_backtest_html,
    render_compare_html,
    render_suggestion_html,
)
from spa.plan.html import MIN_COLOR
from tests.browser.chromium import dump_dom, screenshot
from tests.browser.pixels import bands, rgb
from tests.history.corpus import standard_corpus
from tests.history.pages import backtests, suggestions

pytestmark = pytest.mark.browser

CORPUS = standard_corpus()


class _Charts(HTMLParser):
    """What the browser built: sections by class, weekday charts, and step lines by class."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[tuple[str, str]] = []
        self.weekdays: list[str] = []
        self.lines: list[str] = []
        self.marks: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "section" and classes:
            self.sections.append((classes[0], str(found.get("data-autoscaler"))))
        elif tag == "svg" and "weekday" in classes:
            self.weekdays.append(str(found.get("data-weekday")))
        elif tag == "polyline":
            self.lines.extend(classes)
        elif tag == "rect" and "mark" in classes:
            self.marks.extend(c for c in classes if c != "mark")


@pytest.fixture(scope="module")
def suggest_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    page = tmp_path_factory.mktemp("suggest-html") / "suggest.html"
    page.write_text(render_suggestion_html(suggestions(CORPUS)))
    return page


def test_chromium_builds_a_chart_per_weekday_per_autoscaler(suggest_page: Path) -> None:
    parsed = _Charts()
    parsed.feed(dump_dom(suggest_page))
    names = ["batch/importer", "shop/quiet", "shop/web"]
    assert parsed.sections == [("suggestion", name) for name in names]
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    assert parsed.weekdays == days * len(names)
    assert parsed.lines.count("floor") == 7 * len(names)


def test_the_picture_shows_the_floor_of_every_weekday(tmp_path: Path) -> None:
    page = tmp_path / "web.html"
    page.write_text(render_suggestion_html(suggestions(CORPUS, ["shop/web"])))
    png = tmp_path / "web.png"
    screenshot(page, png, width=1200, height=1150)
    image = Image.open(png).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 20)
    assert colors is not None
    assert len(colors) > 50
    # Two charts a row at this width: four rows of floors (Sunday alone on the last).
    assert len(bands(image, MIN_COLOR, gap=10, least=300)) == 4


def test_the_replay_marks_the_shortfalls_of_no_schedule_only(tmp_path: Path) -> None:
    empty, truth = backtests(CORPUS, ["shop/web"])
    for name, text, short in (
        ("empty", render_backtest_html(empty), True),
        ("truth", render_backtest_html(truth), False),
        ("compare", render_compare_html(empty, truth), True),
    ):
        page = tmp_path / f"{name}.html"
        page.write_text(text)
        parsed = _Charts()
        parsed.feed(dump_dom(page))
        assert parsed.sections == [("backtest", "shop/web")], name
        assert ("short" in parsed.marks) is short, name
        assert "one-off" in parsed.marks, name  # the spike of 29 October, whatever the floor
        png = tmp_path / f"{name}.png"
        screenshot(page, png, width=1200, height=500)
        image = Image.open(png).convert("RGB")
        assert bands(image, NEED_COLOR, gap=10, least=200), name
        pixels = sum(
            count for count, found in image.getcolors(1 << 20) or [] if found == rgb(SHORT_COLOR)
        )
        # The legend's swatch alone, or the marks too.
        assert (pixels > 2000) is short, (name, pixels)
