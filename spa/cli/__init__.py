"""Command-line entry point: `spa`, also installed as the kubectl plugin `kubectl-spa`.

`spa plan` previews schedules offline (or, `--from-cluster`, from the live objects; or,
`--diff`, what a change of the manifests changes); `spa suggest` writes Schedules from the
history in Prometheus and `spa backtest` replays that history against Schedules;
`spa status` shows what the live ScheduledPodAutoscalers do; `spa pause`, `override` and
`resume` hold an HPA during an incident; `spa run` starts the controller.
The Kubernetes client is imported only by the commands that talk to a cluster, so that
`plan -f` starts fast and works where the client cannot be imported. Invoked as `kubectl spa`
(the plugin `kubectl-spa`), the help says so. Every command's help ends with examples, which
tests/unit/test_cli_help.py parses, so that none of them goes stale; shell completion is
spa/cli/completion.py, from this same parser.
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
from spa.cli.completion import SHELLS, autocomplete, shell_script
from spa.cli.history_options import add_backtest_arguments, add_suggest_arguments
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
    render_yaml,
)
from spa.plan.diff import diff_plans, render_diff_errors, render_diff_json, render_diff_table
from spa.plan.html import render_diff_html
from spa.plan.revision import GIT_PREFIX, RevisionError, read_revision
from spa.schedule import format_instant, instant_of

__all__ = ["build_parser", "main"]

# The instants a plan may cover. The engine works in days on either side of what it is asked,
# so the ends of the calendar (year 1, year 9999) are refused here with a message instead of
# failing deep inside with an OverflowError.
_EARLIEST = instant_of(datetime(1970, 1, 1, tzinfo=UTC))
_LATEST = instant_of(datetime(9999, 1, 1, tzinfo=UTC))
_MAX_DAYS = 3660
_DAY_SECONDS = 86400


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == ["__complete"]:
        # cobra's hidden command, which kubectl_complete-spa answers too: a one-line
        # kubectl_complete-spa script can call `kubectl-spa __complete "$@"` where only
        # kubectl-spa is installed (Krew; docs/operations.md, "Help and shell completion").
        from spa.cli.completion import kubectl_complete

        return kubectl_complete(words[1:])
    parser = build_parser()
    # Returns at once unless the shell's completion script ran us for a TAB (then it exits).
    autocomplete(parser)
    arguments = parser.parse_args(argv)
    if arguments.command == "plan":
        return _plan(parser, arguments)
    if arguments.command == "completion":
        with contextlib.suppress(ReaderGone):
            emit(shell_script(arguments.shell))
        return 0
    if arguments.command == "status":
        from spa.cli.status import run_status

        if arguments.name is not None and arguments.selector is not None:
            # As kubectl get: a name and a selector together are refused.
            parser.error("status: NAME cannot be given with -l/--selector")
        return _reading_cluster(lambda: run_status(arguments))
    if arguments.command in INCIDENT_COMMANDS:
        return _reading_cluster(lambda: run_incident(arguments))
    if arguments.command == "suggest":
        from spa.cli.suggest import run_suggest

        return run_suggest(parser, arguments)
    if arguments.command == "backtest":
        from spa.cli.backtest import run_backtest

        return run_backtest(parser, arguments)
    from spa.controller.main import run

    return run(arguments)


def program_name(argv0: str | None = None) -> str:
    """`kubectl spa` when run as the kubectl plugin (kubectl runs `kubectl-spa` with its own
    path as argv[0]), else `spa`."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "kubectl spa" if name.startswith("kubectl-spa") else "spa"


