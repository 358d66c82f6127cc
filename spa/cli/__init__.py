"""Command-line entry point: `spa`, also installed as the kubectl plugin `kubectl-spa`.

`spa plan` previews schedules offline (or, `--from-cluster`, from the live objects);
`spa status` shows what the live ScheduledPodAutoscalers do; `spa pause`, `override` and
`resume` hold an HPA during an incident; `spa run` starts the controller.
The Kubernetes client is imported only by the commands that talk to a cluster, so that
`plan -f` starts fast and works where the client cannot be imported. Invoked as `kubectl spa`
(the plugin `kubectl-spa`), the help says so.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

from spa import __version__
from spa.cli.incident import COMMANDS as INCIDENT_COMMANDS
from spa.cli.incident import add_incident_commands, run_incident
from spa.cli.options import add_cluster_arguments, add_status_arguments, cluster_arguments_given
from spa.cli.output import ReaderGone, emit
from spa.controller.options import add_run_arguments
from spa.plan import (
    Plan,
    build_plan,
    read_documents,
    render_errors,
    render_html,
    render_json,
    render_table,
)
from spa.schedule import format_instant, instant_of

__all__ = ["main"]

# The instants a plan may cover. The engine works in days on either side of what it is asked,
# so the ends of the calendar (year 1, year 9999) are refused here with a message instead of
# failing deep inside with an OverflowError.
_EARLIEST = instant_of(datetime(1970, 1, 1, tzinfo=UTC))
_LATEST = instant_of(datetime(9999, 1, 1, tzinfo=UTC))
_MAX_DAYS = 3660
_DAY_SECONDS = 86400


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    if arguments.command == "plan":
        return _plan(parser, arguments)
    if arguments.command == "status":
        from spa.cli.status import run_status

        return _reading_cluster(lambda: run_status(arguments))
    if arguments.command in INCIDENT_COMMANDS:
        return _reading_cluster(lambda: run_incident(arguments))
    from spa.controller.main import run

    return run(arguments)


def program_name(argv0: str | None = None) -> str:
    """`kubectl spa` when run as the kubectl plugin (kubectl runs `kubectl-spa` with its own
    path as argv[0]), else `spa`."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "kubectl spa" if name.startswith("kubectl-spa") else "spa"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name(),
        description="Scheduled scaling for Kubernetes HorizontalPodAutoscalers.",
    )
    # `spa --version` and `kubectl spa --version` say the same (docs/operations.md).
    parser.add_argument(
        "--version", action="version", version=f"scheduled-pod-autoscaler {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan = commands.add_parser(
        "plan",
        help="preview the effective min/maxReplicas of ScheduledPodAutoscalers from manifests",
        description=(
            "Read ScheduledPodAutoscaler and Schedule manifests (files, directories, "
            "multi-document YAML; '-' for standard input), validate them, and print for every "
            "ScheduledPodAutoscaler the effective values at --at and every change after it "
            "up to the horizon. Needs no cluster. Errors go to standard error; exits 1 if "
            "any document is invalid."
        ),
    )
    source = plan.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "-f",
        "--filename",
        action="append",
        metavar="PATH",
        help="a manifest file, a pipe such as <(kustomize build .), or a directory of "
        "manifests; repeatable",
    )
    source.add_argument(
        "--from-cluster",
        action="store_true",
        help="plan the ScheduledPodAutoscalers and Schedules of a live cluster (read-only; "
        "--kubeconfig, --context, -n and -A as in kubectl)",
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
    plan.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "html"),
        default="table",
        help="table (default), json (docs/plan.md) or html (one self-contained page with a "
        "timeline per ScheduledPodAutoscaler)",
    )

    add_cluster_arguments(plan)
    add_status_arguments(
        commands.add_parser(
            "status",
            help="show what live ScheduledPodAutoscalers do now and next",
            description=(
                "For each ScheduledPodAutoscaler of the cluster: the base and the in-force "
                "min/maxReplicas (read from its HPA), whether the HPA is what the SPA wants "
                "now, the active Schedules, the next transitions in UTC and in each "
                "Schedule's time zone, what is Degraded and why, and the last events. "
                "Read-only."
            ),
        )
    )
    add_incident_commands(commands)
    add_run_arguments(
        commands.add_parser(
            "run",
            help="run the controller",
            description="Run the controller: one HPA per ScheduledPodAutoscaler, set by Schedules.",
        )
    )
    return parser


def _plan(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> int:
    at = arguments.at if arguments.at is not None else instant_of(datetime.now(UTC))
    if arguments.until is not None:
        until = arguments.until
        if until <= at:
            parser.error("--until must be after --at")
        if until - at > _MAX_DAYS * _DAY_SECONDS:
            parser.error(f"--until must be at most {_MAX_DAYS} days after --at")
    else:
        until = at + arguments.days * _DAY_SECONDS
        if until > _LATEST:
            parser.error(
                f"--at plus {arguments.days} days is after {format_instant(_LATEST)}, "
                "the last instant a plan covers"
            )
    if arguments.from_cluster:
        from spa.cli.cluster import cluster_plan, connected, read_cluster

        def from_cluster() -> Plan:
            with connected(arguments) as scope:
                objects = read_cluster(scope, everything=False)
            return cluster_plan(objects, at=at, until=until)

        found = _reading_cluster(from_cluster)
        if isinstance(found, int):
            return found
        plan = found
    else:
        if given := cluster_arguments_given(arguments):
            parser.error(f"{', '.join(given)} can only be used with --from-cluster")
        documents, read_errors = read_documents(arguments.filename)
        plan = build_plan(documents, read_errors, at=at, until=until)
    with contextlib.suppress(ReaderGone):
        emit(_RENDERERS[arguments.output](plan))
    if plan.errors:
        # As kubectl: the result on standard output, the errors on standard error, after it. The
        # JSON and the HTML page carry the errors too, so that the document is complete.
        with contextlib.suppress(OSError):
            print(render_errors(plan), file=sys.stderr, flush=True)
        return 1
    return 0


_RENDERERS = {"table": render_table, "json": render_json, "html": render_html}

Result = TypeVar("Result")


def _reading_cluster(action: Callable[[], Result]) -> Result | int:
    """`action`'s result, or the exit status of why the cluster could not be read (said in one
    line on standard error, as kubectl says it)."""
    from spa.controller.main import ClusterFailure

    try:
        return action()
    except ClusterFailure as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        # How `status --watch` ends.
        return 0
    except ReaderGone:
        return 0


def _timestamp(text: str) -> int:
    """An RFC 3339 instant as epoch seconds, within the years a plan covers."""
    shown = text if len(text) <= 40 else f"{text[:40]}..."
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{shown}' is not an RFC 3339 instant such as 2026-03-08T06:30:00Z"
        ) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"'{shown}' needs an offset, such as Z or +09:00")
    try:
        instant = instant_of(moment)
    except (OverflowError, ValueError):
        instant = _LATEST + 1 if moment.year > 1970 else _EARLIEST - 1
    if not _EARLIEST <= instant <= _LATEST:
        raise argparse.ArgumentTypeError(
            f"'{shown}' is outside {format_instant(_EARLIEST)} to {format_instant(_LATEST)}, "
            "the instants a plan covers"
        )
    return instant


def _positive_days(text: str) -> int:
    try:
        days = int(text) if len(text) <= 10 else 0
    except ValueError:
        days = 0
    if days < 1 or days > _MAX_DAYS:
        shown = text if len(text) <= 40 else f"{text[:40]}..."
        raise argparse.ArgumentTypeError(
            f"'{shown}' is not a whole number of days from 1 to {_MAX_DAYS}"
        )
    return days
