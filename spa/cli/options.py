"""The flags of the commands that read a cluster (`status`, `plan --from-cluster`).

Kept apart from their implementation so that `spa --help` and `spa plan -f` describe and parse
them without importing the Kubernetes client (docs/status.md, docs/plan.md).
"""

from __future__ import annotations

import argparse

from spa.cli.help import command

__all__ = [
    "add_cluster_arguments",
    "add_status_arguments",
    "add_status_command",
    "cluster_arguments_given",
]

_CLUSTER_FLAGS = ("kubeconfig", "context", "namespace", "all_namespaces")


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """kubectl's flags for choosing a cluster and namespaces."""
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
    )
    parser.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="the namespace to read (default: the context's namespace, else default)",
    )
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="read every namespace")


def cluster_arguments_given(arguments: argparse.Namespace) -> list[str]:
    """The cluster flags that were given, as `--flag` names."""
    return [
        "--" + flag.replace("_", "-") for flag in _CLUSTER_FLAGS if getattr(arguments, flag, None)
    ]


def add_status_arguments(parser: argparse.ArgumentParser) -> None:
    # dest "name": shell completion offers the cluster's ScheduledPodAutoscalers for it.
    parser.add_argument("name", nargs="?", metavar="NAME", help="only this ScheduledPodAutoscaler")
    add_cluster_arguments(parser)
    parser.add_argument(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="only the ScheduledPodAutoscalers with these labels, as in kubectl "
        "(team=shop,tier!=batch; the API server applies it)",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("table", "wide", "json", "yaml", "name"),
        default="table",
        help="table (default), wide (also every Schedule, more transitions and events), "
        "json, yaml, or name (kind.group/name a line, as kubectl get -o name)",
    )
    parser.add_argument(
        "--no-headers",
        action="store_true",
        help="table and wide: leave out the first line (the time and the API server)",
    )
    parser.add_argument(
        "-w",
        "--watch",
        action="store_true",
        help="keep reading the cluster and show the status again as it changes (Ctrl-C ends)",
    )
    parser.add_argument(
        "--interval",
        type=_positive_seconds,
        default=2.0,
        metavar="SECONDS",
        help="with --watch, how often the cluster is read (default 2)",
    )


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.1 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds from 0.1 to 3600")
    return value


def add_status_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`spa status` and its flags, on the `spa` parser's subcommands (the command itself is
    spa/cli/status.py, which imports the Kubernetes client)."""
    add_status_arguments(
        command(
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
