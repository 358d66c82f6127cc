"""The flags of `spa run` (docs/operations.md). Four keep the original controller's names and
defaults (`--metrics-addr`, `--probe-addr`, `--enable-leader-election`, `--kubeconfig`).

Kept apart from the controller so that `spa --help` can describe them without importing the
Kubernetes client.
"""

from __future__ import annotations

import argparse

from spa.controller.eventloop import EVENT_LOOPS

__all__ = ["DEFAULT_LEADER_ELECTION_ID", "add_run_arguments"]

DEFAULT_LEADER_ELECTION_ID = "scheduled-pod-autoscaler-leader"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metrics-addr",
        default=":8080",
        metavar="HOST:PORT",
        help="where to serve Prometheus metrics (default :8080)",
    )
    parser.add_argument(
        "--metrics-secure",
        action="store_true",
        help=(
            "serve metrics over HTTPS to callers whose bearer token the API server accepts "
            "and who may get the non-resource URL /metrics (docs/operations.md)"
        ),
    )
    parser.add_argument(
        "--metrics-cert-dir",
        metavar="DIR",
        help="tls.crt and tls.key for --metrics-secure (default: a self-signed certificate)",
    )
    parser.add_argument(
        "--probe-addr",
        default=":9090",
        metavar="HOST:PORT",
        help="where to serve /healthz and /readyz (default :9090)",
    )
    parser.add_argument(
        "--enable-leader-election",
        "--leader-elect",
        dest="leader_elect",
        action="store_true",
        help="take a Lease so that only one replica writes",
    )
    parser.add_argument(
        "--leader-election-namespace",
        metavar="NAMESPACE",
        help="namespace of the Lease (default: the pod's namespace)",
    )
    parser.add_argument(
        "--capacity-namespace",
        metavar="NAMESPACE",
        help="namespace of the placeholder Deployments of node capacity (default: the pod's "
        'namespace; docs/install.md, "Placeholder pods")',
    )
    parser.add_argument(
        "--leader-election-id",
        default=DEFAULT_LEADER_ELECTION_ID,
        metavar="NAME",
        help=f"name of the Lease (default {DEFAULT_LEADER_ELECTION_ID})",
    )
    parser.add_argument(
        "--namespace",
        action="append",
        dest="namespaces",
        metavar="NAMESPACE",
        help="watch only this namespace; repeatable (default: all namespaces)",
    )
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig file (default: in-cluster config, then $KUBECONFIG, then ~/.kube/config)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
    )
    parser.add_argument("--log-format", default="json", choices=("json", "text"))
    parser.add_argument(
        "--workers",
        type=int,
        default=4,
        metavar="N",
        help="concurrent reconciles (default 4)",
    )
    parser.add_argument(
        "--resync-period",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="safety-net resync of every ScheduledPodAutoscaler (default 600)",
    )
    parser.add_argument(
        "--event-loop",
        default="asyncio",
        choices=EVENT_LOOPS,
        help="asyncio (default), or uvloop: for measuring only, it can end the process after "
        "a connection reset (docs/operations.md)",
    )
    parser.add_argument(
        "--kube-api-qps",
        type=float,
        default=None,
        metavar="QPS",
        help="client-side limit on API requests per second (default: none)",
    )
    parser.add_argument(
        "--kube-api-burst",
        type=int,
        default=None,
        metavar="N",
        help="requests allowed in a burst above --kube-api-qps",
    )
    fleet = parser.add_argument_group(
        "raises ahead of a shared boundary",
        "a fleet of SPAs raised at the same instant has its raises written early enough that "
        'the last lands before it (docs/schedules.md, "Raises ahead of a shared boundary")',
    )
    fleet.add_argument(
        "--fleet-early",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write a shared boundary's raises ahead of it (default on; --no-fleet-early "
        "writes every raise at its boundary)",
    )
    fleet.add_argument(
        "--fleet-write-seconds",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="the time one HPA write takes of the controller's throughput (default: measured, "
        "0.005 until measured)",
    )
    fleet.add_argument(
        "--fleet-max-advance",
        type=_positive_int,
        default=120,
        metavar="SECONDS",
        help="no raise is written more than this before its boundary (default 120)",
    )
    shards = parser.add_argument_group(
        "shards",
        "run several controllers, each the only writer of part of the fleet, each with a Lease "
        'of its own (docs/runtime.md, "Shards"): by label (--shard-name, --shard-selector) or '
        "by namespace hash (--shards, --shard)",
    )
    shards.add_argument(
        "--shard-name",
        metavar="NAME",
        help="this shard's name: it writes only for the ScheduledPodAutoscalers and Schedules "
        "labelled autoscaling.d-kuro.github.io/shard=NAME",
    )
    shards.add_argument(
        "--shard-selector",
        metavar="SELECTOR",
        help="the label selector of what the API server sends this shard (default "
        "autoscaling.d-kuro.github.io/shard=NAME); needs --shard-name",
    )
    shards.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="split the namespaces among N shards by the FNV-1a hash of their names",
    )
    shards.add_argument(
        "--shard",
        type=int,
        metavar="K",
        help="with --shards: this shard's index, from 0 to N-1",
    )


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        message = f"must be a whole number of seconds, got {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value
