"""Command-line entry point: `spa`, also installed as the kubectl plugin `kubectl-spa`.

`spa plan` previews schedules offline; `spa run` starts the controller. The controller's
modules (and with them the Kubernetes client) are imported only by `run`, so that `plan`
starts fast and works where the client cannot be imported.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from spa.controller.options import add_run_arguments
from spa.plan import build_plan, read_documents, render_json, render_table
from spa.schedule import instant_of

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    if arguments.command == "plan":
        return _plan(parser, arguments)
    from spa.controller.main import run

    return run(arguments)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spa",
        description="Scheduled scaling for Kubernetes HorizontalPodAutoscalers.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan = commands.add_parser(
        "plan",
        help="preview the effective min/maxReplicas of ScheduledPodAutoscalers from manifests",
        description=(
            "Read ScheduledPodAutoscaler and Schedule manifests (files, directories, "
            "multi-document YAML; '-' for standard input), validate them, and print for every "
            "ScheduledPodAutoscaler the effective values at --at and every change after it "
            "up to the horizon. Needs no cluster. Exits 1 if any document is invalid."
        ),
    )
    plan.add_argument(
        "-f",
        "--filename",
        action="append",
        required=True,
        metavar="PATH",
        help="a manifest file or a directory of them; repeatable",
    )
    plan.add_argument(
        "--at",
        type=_timestamp,
        metavar="RFC3339",
        help="the instant to start from, e.g. 2026-03-08T06:30:00Z (default: now)",
    )
    horizon = plan.add_mutually_exclusive_group()
    horizon.add_argument(
        "--days",
        type=_positive_days,
        default=7,
        metavar="N",
        help="how many days after --at to list transitions for (default: 7)",
    )
    horizon.add_argument(
        "--until", type=_timestamp, metavar="RFC3339", help="list transitions up to this instant"
    )
    plan.add_argument("-o", "--output", choices=("table", "json"), default="table")

    add_run_arguments(
        commands.add_parser(
            "run",
            help="run the controller",
            description="Run the controller: one HPA per ScheduledPodAutoscaler, set by Schedules.",
        )
    )
    return parser


def _plan(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> int:
    at = arguments.at or datetime.now(UTC)
    until = arguments.until or at + timedelta(days=arguments.days)
    if until <= at:
        parser.error("--until must be after --at")
    documents, read_errors = read_documents(arguments.filename)
    plan = build_plan(documents, read_errors, at=instant_of(at), until=instant_of(until))
    try:
        print(render_json(plan) if arguments.output == "json" else render_table(plan))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (`| head`) has gone; say nothing more, like other command-line tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1 if plan.errors else 0


def _timestamp(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not an RFC 3339 instant such as 2026-03-08T06:30:00Z"
        ) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"'{text}' needs an offset, such as Z or +09:00")
    return moment


def _positive_days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        days = 0
    if days < 1 or days > 3660:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of days from 1 to 3660")
    return days


if __name__ == "__main__":
    sys.exit(main())
