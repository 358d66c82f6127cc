"""`spa run`: the controller, started from the command line (docs/operations.md).

Its flags are spa.controller.options. The controller's entry point, spa.controller.main, is
imported only when the command runs: `spa --help` and the other commands never load the
controller (setup.cfg's import-linter contract allows this module alone to import it).
"""

from __future__ import annotations

import argparse

from spa.cli.help import command
from spa.controller.options import add_run_arguments

__all__ = ["add_run_command", "run_controller"]


def add_run_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`spa run` and its flags, on the `spa` parser's subcommands."""
    add_run_arguments(
        command(
            commands,
            "run",
            help="run the controller",
            description="Run the controller: one HPA per ScheduledPodAutoscaler, set by Schedules.",
        )
    )


def run_controller(arguments: argparse.Namespace) -> int:
    """Run the controller until it stops; the exit status (docs/operations.md, "Exit codes")."""
    from spa.controller.main import run

    return run(arguments)
