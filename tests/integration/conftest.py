"""The fixtures of the tests that talk to the real control plane, defined once here: the local
control plane (tests/testenv/fixtures.py), the project's CRDs on it, clients with its admin
credentials (`kube`, blocking, for setting up and checking; `kube_client`, the asyncio client
the controller uses), an in-process controller, and `spa run`'s own identity. Registered for
this directory only (see tests/conftest.py); tests/reliability and tests/packaging use them
too. A module that runs on a control plane of its own (tests/integration/test_capacity.py)
overrides the ones it needs."""

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from spa.kube import KubeClient, connect
from tests.integration.harness import (
    InNamespace,
    Kube,
    Running,
    admin,
    install_crds,
    running_controller,
    utc,
)
from tests.integration.processes import controller_kubeconfig
from tests.testenv.binaries import karpenter_asked, karpenter_built
from tests.testenv.controlplane import ControlPlane
from tests.testenv.fixtures import (
    api_client,
    apiserver_proxy,
    cluster,
    control_plane,
    control_plane_factory,
    karpenter,
    karpenter_namespace,
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
    "karpenter",
    "karpenter_namespace",
    "kube",
    "kube_client",
    "namespace",
    "run_kubectl",
]


@pytest.fixture(scope="session")
def crds(cluster: Any) -> None:
    """The project's CRDs, applied once per run.

    On the local control plane kube-controller-manager then starts afresh, as if the CRDs had
    been there before it (as in a real cluster): its garbage collector rediscovers the API's
    resources only every 30 s, so until then it could not collect an HPA owned by an SPA, and
    the first test that waits for that (test_adoption.py) waited out the rest of the 30 s.
    The restart costs a few seconds, once.
    """
    install_crds(cluster)
    if isinstance(cluster, ControlPlane) and cluster.with_controller_manager:
        cluster.restart_controller_manager()


@pytest.fixture
def kube(cluster: Any, crds: None) -> Iterator[Kube]:
    with admin(cluster) as client:
        yield client


@pytest.fixture
def objects(kube: Kube, namespace: str) -> InNamespace:
    """The test's namespace through `kube` (tests/integration/harness.py, `InNamespace`)."""
    return InNamespace(kube, namespace)


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


_KARPENTER_LEFT_OUT = pytest.StashKey[int]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests marked `karpenter` where Karpenter is not built, unless asked.

    They need a build of minutes that `make test` does not make (`make testenv-karpenter`).
    Where it is built they run like the rest; where it is not they are deselected, and the
    summary says so. A run that asks for them (binaries.karpenter_asked) keeps them, and
    they fail with the command that builds it, never skip.
    """
    marked = [item for item in items if item.get_closest_marker("karpenter")]
    if not marked or karpenter_built():
        return
    left_out = [
        item
        for item in marked
        if not karpenter_asked(
            test_file=Path(item.path),
            args=config.args,
            invocation_dir=config.invocation_params.dir,
            markexpr=str(config.option.markexpr or ""),
            environ=os.environ,
        )
    ]
    if left_out:
        kept = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in kept]
        config.hook.pytest_deselected(items=left_out)
        config.stash[_KARPENTER_LEFT_OUT] = len(left_out)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(_KARPENTER_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"karpenter: {left_out} tests deselected: Karpenter's kwok provider is not built "
            '(`make testenv-karpenter`, docs/development.md, "Karpenter"); '
            "`make test-karpenter` builds it and runs them",
            yellow=True,
        )
