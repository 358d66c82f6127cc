"""The pages of `spa suggest -o html` and `spa backtest -o html` for the standard corpus, made
in memory (the same analysis and renderers as the commands, without a Prometheus): for
tests/browser and for the picture of docs/suggest.md (`make screenshots`); and the check that
a page is self-contained, for those pages and for the commands' own.

    python -m tests.history.pages suggest OUT.html     # shop/web's suggestion
    python -m tests.history.pages backtest OUT.html    # no Schedule against the true ones
"""

from __future__ import annotations

import argparse
from html.parser import HTMLParser
from pathlib import Path

from spa.history.analysis import Settings
from spa.history.backtest import Backtest, backtest
from spa.history.html import render_compare_html, render_suggestion_html
from spa.history.need import Need
from spa.history.source import Key
from spa.history.suggestions import Suggestions, suggest_all
from spa.plan import Document, build_plan
from spa.schedule import PublicHolidays
from tests.history.corpus import Corpus, desired_replicas, in_memory, standard_corpus

__all__ = ["backtests", "needs", "self_contained", "suggestions"]

SOURCE = "kube_horizontalpodautoscaler_status_desired_replicas (kube-state-metrics)"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)


def self_contained(page: str) -> None:
    """Asserts that `page` fetches nothing and runs nothing (docs/suggest.md, "The output")."""
    assert page.startswith("<!DOCTYPE html>")
    parsed = _Tags()
    parsed.feed(page)
    assert not parsed.tags & {"script", "img", "link", "iframe", "object"}, parsed.tags
    assert not parsed.attributes & {"src", "href"}, parsed.attributes
    assert "url(http" not in page


def needs(corpus: Corpus, keys: list[str] | None = None) -> dict[Key, Need]:
    return {
        (w.namespace, w.name): in_memory(
            desired_replicas(corpus, w), start=corpus.start, until=corpus.until
        )
        for w in corpus.workloads
        if keys is None or w.key in keys
    }


def suggestions(corpus: Corpus, keys: list[str] | None = None) -> Suggestions:
    return suggest_all(
        needs(corpus, keys),
        bases={(w.namespace, w.name): w.base for w in corpus.workloads},
        zone_of=lambda key: corpus.zone,
        holidays_of=lambda zone: PublicHolidays("US"),
        settings=Settings(),
        start=corpus.start,
        until=corpus.until,
        step=300,
        weeks=corpus.weeks,
        source=SOURCE,
        query="(in memory)",
    )


def backtests(corpus: Corpus, keys: list[str] | None = None) -> tuple[Backtest, Backtest]:
    """No Schedule (old), then the true ones (new)."""
    found = needs(corpus, keys)
    sides = []
    for label, schedules in (("no Schedule", False), ("the true Schedules", True)):
        bodies = [
            body
            for w in corpus.workloads
            if keys is None or w.key in keys
            for body in w.manifests(schedules=schedules)
        ]
        documents = [Document(file=label, index=n, body=b) for n, b in enumerate(bodies, start=1)]
        plan = build_plan(documents, [], at=corpus.start, until=corpus.until)
        sides.append(
            backtest(
                plan,
                found,
                label=label,
                source=SOURCE,
                query="(in memory)",
                weeks=corpus.weeks,
                step=300,
                zone_of=lambda autoscaler: corpus.zone,
                holidays_of=lambda zone: PublicHolidays("US"),
                settings=Settings(),
            )
        )
    return sides[0], sides[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", choices=("suggest", "backtest"))
    parser.add_argument("out", type=Path)
    arguments = parser.parse_args()
    corpus = standard_corpus()
    if arguments.page == "suggest":
        text = render_suggestion_html(suggestions(corpus, ["shop/web"]))
    else:
        text = render_compare_html(*backtests(corpus, ["shop/web"]))
    arguments.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
