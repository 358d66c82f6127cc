"""`kubectl spa status`: read the cluster, build the report, print it; with `--watch`, again
every few seconds until interrupted (docs/status.md).

The report is spa/cli/status_report.py, its outputs spa/cli/status_render.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

from spa.cli.cluster import connected, read_cluster
from spa.cli.output import emit
from spa.cli.status_render import render_status, status_document
from spa.cli.status_report import build_status
from spa.controller.failures import ClusterFailure

__all__ = ["run_status"]


def run_status(
    arguments: argparse.Namespace,
    *,
    now: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """`status` once, or with `--watch` until interrupted; the exit status."""
    with connected(arguments) as scope:
        last: str | None = None
        while True:
            objects = read_cluster(scope, everything=True, selector=arguments.selector)
            at = int(now())
            report = build_status(
                objects, at=at, name=arguments.name, selection=arguments.selector is not None
            )
            if arguments.name is not None and not report.autoscalers:
                where = scope.namespace or "any namespace"
                raise ClusterFailure(
                    1, f"ScheduledPodAutoscaler {arguments.name} not found in {where}"
                )
            text = render_status(report, arguments.output, headers=not arguments.no_headers)
            if not arguments.watch:
                if text:  # `-o name` of nothing prints nothing, as kubectl
                    emit(text)
                return 0
            # On a terminal the status is redrawn in place at every read (ages move on);
            # elsewhere (a pipe, a log) it is printed again only when something changed.
            redraw = arguments.output in ("table", "wide") and _terminal()
            content = json.dumps({**status_document(report), "at": None}, sort_keys=True)
            if redraw or content != last:
                emit("\033[H\033[2J" + text if redraw else text)
                last = content
            sleep(arguments.interval)


def _terminal() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
