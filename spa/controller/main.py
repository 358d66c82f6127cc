"""`spa run`: turn the command-line flags into a running Manager and an exit status."""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

from spa.controller.manager import LeaderElection, Manager, install_signal_handlers, pod_namespace
from spa.kube import ConfigError, connect
from spa.runtime import configure_logging

__all__ = ["run"]

log = logging.getLogger(__name__)


def run(arguments: argparse.Namespace) -> int:
    configure_logging(level=arguments.log_level, log_format=arguments.log_format)
    try:
        client = connect(
            kubeconfig=arguments.kubeconfig,
            qps=arguments.kube_api_qps,
            burst=arguments.kube_api_burst,
        )
    except ConfigError as error:
        log.error("cannot configure the Kubernetes client: %s", error)
        return 2
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
