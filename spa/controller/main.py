"""`spa run`: turn the command-line flags into a running Manager and an exit status.

Before anything starts, the controller checks that it can work at all: a cluster
configuration, an API server that answers, credentials it accepts, the CRDs, and permission to
list what it watches. Each failure is one log line that says what failed and a status of its
own (docs/operations.md, "Exit codes"), so that a crash-looping pod explains itself, instead of
a traceback or informers that retry forever.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from spa.controller.capacity import PLACEHOLDER_NAMESPACE
from spa.controller.eventloop import EventLoop, EventLoopUnavailable, event_loop
from spa.controller.exitcodes import EXIT_CONFIG, EXIT_USAGE
from spa.controller.failures import ClusterFailure, explain
from spa.controller.manager import LeaderElection, Manager, install_signal_handlers, pod_namespace
from spa.controller.resources import (
    CALENDARS,
    CLUSTER_CALENDARS,
    SCHEDULED_POD_AUTOSCALERS,
    SCHEDULES,
)
from spa.controller.shards import Shard, ShardError, lease_prefix, shard_of
from spa.kube import (
    HPA_V2,
    ApiError,
    ApiUnavailable,
    Client,
    ConfigError,
    NotFound,
    Resource,
    connect,
    discover_hpa,
)
from spa.runtime import configure_logging

__all__ = ["check_cluster", "run"]

log = logging.getLogger(__name__)

# A startup check waits this long for an answer: a silent server should not keep a pod in
# "Running" for minutes before it says why it cannot work.
CHECK_TIMEOUT = 10.0


async def check_cluster(client: Client, namespaces: Sequence[str] | None) -> Resource:
    """The HPA resource to manage, once every list the informers will make has been allowed
    once (read-only, one item each); :class:`ClusterFailure` otherwise. Only the SPA and
    Schedule CRDs are required: a calendar kind that is not served is an optional kind's
    (docs/runtime.md, "Optional kinds"), and its list is checked only where it is served."""
    scopes: list[str | None] = list(namespaces) if namespaces else [None]
    for resource in (SCHEDULED_POD_AUTOSCALERS, SCHEDULES):
        for namespace in scopes:
            await _check_list(client, resource, namespace)
    for namespace in scopes:
        if not await _check_list(client, CALENDARS, namespace, optional=True):
            break
    # Cluster-scoped, read cluster-wide even by a controller that watches some namespaces
    # (docs/install.md, "Watching some namespaces").
    await _check_list(client, CLUSTER_CALENDARS, None, optional=True)
    try:
        hpa = await discover_hpa(client)
    except (ApiUnavailable, ApiError) as error:
        raise explain(client.host, error, HPA_V2, action="discover") from error
    for namespace in scopes:
        await _check_list(client, hpa, namespace)
    return hpa


async def _check_list(
    client: Client, resource: Resource, namespace: str | None, *, optional: bool = False
) -> bool:
    """Whether the list is allowed; False for an `optional` kind the server does not serve."""
    try:
        await client.first_page(resource, namespace=namespace, request_timeout=CHECK_TIMEOUT)
    except (ApiUnavailable, ApiError) as error:
        if optional and isinstance(error, NotFound):
            log.info("%s are not served: watched from when they are", resource)
            return False
        raise explain(
            client.host,
            error,
            resource,
            where="in all namespaces" if namespace is None else f"in namespace {namespace}",
            rbac_hint="the RBAC of config/rbac grants it",
        ) from error
    return True


def run(arguments: argparse.Namespace) -> int:
    configure_logging(level=arguments.log_level, log_format=arguments.log_format)
    try:
        loop = event_loop(arguments.event_loop)
    except EventLoopUnavailable as error:
        log.error("cannot start: %s", error, extra={"exit_status": EXIT_USAGE})
        return EXIT_USAGE
    try:
        shard = shard_of(
            name=arguments.shard_name,
            selector=arguments.shard_selector,
            count=arguments.shards,
            index=arguments.shard,
        )
    except ShardError as error:
        log.error("cannot start: %s", error, extra={"exit_status": EXIT_USAGE})
        return EXIT_USAGE
    with asyncio.Runner(loop_factory=loop.factory) as runner:
        return runner.run(_run(arguments, loop, shard))


async def _run(arguments: argparse.Namespace, loop: EventLoop, shard: Shard | None) -> int:
    try:
        client = await connect(
            kubeconfig=arguments.kubeconfig,
            qps=arguments.kube_api_qps,
            burst=arguments.kube_api_burst,
        )
    except ConfigError as error:
        log.error("cannot start: %s", error, extra={"exit_status": EXIT_CONFIG})
        return EXIT_CONFIG
    try:
        hpa_resource = await check_cluster(client, arguments.namespaces)
    except ClusterFailure as failure:
        await client.close()
        log.error("cannot start: %s", failure.message, extra={"exit_status": failure.status})
        return failure.status
    # After the checks: a failed start is its one error line (docs/operations.md, "Exit codes").
    log.info(
        "managing HorizontalPodAutoscalers as %s",
        hpa_resource.api_version,
        extra={"event_loop": loop.name},
    )
    election = None
    if arguments.leader_elect:
        election = LeaderElection(
            namespace=arguments.leader_election_namespace or pod_namespace(),
            # Each shard its own Lease (docs/runtime.md, "Shards").
            name=(
                arguments.leader_election_id
                if shard is None
                else shard.lease_name(arguments.leader_election_id)
            ),
            siblings_prefix=None if shard is None else lease_prefix(arguments.leader_election_id),
        )
    if shard is not None:
        log.info(
            "%s%s",
            shard.describe(),
            f"; Lease {election.namespace}/{election.name}" if election else "",
            extra={"shard": shard.name},
        )
    manager = Manager(
        client=client,
        namespaces=arguments.namespaces,
        workers=arguments.workers,
        resync_period=arguments.resync_period,
        leader_election=election,
        metrics_address=arguments.metrics_addr,
        metrics_secure=arguments.metrics_secure,
        metrics_cert_dir=Path(arguments.metrics_cert_dir) if arguments.metrics_cert_dir else None,
        probe_address=arguments.probe_addr,
        hpa_resource=hpa_resource,
        # Outside a pod (a local run), the install's namespace.
        capacity_namespace=arguments.capacity_namespace or pod_namespace(PLACEHOLDER_NAMESPACE),
        freeze_after_sync=True,
        shard=shard,
        fleet_early=arguments.fleet_early,
        fleet_write_seconds=arguments.fleet_write_seconds,
        fleet_max_advance=arguments.fleet_max_advance,
        kube_api_qps=arguments.kube_api_qps,
    )

    install_signal_handlers(manager)
    try:
        status = await manager.run()
    finally:
        await client.close()
    # Only a controller that started says it stopped: a failed start is its one error line.
    log.info("stopped", extra={"exit_status": status})
    return status