# The examples at the end of each command's help ("%(prog)s" is the command as invoked: `spa
# plan`, or `kubectl spa plan` for the plugin). One command a line, each preceded by a comment:
# tests/unit/test_cli_help.py parses every one of them with this parser.
EXAMPLES = {
    "": """\
examples:
  # What the manifests of a directory do in the next 7 days (no cluster needed)
  %(prog)s plan -f manifests/

  # What each ScheduledPodAutoscaler of a namespace does now, and next
  %(prog)s status -n shop

  # Complete commands, flags and names with TAB in bash
  source <(%(prog)s completion bash)
""",
    "plan": """\
examples:
  # The next 7 days of the manifests of a directory
  %(prog)s -f manifests/

  # A given fortnight of two files, as JSON
  %(prog)s -f spa.yaml -f schedules.yaml --at 2026-12-01T00:00:00Z --days 14 -o json

  # The output of kustomize, read from standard input, up to a date
  kustomize build overlays/prod | %(prog)s -f - --until 2027-01-01T00:00:00Z

  # The live objects of a namespace instead of files, as a page to share
  %(prog)s --from-cluster -n shop -o html > plan.html

  # The same plan as YAML, for every namespace
  %(prog)s --from-cluster -A -o yaml
""",
    "status": """\
examples:
  # Every ScheduledPodAutoscaler of the context's namespace
  %(prog)s

  # One of them, with all its Schedules and more transitions
  %(prog)s web -n shop -o wide

  # Those labelled team=checkout, in every namespace, as YAML
  %(prog)s -A -l team=checkout -o yaml

  # Their names only, as `kubectl get -o name` prints them
  %(prog)s -n shop -o name

  # Watch one as it changes (Ctrl-C ends), reading the cluster every 5 seconds
  %(prog)s web -n shop --watch --interval 5
""",
    "run": """\
examples:
  # The controller as the install manifest runs it
  %(prog)s --enable-leader-election

  # Outside the cluster, on two namespaces, with readable logs
  %(prog)s --kubeconfig ~/.kube/config --namespace shop --namespace blog --log-format text
""",
    "pause": """\
examples:
  # Leave the HPA of web alone during an incident, until resumed
  %(prog)s web -n shop

  # The same for three hours only; the schedule applies again after them
  %(prog)s web -n shop --for 3h
""",
    "override": """\
examples:
  # Hold at least 20 replicas (and at most the spec's maxReplicas) for two hours
  %(prog)s web -n shop --min 20 --for 2h

  # Hold 20 to 40 for 90 minutes
  %(prog)s web -n shop --min 20 --max 40 --for 90m
""",
    "resume": """\
examples:
  # End a pause and an override of web now: the schedule applies again
  %(prog)s web -n shop
""",
    "suggest": """\
examples:
  # Schedules for one autoscaler from the last 4 weeks of its HPA's desired replicas
  %(prog)s --prometheus http://prometheus:9090 --autoscaler shop/web --time-zone Europe/Berlin

  # What they would change in the manifests kept in Git, for the SPAs there
  %(prog)s --prometheus http://prometheus:9090 -f deploy/

  # One autoscaler from 8 weeks of a recorded load, 50 requests/s per replica
  %(prog)s --prometheus http://prometheus:9090 --autoscaler shop/web --weeks 8 """
    """--query web:http_requests:rate5m --per-pod 50

  # Those whose HPA is labelled team=shop, as JSON
  %(prog)s --prometheus http://prometheus:9090 -l team=shop -o json

  # The history per weekday with the suggested floor, as a page
  %(prog)s --prometheus http://prometheus:9090 -A -o html > suggest.html
""",
    "backtest": """\
examples:
  # The last 4 weeks replayed against the Schedules of a directory
  %(prog)s -f deploy/ --prometheus http://prometheus:9090

  # The branch's Schedules against main's, over 8 weeks
  %(prog)s -f deploy/ --prometheus http://prometheus:9090 --weeks 8 --compare git:main

  # The history with the floor and the shortfalls marked, as a page
  %(prog)s -f deploy/ --prometheus http://prometheus:9090 -o html > backtest.html
""",
    "completion": """\
examples:
  # bash: for this shell, then for every new one
  source <(%(prog)s bash)
  %(prog)s bash > ~/.local/share/bash-completion/completions/spa

  # zsh (after compinit)
  eval "$(%(prog)s zsh)"

  # fish
  %(prog)s fish > ~/.config/fish/completions/spa.fish
""",
}


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that text written in lines (the examples) keeps its line
    breaks and indentation, as RawDescriptionHelpFormatter would keep them; descriptions,
    written as one paragraph, are still wrapped to the terminal."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        return "".join(indent + line for line in text.splitlines(keepends=True))


def _command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    description: str,
) -> argparse.ArgumentParser:
    """A subcommand whose help ends with its examples, laid out as written."""
    return commands.add_parser(
        name,
        help=help,
        description=description,
        epilog=EXAMPLES[name],
        formatter_class=_HelpFormatter,
    )


