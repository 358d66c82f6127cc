"""The local control plane is a real cluster: versions, RBAC, tokens, GC, the HPA controller.

These tests prove the environment, not the project: if one fails, every other integration
test's result is suspect.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from kubernetes import client as k8s

from tests.testenv import ControlPlane, MissingBinariesError, find_binaries, kubernetes_version
from tests.testenv.fixtures import RunKubectl

pytestmark = pytest.mark.integration

T = TypeVar("T")


def eventually(check: Callable[[], T | None], timeout: float = 30, interval: float = 0.2) -> T:
    """Poll until check() returns something truthy; fail with the timeout otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        time.sleep(interval)


def test_missing_binaries_fail_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(MissingBinariesError, match="make testenv"):
        find_binaries(tmp_path)


def test_started_within_budget(control_plane: ControlPlane) -> None:
    # 20 s is the budget with cached binaries; the assertion leaves room for a loaded machine.
    print(f"control plane startup: {control_plane.startup_seconds}")
    assert control_plane.startup_seconds["total"] < 60


def test_reports_the_pinned_release(api_client: k8s.ApiClient, run_kubectl: RunKubectl) -> None:
    assert k8s.VersionApi(api_client).get_code().git_version == kubernetes_version()
    out = run_kubectl("version", "-o", "json", check=True).stdout
    assert json.loads(out)["serverVersion"]["gitVersion"] == kubernetes_version()


def test_admin_is_a_client_certificate_in_system_masters(run_kubectl: RunKubectl) -> None:
    whoami = json.loads(run_kubectl("auth", "whoami", "-o", "json", check=True).stdout)
    user = whoami["status"]["userInfo"]
    assert user["username"] == "spa-testenv-admin"
    assert "system:masters" in user["groups"]


def test_service_account_without_rbac_is_refused_then_allowed_by_a_binding(
    control_plane: ControlPlane, namespace: str, api_client: k8s.ApiClient, run_kubectl: RunKubectl
) -> None:
    kubeconfig = control_plane.service_account_kubeconfig(namespace, "nobody")
    whoami = json.loads(
        run_kubectl("auth", "whoami", "-o", "json", kubeconfig=kubeconfig, check=True).stdout
    )
    assert whoami["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:nobody"

    with control_plane.api_client(kubeconfig) as sa_api:
        with pytest.raises(k8s.ApiException) as refused:
            k8s.CoreV1Api(sa_api).list_namespaced_config_map(namespace)
        assert refused.value.status == 403

        rbac = k8s.RbacAuthorizationV1Api(api_client)
        rbac.create_namespaced_role(
            namespace,
            k8s.V1Role(
                metadata=k8s.V1ObjectMeta(name="read-configmaps"),
                rules=[k8s.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["list"])],
            ),
        )
        rbac.create_namespaced_role_binding(
            namespace,
            k8s.V1RoleBinding(
                metadata=k8s.V1ObjectMeta(name="read-configmaps"),
                role_ref=k8s.V1RoleRef(
                    api_group="rbac.authorization.k8s.io", kind="Role", name="read-configmaps"
                ),
                subjects=[
                    k8s.RbacV1Subject(kind="ServiceAccount", name="nobody", namespace=namespace)
                ],
            ),
        )
        # RBAC reads through an informer: the new binding is effective within moments.
        eventually(lambda: _can_list_configmaps(sa_api, namespace), timeout=10)
        with pytest.raises(k8s.ApiException) as still_refused:
            k8s.CoreV1Api(sa_api).list_namespaced_secret(namespace)
        assert still_refused.value.status == 403


def _can_list_configmaps(api: k8s.ApiClient, namespace: str) -> bool:
    try:
        k8s.CoreV1Api(api).list_namespaced_config_map(namespace)
    except k8s.ApiException as exc:
        if exc.status == 403:
            return False
        raise
    return True


