"""Command-line entry point: `spa`, also installed as the kubectl plugin `kubectl-spa`.

`spa plan` previews schedules offline (or, `--from-cluster`, from the live objects; or,
`--diff`, what a change of the manifests changes); `spa suggest` writes Schedules from the
history in Prometheus and `spa backtest` replays that history against Schedules;
`spa status` shows what the live ScheduledPodAutoscalers do; `spa pause`, `override` and
`resume` hold an HPA during an incident; `spa run` starts the controller.
This module is the wiring: the parser, one subcommand a command, and the dispatch. Each
command is a module of its own, with its flags and what it does: spa/cli/plan.py, status.py
(its flags in options.py), incident.py, run.py and completion.py; their help, ending with
examples, is spa/cli/help.py. The Kubernetes client is imported only by the commands that talk
to a cluster, so that `plan -f` starts fast and works where the client cannot be imported; shell
completion is spa/cli/completion.py, from this same parser.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from spa import __version__
from spa.cli.completion import add_completion_command, autocomplete, run_completion
from spa.cli.help import EXAMPLES, HelpFormatter, program_name
from spa.cli.history_options import add_backtest_command, add_suggest_command
from spa.cli.incident import COMMANDS as INCIDENT_COMMANDS
from spa.cli.incident import add_incident_commands, run_incident
from spa.cli.options import add_status_command
from spa.cli.output import reading_cluster
from spa.cli.plan import add_plan_command, run_plan
from spa.cli.run import add_run_command, run_controller

__all__ = ["build_parser", "command_parser", "main"]


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
    # A command's own usage errors are said by its parser (`spa plan: error: ...` with the
    # usage of `spa plan`), as argparse says those it finds itself, not by the top-level one.
    own = command_parser(parser, arguments.command)
    if arguments.command == "plan":
        return run_plan(own, arguments)
    if arguments.command == "completion":
        return run_completion(parser, arguments.shell)
    if arguments.command == "status":
        from spa.cli.status import run_status

        if arguments.name is not None and arguments.selector is not None:
            # As kubectl get: a name and a selector together are refused.
            own.error("NAME cannot be given with -l/--selector")
        return reading_cluster(lambda: run_status(arguments))
    if arguments.command in INCIDENT_COMMANDS:
        return reading_cluster(lambda: run_incident(arguments))
    if arguments.command == "suggest":
        from spa.cli.suggest import run_suggest

        return run_suggest(own, arguments)
    if arguments.command == "backtest":
        from spa.cli.backtest import run_backtest

        return run_backtest(own, arguments)
    return run_controller(arguments)


def command_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of the command `name` of `parser` (`parser` itself if it has none): the
    one whose usage an error in that command's arguments is said with."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(name)
            if isinstance(found, argparse.ArgumentParser):
                return found
    return parser


def build_parser(*, prog: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (shell completion walks it too: spa/cli/completion.py)."""
    prog = prog or program_name()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Scheduled scaling for Kubernetes HorizontalPodAutoscalers.",
        epilog=EXAMPLES[""],
        formatter_class=HelpFormatter,
    )
    # `spa --version` and `kubectl spa --version` say the same (docs/operations.md).
    parser.add_argument(
        "--version", action="version", version=f"scheduled-pod-autoscaler {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_plan_command(commands)
    add_status_command(commands)
    add_incident_commands(commands)
    add_run_command(commands)
    add_suggest_command(commands)
    add_backtest_command(commands)
    add_completion_command(commands, prog=prog)
    return parser
