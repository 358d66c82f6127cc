"""Karpenter, the real node autoscaler, on a test control plane: nodes that arrive late.

Why: a schedule can make pods early, but at a peak the pods need *nodes*, and on a real cluster
those come from a node autoscaler that takes about a minute to boot a VM. Only a real one can
show whether capacity ordered ahead of a window (a CapacityBuffer, or placeholder pods) is
there in time. Karpenter's kwok provider is the whole of Karpenter (its provisioner and
scheduling simulation, disruption, the CapacityBuffer controller) with a cloud provider that
creates Node objects instead of VMs; nothing here imitates it.

How it fits the plane (tests/testenv/controlplane.py, which must run with nodes >= 1 so that
kube-scheduler and kwok run):

* Karpenter sees a pod the scheduler marked unschedulable (or a CapacityBuffer's virtual pods),
  picks an instance type from its built-in list and creates a NodeClaim;
* its kwok cloud provider creates the Node `node_delay_seconds` later (the KWOKNodeClass's
  `nodeRegistrationDelay`: the VM's boot until its kubelet registers), annotated
  `kwok.x-k8s.io/node: fake`, which is exactly the annotation the plane's kwok manages
  (tests/testenv/kwok.py): kwok makes it Ready and renews its lease, Karpenter lifts its
  `karpenter.sh/unregistered` taint, the node lifecycle controller the `not-ready` one, and the
  scheduler binds the pod, which kwok then starts like any other.

The plane's own static nodes stay, like a cluster's system node group: a workload meant for
Karpenter selects a node pool (`NodePool.node_selector`), so that it cannot land anywhere else.
Each test can make a pool of its own with its own delay (`Karpenter.add_node_pool`), so that a
node left by one test never serves another.
"""

from __future__ import annotations

import contextlib
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import yaml
from kubernetes import client as k8s

from tests.testenv.binaries import KarpenterBinaries, find_karpenter, karpenter_version
from tests.testenv.controlplane import ControlPlane, ControlPlaneError, free_port
from tests.testenv.processes import ManagedProcess

# The namespace a chart install runs Karpenter in; the process is told it (SYSTEM_NAMESPACE)
# as the chart does, and the namespace exists as it would. v1.15.0 does not read the variable
# (its binary lacks the name); releases that do find it set.
SYSTEM_NAMESPACE = "karpenter"
# Karpenter's well-known label on every node (and NodeClaim) of a pool.
NODE_POOL_LABEL = "karpenter.sh/nodepool"
KARPENTER_GROUP, KARPENTER_VERSION = "karpenter.sh", "v1"
NODE_CLASS_GROUP, NODE_CLASS_VERSION, NODE_CLASS_KIND = (
    "karpenter.kwok.sh",
    "v1alpha1",
    "KWOKNodeClass",
)
CAPACITY_BUFFER_GROUP = "autoscaling.x-k8s.io"
# A cloud VM's boot until its kubelet registers: about a minute on the common clouds.
DEFAULT_NODE_DELAY_SECONDS = 60
# The pool start() makes; tests that need a pool of their own add one.
DEFAULT_NODE_POOL = "default"
# CapacityBuffer is alpha in Karpenter: off unless asked.
DEFAULT_FEATURE_GATES: Mapping[str, bool] = {"CapacityBuffer": True}


@dataclass(frozen=True)
class NodePool:
    """A NodePool and its KWOKNodeClass (same name): nodes of one shape of delay."""

    name: str
    node_delay_seconds: int

    @property
    def node_selector(self) -> dict[str, str]:
        """The pod nodeSelector that keeps a workload on this pool's nodes."""
        return {NODE_POOL_LABEL: self.name}

    @property
    def label_selector(self) -> str:
        """The label selector of this pool's Nodes and NodeClaims."""
        return f"{NODE_POOL_LABEL}={self.name}"


