"""Placeholder pods under exactly the placeholder option's RBAC, on every release of `make
test-compat`, and the guarantee docs/install.md ("Least privilege", "Placeholder pods") gives
without the ValidatingAdmissionPolicy: from RBAC alone, the controller may write Deployments in
its own namespace and nowhere else, and may read, not change, the workloads it copies.

Before 1.30 the API server serves no ValidatingAdmissionPolicy (GA in 1.30; the project supports
1.21), so on those releases this is the only guarantee there is. The test applies the install
and config/components/placeholders as a user would, and never the policy: on newer releases it
shows the same, RBAC without the policy.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from spa.controller.capacity import DEPLOYMENTS, PLACEHOLDER_LABEL, placeholder_name
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import BlockingKubeClient, Forbidden, connect_blocking
from tests.builders import autoscaler, deployment, schedule
from tests.compat.install import (
    CRD_NAMES,
    get_or_none,
    install_command,
    kubectl,
    manifest,
)
from tests.integration.processes import CONTROLLER_NAMESPACE, log_lines, spa_run, wait_for
from tests.testenv import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.slow, pytest.mark.compat]

REPO = Path(__file__).resolve().parents[2]
PLACEHOLDERS = REPO / "config" / "components" / "placeholders" / "placeholders.yaml"
SERVICE_ACCOUNT = "scheduled-pod-autoscaler"
# ValidatingAdmissionPolicy is served (GA) from this minor on (docs/install.md, "Least privilege").
POLICY_MINOR = 30
NAMESPACE = "shop"


def serves_admission_policies(plane: ControlPlane) -> bool:
    """Whether the API server serves ValidatingAdmissionPolicy at any version (asked, so the
    test says which guarantee it ran under)."""
    result = plane.run_kubectl(
        "api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name"
    )
    assert result.returncode == 0, result.stderr
    return "validatingadmissionpolicies.admissionregistration.k8s.io" in result.stdout.split()


def capacity_ready(admin: BlockingKubeClient) -> dict[str, Any] | None:
    status = admin.get(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, "web").get("status") or {}
    conditions: list[dict[str, Any]] = status.get("conditions") or []
    return next((c for c in conditions if c["type"] == "CapacityReady"), None)


def refused(action: Callable[[], object]) -> bool:
    """True when the API server answers 403 (RBAC) to `action`."""
    try:
        action()
    except Forbidden:
        return True
    return False


def test_placeholders_stay_in_the_controller_namespace_by_rbac_alone(
    control_plane_factory: Callable[..., ControlPlane], tmp_path: Path
) -> None:
    plane = control_plane_factory(nodes=0)
    minor = plane.binaries.minor
    if minor < POLICY_MINOR:
        assert not serves_admission_policies(plane)
    install = plane.run_kubectl(*install_command("install", minor))
    assert install.returncode == 0, install.stderr
    kubectl(plane, "apply", "-f", str(PLACEHOLDERS))
    kubectl(
        plane,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *(f"crd/{name}" for name in CRD_NAMES),
    )

    # A window starting in 20 minutes with a 30-minute capacity lead: the lead is running now,
    # so the placeholder is due at once; the window itself is not.
    start = (datetime.now(UTC) + timedelta(minutes=20)).replace(second=0, microsecond=0)
    end = start + timedelta(minutes=30)
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        deployment(
            name="web", namespace=NAMESPACE, replicas=1, requests={"cpu": "250m", "memory": "64Mi"}
        ),
        autoscaler(
            name="web",
            namespace=NAMESPACE,
            minReplicas=1,
            capacity={"leadTime": "30m", "mode": "Placeholder"},
        ),
        schedule(
            name="peak",
            namespace=NAMESPACE,
            target="web",
            type="Daily",
            startTime=start.strftime("%H:%M"),
            endTime=end.strftime("%H:%M"),
            timeZone="UTC",
            minReplicas=3,
        ),
    ]
    kubectl(plane, "apply", "-f", "-", input=manifest(objects))

    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    sa_kubeconfig = plane.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, SERVICE_ACCOUNT, create=False
    )
    controller = connect_blocking(kubeconfig=str(sa_kubeconfig))
    log = tmp_path / "spa-run.log"
    name = placeholder_name(NAMESPACE, "web")
    try:
        with spa_run(
            sa_kubeconfig, None, "--capacity-namespace", CONTROLLER_NAMESPACE, log=log
        ) as process:
            placeholder = wait_for(
                lambda: get_or_none(admin, DEPLOYMENTS, CONTROLLER_NAMESPACE, name),
                within=60,
                what="the placeholder Deployment in the controller's namespace",
            )
            assert placeholder["metadata"]["labels"][PLACEHOLDER_LABEL] == "web"
            assert placeholder["spec"]["replicas"] == 2  # 3 in the window, 1 running
            # Held: False PlaceholderRunning until the window raises the target
            # (docs/schedules.md, "Node capacity").
            wait_for(
                lambda: (c := capacity_ready(admin)) and c["reason"] == "PlaceholderRunning",
                within=30,
                what="CapacityReady PlaceholderRunning",
            )
            # Only placeholders were written to: nothing in the SPA's namespace is an apps write.
            assert [
                d["metadata"]["name"] for d in admin.list(DEPLOYMENTS, namespace=NAMESPACE).items
            ] == ["web"]
            web = admin.get(DEPLOYMENTS, NAMESPACE, "web")
            assert web["spec"]["replicas"] == 1

            # What a compromised controller could do with its own credentials, asked of RBAC
            # alone: write Deployments of another namespace (or a user's, or create one there).
            intruder = deployment(name="intruder", namespace=NAMESPACE, replicas=1)
            assert refused(lambda: controller.create(DEPLOYMENTS, NAMESPACE, intruder))
            assert refused(lambda: controller.delete(DEPLOYMENTS, NAMESPACE, "web"))
            assert refused(
                lambda: controller.patch(
                    DEPLOYMENTS,
                    NAMESPACE,
                    "web",
                    {"spec": {"replicas": 0}},
                    patch_type="merge",
                    field_manager="intruder",
                )
            )
            assert refused(lambda: controller.list(DEPLOYMENTS, namespace=NAMESPACE))
            # It may read the template it copies (the option's `get`), and nothing more.
            assert (
                controller.get(DEPLOYMENTS, NAMESPACE, "web")["metadata"]["uid"]
                == web["metadata"]["uid"]
            )
            assert admin.get(DEPLOYMENTS, NAMESPACE, "web")["spec"]["replicas"] == 1

            # The SPA gone: its placeholder goes too.
            admin.delete(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, "web")
            wait_for(
                lambda: get_or_none(admin, DEPLOYMENTS, CONTROLLER_NAMESPACE, name) is None,
                within=60,
                what="the placeholder removed with its SPA",
            )
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
    finally:
        controller.close()
        admin.close()
    lines = log_lines(log)
    errors = [line for line in lines if line.get("level") in ("error", "critical")]
    assert not errors, errors
