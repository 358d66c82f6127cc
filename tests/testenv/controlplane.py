"""A real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler) on loopback, with fake nodes played by kwok.

No fakes in the control plane: the tests talk to the same binaries a cluster runs, with RBAC,
TokenRequest-issued ServiceAccount tokens, the garbage collector, the HPA controller and the
scheduler. Only the kubelets are played, by kwok (see tests/testenv/kwok.py), so a
Deployment's pods are scheduled onto nodes of real capacity and become Ready. Besides starting and
stopping it, `ControlPlane` offers the faults reliability tests need: restart the API server
(same port, same etcd), stop/start etcd, and compact etcd so old resourceVersions expire.

`Cluster` is the client side alone (a kubeconfig), so the same helpers work against any
cluster; `ControlPlane` adds the processes.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.testenv import kwok
from tests.testenv.binaries import Binaries, find_binaries, kubectl_path
from tests.testenv.kubeconfig import write_kubeconfig
from tests.testenv.pki import SERVICE_CLUSTER_IP_RANGE, Pki, ensure_pki
from tests.testenv.processes import ManagedProcess

SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
# The lifetime of a ServiceAccount token put in a kubeconfig: a day, longer than any benchmark.
# A pod's projected token is re-read by `spa run` as the kubelet rotates it, but a kubeconfig's
# token is fixed, and one of an hour (TokenRequest's usual) ended bench/ready.py's N = 20 run in
# 401 Unauthorized an hour after its plane started (docs/performance.md, "Ready before the peak").
SERVICE_ACCOUNT_TOKEN_SECONDS = 24 * 3600
# Fake worker nodes of kwok.NODE_CAPACITY each (room for 330 pods, 12 vCPU of requests).
DEFAULT_NODES = 3

# Only what a scaling controller's world needs, and the nodes' lifecycle (no kubelet: kwok plays
# the nodes).
CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
    "horizontal-pod-autoscaler-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    # Aggregated ClusterRoles (aggregate-to-admin/edit/view) are filled by this one.
    "clusterrole-aggregation-controller",
    # ResourceQuota status (admission enforces a quota only once it has been counted).
    "resourcequota-controller",
    # Removes the not-ready taint that admission puts on every new Node once kwok reports it
    # Ready (the scheduler places nothing on a tainted node), and watches kwok's node leases.
    "node-lifecycle-controller",
)
# The same controllers under the names of releases before 1.28, which know only these (later
# releases accept them as aliases).
LEGACY_CONTROLLER_NAMES = {
    "garbage-collector-controller": "garbagecollector",
    "namespace-controller": "namespace",
    "deployment-controller": "deployment",
    "replicaset-controller": "replicaset",
    "horizontal-pod-autoscaler-controller": "horizontalpodautoscaling",
    "serviceaccount-controller": "serviceaccount",
    "serviceaccount-token-controller": "serviceaccount-token",
    "root-ca-certificate-publisher-controller": "root-ca-cert-publisher",
    "clusterrole-aggregation-controller": "clusterrole-aggregation",
    "resourcequota-controller": "resourcequota",
    "node-lifecycle-controller": "nodelifecycle",
}
# kwok renews each fake node's Lease as a kubelet does (every quarter of the duration), so the
# node lifecycle controller keeps the nodes Ready.
NODE_LEASE_SECONDS = 40


class ControlPlaneError(RuntimeError):
    """A component did not come up; the message carries the end of its log."""


def free_port() -> int:
    """A port that is free on 127.0.0.1 now (the kernel's pick; only loopback is used)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(
    what: str, check: Callable[[], bool], timeout: float, process: ManagedProcess | None
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and not process.running:
            raise ControlPlaneError(
                f"{what}: {process.name} exited with {process.returncode}\n{process.log_tail()}"
            )
        if check():
            return
        if time.monotonic() > deadline:
            tail = process.log_tail() if process is not None else ""
            raise ControlPlaneError(f"{what}: not ready after {timeout:.0f}s\n{tail}")
        time.sleep(0.1)


class Cluster:
    """Client-side helpers for a cluster reached through an admin kubeconfig."""

    def __init__(self, kubeconfig: Path, workdir: Path) -> None:
        self.kubeconfig = kubeconfig
        self.workdir = workdir

    def api_client(self, kubeconfig: Path | None = None) -> k8s.ApiClient:
        """A `kubernetes` ApiClient for the kubeconfig (default: the admin one). Close it."""
        config_file = str(kubeconfig or self.kubeconfig)
        api: k8s.ApiClient = k8s_config.new_client_from_config(config_file=config_file)  # type: ignore[no-untyped-call]
        return api

    def run_kubectl(
        self,
        *args: str,
        kubeconfig: Path | None = None,
        input: str | None = None,
        check: bool = False,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """Run the project's kubectl against this cluster; text output; raises only if check."""
        env = dict(os.environ)
        env["KUBECONFIG"] = str(kubeconfig or self.kubeconfig)
        # Discovery cache per cluster: ports change between runs and ~/.kube is not ours.
        env["KUBECACHEDIR"] = str(self.workdir / "kubectl-cache")
        return subprocess.run(
            [str(kubectl_path()), *args],
            input=input,
            capture_output=True,
            text=True,
            env=env,
            check=check,
            timeout=timeout,
        )

    def service_account_token(
        self,
        namespace: str,
        name: str,
        *,
        expiration_seconds: int = SERVICE_ACCOUNT_TOKEN_SECONDS,
        create: bool = True,
    ) -> str:
        """A token for the ServiceAccount from the TokenRequest API (created first if asked)."""
        with self.api_client() as api:
            core = k8s.CoreV1Api(api)
            if create:
                try:
                    core.create_namespaced_service_account(
                        namespace, k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name=name))
                    )
                except k8s.ApiException as exc:
                    if exc.status != 409:
                        raise
            request = k8s.AuthenticationV1TokenRequest(
                spec=k8s.V1TokenRequestSpec(audiences=[], expiration_seconds=expiration_seconds)
            )
            response = core.create_namespaced_service_account_token(name, namespace, request)
            if response.status is None or not response.status.token:
                raise RuntimeError(f"TokenRequest for {namespace}/{name} returned no token")
            return str(response.status.token)

    def server_and_ca(self) -> tuple[str, Path]:
        """The server URL and a CA file of the admin kubeconfig's current context.

        An inline `certificate-authority-data` (common in kubeconfigs of real clusters) is
        written to a file in the work directory.
        """
        config = yaml.safe_load(self.kubeconfig.read_text(encoding="utf-8"))
        contexts = {c["name"]: c["context"] for c in config.get("contexts", [])}
        clusters = {c["name"]: c["cluster"] for c in config["clusters"]}
        current = contexts.get(config.get("current-context", ""))
        cluster = clusters[current["cluster"]] if current else next(iter(clusters.values()))
        if "certificate-authority" in cluster:
            return cluster["server"], Path(cluster["certificate-authority"])
        ca = self.workdir / "cluster-ca.crt"
        ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
        return cluster["server"], ca

    def service_account_kubeconfig(
        self,
        namespace: str,
        name: str,
        *,
        path: Path | None = None,
        server: str | None = None,
        expiration_seconds: int = SERVICE_ACCOUNT_TOKEN_SECONDS,
        create: bool = True,
    ) -> Path:
        """A kubeconfig that authenticates as system:serviceaccount:<namespace>:<name>.

        The token comes from TokenRequest, as a pod's projected token would; the identity has
        exactly the RBAC bound to it. `server` points it elsewhere, e.g. at a TCPProxy.
        """
        token = self.service_account_token(
            namespace, name, expiration_seconds=expiration_seconds, create=create
        )
        own_server, ca = self.server_and_ca()
        target = path or self.workdir / "kubeconfigs" / f"sa-{namespace}-{name}.yaml"
        return write_kubeconfig(
            target,
            server=server or own_server,
            ca_cert=ca,
            user=f"system:serviceaccount:{namespace}:{name}",
            token=token,
            namespace=namespace,
        )


