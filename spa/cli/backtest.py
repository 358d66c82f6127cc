"""`spa backtest`: the history in Prometheus replayed against the Schedules of manifests, or of
two sets of them compared (`--compare git:main`). docs/suggest.md, "spa backtest", is the
contract; the replay is spa/history/backtest.py.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from zoneinfo import ZoneInfo

from spa.cli.history import (
    connection_of,
    history_range,
    source_of,
    zone_and_holidays,
    zone_named,
)
from spa.cli.output import ReaderGone, emit
from spa.history.analysis import Settings
from spa.history.backtest import Backtest, backtest
from spa.history.prometheus import EXIT_BAD_QUERY, EXIT_DATA, PrometheusError
from spa.history.report import (
    render_backtest_errors,
    render_backtest_json,
    render_backtest_table,
    render_compare_json,
    render_compare_table,
)
from spa.history.source import Key, Selection, read_histories
from spa.plan import AutoscalerPlan, Document, ReadError, build_plan, read_documents
from spa.plan.html import axis_zone
from spa.plan.revision import GIT_PREFIX, RevisionError, read_revision

__all__ = ["run_backtest"]


def run_backtest(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> int:
    if arguments.compare == "-" and "-" in arguments.filename:
        parser.error("standard input ('-') can be only one side of --compare")
    if arguments.compare is not None and arguments.compare == GIT_PREFIX:
        parser.error("--compare git:REV needs a revision, e.g. git:main")
    try:
        return _backtest(arguments)
    except PrometheusError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.status
    except ReaderGone:
        return 0


def _read(source: str, paths: list[str]) -> tuple[list[Document], list[ReadError]]:
    """The manifests of `--compare`: a path, or the -f paths at a Git revision."""
    if source.startswith(GIT_PREFIX):
        try:
            revision = read_revision(source.removeprefix(GIT_PREFIX), paths)
            return revision.documents, revision.errors
        except RevisionError as error:
            raise PrometheusError(f"--compare {source}: {error.message}", EXIT_BAD_QUERY) from None
    return read_documents([source])


def _backtest(arguments: argparse.Namespace) -> int:
    connection = connection_of(arguments)
    source = source_of(arguments)
    fixed_zone, holidays_of = zone_and_holidays(arguments)
    span = history_range(arguments)
    paths: list[str] = arguments.filename
    sides = [(", ".join(paths), read_documents(paths))]
    if arguments.compare is not None:
        sides.insert(0, (arguments.compare, _read(arguments.compare, paths)))
    plans = [
        (label, build_plan(documents, errors, at=span.start, until=span.until))
        for label, (documents, errors) in sides
    ]
    zones: dict[Key, ZoneInfo] = {}
    for _, plan in plans:  # the new side's zone wins: it is the last
        for autoscaler in plan.autoscalers:
            if autoscaler.schedules or (autoscaler.namespace, autoscaler.name) not in zones:
                zones[(autoscaler.namespace, autoscaler.name)] = fixed_zone or zone_named(
                    axis_zone(autoscaler).key or "UTC"
                )
    keys = tuple(sorted(zones))
    if not keys:
        for label, plan in plans:
            _errors_of(Backtest(0, 0, 0, 0, label, "", "", plan_errors=plan.errors), label)
        print("error: -f holds no valid ScheduledPodAutoscaler to replay", file=sys.stderr)
        return EXIT_DATA
    histories = read_histories(
        connection, Selection(autoscalers=keys), source, start=span.start, until=span.until,
        step=span.step,
    )  # fmt: skip
    for warning in histories.warnings:
        print(f"warning: Prometheus: {warning}", file=sys.stderr)
    settings = Settings(recurrence=arguments.recurrence, min_increase=arguments.min_increase)

    def zone_of(autoscaler: AutoscalerPlan) -> ZoneInfo:
        return zones[(autoscaler.namespace, autoscaler.name)]

    results = []
    for label, plan in plans:
        replay = backtest(
            plan, histories.needs, label=label, source=source.describe(), query=histories.query,
            weeks=span.weeks, step=span.step, zone_of=zone_of, holidays_of=holidays_of,
            settings=settings,
        )  # fmt: skip
        results.append(replay)
    # The history is the same for both sides: its errors are said once, with the new side.
    results[-1].errors = sorted(histories.errors.items())
    if len(results) == 2:
        old, new = results
        if arguments.output == "html":
            from spa.history.html import render_compare_html

            text = render_compare_html(old, new)
        else:
            render = render_compare_json if arguments.output == "json" else render_compare_table
            text = render(old, new)
    elif arguments.output == "json":
        text = render_backtest_json(results[0])
    elif arguments.output == "html":
        from spa.history.html import render_backtest_html

        text = render_backtest_html(results[0])
    else:
        text = render_backtest_table(results[0])
    emit(text)
    failed = False
    for number, replay in enumerate(results):
        side = None if len(results) == 1 else ("old", "new")[number]
        failed |= _errors_of(replay, side)
    return EXIT_DATA if failed else 0


def _errors_of(replay: Backtest, side: str | None) -> bool:
    text = render_backtest_errors(replay, side)
    if text:
        with contextlib.suppress(OSError):
            print(text, file=sys.stderr)
    return bool(text)
