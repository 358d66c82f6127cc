"""`kubectl spa pause`, `override` and `resume`: hold an autoscaler's HPA during an incident,
without a change in Git (docs/operations.md, "Incidents: pause and override").

Why a command rather than `kubectl annotate`: the annotations' values are a small format
(RFC 3339 expiry in UTC, `min=N,max=M,until=...`) whose expiry is computed from `--for`, and
a typo there is ignored by the controller (with a Warning) exactly when it matters. The
commands compute the values, check them with the controller's own rule (spa/api/incident.py),
write them with one JSON merge patch of the SPA's annotations, and print what the controller
will do, read back from the object the API server stored.

The flags are parsed here without importing the Kubernetes client, as for `status`
(spa/cli/options.py): the client is imported only when a command runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from spa.api.incident import (
    MAX_REPLICAS,
    MIN_REPLICAS,
    OVERRIDE_ANNOTATION,
    PAUSED_UNTIL_ANNOTATION,
    describe_override,
    describe_pause,
    incident_at,
    override_value,
    parse_for,
    pause_value,
)
from spa.cli.help import command

__all__ = ["COMMANDS", "FIELD_MANAGER", "add_incident_commands", "run_incident"]

COMMANDS = ("pause", "override", "resume")
# The field manager of these writes, apart from the controller's (which never writes the SPA's
# metadata), so that managedFields say the annotations came from this command.
FIELD_MANAGER = "kubectl-spa"

EXIT_NOT_FOUND = 1


def add_incident_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The three subcommands, on the `spa` parser's subparsers, each made by `command` (its
    help ending with its examples: spa/cli/help.py)."""
    pause = command(
        commands,
        "pause",
        help="leave a ScheduledPodAutoscaler's HPA alone (no writes) until resumed or --for ends",
        description=(
            "Pause a ScheduledPodAutoscaler: the controller stops writing its HPA (its "
            "min/maxReplicas stay as they are, manual edits are kept) until `resume`, or "
            "until --for has passed. Written as the annotation "
            f"{PAUSED_UNTIL_ANNOTATION}."
        ),
    )
    _common(pause)
    pause.add_argument(
        "--for",
        dest="duration",
        type=_duration,
        metavar="DURATION",
        help="how long, as a Go duration such as 90m or 2h (at most 744h; default: until resumed)",
    )
    override = command(
        commands,
        "override",
        help="hold given min/maxReplicas on a ScheduledPodAutoscaler's HPA for --for",
        description=(
            "Override a ScheduledPodAutoscaler: its HPA holds --min and --max instead of the "
            "schedule's values until --for has passed (or `resume`), then the schedule applies "
            f"again. Written as the annotation {OVERRIDE_ANNOTATION}."
        ),
    )
    _common(override)
    override.set_defaults(override_parser=override)
    override.add_argument(
        "--min",
        dest="min_replicas",
        type=_replicas("--min"),
        required=True,
        metavar="N",
        help=f"minReplicas to hold ({MIN_REPLICAS} or more)",
    )
    override.add_argument(
        "--max",
        dest="max_replicas",
        type=_replicas("--max"),
        metavar="N",
        help="maxReplicas to hold (at least --min; default: the larger of --min and the "
        "spec's maxReplicas)",
    )
    override.add_argument(
        "--for",
        dest="duration",
        type=_duration,
        required=True,
        metavar="DURATION",
        help="how long, as a Go duration such as 90m or 2h (at most 744h); required: an "
        "override always ends",
    )
    resume = command(
        commands,
        "resume",
        help="end a pause and an override at once: the schedule applies again",
        description=(
            f"Remove the annotations {PAUSED_UNTIL_ANNOTATION} and {OVERRIDE_ANNOTATION}: "
            "the controller applies the schedule to the HPA again at once."
        ),
    )
    _common(resume)


def run_incident(arguments: argparse.Namespace, *, now: Callable[[], float] = time.time) -> int:
    """Perform `pause`, `override` or `resume` on the cluster; the exit status. `now` is the
    clock the expiry is computed from (injected by the tests)."""
    from spa.cli.cluster import connected

    command = arguments.command
    if command == "override":
        _check_override(arguments)
    with connected(arguments) as scope:
        namespace = scope.namespace
        assert namespace is not None  # these commands take no -A
        found = _get(scope, namespace, arguments.name)
        if found is None:
            print(
                f"error: ScheduledPodAutoscaler {namespace}/{arguments.name} not found",
                file=sys.stderr,
            )
            return EXIT_NOT_FOUND
        instant = int(now())
        annotations: dict[str, str | None]
        if command == "pause":
            until = None if arguments.duration is None else instant + arguments.duration
            annotations = {PAUSED_UNTIL_ANNOTATION: pause_value(until)}
        elif command == "override":
            annotations = {
                OVERRIDE_ANNOTATION: override_value(
                    min_replicas=arguments.min_replicas,
                    max_replicas=arguments.max_replicas,
                    until=instant + arguments.duration,
                )
            }
        else:
            current = (found.get("metadata") or {}).get("annotations") or {}
            present = [a for a in (PAUSED_UNTIL_ANNOTATION, OVERRIDE_ANNOTATION) if a in current]
            if not present:
                print(
                    f"scheduledpodautoscaler {namespace}/{arguments.name}: neither paused nor "
                    "overridden; nothing to resume"
                )
                return 0
            annotations = dict.fromkeys(present)
        stored = _patch(scope, namespace, arguments.name, annotations)
    print(_said(stored, namespace=namespace, name=arguments.name, instant=instant))
    return 0