@dataclass
class Ports:
    etcd_client: int = field(default_factory=free_port)
    etcd_peer: int = field(default_factory=free_port)
    apiserver: int = field(default_factory=free_port)
    controller_manager: int = field(default_factory=free_port)
    scheduler: int = field(default_factory=free_port)


def feature_gate_args(gates: Mapping[str, bool]) -> list[str]:
    """The `--feature-gates` flag for `gates` (none for none), in a stable order."""
    if not gates:
        return []
    spelled = ",".join(f"{name}={str(on).lower()}" for name, on in sorted(gates.items()))
    return [f"--feature-gates={spelled}"]


class ControlPlane(Cluster):
    """etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok in `workdir`.

    `nodes` fake nodes are created (0: neither the scheduler nor kwok runs, pods stay Pending).
    """

    def __init__(
        self,
        workdir: Path,
        binaries: Binaries | None = None,
        *,
        controller_manager: bool = True,
        extra_apiserver_args: Sequence[str] = (),
        extra_controller_manager_args: Sequence[str] = (),
        ports: Ports | None = None,
        audit_policy: Mapping[str, Any] | None = None,
        nodes: int = DEFAULT_NODES,
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        """`audit_policy` (an audit.k8s.io/v1 Policy, e.g. `tests.testenv.audit.audit_policy()`)
        turns on the API server's JSON audit log at `audit_log`; off by default (it costs).
        `feature_gates` (`{"HPAScaleToZero": True}`) are given to kube-apiserver and
        kube-controller-manager alike, as a cluster turns a gate on in both (the API server
        validates a field, the controller acts on it): docs/development.md, "Feature gates"."""
        workdir = workdir.resolve()
        super().__init__(workdir / "kubeconfig", workdir)
        # Resolved first: missing binaries must fail before anything starts.
        self.binaries = binaries or find_binaries()
        if nodes > 0:
            self.binaries.require_nodes()
        self.ports = ports or Ports()
        self._fixed_ports = ports is not None
        self.with_controller_manager = controller_manager
        self.nodes = nodes
        gates = feature_gate_args(feature_gates or {})
        self.extra_apiserver_args = [*gates, *extra_apiserver_args]
        self.extra_controller_manager_args = [*gates, *extra_controller_manager_args]
        self.audit_policy = dict(audit_policy) if audit_policy is not None else None
        self.audit_log: Path | None = workdir / "audit.log" if audit_policy is not None else None
        self.pki: Pki | None = None
        self.startup_seconds: dict[str, float] = {}
        logs = workdir / "logs"
        self.etcd = ManagedProcess("etcd", [], logs / "etcd.log")
        self.apiserver = ManagedProcess("kube-apiserver", [], logs / "kube-apiserver.log")
        self.controller_manager = ManagedProcess(
            "kube-controller-manager", [], logs / "kube-controller-manager.log"
        )
        self.scheduler = ManagedProcess("kube-scheduler", [], logs / "kube-scheduler.log")
        # HOME of its own: kwok would otherwise also read ~/.kwok/kwok.yaml.
        self.kwok = ManagedProcess(
            "kwok", [], logs / "kwok.log", env={**os.environ, "HOME": str(workdir)}
        )

    # --- addresses -------------------------------------------------------------------------

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports.apiserver}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.etcd_client}"

    # --- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = 60) -> ControlPlane:
        """Start all components and wait until each is healthy; stop everything on failure."""
        began = time.monotonic()
        for attempt in range(3):
            try:
                self.pki = ensure_pki(self.workdir / "pki")
                self._write_kubeconfigs()
                self.start_etcd(timeout)
                self.start_apiserver(timeout)
                if self.with_controller_manager:
                    self.start_controller_manager(timeout)
                if self.nodes > 0:
                    self.start_nodes(timeout)
                break
            except ControlPlaneError as exc:
                self.stop()
                # A port picked free can be taken (by another test run, or as some
                # connection's ephemeral port) before the server binds it: pick new ones.
                if attempt == 2 or self._fixed_ports or "address already in use" not in str(exc):
                    raise
                self.ports = Ports()
            except BaseException:
                self.stop()
                raise
        self.startup_seconds["total"] = time.monotonic() - began
        return self

    def stop(self) -> None:
        """Stop in reverse order; safe to call twice."""
        self.kwok.stop()
        self.scheduler.stop()
        self.controller_manager.stop()
        self.apiserver.stop()
        # etcd's graceful stop lingers ~7 s on its gRPC server; the store is consistent on
        # disk either way (only a power loss could cost writes), so don't wait long.
        self.etcd.stop(timeout=2)

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _write_kubeconfigs(self) -> None:
        assert self.pki is not None
        write_kubeconfig(
            self.kubeconfig,
            server=self.server,
            ca_cert=self.pki.ca_cert,
            user="spa-testenv-admin",
            client_cert=self.pki.admin.cert,
            client_key=self.pki.admin.key,
        )
        write_kubeconfig(
            self.workdir / "controller-manager.kubeconfig",
            server=self.server,
            ca_cert=self.pki.ca_cert,
            user="system:kube-controller-manager",
            client_cert=self.pki.controller_manager.cert,
            client_key=self.pki.controller_manager.key,
        )
        write_kubeconfig(
            self.workdir / "scheduler.kubeconfig",
            server=self.server,
            ca_cert=self.pki.ca_cert,
            user="system:kube-scheduler",
            client_cert=self.pki.scheduler.cert,
            client_key=self.pki.scheduler.key,
        )

    def admin_kubeconfig_for(self, server: str, path: Path) -> Path:
        """The admin identity at another URL (e.g. a TCPProxy in front of the API server)."""
        assert self.pki is not None
        return write_kubeconfig(
            path,
            server=server,
            ca_cert=self.pki.ca_cert,
            user="spa-testenv-admin",
            client_cert=self.pki.admin.cert,
            client_key=self.pki.admin.key,
        )

    # --- etcd ------------------------------------------------------------------------------

    def _etcd_args(self) -> list[str]:
        peer = f"http://127.0.0.1:{self.ports.etcd_peer}"
        return [
            str(self.binaries.etcd),
            "--name=spa-testenv",
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=spa-testenv={peer}",
            # A throwaway store: durability costs seconds per test run and buys nothing here.
            "--unsafe-no-fsync",
            "--log-level=warn",
        ]

    def start_etcd(self, timeout: float = 30) -> None:
        began = time.monotonic()
        self.etcd.argv = self._etcd_args()
        self.etcd.start()
        _wait_for("etcd", self._etcd_healthy, timeout, self.etcd)
        self.startup_seconds["etcd"] = time.monotonic() - began

    def stop_etcd(self) -> None:
        """Graceful stop (SIGTERM; etcd takes several seconds)."""
        self.etcd.stop()

    def kill_etcd(self) -> None:
        """SIGKILL: an etcd crash."""
        self.etcd.kill()

    def restart_etcd(self, timeout: float = 30) -> None:
        self.stop_etcd()
        self.start_etcd(timeout)

    def _etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as response:
                return bool(json.load(response).get("health") == "true")
        except (OSError, ValueError):
            return False

    def _etcd_post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        # etcd's gRPC gateway: the v3 KV API as JSON over HTTP, byte fields in base64.
        request = urllib.request.Request(
            f"{self.etcd_url}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            result: dict[str, Any] = json.load(response)
            return result

    def etcd_revision(self) -> int:
        """The current revision of the etcd store."""
        result = self._etcd_post(
            "/v3/kv/range",
            {"key": base64.b64encode(b"\0").decode(), "limit": 1, "count_only": True},
        )
        return int(result["header"]["revision"])

    def compact_etcd(self, revision: int | None = None) -> int:
        """Compact etcd up to `revision` (default: now), the way kube-apiserver itself does.

        The revision is recorded under `compact_rev_key` first, as the apiserver's compactor
        does, so the apiserver learns of it (it drops list snapshots below it). Lists at an
        older exact resourceVersion then get 410 Gone. Watches are different, as in production:
        the watch cache keeps its own history and still serves a watch from an old
        resourceVersion it holds; see expire_resource_versions().
        """
        target = revision if revision is not None else self.etcd_revision()
        self._etcd_post(
            "/v3/kv/put",
            {
                "key": base64.b64encode(b"compact_rev_key").decode(),
                "value": base64.b64encode(str(target).encode()).decode(),
            },
        )
        self._etcd_post("/v3/kv/compaction", {"revision": str(target), "physical": True})
        return target

    def expire_resource_versions(self, timeout: float = 60) -> int:
        """Make every resourceVersion issued so far too old, for lists and watches alike.

        Compacts etcd, then restarts the API server so its watch cache starts over at the
        current revision: what clients see after a compaction followed by an apiserver
        rollout or failover. Returns the compacted revision.
        """
        revision = self.compact_etcd()
        self.restart_apiserver(timeout)
        return revision

    # --- kube-apiserver --------------------------------------------------------------------

    def _apiserver_args(self) -> list[str]:
        assert self.pki is not None
        pki = self.pki
        return [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.ports.apiserver}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_cert}",
            # An aggregation front proxy's settings, as real clusters have; delegated authn of
            # kube-controller-manager reads them (no cert with the allowed name is ever issued).
            f"--requestheader-client-ca-file={pki.ca_cert}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--authorization-mode=Node,RBAC",
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-account-key-file={pki.service_account_pub}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            "--profiling=false",
            *self._release_apiserver_args(),
            *self._audit_args(),
            *self.extra_apiserver_args,
        ]

    def _release_apiserver_args(self) -> list[str]:
        """The flags that only some releases know (hack/testenv/releases spans 1.21 to now)."""
        args = []
        if "--shutdown-watch-termination-grace-period" in self.binaries.help_text(
            self.binaries.kube_apiserver
        ):
            # On SIGTERM, end open watches (clients see them close and re-watch) instead of
            # leaving net/http's shutdown to wait for them until it times out (from 1.27).
            args.append("--shutdown-watch-termination-grace-period=2s")
        if self.binaries.minor >= 37:
            # 1.37 refuses a loopback advertise address for the endpoint reconciler of the
            # `kubernetes` Service ("may not be in the loopback range"); nothing here reads
            # those endpoints.
            args.append("--endpoint-reconciler-type=none")
        return args

    def _audit_args(self) -> list[str]:
        if self.audit_policy is None or self.audit_log is None:
            return []
        policy = self.workdir / "audit-policy.json"
        # JSON is YAML: the API server reads the policy file either way.
        policy.write_text(json.dumps(self.audit_policy, indent=2), encoding="utf-8")
        return [
            f"--audit-policy-file={policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
            # The default "blocking" mode: each entry is written before the response is sent,
            # so a reader sees a request as soon as its client does.
            "--audit-log-mode=blocking",
            # No rotation during a run (lumberjack would otherwise rotate at 100 MB).
            "--audit-log-maxsize=100000",
        ]

    def start_apiserver(self, timeout: float = 60) -> None:
        began = time.monotonic()
        self.apiserver.argv = self._apiserver_args()
        self.apiserver.start()
        _wait_for("kube-apiserver", self.apiserver_ready, timeout, self.apiserver)
        self.startup_seconds["kube-apiserver"] = time.monotonic() - began

    def stop_apiserver(self) -> None:
        self.apiserver.stop()

    def kill_apiserver(self) -> None:
        """SIGKILL: a crash, no graceful shutdown of open connections."""
        self.apiserver.kill()

    def restart_apiserver(self, timeout: float = 60) -> None:
        """Stop and start again on the same port with the same etcd (clients keep their URL)."""
        self.stop_apiserver()
        self.start_apiserver(timeout)

    def _ssl_context(self) -> ssl.SSLContext:
        assert self.pki is not None
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        context.load_cert_chain(str(self.pki.admin.cert), str(self.pki.admin.key))
        return context

    def apiserver_ready(self) -> bool:
        """GET /readyz as admin is 200 (etcd reachable, bootstrap RBAC in place)."""
        try:
            with urllib.request.urlopen(
                f"{self.server}/readyz", timeout=2, context=self._ssl_context()
            ) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.HTTPError):
            return False

    # --- kube-controller-manager -----------------------------------------------------------

    def _controller_manager_args(self) -> list[str]:
        assert self.pki is not None
        kubeconfig = self.workdir / "controller-manager.kubeconfig"
        return [
            str(self.binaries.kube_controller_manager),
            f"--kubeconfig={kubeconfig}",
            # Delegated authn/authz for its own /healthz and /metrics, as in a real cluster.
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.ports.controller_manager}",
            f"--cert-dir={self.workdir / 'controller-manager-certs'}",
            f"--controllers={','.join(self._controller_names())}",
            # Each controller acts as its own ServiceAccount (RBAC of the bootstrap policy).
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={self.pki.service_account_key}",
            f"--root-ca-file={self.pki.ca_cert}",
            "--leader-elect=false",
            # Real clusters use 15s; tests should not wait that long for the HPA to react.
            "--horizontal-pod-autoscaler-sync-period=1s",
            "--profiling=false",
            *self._release_controller_manager_args(),
            *self.extra_controller_manager_args,
        ]

    def _controller_names(self) -> list[str]:
        """CONTROLLERS as this release names them (the `--help` of 1.28+ lists the new names)."""
        kcm = self.binaries.kube_controller_manager
        if CONTROLLERS[0] in self.binaries.help_text(kcm):
            return list(CONTROLLERS)
        return [LEGACY_CONTROLLER_NAMES[name] for name in CONTROLLERS]

    def _release_controller_manager_args(self) -> list[str]:
        if self.binaries.minor < 22:
            # Until 1.21 it also serves plain HTTP on 0.0.0.0:10252 unless told not to, which
            # would collide with every other control plane on the machine.
            return ["--port=0"]
        return []

    def start_controller_manager(self, timeout: float = 60) -> None:
        began = time.monotonic()
        self.controller_manager.argv = self._controller_manager_args()
        self.controller_manager.start()
        _wait_for(
            "kube-controller-manager",
            self._controller_manager_healthy,
            timeout,
            self.controller_manager,
        )
        self.startup_seconds["kube-controller-manager"] = time.monotonic() - began

    def stop_controller_manager(self) -> None:
        self.controller_manager.stop()

    def restart_controller_manager(self, timeout: float = 60) -> None:
        """What the kubelet does after a long API outage; call it once the API is back.

        A real cluster runs kube-controller-manager with leader election, so an outage longer
        than its renew deadline (10 s) makes it exit and start afresh. This one runs without,
        and after a 30 s outage its clients were seen to stay silent for over a minute (the
        HPA controller wrote no status), which broke later tests that rely on it.
        """
        self.stop_controller_manager()
        self.start_controller_manager(timeout)

    def _controller_manager_healthy(self) -> bool:
        return _self_signed_healthz(self.ports.controller_manager)

    # --- kube-scheduler and kwok (nodes and pods) -----------------------------------------

    def _scheduler_args(self) -> list[str]:
        kubeconfig = self.workdir / "scheduler.kubeconfig"
        return [
            str(self.binaries.kube_scheduler),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.ports.scheduler}",
            f"--cert-dir={self.workdir / 'scheduler-certs'}",
            "--leader-elect=false",
            "--profiling=false",
        ]

    def _kwok_args(self) -> list[str]:
        config = self.workdir / "kwok.yaml"
        config.write_text(kwok.config_yaml(), encoding="utf-8")
        return [
            str(self.binaries.kwok),
            f"--kubeconfig={self.kubeconfig}",
            f"--config={config}",
            f"--manage-nodes-with-annotation-selector={kwok.NODE_SELECTOR}",
            f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}",
        ]

    def start_nodes(self, timeout: float = 60) -> None:
        """Start kube-scheduler and kwok, register the fake nodes, wait until they are Ready.

        Both processes start at once and the nodes are created meanwhile, so the whole costs
        about as long as the slower of the two takes to start (about a second).
        """
        began = time.monotonic()
        self.scheduler.argv = self._scheduler_args()
        self.scheduler.start()
        self.kwok.argv = self._kwok_args()
        self.kwok.start()
        with self.api_client() as api:
            core = k8s.CoreV1Api(api)
            for index in range(self.nodes):
                try:
                    core.create_node(k8s.V1Node.model_validate(kwok.node_manifest(index)))
                except k8s.ApiException as exc:
                    if exc.status != 409:  # `make cluster` again on the same directory
                        raise
            _wait_for("kube-scheduler", self._scheduler_healthy, timeout, self.scheduler)
            _wait_for(
                f"kwok ({self.nodes} nodes Ready"
                + (" and untainted)" if self.with_controller_manager else ")"),
                lambda: self._ready_nodes(core) >= self.nodes,
                timeout,
                self.kwok,
            )
        self.startup_seconds["nodes"] = time.monotonic() - began

    def _ready_nodes(self, core: k8s.CoreV1Api) -> int:
        """Nodes a pod can be scheduled on: Ready, and without the not-ready taint that
        admission put on them (the node lifecycle controller lifts it after it sees them Ready,
        which took seconds on a loaded machine: a plane that said ready before that left the
        first pods Pending). Without a controller manager nobody lifts it: Ready is all."""
        ready = 0
        for node in core.list_node(label_selector="type=kwok").items:
            conditions = (node.status.conditions if node.status else None) or []
            taints = [
                t
                for t in (node.spec.taints if node.spec else None) or ()
                if t.key.startswith("node.kubernetes.io/")
            ]
            schedulable = not taints or not self.with_controller_manager
            if schedulable and any(c.type == "Ready" and c.status == "True" for c in conditions):
                ready += 1
        return ready

    def stop_nodes(self) -> None:
        """Stop kwok and the scheduler (the Node objects stay)."""
        self.kwok.stop()
        self.scheduler.stop()

    def _scheduler_healthy(self) -> bool:
        return _self_signed_healthz(self.ports.scheduler)

    def processes(self) -> Iterable[ManagedProcess]:
        return (self.etcd, self.apiserver, self.controller_manager, self.scheduler, self.kwok)


def _self_signed_healthz(port: int) -> bool:
    """GET https://127.0.0.1:<port>/healthz of a component serving a self-signed certificate
    (made in its --cert-dir); /healthz is public (--authorization-always-allow-paths)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(
            f"https://127.0.0.1:{port}/healthz", timeout=2, context=context
        ) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.HTTPError):
        return False
