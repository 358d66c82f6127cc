"""The fixtures of the tests that talk to the real control plane, defined once here: the local
control plane (tests/testenv/fixtures.py), the project's CRDs on it, clients with its admin
credentials (`kube`, blocking, for setting up and checking; `kube_client`, the asyncio client
the controller uses), an in-process controller, and `spa run`'s own identity. Registered for
this directory only (see tests/conftest.py); tests/reliability and tests/packaging use them
too. A module that runs on a control plane of its own (tests/integration/test_capacity.py)
overrides the ones it needs."""

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from spa.kube import KubeClient, connect
from tests.integration.harness import Kube, Running, admin, install_crds, running_controller, utc
from tests.integration.processes import controller_kubeconfig
from tests.testenv.fixtures import (
    api_client,
    apiserver_proxy,
    cluster,
    control_plane,
    control_plane_factory,
    namespace,
    run_kubectl,
)

__all__ = [
    "api_client",
    "apiserver_proxy",
    "cluster",
    "control_plane",
    "control_plane_factory",
    "controller",
    "controller_kubeconfig",
    "crds",
    "kube",
    "kube_client",
    "namespace",
    "run_kubectl",
]


@pytest.fixture(scope="session")
def crds(cluster: Any) -> None:
    """The project's CRDs, applied once per run."""
    install_crds(cluster)


@pytest.fixture
def kube(cluster: Any, crds: None) -> Iterator[Kube]:
    with admin(cluster) as client:
        yield client


@pytest.fixture
async def kube_client(cluster: Any) -> AsyncIterator[KubeClient]:
    """spa.kube's asyncio client with the admin credentials (no CRDs needed)."""
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    yield client
    await client.close()


@pytest.fixture
async def controller(cluster: Any, crds: None, namespace: str) -> AsyncIterator[Running]:
    """The controller watching the test's namespace, its clock at Monday 2026-11-16 11:00 UTC."""
    async with running_controller(
        cluster.kubeconfig, [namespace], start=utc("2026-11-16T11:00:00")
    ) as running:
        yield running