def _said(stored: Mapping[str, Any], *, namespace: str, name: str, instant: int) -> str:
    """What the controller will do, by its own rule, from the object as stored."""
    metadata = stored.get("metadata") or {}
    spec = (stored.get("spec") or {}).get("horizontalPodAutoscalerSpec") or {}
    base_max = spec.get("maxReplicas")
    incident = incident_at(
        metadata.get("annotations"),
        base_max=base_max if type(base_max) is int else MIN_REPLICAS,
        instant=instant,
    )
    said = []
    if incident.pause is not None:
        said.append(describe_pause(incident.pause))
    if incident.override is not None:
        override = describe_override(incident.override)
        if incident.pause is not None:
            override += " (the pause wins while both hold)"
        said.append(override)
    said += [f"error: {error}" for error in incident.errors]
    what = "; ".join(said) if said else "resumed: the schedule applies"
    return f"scheduledpodautoscaler {namespace}/{name} {what}"


def _get(scope: Any, namespace: str, name: str) -> dict[str, Any] | None:
    from spa.controller.failures import explain
    from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
    from spa.kube import ApiError, ApiUnavailable, NotFound

    try:
        found: dict[str, Any] = scope.client.get(SCHEDULED_POD_AUTOSCALERS, namespace, name)
    except NotFound as error:
        if error.details.get("name") == name:
            return None
        # No Status naming the object: the kind itself is not served (the CRDs are missing).
        raise explain(scope.server, error, SCHEDULED_POD_AUTOSCALERS) from error
    except (ApiUnavailable, ApiError) as error:
        raise explain(
            scope.server,
            error,
            SCHEDULED_POD_AUTOSCALERS,
            action="get",
            where=f"{namespace}/{name}",
        ) from error
    return found


def _patch(
    scope: Any, namespace: str, name: str, annotations: Mapping[str, str | None]
) -> dict[str, Any]:
    """One JSON merge patch of the annotations (a None removes one), nothing else."""
    from spa.controller.failures import explain
    from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
    from spa.kube import ApiError, ApiUnavailable

    try:
        stored: dict[str, Any] = scope.client.patch(
            SCHEDULED_POD_AUTOSCALERS,
            namespace,
            name,
            {"metadata": {"annotations": dict(annotations)}},
            patch_type="merge",
            field_manager=FIELD_MANAGER,
        )
    except (ApiUnavailable, ApiError) as error:
        raise explain(
            scope.server,
            error,
            SCHEDULED_POD_AUTOSCALERS,
            action="patch",
            where=f"{namespace}/{name}",
        ) from error
    return stored


def _common(parser: argparse.ArgumentParser) -> None:
    """NAME and kubectl's flags for one object: a cluster and a namespace, never -A."""
    parser.add_argument("name", metavar="NAME", help="the ScheduledPodAutoscaler")
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
    )
    parser.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    parser.add_argument(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="the SPA's namespace (default: the context's namespace, else default)",
    )
    parser.set_defaults(all_namespaces=False)


def _duration(text: str) -> int:
    try:
        return parse_for(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _replicas(flag: str) -> Callable[[str], int]:
    def read(text: str) -> int:
        value = int(text) if text.isdecimal() and len(text) <= 10 else 0
        if not MIN_REPLICAS <= value <= MAX_REPLICAS:
            shown = text if len(text) <= 40 else f"{text[:40]}..."
            raise argparse.ArgumentTypeError(
                f"{flag} must be a whole number from {MIN_REPLICAS} to {MAX_REPLICAS}, "
                f"got '{shown}'"
            )
        return value

    return read


def _check_override(arguments: argparse.Namespace) -> None:
    """--max below --min is a usage error (exit status 2), said by the subcommand's parser."""
    maximum, minimum = arguments.max_replicas, arguments.min_replicas
    if maximum is not None and maximum < minimum:
        arguments.override_parser.error(
            f"--max ({maximum}) must not be less than --min ({minimum})"
        )
