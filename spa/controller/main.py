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

from spa.controller.exitcodes import (
    EXIT_CONFIG,
    EXIT_FORBIDDEN,
    EXIT_NO_CRDS,
    EXIT_UNAUTHORIZED,
    EXIT_UNREACHABLE,
)
from spa.controller.manager import LeaderElection, Manager, install_signal_handlers, pod_namespace
from spa.kube import (
    HPA_V2,
    HPA_V2BETA2,
    SCHEDULE,
    SCHEDULED_POD_AUTOSCALER,
    ApiError,
    ApiUnavailable,
    ConfigError,
    Forbidden,
    KubeClient,
    NotFound,
    Resource,
    connect,
)
from spa.runtime import configure_logging

__all__ = [
    "StartupFailure",
    "check_cluster",
    "run",
]

log = logging.getLogger(__name__)

# A startup check waits this long for an answer: a silent server should not keep a pod in
# "Running" for minutes before it says why it cannot work.
CHECK_TIMEOUT = 10.0


class StartupFailure(Exception):
    """Why the controller cannot start, and the exit status that says so."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def check_cluster(client: KubeClient, namespaces: Sequence[str] | None) -> Resource:
    """The HPA resource to manage, once every list the informers will make has been allowed
    once (read-only, one item each); :class:`StartupFailure` otherwise."""
    scopes: list[str | None] = list(namespaces) if namespaces else [None]
    for resource in (SCHEDULED_POD_AUTOSCALER, SCHEDULE):
        for namespace in scopes:
            _check_list(client, resource, namespace)
    try:
        hpa = HPA_V2 if client.serves(HPA_V2.group_version) else HPA_V2BETA2
    except (ApiUnavailable, ApiError) as error:
        raise _failure(client, error, f"discover {HPA_V2.group_version}") from error
    for namespace in scopes:
        _check_list(client, hpa, namespace)
    return hpa


def _check_list(client: KubeClient, resource: Resource, namespace: str | None) -> None:
    where = "in all namespaces" if namespace is None else f"in namespace {namespace}"
    try:
        client.first_page(resource, namespace=namespace, timeout=CHECK_TIMEOUT)
    except NotFound as error:
        if resource in (SCHEDULED_POD_AUTOSCALER, SCHEDULE):
            raise StartupFailure(
                EXIT_NO_CRDS,
                f"the API server at {client.host} does not serve {resource}: install the CRDs "
                "(config/crd or config/install/install.yaml)",
            ) from error
        raise _failure(client, error, f"list {resource} {where}") from error
    except (ApiUnavailable, ApiError) as error:
        raise _failure(client, error, f"list {resource} {where}") from error


def _failure(client: KubeClient, error: ApiUnavailable | ApiError, action: str) -> StartupFailure:
    if isinstance(error, ApiUnavailable):
        return StartupFailure(
            EXIT_UNREACHABLE, f"cannot reach the API server at {client.host}: {error.cause}"
        )
    if error.status == 401:
        return StartupFailure(
            EXIT_UNAUTHORIZED,
            f"the API server at {client.host} does not accept the credentials (401 "
            "Unauthorized): check the kubeconfig's user, or the ServiceAccount token",
        )
    if isinstance(error, Forbidden):
        return StartupFailure(
            EXIT_FORBIDDEN,
            f"not allowed to {action}: {error.message} (the RBAC of config/rbac grants it)",
        )
    return StartupFailure(
        EXIT_UNREACHABLE,
        f"the API server at {client.host} cannot serve: {action} answered "
        f"{error.status} {error.reason}: {error.message}",
    )


def run(arguments: argparse.Namespace) -> int:
    configure_logging(level=arguments.log_level, log_format=arguments.log_format)
    try:
        client = connect(
            kubeconfig=arguments.kubeconfig,
            qps=arguments.kube_api_qps,
            burst=arguments.kube_api_burst,
        )
    except ConfigError as error:
        log.error("cannot start: %s", error, extra={"exit_status": EXIT_CONFIG})
        return EXIT_CONFIG
    try:
        hpa_resource = check_cluster(client, arguments.namespaces)
    except StartupFailure as failure:
        client.close()
        log.error("cannot start: %s", failure.message, extra={"exit_status": failure.status})
        return failure.status
    log.info("managing HorizontalPodAutoscalers as %s", hpa_resource.api_version)
    election = None
    if arguments.leader_elect:
        election = LeaderElection(
            namespace=arguments.leader_election_namespace or pod_namespace(),
            name=arguments.leader_election_id,
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
    )

    async def main() -> int:
        install_signal_handlers(manager)
        return await manager.run()

    try:
        status = asyncio.run(main())
    finally:
        client.close()
    log.info("stopped", extra={"exit_status": status})
    return status