def build_parser(*, prog: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (shell completion walks it too: spa/cli/completion.py)."""
    parser = argparse.ArgumentParser(
        prog=prog or program_name(),
        description="Scheduled scaling for Kubernetes HorizontalPodAutoscalers.",
        epilog=EXAMPLES[""],
        formatter_class=_HelpFormatter,
    )
    # `spa --version` and `kubectl spa --version` say the same (docs/operations.md).
    parser.add_argument(
        "--version", action="version", version=f"scheduled-pod-autoscaler {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan = _command(
        commands,
        "plan",
        help="preview the effective min/maxReplicas of ScheduledPodAutoscalers from manifests",
        description=(
            "Read ScheduledPodAutoscaler and Schedule manifests (files, directories, "
            "multi-document YAML; '-' for standard input), validate them, and print for every "
            "ScheduledPodAutoscaler the effective values at --at and every change after it "
            "up to the horizon. Needs no cluster. Errors go to standard error; exits 1 if "
            "any document is invalid. With --diff OLD, show instead the transitions the -f "
            "manifests add, remove or change compared with OLD (docs/plan.md, '--diff')."
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
        "--diff",
        metavar="OLD",
        help="compare with OLD: show the transitions the -f manifests add, remove or change; "
        "OLD is a file or directory of manifests, or git:REV for the -f paths at Git revision "
        "REV (e.g. --diff git:origin/main -f deploy/); exits 0 if none differ, 1 if some do, "
        "2 on any error",
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
        choices=("table", "json", "yaml", "html"),
        default="table",
        help="table (default), json (docs/plan.md), yaml (the same document) or html (one "
        "self-contained page with a timeline per ScheduledPodAutoscaler)",
    )

    add_cluster_arguments(plan)
    add_status_arguments(
        _command(
            commands,
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
    add_incident_commands(commands, command=_command)
    add_run_arguments(
        _command(
            commands,
            "run",
            help="run the controller",
            description="Run the controller: one HPA per ScheduledPodAutoscaler, set by Schedules.",
        )
    )
    add_suggest_arguments(
        _command(
            commands,
            "suggest",
            help="suggest Schedules from the history of the HPAs in Prometheus",
            description=(
                "Read the history of what each HPA needed from Prometheus (kube-state-metrics' "
                "desired replicas by default, or any PromQL of replicas or of a load), find the "
                "peaks that recur by weekday and time of day, and print the fewest Schedules "
                "that would have held their floor, each with its minReplicas (a high quantile "
                "of what was needed) and a leadTime. One-off peaks are reported, not "
                "scheduled (docs/suggest.md)."
            ),
        )
    )
    add_backtest_arguments(
        _command(
            commands,
            "backtest",
            help="replay the history of the HPAs in Prometheus against Schedules",
            description=(
                "Replay the history of what each ScheduledPodAutoscaler of the manifests needed "
                "(read from Prometheus as spa suggest reads it) against the floor their "
                "Schedules give, computed as spa plan computes it: for each past peak, whether "
                "the floor was raised before the demand came and by how long; the minutes the "
                "need was above the floor; the replica-hours the windows added above what was "
                "needed; the windows never needed. --compare replays a second set of manifests "
                "(docs/suggest.md)."
            ),
        )
    )
    completion = _command(
        commands,
        "completion",
        help="print the shell completion script of spa (bash, zsh or fish)",
        description=(
            "Print the script that makes the shell complete spa's commands, flags, their values "
            "and the names of ScheduledPodAutoscalers in the cluster. kubectl completes "
            "`kubectl spa` itself, through the executable kubectl_complete-spa installed beside "
            'kubectl-spa (docs/operations.md, "Help and shell completion").'
        ),
    )
    completion.add_argument("shell", choices=SHELLS, help="the shell to print the script for")
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
        if arguments.diff is not None:
            parser.error("--diff compares manifests: give the new side with -f, not --from-cluster")
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
        if arguments.diff is not None:
            return _plan_diff(parser, arguments, at=at, until=until)
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


_RENDERERS = {
    "table": render_table,
    "json": render_json,
    "yaml": render_yaml,
    "html": render_html,
}


def _plan_diff(
    parser: argparse.ArgumentParser, arguments: argparse.Namespace, *, at: int, until: int
) -> int:
    """`spa plan --diff OLD -f NEW`: both sides planned over the same range and compared
    (docs/plan.md, "`--diff`"). Exits as `kubectl diff` and `diff` do: 0 when no transition
    differs, 1 when some do, 2 when either side has an error (the comparison is then
    incomplete) or the arguments are wrong."""
    old_source: str = arguments.diff
    paths: list[str] = arguments.filename
    if old_source.startswith(GIT_PREFIX):
        revision = old_source.removeprefix(GIT_PREFIX)
        if not revision:
            parser.error("--diff git:REV needs a revision, e.g. git:main or git:origin/main")
        try:
            old_documents, old_errors = read_revision(revision, paths)
        except RevisionError as error:
            print(f"error: --diff {old_source}: {error.message}", file=sys.stderr)
            return _DIFF_TROUBLE
    else:
        if old_source == "-" and "-" in paths:
            parser.error("standard input ('-') can be only one side of --diff")
        old_documents, old_errors = read_documents([old_source])
    new_documents, new_errors = read_documents(paths)
    diff = diff_plans(
        build_plan(old_documents, old_errors, at=at, until=until),
        build_plan(new_documents, new_errors, at=at, until=until),
        old_label=old_source,
        new_label=", ".join(paths),
    )
    with contextlib.suppress(ReaderGone):
        emit(_DIFF_RENDERERS[arguments.output](diff))
    if diff.errors:
        with contextlib.suppress(OSError):
            print(render_diff_errors(diff), file=sys.stderr, flush=True)
        return _DIFF_TROUBLE
    return 1 if diff.differs else 0


_DIFF_RENDERERS = {"table": render_diff_table, "json": render_diff_json, "html": render_diff_html}
_DIFF_TROUBLE = 2

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
