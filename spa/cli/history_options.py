"""The flags of `spa suggest` and `spa backtest` (docs/suggest.md).

Kept apart from their implementation, as spa/cli/options.py is for the commands that read a
cluster, so that building the parser of `spa` (which `spa run` and `spa plan -f` do too)
imports nothing of the history and of the HTTP client.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from spa.cli.help import command
from spa.schedule import WallClockError, parse_duration

__all__ = [
    "OUTPUTS_BACKTEST",
    "OUTPUTS_SUGGEST",
    "add_backtest_arguments",
    "add_backtest_command",
    "add_history_arguments",
    "add_suggest_arguments",
    "add_suggest_command",
]

MAX_WEEKS = 26
_STEPS = (60, 120, 180, 240, 300, 360, 600, 720, 900, 1200, 1800, 3600)
OUTPUTS_SUGGEST = ("yaml", "json", "html", "diff")
OUTPUTS_BACKTEST = ("table", "json", "html")


def add_history_arguments(parser: argparse.ArgumentParser, *, selection: bool) -> None:
    """The flags of Prometheus, of the history and of its range (and, `selection`, of which
    autoscalers)."""
    parser.add_argument(
        "--prometheus",
        required=True,
        metavar="URL",
        help="the base URL of Prometheus (or of an API-compatible server), e.g. "
        "http://prometheus.monitoring:9090",
    )
    if selection:
        chosen = parser.add_mutually_exclusive_group()
        chosen.add_argument(
            "--autoscaler",
            action="append",
            metavar="NAMESPACE/NAME",
            type=_autoscaler_name,
            help="an autoscaler (its HPA has the same name); repeatable",
        )
        chosen.add_argument(
            "-l",
            "--selector",
            metavar="SELECTOR",
            help="the HPAs with these labels, as in kubectl (team=shop,tier!=batch), matched "
            "against kube-state-metrics' kube_horizontalpodautoscaler_labels",
        )
        chosen.add_argument(
            "-A",
            "--all-autoscalers",
            action="store_true",
            help="every HPA Prometheus has a history of",
        )
    parser.add_argument(
        "--weeks",
        type=_weeks,
        default=4,
        metavar="N",
        help=f"how many weeks of history to read, up to --until (default 4, at most {MAX_WEEKS})",
    )
    parser.add_argument(
        "--until",
        type=_instant,
        metavar="RFC3339",
        help="the end of the history (default: now)",
    )
    parser.add_argument(
        "--step",
        type=_step,
        default=300,
        metavar="DURATION",
        help="the resolution of the history: the most of each step is taken (default 5m; "
        "1m to 1h, a divisor of an hour)",
    )
    parser.add_argument(
        "--query",
        metavar="PROMQL",
        help="the history as any PromQL instead of the HPA's desired replicas: replicas, or "
        "a load with --per-pod; by (namespace, horizontalpodautoscaler) unless one "
        "--autoscaler is given",
    )
    parser.add_argument(
        "--per-pod",
        type=_positive,
        metavar="N",
        help="with --query: how much of the load one replica serves (the replicas needed are "
        "the load divided by it, rounded up)",
    )
    parser.add_argument(
        "--time-zone",
        metavar="ZONE",
        help="the zone of the peaks' weekdays and times (default: the zone of the "
        "autoscaler's Schedules among -f, else UTC)",
    )
    parser.add_argument(
        "--holidays",
        metavar="COUNTRY",
        help="the public holidays that may explain a day without a peak: US, DE-BY, or none "
        "(default: the country of the time zone)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="a file holding the bearer token to send to Prometheus",
    )
    parser.add_argument(
        "--certificate-authority", metavar="PATH", help="the CA file of Prometheus's certificate"
    )
    parser.add_argument(
        "--client-certificate", metavar="PATH", help="a client certificate file for TLS"
    )
    parser.add_argument("--client-key", metavar="PATH", help="the client certificate's key file")
    parser.add_argument(
        "--insecure-skip-tls-verify",
        action="store_true",
        help="do not check Prometheus's certificate (insecure)",
    )
    parser.add_argument(
        "--request-timeout",
        type=_positive,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for each answer of Prometheus (default 60)",
    )


def _autoscaler_name(text: str) -> tuple[str, str]:
    namespace, slash, name = text.partition("/")
    if not slash or not namespace or not name or "/" in name:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAMESPACE/NAME, such as shop/web")
    return namespace, name


def _weeks(text: str) -> int:
    try:
        weeks = int(text) if len(text) <= 4 else 0
    except ValueError:
        weeks = 0
    if not 1 <= weeks <= MAX_WEEKS:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a whole number of weeks from 1 to {MAX_WEEKS}"
        )
    return weeks


def _instant(text: str) -> int:
    from spa.cli.plan import rfc3339_instant

    return rfc3339_instant(text)


def _step(text: str) -> int:
    try:
        seconds = parse_duration(text)
    except (WallClockError, ValueError):
        seconds = None
    if seconds not in _STEPS:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a step from 1m to 1h that divides an hour (1m, 2m, 5m, 10m, 15m, "
            "30m, 1h, ...)"
        )
    assert seconds is not None
    return seconds


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number")
    return value


def add_suggest_arguments(parser: argparse.ArgumentParser) -> None:
    add_history_arguments(parser, selection=True)
    parser.add_argument(
        "-f",
        "--filename",
        action="append",
        metavar="PATH",
        help="the manifests the autoscalers are kept in: their ScheduledPodAutoscalers are "
        "the autoscalers (unless chosen otherwise), their base minReplicas and zones count, and "
        "the output is what the suggestion changes in them (-o diff); repeatable",
    )
    parser.add_argument(
        "--quantile",
        type=_share(0.5, 1.0),
        default=0.95,
        metavar="Q",
        help="each window's minReplicas is this quantile of what was needed in it (default 0.95)",
    )
    _add_peak_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUTS_SUGGEST,
        help="yaml (the Schedules, commented; the default), json (docs/suggest.md), html (the "
        "history per weekday with the suggested floor) or diff (with -f, what the Schedules "
        "change in the week after --until, as spa plan --diff; the default with -f)",
    )


def _add_peak_arguments(parser: argparse.ArgumentParser) -> None:
    """What makes a peak, the same for suggest and backtest (docs/suggest.md)."""
    parser.add_argument(
        "--recurrence",
        type=_share(0.5, 1.0),
        default=0.75,
        metavar="SHARE",
        help="a peak recurs when this share of the weeks had it (default 0.75: 3 of 4 weeks)",
    )
    parser.add_argument(
        "--min-increase",
        type=_whole,
        metavar="N",
        help="replicas above the quiet level that make a peak (default: 2, or 20 %% of the "
        "quiet level when more)",
    )


def _share(low: float, high: float) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number from {low:g} to {high:g}")
        return value

    return parse


def _whole(text: str) -> int:
    try:
        value = int(text) if len(text) <= 6 else 0
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of replicas from 1")
    return value


def add_backtest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-f",
        "--filename",
        action="append",
        required=True,
        metavar="PATH",
        help="the manifests to replay: their ScheduledPodAutoscalers are the autoscalers, their "
        "Schedules the floor; repeatable",
    )
    add_history_arguments(parser, selection=False)
    parser.add_argument(
        "--compare",
        metavar="OLD",
        help="replay OLD too and compare: a file or directory of manifests, or git:REV for "
        "the -f paths at Git revision REV (e.g. --compare git:main)",
    )
    _add_peak_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUTS_BACKTEST,
        default="table",
        help="table (default), json (docs/suggest.md) or html (the history with the floor and "
        "the shortfalls marked)",
    )


def add_suggest_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`spa suggest` and its flags, on the `spa` parser's subcommands."""
    add_suggest_arguments(
        command(
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


def add_backtest_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`spa backtest` and its flags, on the `spa` parser's subcommands."""
    add_backtest_arguments(
        command(
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
