"""`spa suggest`: Schedules from the history of an autoscaler's needs in Prometheus.

Reads the history (spa/history/source.py), finds the recurring peaks and the windows that
would have held them (spa/history/analysis.py), and prints them as Schedules for Git, as the
JSON of docs/suggest.md, as a page, or, with `-f`, as what they would change in the coming
week compared with the manifests given (as `spa plan --diff` prints it). docs/suggest.md is the
contract.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from collections.abc import Sequence
from zoneinfo import ZoneInfo

from spa.api import SCHEDULE_KIND
from spa.cli.history import (
    connection_of,
    history_range,
    selection_of,
    source_of,
    zone_and_holidays,
    zone_named,
)
from spa.cli.output import ReaderGone, emit
from spa.history.analysis import Settings
from spa.history.prometheus import EXIT_DATA, PrometheusError
from spa.history.render import render_errors, render_suggestion_json, render_suggestion_yaml
from spa.history.source import Key, Selection, read_histories
from spa.history.suggestions import Suggestions, suggest_all
from spa.plan import Document, Plan, build_plan, read_documents
from spa.plan import render_errors as plan_errors
from spa.plan.diff import diff_plans, render_diff_table
from spa.plan.schedules import zone_name

__all__ = ["run_suggest"]

_WEEK = 7 * 86400


def run_suggest(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> int:
    output = arguments.output or ("diff" if arguments.filename else "yaml")
    if output == "diff" and not arguments.filename:
        parser.error("-o diff compares with manifests: give them with -f")
    chosen = arguments.autoscaler or arguments.selector or arguments.all_autoscalers
    if not chosen and not arguments.filename:
        parser.error("choose the autoscalers: --autoscaler NAMESPACE/NAME, -l SELECTOR, -A or -f")
    try:
        return _suggest(arguments, output)
    except PrometheusError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.status
    except ReaderGone:
        return 0


def _suggest(arguments: argparse.Namespace, output: str) -> int:
    connection = connection_of(arguments)
    source = source_of(arguments)
    selection = selection_of(arguments)
    fixed_zone, holidays_of = zone_and_holidays(arguments)
    span = history_range(arguments)
    status = 0
    documents: list[Document] = []
    manifests: Plan | None = None
    if arguments.filename:
        documents, read_errors = read_documents(arguments.filename)
        manifests = build_plan(documents, read_errors, at=span.until, until=span.until + _WEEK)
        if manifests.errors:
            with contextlib.suppress(OSError):
                print(plan_errors(manifests), file=sys.stderr)
            status = EXIT_DATA
        if not (arguments.autoscaler or arguments.selector or arguments.all_autoscalers):
            keys = tuple((a.namespace, a.name) for a in manifests.autoscalers)
            if not keys:
                print("error: -f holds no valid ScheduledPodAutoscaler", file=sys.stderr)
                return EXIT_DATA
            selection = Selection(autoscalers=keys)
    histories = read_histories(
        connection, selection, source, start=span.start, until=span.until, step=span.step
    )
    for warning in histories.warnings:
        print(f"warning: Prometheus: {warning}", file=sys.stderr)
    bases = dict(histories.bases)
    zones: dict[Key, ZoneInfo] = {}
    if manifests is not None:
        for autoscaler in manifests.autoscalers:
            key = (autoscaler.namespace, autoscaler.name)
            if autoscaler.base is not None:
                bases[key] = autoscaler.base.min_replicas or 1
            counts = Counter(zone_name(s.zone) for s in autoscaler.schedules)
            if counts:
                zones[key] = zone_named(min(counts, key=lambda name: (-counts[name], name)))
    utc = zone_named("UTC")

    def zone_of(key: Key) -> ZoneInfo:
        return fixed_zone or zones.get(key, utc)

    settings = Settings(
        quantile=arguments.quantile,
        recurrence=arguments.recurrence,
        min_increase=arguments.min_increase,
        bridge=max(1800, 2 * span.step),
        tolerance=max(900, span.step),
    )
    suggestions = suggest_all(
        histories.needs,
        bases=bases,
        zone_of=zone_of,
        holidays_of=holidays_of,
        settings=settings,
        start=span.start,
        until=span.until,
        step=span.step,
        weeks=span.weeks,
        source=source.describe(),
        query=histories.query,
        notes=histories.notes,
    )
    suggestions.errors = sorted(histories.errors.items())
    suggestions.warnings = histories.warnings
    emit(_render(output, suggestions, documents, arguments.filename or [], manifests))
    if suggestions.errors:
        with contextlib.suppress(OSError):
            print(render_errors(suggestions), file=sys.stderr)
        status = EXIT_DATA
    return status


def _render(
    output: str,
    suggestions: Suggestions,
    documents: Sequence[Document],
    paths: Sequence[str],
    manifests: Plan | None,
) -> str:
    if output == "json":
        return render_suggestion_json(suggestions)
    if output == "html":
        from spa.history.html import render_suggestion_html

        return render_suggestion_html(suggestions)
    if output == "diff":
        return _diff(suggestions, documents, paths)
    return render_suggestion_yaml(suggestions)


def _diff(suggestions: Suggestions, documents: Sequence[Document], paths: Sequence[str]) -> str:
    """What the suggested Schedules change in the week after the history, compared with the
    manifests: the suggested autoscalers' Schedules replaced by the suggestion."""
    replaced = {a.key for a in suggestions.autoscalers}
    kept = [d for d in documents if not _schedule_of(d.body, replaced)]
    added = [
        Document(file="suggestion", index=number, body=body)
        for number, body in enumerate(
            (body for a in suggestions.autoscalers for body in a.schedules), start=1
        )
    ]
    at, until = suggestions.until, suggestions.until + _WEEK
    diff = diff_plans(
        build_plan(documents, [], at=at, until=until),
        build_plan([*kept, *added], [], at=at, until=until),
        old_label=", ".join(paths),
        new_label="spa suggest",
    )
    return render_diff_table(diff)


def _schedule_of(body: object, autoscalers: set[Key]) -> bool:
    """Whether `body` is a Schedule of one of `autoscalers`."""
    if not isinstance(body, dict) or body.get("kind") != SCHEDULE_KIND:
        return False
    metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    reference = spec.get("scaleTargetRef") if isinstance(spec, dict) else None
    namespace = (metadata or {}).get("namespace") or "default"
    name = reference.get("name") if isinstance(reference, dict) else None
    return (namespace, name) in autoscalers
