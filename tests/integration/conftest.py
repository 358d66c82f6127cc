"""The fixtures of the tests that talk to the real control plane: the local control plane
(tests/testenv/fixtures.py), the harness (CRDs, admin client, an in-process controller) and
`spa run` as a process. Registered for this directory only (see tests/conftest.py)."""

from tests.integration.harness import controller, crds, kube
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
    "namespace",
    "run_kubectl",
]