def node_class_manifest(*, name: str, node_delay_seconds: int) -> dict[str, Any]:
    """A KWOKNodeClass whose nodes register `node_delay_seconds` after their NodeClaim.

    Its status needs no controller: the CRD defaults it to Ready.
    """
    if node_delay_seconds < 0:
        raise ValueError(f"node_delay_seconds must be >= 0, not {node_delay_seconds}")
    return {
        "apiVersion": f"{NODE_CLASS_GROUP}/{NODE_CLASS_VERSION}",
        "kind": NODE_CLASS_KIND,
        "metadata": {"name": name},
        # The CRD's pattern takes whole s/m/h units only.
        "spec": {"nodeRegistrationDelay": f"{node_delay_seconds}s"},
    }


def node_pool_manifest(
    *,
    name: str,
    consolidate_after: str = "30s",
    cpu_limit: str = "64",
    instance_types: Sequence[str] = (),
) -> dict[str, Any]:
    """A NodePool of on-demand linux/amd64 kwok instances using the node class `name`.

    `cpu_limit` bounds what a runaway test can make Karpenter create; `consolidate_after` is
    how long an empty or underused node stays before Karpenter removes it ("Never" keeps it);
    `instance_types`, if any, are the only ones it may launch (e.g. one that holds exactly one
    pod of a size, so that every new pod needs a new node).
    """
    only_types = (
        [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [*instance_types]}]
        if instance_types
        else []
    )
    return {
        "apiVersion": f"{KARPENTER_GROUP}/{KARPENTER_VERSION}",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": NODE_CLASS_GROUP,
                        "kind": NODE_CLASS_KIND,
                        "name": name,
                    },
                    "requirements": [
                        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                        {
                            "key": "karpenter.sh/capacity-type",
                            "operator": "In",
                            "values": ["on-demand"],
                        },
                        *only_types,
                    ],
                    "expireAfter": "Never",
                }
            },
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": consolidate_after,
            },
            "limits": {"cpu": cpu_limit},
        },
    }


def served_version(api: k8s.ApiClient, group: str) -> str | None:
    """The version of `group` the API server prefers, or None if it serves none.

    The CapacityBuffer API moved (v1alpha1 before Karpenter v1.15.0, v1beta1 from it): callers
    ask the server rather than name one.
    """
    for served in k8s.ApisApi(api).get_api_versions().groups:
        if served.name == group:
            preferred = served.preferred_version or served.versions[0]
            return str(preferred.version)
    return None


