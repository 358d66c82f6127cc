"""Least privilege on the real API server (docs/install.md): the namespaced install's RBAC, with
`spa run` working on nothing more (ClusterCalendars, cluster-scoped, are the one thing it reads
cluster-wide, and without that grant it refuses to start, saying so), and the optional
admission policy that lets the controller's ServiceAccount write only the HPAs labelled as its
own."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa.controller.capacity import DEPLOYMENTS, PLACEHOLDER_IMAGE
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL
from spa.controller.exitcodes import EXIT_FORBIDDEN
from spa.kube import HPA_V2, ApiError, connect_blocking
from tests.builders import autoscaler, deployment
from tests.integration.harness import Kube
from tests.integration.processes import CONTROLLER_NAMESPACE, spa_run, wait_for

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CONTROLLER_ROLE = "scheduled-pod-autoscaler"
CLUSTER_CALENDARS_ROLE = "scheduled-pod-autoscaler-clustercalendars"


def rendered(cluster: Any, directory: str) -> list[dict[str, Any]]:
    result = cluster.run_kubectl("kustomize", str(REPO / directory), check=True)
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def hpa(name: str, namespace: str, *, labelled: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labelled:
        metadata["labels"] = {MANAGED_BY_LABEL: FIELD_MANAGER}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": metadata,
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 2,
        },
    }


def pause(name: str, *, labelled: bool) -> dict[str, Any]:
    """A Deployment of one pause pod in the controller's namespace, as a placeholder is."""
    body = deployment(name=name, namespace=CONTROLLER_NAMESPACE, replicas=0)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = PLACEHOLDER_IMAGE
    if labelled:
        body["metadata"]["labels"] = {MANAGED_BY_LABEL: FIELD_MANAGER}
    return body


@pytest.fixture
def other_namespace(cluster: Any, namespace: str) -> Iterator[str]:
    name = f"{namespace[:50]}-other"
    cluster.run_kubectl("create", "namespace", name, check=True)
    yield name
    cluster.run_kubectl("delete", "namespace", name, "--wait=false")