def test_garbage_collector_deletes_owned_objects(api_client: k8s.ApiClient, namespace: str) -> None:
    core = k8s.CoreV1Api(api_client)
    owner = core.create_namespaced_config_map(
        namespace, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="owner"))
    )
    assert owner.metadata is not None
    core.create_namespaced_config_map(
        namespace,
        k8s.V1ConfigMap(
            metadata=k8s.V1ObjectMeta(
                name="owned",
                owner_references=[
                    k8s.V1OwnerReference(
                        api_version="v1", kind="ConfigMap", name="owner", uid=owner.metadata.uid
                    )
                ],
            )
        ),
    )
    core.delete_namespaced_config_map("owner", namespace)
    eventually(lambda: _gone(lambda: core.read_namespaced_config_map("owned", namespace)))


def _gone(read: Callable[[], object]) -> bool:
    try:
        read()
    except k8s.ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


def _deployment(name: str, replicas: int) -> k8s.V1Deployment:
    labels = {"app": name}
    return k8s.V1Deployment(
        metadata=k8s.V1ObjectMeta(name=name),
        spec=k8s.V1DeploymentSpec(
            replicas=replicas,
            selector=k8s.V1LabelSelector(match_labels=labels),
            template=k8s.V1PodTemplateSpec(
                metadata=k8s.V1ObjectMeta(labels=labels),
                spec=k8s.V1PodSpec(
                    containers=[
                        k8s.V1Container(
                            name="app",
                            image="registry.k8s.io/pause:3.10",
                            resources=k8s.V1ResourceRequirements(requests={"cpu": "10m"}),
                        )
                    ]
                ),
            ),
        ),
    )


def test_deployment_controller_makes_a_replicaset_that_gc_removes_with_it(
    api_client: k8s.ApiClient, namespace: str
) -> None:
    apps = k8s.AppsV1Api(api_client)
    apps.create_namespaced_deployment(namespace, _deployment("web", 2))
    replica_sets = eventually(lambda: apps.list_namespaced_replica_set(namespace).items)
    assert replica_sets[0].spec.replicas == 2
    assert replica_sets[0].metadata.owner_references[0].name == "web"  # type: ignore[union-attr,index]
    # Pods exist (Pending forever: there are no nodes and no scheduler, by design).
    eventually(lambda: len(k8s.CoreV1Api(api_client).list_namespaced_pod(namespace).items) == 2)

    apps.delete_namespaced_deployment("web", namespace)
    eventually(lambda: not apps.list_namespaced_replica_set(namespace).items)


def test_hpa_controller_enforces_min_and_max_replicas(
    api_client: k8s.ApiClient, namespace: str
) -> None:
    apps = k8s.AppsV1Api(api_client)
    autoscaling = k8s.AutoscalingV2Api(api_client)
    apps.create_namespaced_deployment(namespace, _deployment("web", 1))
    autoscaling.create_namespaced_horizontal_pod_autoscaler(
        namespace,
        k8s.V2HorizontalPodAutoscaler(
            metadata=k8s.V1ObjectMeta(name="web"),
            spec=k8s.V2HorizontalPodAutoscalerSpec(
                scale_target_ref=k8s.V2CrossVersionObjectReference(
                    api_version="apps/v1", kind="Deployment", name="web"
                ),
                min_replicas=1,
                max_replicas=10,
                metrics=[
                    k8s.V2MetricSpec(
                        type="Resource",
                        resource=k8s.V2ResourceMetricSource(
                            name="cpu",
                            target=k8s.V2MetricTarget(type="Utilization", average_utilization=50),
                        ),
                    )
                ],
            ),
        ),
    )
    # With no metrics API the controller can't compute a recommendation, but it still
    # enforces the bounds: raising minReplicas above spec.replicas scales the Deployment.
    autoscaling.patch_namespaced_horizontal_pod_autoscaler(
        "web", namespace, {"spec": {"minReplicas": 3}}
    )
    eventually(lambda: apps.read_namespaced_deployment("web", namespace).spec.replicas == 3)

    def desired() -> int | None:
        hpa = autoscaling.read_namespaced_horizontal_pod_autoscaler_status("web", namespace)
        return hpa.status.desired_replicas if hpa.status is not None else None

    eventually(lambda: desired() == 3)

    # And lowering maxReplicas below spec.replicas scales down at once (no stabilization).
    autoscaling.patch_namespaced_horizontal_pod_autoscaler(
        "web", namespace, {"spec": {"minReplicas": 1, "maxReplicas": 2}}
    )
    eventually(lambda: apps.read_namespaced_deployment("web", namespace).spec.replicas == 2)
