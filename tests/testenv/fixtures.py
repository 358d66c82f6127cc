"""pytest fixtures of the local control plane (registered from tests/conftest.py).

- control_plane (session): the local ControlPlane, started once per run; fault controls.
- cluster (session): what the ordinary tests talk to: the local control plane, or the cluster
  of SPA_TESTENV_KUBECONFIG when that is set (fault controls need control_plane instead).
- namespace: a fresh namespace per test, deleted afterwards.
- api_client: an admin `kubernetes.client.ApiClient`, closed afterwards.
- run_kubectl: `run_kubectl(*args, kubeconfig=None, input=None, check=False, timeout=60)`.
- apiserver_proxy: a TCPProxy in front of the API server and an admin kubeconfig through it.
- control_plane_factory: start extra, private control planes (stopped afterwards).
- karpenter (module): Karpenter's kwok provider on a private plane of one static node
  (tests/testenv/karpenter.py), for the tests marked `karpenter`.
- karpenter_namespace: a fresh namespace per test on that plane, deleted afterwards.

Missing binaries make these fixtures raise MissingBinariesError, so integration tests fail
(not skip) with the instruction to run `make testenv`.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
from kubernetes import client as k8s

from tests.testenv.audit import audit_policy, service_account_user
from tests.testenv.binaries import find_binaries, find_karpenter
from tests.testenv.controlplane import Cluster, ControlPlane
from tests.testenv.karpenter import Karpenter
from tests.testenv.proxy import TCPProxy

# The install's ServiceAccount (config/rbac), whose requests the `karpenter` plane audits.
KARPENTER_AUDITED = service_account_user("scheduled-pod-autoscaler", "scheduled-pod-autoscaler")


class RunKubectl(Protocol):
    def __call__(
        self,
        *args: str,
        kubeconfig: Path | None = None,
        input: str | None = None,
        check: bool = False,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]: ...


@dataclass
class ProxiedApiServer:
    """A TCPProxy in front of the API server and an admin kubeconfig that goes through it."""

    proxy: TCPProxy
    kubeconfig: Path


def _workdir(kind: str) -> Path:
    # Not under pytest's basetemp: concurrent pytest sessions on one machine prune each other's
    # older numbered directories, which would delete a running etcd's data (and fail their
    # cleanup on files it keeps writing).
    return Path(tempfile.mkdtemp(prefix=f"spa-testenv-{kind}-"))


def _discard(plane: ControlPlane) -> None:
    plane.stop()
    if os.environ.get("SPA_TESTENV_KEEP"):
        print(f"kept {plane.workdir} (logs in logs/)")
    else:
        shutil.rmtree(plane.workdir, ignore_errors=True)


def _start(kind: str, **kwargs: Any) -> ControlPlane:
    binaries = find_binaries()  # the `make testenv` message, before any directory is made
    plane = ControlPlane(_workdir(kind), binaries, **kwargs)
    try:
        plane.start()
    except BaseException as exc:
        # Its directory is kept: the logs are the way to find out why.
        exc.add_note(f"control plane logs: {plane.workdir / 'logs'}")
        raise
    return plane


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    plane = _start("session")
    try:
        yield plane
    finally:
        _discard(plane)


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    external = os.environ.get("SPA_TESTENV_KUBECONFIG")
    if external:
        return Cluster(Path(external), tmp_path_factory.mktemp("external-cluster"))
    plane: ControlPlane = request.getfixturevalue("control_plane")
    return plane


def _namespace_name(test_name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")[:40].strip("-")
    return f"t-{slug}-{secrets.token_hex(3)}"


@contextlib.contextmanager
def _fresh_namespace(cluster: Cluster, test_name: str) -> Iterator[str]:
    name = _namespace_name(test_name)
    with cluster.api_client() as api:
        k8s.CoreV1Api(api).create_namespace(
            k8s.V1Namespace(
                metadata=k8s.V1ObjectMeta(name=name, labels={"spa-testenv/test": "true"})
            )
        )
    yield name
    with cluster.api_client() as api:
        try:
            # Not waited for: the namespace controller finishes it in the background.
            k8s.CoreV1Api(api).delete_namespace(name)
        except k8s.ApiException as exc:
            if exc.status != 404:
                raise


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    with _fresh_namespace(cluster, request.node.name) as name:
        yield name


@pytest.fixture
def api_client(cluster: Cluster) -> Iterator[k8s.ApiClient]:
    with cluster.api_client() as api:
        yield api


@pytest.fixture
def run_kubectl(cluster: Cluster) -> RunKubectl:
    return cluster.run_kubectl


@pytest.fixture
def apiserver_proxy(control_plane: ControlPlane, tmp_path: Path) -> Iterator[ProxiedApiServer]:
    with TCPProxy("127.0.0.1", control_plane.ports.apiserver) as proxy:
        kubeconfig = control_plane.admin_kubeconfig_for(proxy.url, tmp_path / "proxied.kubeconfig")
        yield ProxiedApiServer(proxy=proxy, kubeconfig=kubeconfig)


@contextlib.contextmanager
def private_control_plane(**kwargs: Any) -> Iterator[ControlPlane]:
    """A control plane of its own (e.g. with an audit policy) for a module's fixture."""
    plane = _start("private", **kwargs)
    try:
        yield plane
    finally:
        _discard(plane)


@pytest.fixture
def control_plane_factory() -> Iterator[Callable[..., ControlPlane]]:
    started: list[ControlPlane] = []

    def start(**kwargs: Any) -> ControlPlane:
        plane = _start("private", **kwargs)
        started.append(plane)
        return plane

    yield start
    for plane in started:
        _discard(plane)


@pytest.fixture(scope="module")
def karpenter() -> Iterator[Karpenter]:
    """Karpenter on a plane of its own, once per module (about 15 s to start both).

    Its own plane, because Karpenter acts on every unschedulable pod of the cluster: on the
    session's plane it would buy nodes for other tests' pods. One static node makes the plane
    run kube-scheduler and kwok; the pods of a test select a Karpenter pool, never that node.
    The API server's audit log (`plane.audit_log`) holds the requests of the controller's
    ServiceAccount alone (KARPENTER_AUDITED), so a test run under it can say what it asked.
    """
    binaries = find_karpenter()  # the `make testenv-karpenter` message, before any plane starts
    plane = _start("karpenter", nodes=1, audit_policy=audit_policy(users=[KARPENTER_AUDITED]))
    running = Karpenter(plane, binaries=binaries)
    try:
        running.start()
    except BaseException as exc:
        # The plane's directory is kept, as when a plane fails to start: the logs say why.
        plane.stop()
        exc.add_note(f"control plane and Karpenter logs: {plane.workdir / 'logs'}")
        raise
    try:
        yield running
    finally:
        running.stop()
        _discard(plane)


@pytest.fixture
def karpenter_namespace(karpenter: Karpenter, request: pytest.FixtureRequest) -> Iterator[str]:
    with _fresh_namespace(karpenter.plane, request.node.name) as name:
        yield name
