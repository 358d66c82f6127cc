"""A real local Kubernetes control plane for the tests and for local experiments.

etcd, kube-apiserver, kube-controller-manager and kube-scheduler of the release pinned in
hack/testenv/VERSION and kwok's fake nodes (built by `make testenv`), started on loopback ports
with real authentication and RBAC, plus controls to break them (restart, compaction, a
network-cutting proxy). See docs/development.md.
"""

from tests.testenv.binaries import MissingBinariesError, find_binaries, kubernetes_version
from tests.testenv.controlplane import Cluster, ControlPlane, ControlPlaneError
from tests.testenv.proxy import TCPProxy

__all__ = [
    "Cluster",
    "ControlPlane",
    "ControlPlaneError",
    "MissingBinariesError",
    "TCPProxy",
    "find_binaries",
    "kubernetes_version",
]
