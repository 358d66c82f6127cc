"""`spa run --metrics-secure` against the real API server: HTTPS, and access judged by the API
server's TokenReview and SubjectAccessReview with the RBAC of config/overlays/secure-metrics."""

from __future__ import annotations

import signal
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import autoscaler
from tests.integration.harness import Kube
from tests.integration.processes import spa_run, wait_for

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
AUTH = REPO / "config" / "overlays" / "secure-metrics" / "metrics_auth.yaml"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def metrics_auth(cluster: Any) -> Iterator[None]:
    cluster.run_kubectl("apply", "--server-side", "-f", str(AUTH), check=True)
    yield
    # Left in place for other sessions' tests would be harmless; removed to keep RBAC minimal.
    cluster.run_kubectl("delete", "-f", str(AUTH), "--ignore-not-found")


def test_metrics_over_https_only_for_identities_allowed_to_get_them(
    cluster: Any,
    controller_kubeconfig: Path,
    metrics_auth: None,
    kube: Kube,
    namespace: str,
    tmp_path: Path,
) -> None:
    reader = cluster.service_account_token(namespace, "prometheus")
    nobody = cluster.service_account_token(namespace, "nobody")
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"metrics-reader-{namespace}"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "scheduled-pod-autoscaler-metrics-reader",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": namespace}],
    }
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(binding), check=True)
    kube.create(autoscaler(name="web", namespace=namespace))
    port = free_port()
    url = f"https://127.0.0.1:{port}/metrics"
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # the certificate is self-signed

    def scrape(token: str | None) -> tuple[int, str]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10, context=insecure) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, ""

    try:
        with spa_run(
            controller_kubeconfig,
            namespace,
            "--metrics-secure",
            "--metrics-addr",
            f"127.0.0.1:{port}",
            log=tmp_path / "spa-run.log",
        ) as process:
            wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=60, what="HPA")
            _, body = wait_for(
                lambda: (answer := scrape(reader))[0] == 200 and answer,
                within=30,
                what="metrics for the reader",
            )
            assert f'namespace="{namespace}"' in body
            assert "spa_reconcile_total" in body
            assert scrape(None) == (401, "")
            assert scrape("not-a-token") == (401, "")
            assert scrape(nobody) == (403, "")
            # In clear text the port answers nothing.
            with pytest.raises((urllib.error.URLError, ConnectionError)):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
    finally:
        cluster.run_kubectl("delete", "clusterrolebinding", binding["metadata"]["name"])
