"""The fault tests use the integration tests' fixtures (tests/integration/conftest.py), and the
TLS-terminating fault proxy (tests/testenv/httpfaults.py) with the controller's own
ServiceAccount behind it."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import *  # noqa: F403
from tests.integration.conftest import __all__  # noqa: F401
from tests.integration.harness import REPO
from tests.testenv.httpfaults import HTTPFaultProxy


@pytest.fixture
def fault_proxy(control_plane: Any) -> Iterator[HTTPFaultProxy]:
    pki = control_plane.pki
    with HTTPFaultProxy(
        "127.0.0.1",
        control_plane.ports.apiserver,
        ca_cert=pki.ca_cert,
        serving_cert=pki.serving_cert,
        serving_key=pki.serving_key,
    ) as proxy:
        yield proxy


@pytest.fixture
def proxied_service_account(
    control_plane: Any, crds: None, fault_proxy: HTTPFaultProxy, tmp_path: Path
) -> Path:
    """The controller's ServiceAccount (config/rbac), its token, the fault proxy's URL."""
    control_plane.run_kubectl(
        "apply", "--server-side", "-k", str(REPO / "config" / "rbac"), check=True
    )
    return Path(
        control_plane.service_account_kubeconfig(
            "scheduled-pod-autoscaler",
            "scheduled-pod-autoscaler",
            create=False,
            server=fault_proxy.url,
            path=tmp_path / "controller-through-faults.kubeconfig",
        )
    )