def schedulable(node: Mapping[str, Any]) -> bool:
    """A Node (as the API server's JSON) that is Ready and without the taints a node carries
    until it may take pods (Karpenter's `unregistered`, the lifecycle controller's
    `not-ready`)."""
    conditions = node.get("status", {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    blocking = [
        t
        for t in node.get("spec", {}).get("taints") or []
        if t["key"] in ("karpenter.sh/unregistered", "node.kubernetes.io/not-ready")
    ]
    return ready and not blocking


class Karpenter:
    """Karpenter's kwok provider running against `plane`, with its CRDs and a default pool.

    `start()` installs the CRDs, the namespace and the pool `DEFAULT_NODE_POOL` (nodes
    `node_delay_seconds` late), starts the process and waits until it is ready; `stop()` stops
    the process (the objects stay, as with `ControlPlane.stop_nodes()`). The log is
    `<plane workdir>/logs/karpenter.log`.
    """

    def __init__(
        self,
        plane: ControlPlane,
        *,
        binaries: KarpenterBinaries | None = None,
        node_delay_seconds: int = DEFAULT_NODE_DELAY_SECONDS,
        feature_gates: Mapping[str, bool] | None = None,
        log_level: str = "info",
    ) -> None:
        if plane.nodes < 1:
            # Without kube-scheduler and kwok no pod is ever bound and no node becomes Ready.
            raise ValueError("Karpenter needs a plane with nodes >= 1 (kube-scheduler and kwok)")
        self.plane = plane
        # Resolved first: a missing build must fail before anything starts.
        self.binaries = binaries or find_karpenter()
        self.version = karpenter_version()
        self.node_delay_seconds = node_delay_seconds
        self.feature_gates = dict(DEFAULT_FEATURE_GATES if feature_gates is None else feature_gates)
        self.log_level = log_level
        self.metrics_port = 0
        self.health_port = 0
        self.default_pool = NodePool(DEFAULT_NODE_POOL, node_delay_seconds)
        self.startup_seconds = 0.0
        self.process = ManagedProcess("karpenter", [], plane.workdir / "logs" / "karpenter.log")

    # --- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = 120) -> Karpenter:
        """Install what Karpenter needs, start it, wait for its /readyz; stop it on failure."""
        began = time.monotonic()
        self.install_crds(timeout)
        self._ensure_namespace()
        self.add_node_pool(DEFAULT_NODE_POOL, node_delay_seconds=self.node_delay_seconds)
        for attempt in range(3):
            # Karpenter binds its metrics and health ports on every interface (":port");
            # picked free on loopback, one can be taken before it binds: pick new ones then.
            self.metrics_port, self.health_port = free_port(), free_port()
            try:
                self.process.argv = self._args()
                self.process.env = self._env()
                self.process.start()
                self._wait("Karpenter /readyz", self.ready, timeout)
                break
            except ControlPlaneError as exc:
                self.stop()
                if attempt == 2 or "address already in use" not in str(exc):
                    raise
            except BaseException:
                self.stop()
                raise
        self.startup_seconds = time.monotonic() - began
        return self

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL); safe to call twice."""
        self.process.stop()

    def __enter__(self) -> Karpenter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _args(self) -> list[str]:
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.feature_gates.items()))
        args = [
            str(self.binaries.binary),
            # One replica: no Lease to win first.
            "--disable-leader-election",
            f"--metrics-port={self.metrics_port}",
            f"--health-probe-port={self.health_port}",
            f"--log-level={self.log_level}",
        ]
        if gates:
            args.append(f"--feature-gates={gates}")
        return args

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            # controller-runtime's client reads it (Karpenter has no --kubeconfig flag).
            "KUBECONFIG": str(self.plane.kubeconfig),
            "SYSTEM_NAMESPACE": SYSTEM_NAMESPACE,
        }

    def _wait(self, what: str, check: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if not self.process.running:
                raise ControlPlaneError(
                    f"{what}: karpenter exited with {self.process.returncode}\n"
                    + self.process.log_tail()
                )
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"{what}: not ready after {timeout:.0f}s\n{self.process.log_tail()}"
                )
            time.sleep(0.2)

    def ready(self) -> bool:
        """GET /readyz on the health port is 200 (caches synced, NodePool/NodeClaim served)."""
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.health_port}/readyz", timeout=2
            ) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.HTTPError):
            return False

    def metrics(self) -> str:
        """The text of Karpenter's /metrics (e.g. `karpenter_build_info`)."""
        with urllib.request.urlopen(
            f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5
        ) as response:
            text: str = response.read().decode()
            return text

    # --- what it needs in the cluster --------------------------------------------------------

    def install_crds(self, timeout: float = 60) -> None:
        """Apply the CRDs of the build (server-side, as a chart's CRDs would be) and wait
        until the API server serves each."""
        files = [arg for crd in self.binaries.crds for arg in ("-f", str(crd))]
        self.plane.run_kubectl("apply", "--server-side", *files, check=True, timeout=timeout)
        names = [
            yaml.safe_load(crd.read_text(encoding="utf-8"))["metadata"]["name"]
            for crd in self.binaries.crds
        ]
        with self.plane.api_client() as api:
            extensions = k8s.ApiextensionsV1Api(api)

            def established() -> bool:
                for name in names:
                    status = extensions.read_custom_resource_definition(name).status
                    conditions = (status.conditions if status else None) or []
                    if not any(c.type == "Established" and c.status == "True" for c in conditions):
                        return False
                return True

            self._wait("Karpenter's CRDs Established", established, timeout)

    def _ensure_namespace(self) -> None:
        with self.plane.api_client() as api, contextlib.suppress(k8s.ApiException):
            k8s.CoreV1Api(api).create_namespace(
                k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=SYSTEM_NAMESPACE))
            )

    def add_node_pool(
        self,
        name: str,
        *,
        node_delay_seconds: int | None = None,
        consolidate_after: str = "30s",
        cpu_limit: str = "64",
        instance_types: Sequence[str] = (),
    ) -> NodePool:
        """Create (or replace the spec of) a KWOKNodeClass and a NodePool named `name`.

        `node_delay_seconds` defaults to the Karpenter's own; see `node_pool_manifest` for the
        rest. Returns the pool, whose `node_selector` a workload uses to land on it.
        """
        delay = self.node_delay_seconds if node_delay_seconds is None else node_delay_seconds
        with self.plane.api_client() as api:
            custom = k8s.CustomObjectsApi(api)
            for group, version, plural, manifest in (
                (
                    NODE_CLASS_GROUP,
                    NODE_CLASS_VERSION,
                    "kwoknodeclasses",
                    node_class_manifest(name=name, node_delay_seconds=delay),
                ),
                (
                    KARPENTER_GROUP,
                    KARPENTER_VERSION,
                    "nodepools",
                    node_pool_manifest(
                        name=name,
                        consolidate_after=consolidate_after,
                        cpu_limit=cpu_limit,
                        instance_types=instance_types,
                    ),
                ),
            ):
                # Server-side apply (JSON is YAML): one field manager, and a second call
                # updates in place.
                custom.patch_cluster_custom_object(
                    group,
                    version,
                    plural,
                    name,
                    manifest,
                    field_manager="spa-testenv",
                    force=True,
                    _content_type="application/apply-patch+yaml",
                )
        return NodePool(name, delay)

    # --- what it did -----------------------------------------------------------------------

    def node_claims(self, pool: NodePool) -> list[dict[str, Any]]:
        """The pool's NodeClaims (Karpenter's record of each node it launched)."""
        with self.plane.api_client() as api:
            listed = cast(
                dict[str, Any],
                k8s.CustomObjectsApi(api).list_cluster_custom_object(
                    KARPENTER_GROUP,
                    KARPENTER_VERSION,
                    "nodeclaims",
                    label_selector=pool.label_selector,
                ),
            )
        items: list[dict[str, Any]] = listed["items"]
        return items

    def nodes(self, pool: NodePool) -> list[dict[str, Any]]:
        """The pool's Nodes (as the API server's JSON), whether they can take pods yet or not."""
        with self.plane.api_client() as api:
            listed = k8s.CoreV1Api(api).list_node(label_selector=pool.label_selector)
            data = cast(dict[str, Any], api.sanitize_for_serialization(listed))
        items: list[dict[str, Any]] = data["items"]
        return items

    def schedulable_nodes(self, pool: NodePool) -> list[dict[str, Any]]:
        """The pool's Nodes a pod can be bound to now (see `schedulable`)."""
        return [node for node in self.nodes(pool) if schedulable(node)]

    def log_tail(self, lines: int = 40) -> str:
        return self.process.log_tail(lines)


@contextlib.contextmanager
def running_karpenter(plane: ControlPlane, **kwargs: Any) -> Iterator[Karpenter]:
    """`Karpenter(plane, **kwargs)` started, and stopped afterwards."""
    karpenter = Karpenter(plane, **kwargs)
    try:
        karpenter.start()
    except BaseException as exc:
        exc.add_note(f"Karpenter's log: {karpenter.process.log_path}")
        raise
    try:
        yield karpenter
    finally:
        karpenter.stop()
