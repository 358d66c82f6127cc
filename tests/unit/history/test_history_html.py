"""The pages of `spa suggest -o html` and `spa backtest -o html` are self-contained and escape
what they show (names and labels come from Prometheus): docs/suggest.md, "The output"."""

from __future__ import annotations

from spa.history.analysis import Settings
from spa.history.html import render_backtest_html, render_compare_html, render_suggestion_html
from spa.history.suggestions import suggest_all
from spa.schedule import PublicHolidays
from tests.history.corpus import standard_corpus
from tests.history.pages import backtests, needs, self_contained


def test_the_suggestion_page_is_self_contained_and_escaped() -> None:
    corpus = standard_corpus()
    [need] = needs(corpus, ["shop/web"]).values()
    hostile = ('<img src="x">', "<script>alert(1)</script>")
    found = suggest_all(
        {hostile: need}, bases={hostile: 2}, zone_of=lambda key: corpus.zone,
        holidays_of=lambda zone: PublicHolidays("US"), settings=Settings(), start=corpus.start,
        until=corpus.until, step=300, weeks=4, source="<b>query</b>", query="q",
    )  # fmt: skip
    page = render_suggestion_html(found)
    self_contained(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert" not in page
    assert "&lt;b&gt;query&lt;/b&gt;" in page
    assert page.count('<svg class="weekday"') == 7


def test_the_backtest_pages_are_self_contained() -> None:
    empty, truth = backtests(standard_corpus(), ["shop/web"])
    for page in (render_backtest_html(truth), render_compare_html(empty, truth)):
        self_contained(page)
        assert page.count('<section class="backtest"') == 1
    compare = render_compare_html(empty, truth)
    assert 'class="old-floor"' in compare
    assert "old: held 0 of 24" in compare