def test_the_namespaced_install_grants_only_the_watched_namespaces_and_suffices(
    cluster: Any,
    controller_kubeconfig: Path,
    kube: Kube,
    namespace: str,
    other_namespace: str,
    tmp_path: Path,
) -> None:
    docs = rendered(cluster, "config/overlays/namespaced")
    cluster_bindings = [
        d
        for d in docs
        if d["kind"] == "ClusterRoleBinding" and d["roleRef"]["name"] == CONTROLLER_ROLE
    ]
    assert cluster_bindings == []
    # The one cluster-wide grant: reading ClusterCalendars.
    calendar_role = next(
        d
        for d in docs
        if d["kind"] == "ClusterRole" and d["metadata"]["name"] == CLUSTER_CALENDARS_ROLE
    )
    assert calendar_role["rules"] == [
        {
            "apiGroups": ["autoscaling.d-kuro.github.io"],
            "resources": ["clustercalendars"],
            "verbs": ["list", "watch"],
        }
    ]
    calendar_binding = next(
        d
        for d in docs
        if d["kind"] == "ClusterRoleBinding" and d["roleRef"]["name"] == CLUSTER_CALENDARS_ROLE
    )
    bindings = [
        d for d in docs if d["kind"] == "RoleBinding" and d["roleRef"]["name"] == CONTROLLER_ROLE
    ]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["payments", "shop"]
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert {"--namespace=shop", "--namespace=payments"} <= set(args)

    # The overlay's binding, for this test's namespace and a ServiceAccount of its own (the
    # shared one is bound cluster-wide for the other tests).
    account = f"spa-ns-{namespace[-6:]}"
    binding = next(b for b in bindings if b["metadata"]["namespace"] == "shop")
    binding["metadata"]["namespace"] = namespace
    binding["subjects"][0]["name"] = account
    cluster.service_account_kubeconfig(CONTROLLER_NAMESPACE, account)  # creates the account
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(binding), check=True)
    # Placeholder Deployments: written in the controller's namespace only, by a Role there.
    capacity = next(
        d
        for d in docs
        if d["kind"] == "RoleBinding" and d["roleRef"]["name"] == f"{CONTROLLER_ROLE}-capacity"
    )
    assert capacity["metadata"]["namespace"] == CONTROLLER_NAMESPACE
    capacity["metadata"]["name"] = f"{CONTROLLER_ROLE}-capacity-{account}"
    capacity["subjects"][0]["name"] = account
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(capacity), check=True)
    user = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:{account}"

    def can(verb: str, resource: str, where: str) -> bool:
        answer = cluster.run_kubectl("auth", "can-i", verb, resource, "-n", where, "--as", user)
        return answer.stdout.strip() == "yes"

    assert can("list", "scheduledpodautoscalers.autoscaling.d-kuro.github.io", namespace)
    assert can("patch", "horizontalpodautoscalers.autoscaling", namespace)
    for verb, resource in [
        ("list", "scheduledpodautoscalers.autoscaling.d-kuro.github.io"),
        ("create", "horizontalpodautoscalers.autoscaling"),
        ("patch", "horizontalpodautoscalers.autoscaling"),
        ("delete", "deployments.apps"),
    ]:
        assert not can(verb, resource, other_namespace), (verb, resource)
    # Neither a Deployment write nor a pod template read in a watched namespace by default.
    assert not can("get", "deployments.apps", namespace)
    assert not can("create", "deployments.apps", namespace)
    assert can("create", "deployments.apps", CONTROLLER_NAMESPACE)

    kubeconfig = cluster.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, account, path=tmp_path / "sa.kubeconfig", create=False
    )
    kube.create(autoscaler(name="web", namespace=namespace))
    # Without the ClusterCalendars grant, `spa run` refuses to start and says why.
    log = tmp_path / "spa-run-forbidden.log"
    with spa_run(kubeconfig, namespace, log=log) as process:
        assert process.wait(timeout=60) == EXIT_FORBIDDEN
    assert "not allowed to list clustercalendars.autoscaling.d-kuro.github.io/v1" in (
        log.read_text()
    )
    calendar_binding["metadata"]["name"] = f"{CLUSTER_CALENDARS_ROLE}-{account}"
    calendar_binding["subjects"][0]["name"] = account
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(calendar_role), check=True)
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(calendar_binding), check=True)
    try:
        assert can("list", "clustercalendars.autoscaling.d-kuro.github.io", namespace)
        assert not can("list", "calendars.autoscaling.d-kuro.github.io", other_namespace)
        with spa_run(kubeconfig, namespace, log=tmp_path / "spa-run.log") as process:
            wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=60, what="HPA")
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
    finally:
        cluster.run_kubectl(
            "delete",
            "clusterrolebinding",
            calendar_binding["metadata"]["name"],
            "--ignore-not-found",
        )


@pytest.fixture
def admission_policy(cluster: Any) -> Iterator[None]:
    path = str(REPO / "config" / "policy" / "hpa_writes.yaml")
    cluster.run_kubectl("apply", "--server-side", "-f", path, check=True)
    yield
    cluster.run_kubectl("delete", "-f", path, "--ignore-not-found")


def test_the_admission_policy_lets_the_controller_write_only_its_own_hpas(
    cluster: Any,
    controller_kubeconfig: Path,
    admission_policy: None,
    kube: Kube,
    namespace: str,
    tmp_path: Path,
) -> None:
    client = connect_blocking(kubeconfig=str(controller_kubeconfig))
    try:
        # Policies take effect once the API server has loaded them: probe until denied.
        def denied() -> ApiError | None:
            try:
                client.create(HPA_V2, namespace, hpa("probe", namespace, labelled=False))
            except ApiError as error:
                return error if error.status in (403, 422) else None
            kube.delete(HPA_V2, namespace, "probe")  # the controller may not delete
            return None

        refusal = wait_for(denied, within=30, what="the policy in force")
        assert "managed-by=scheduled-pod-autoscaler" in refusal.message
        # Somebody else's HPA cannot be taken over by adding the label.
        kube.create(hpa("theirs", namespace, labelled=False))
        with pytest.raises(ApiError) as taken_over:
            client.patch(
                HPA_V2,
                namespace,
                "theirs",
                {"metadata": {"labels": {MANAGED_BY_LABEL: FIELD_MANAGER}}},
                patch_type="merge",
                field_manager=FIELD_MANAGER,
            )
        assert "not labelled as managed by it" in taken_over.value.message
        # An administrator is not concerned.
        kube.create(hpa("admin", namespace, labelled=False))

        # Node capacity: the controller may write only Deployments of pause pods labelled as
        # its own, in its own namespace (docs/install.md, "Placeholder pods"); RBAC alone
        # keeps it out of every other namespace.
        home = CONTROLLER_NAMESPACE

        def deployment_denied() -> ApiError | None:
            try:
                client.create(DEPLOYMENTS, home, pause(f"probe-{namespace[-6:]}", labelled=False))
            except ApiError as error:
                return error if error.status in (403, 422) else None
            kube.delete(DEPLOYMENTS, home, f"probe-{namespace[-6:]}")
            return None

        refusal = wait_for(deployment_denied, within=30, what="the capacity policy in force")
        assert "managed-by=scheduled-pod-autoscaler" in refusal.message
        ours = pause(f"placeholder-{namespace[-6:]}", labelled=True)
        client.create(DEPLOYMENTS, home, ours)
        client.delete(DEPLOYMENTS, home, ours["metadata"]["name"])
        # Labelled, but another image: it could run anything with the controller's writes.
        other = pause(f"other-{namespace[-6:]}", labelled=True)
        other["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/app:1"
        with pytest.raises(ApiError) as not_pause:
            client.create(DEPLOYMENTS, home, other)
        assert "only Deployments of pause pods" in not_pause.value.message
        # Somebody's Deployment in the controller's namespace is neither changed nor deleted.
        theirs = f"theirs-{namespace[-6:]}"
        kube.client.create(DEPLOYMENTS, home, deployment(name=theirs, namespace=home))
        try:
            for write in (
                lambda: client.patch(
                    DEPLOYMENTS,
                    home,
                    theirs,
                    {"spec": {"replicas": 0}},
                    patch_type="merge",
                    field_manager=FIELD_MANAGER,
                ),
                lambda: client.delete(DEPLOYMENTS, home, theirs),
            ):
                with pytest.raises(ApiError) as refused:
                    write()
                assert "scheduled-pod-autoscaler-capacity-writes" in refused.value.message
            assert kube.get(DEPLOYMENTS, home, theirs)["spec"]["replicas"] == 1
        finally:
            kube.delete(DEPLOYMENTS, home, theirs)
        # Elsewhere, RBAC refuses before any policy is asked.
        kube.client.create(DEPLOYMENTS, namespace, deployment(name="app", namespace=namespace))
        with pytest.raises(ApiError) as forbidden:
            client.delete(DEPLOYMENTS, namespace, "app")
        assert forbidden.value.status == 403
        assert "cannot delete resource" in forbidden.value.message
    finally:
        client.close()
    # And the controller itself works as before: create, then patch (incl. its dry runs).
    kube.create(autoscaler(name="web", namespace=namespace))
    with spa_run(controller_kubeconfig, namespace, log=tmp_path / "spa-run.log") as process:
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=60, what="HPA")
        kube.client.patch(
            HPA_V2,
            namespace,
            "web",
            {"spec": {"minReplicas": 1}},
            patch_type="merge",
            field_manager="an-operator",
        )
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="reverted")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
