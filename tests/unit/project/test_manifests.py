"""The install manifests: current with the generator, valid for their Kubernetes versions, and
granting exactly what the controller needs.

Validation uses the real Kubernetes API schemas (tests/kubernetes_schemas.py): 1.25 (the first
release with CEL rules on by default) for the v1 manifests, 1.15 (the last without
apiextensions v1) for config/legacy, both strict, so an unknown or misplaced field fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from spa import __version__
from spa.controller.capacity import PLACEHOLDER_PRIORITY_CLASS
from spa.controller.options import add_run_arguments
from tests.kubernetes_schemas import validate

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "config"
NAMESPACE = "scheduled-pod-autoscaler"
GROUP = "autoscaling.d-kuro.github.io"

RECENT = "1.25"
LEGACY = "1.15"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_manifests", ROOT / "hack" / "generate_manifests.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _manifests(directory: str) -> list[Path]:
    return sorted(p for p in (CONFIG / directory).glob("*.yaml") if p.name != "kustomization.yaml")


def _install(directory: str = "install") -> list[dict[str, Any]]:
    return _documents(CONFIG / directory / "install.yaml")


def _one(documents: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}"
    return found[0]


# --- generated files ------------------------------------------------------------------------------


def test_committed_manifests_are_what_the_generator_makes() -> None:
    stale = _generator().stale_files()
    assert stale == [], f"stale generated files: {stale}; run `make manifests` and commit"


@pytest.mark.parametrize("directory", ["install", "legacy"])
def test_install_yaml_is_the_kustomize_rendering(directory: str) -> None:
    rendered = subprocess.run(
        [_generator().kubectl(), "kustomize", str(CONFIG / directory)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert (CONFIG / directory / "install.yaml").read_text() == rendered


def test_install_yaml_holds_every_resource() -> None:
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in _install())
    assert kinds == sorted(
        [
            ("Namespace", NAMESPACE),
            ("CustomResourceDefinition", f"scheduledpodautoscalers.{GROUP}"),
            ("CustomResourceDefinition", f"schedules.{GROUP}"),
            ("CustomResourceDefinition", f"calendars.{GROUP}"),
            ("CustomResourceDefinition", f"clustercalendars.{GROUP}"),
            ("ServiceAccount", NAMESPACE),
            ("ClusterRole", NAMESPACE),
            ("ClusterRoleBinding", NAMESPACE),
            ("Role", f"{NAMESPACE}-leader-election"),
            ("RoleBinding", f"{NAMESPACE}-leader-election"),
            ("Role", f"{NAMESPACE}-capacity"),
            ("RoleBinding", f"{NAMESPACE}-capacity"),
            ("ClusterRole", f"{NAMESPACE}-view"),
            ("ClusterRole", f"{NAMESPACE}-edit"),
            ("Deployment", NAMESPACE),
            ("Service", f"{NAMESPACE}-metrics"),
            ("NetworkPolicy", f"{NAMESPACE}-metrics"),
            ("PriorityClass", f"{NAMESPACE}-capacity"),
        ]
    )
    namespaced = {"ServiceAccount", "Role", "RoleBinding", "Deployment", "Service", "NetworkPolicy"}
    for document in _install():
        if document["kind"] in namespaced:
            assert document["metadata"]["namespace"] == NAMESPACE


def test_legacy_install_differs_only_in_the_crds_and_seccomp() -> None:
    def comparable(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for document in documents:
            if document["kind"] == "CustomResourceDefinition":
                continue
            if document["kind"] == "Deployment":
                pod = document["spec"]["template"]
                pod["metadata"].pop("annotations", None)
                pod["spec"]["securityContext"].pop("seccompProfile", None)
                for container in pod["spec"]["containers"]:
                    container["securityContext"].pop("seccompProfile", None)
            out.append(document)
        return out

    legacy = _install("legacy")
    assert comparable(legacy) == comparable(_install())
    crds = [d for d in legacy if d["kind"] == "CustomResourceDefinition"]
    assert [d["apiVersion"] for d in crds] == ["apiextensions.k8s.io/v1beta1"] * 4
    pod = _one(_install("legacy"), "Deployment", NAMESPACE)["spec"]["template"]
    assert pod["metadata"]["annotations"] == {
        "seccomp.security.alpha.kubernetes.io/pod": "runtime/default"
    }


# --- the real Kubernetes schemas ---------------------------------------------------------------


def _cases() -> list[tuple[str, str, dict[str, Any]]]:
    cases = []
    for directory, version in (
        ("crd", RECENT),
        ("rbac", RECENT),
        ("components/placeholders", RECENT),
        ("components/shards", RECENT),
        ("legacy", LEGACY),
    ):
        for path in _manifests(directory):
            if path.name == "install.yaml":
                continue
            for index, document in enumerate(_documents(path)):
                cases.append((f"{directory}/{path.name}#{index}", version, document))
    for directory, version in (("install", RECENT), ("legacy", LEGACY)):
        for index, document in enumerate(_install(directory)):
            cases.append((f"{directory}/install.yaml#{index}", version, document))
    return cases


@pytest.mark.parametrize(("where", "version", "document"), _cases())
def test_manifest_validates_against_kubernetes(
    where: str, version: str, document: dict[str, Any]
) -> None:
    assert validate(document, version) is None, where


def test_the_validation_catches_what_it_should() -> None:
    # The check itself must be able to fail: the modern seccomp field is unknown to 1.15, and
    # a misspelt CRD field is unknown everywhere.
    deployment = _one(_install(), "Deployment", NAMESPACE)
    assert validate(deployment, RECENT) is None
    assert "seccompProfile" in str(validate(deployment, LEGACY))
    crd = _one(_install(), "CustomResourceDefinition", f"schedules.{GROUP}")
    crd["spec"]["versions"][0]["additionalPrinterColumn"] = []
    assert validate(crd, RECENT) is not None


# --- RBAC ---------------------------------------------------------------------------------------


def _rules(kind: str, name: str) -> set[tuple[str, str, str]]:
    role = _one(_install(), kind, name)
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def _grant(groups: str, resources: str, verbs: str) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for group in groups.split(",")
        for resource in resources.split()
        for verb in verbs.split()
    }


def test_the_controller_role_is_exactly_what_it_needs() -> None:
    assert _rules("ClusterRole", NAMESPACE) == (
        _grant(GROUP, "scheduledpodautoscalers", "list watch")
        | _grant(GROUP, "calendars clustercalendars", "list watch")
        | _grant(GROUP, "schedules", "get list watch patch")
        | _grant(GROUP, "scheduledpodautoscalers/status schedules/status", "patch")
        | _grant(GROUP, "scheduledpodautoscalers/finalizers", "update")
        | _grant("autoscaling", "horizontalpodautoscalers", "get list watch create patch")
        | _grant("apps", "deployments/scale statefulsets/scale replicasets/scale", "get patch")
        | _grant("autoscaling.x-k8s.io", "capacitybuffers", "get list watch create patch delete")
        | _grant("", "events", "create patch")
    )


def test_deployments_are_written_in_the_controllers_namespace_only() -> None:
    """docs/install.md, "Placeholder pods": no Deployment write, and no read of a pod
    template, cluster-wide; placeholders are written with a Role of the controller's
    namespace."""
    role = _one(_install(), "Role", f"{NAMESPACE}-capacity")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert _rules("Role", f"{NAMESPACE}-capacity") == _grant(
        "apps", "deployments", "get list watch create patch delete"
    )
    cluster_wide = {
        rule
        for document in _install()
        if document["kind"] == "ClusterRole"
        for rule in _rules("ClusterRole", document["metadata"]["name"])
    }
    assert not {rule for rule in cluster_wide if rule[0] == "apps" and "/" not in rule[1]}


def test_placeholder_pods_get_a_priority_every_workload_preempts() -> None:
    """docs/schedules.md, "Node capacity": at or above cluster-autoscaler's expendable cutoff
    (-10), below the default of every workload (0), never preempting."""
    priority = _one(_install(), "PriorityClass", f"{NAMESPACE}-capacity")
    assert -10 <= priority["value"] < 0
    assert priority["preemptionPolicy"] == "Never"
    assert priority["globalDefault"] is False
    assert priority["metadata"]["name"] == PLACEHOLDER_PRIORITY_CLASS


def test_leader_election_is_one_lease_role_in_the_controllers_namespace() -> None:
    role = _one(_install(), "Role", f"{NAMESPACE}-leader-election")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert _rules("Role", f"{NAMESPACE}-leader-election") == _grant(
        "coordination.k8s.io", "leases", "get create update"
    )


def test_shards_list_leases_in_the_controllers_namespace_by_a_component_only() -> None:
    """docs/install.md, "Shards": the shards read each other's Leases (a list every 15 s);
    config/rbac, for one controller, never grants it, config/components/shards does, as a
    Role of the controller's namespace bound to its ServiceAccount."""
    rbac = [d for path in _manifests("rbac") for d in _documents(path)]
    assert not any(
        "list" in rule["verbs"] and "leases" in rule["resources"]
        for document in rbac
        for rule in document.get("rules", [])
    )
    component = _documents(CONFIG / "components" / "shards" / "shards.yaml")
    role = _one(component, "Role", f"{NAMESPACE}-shards")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list"]}
    ]
    binding = _one(component, "RoleBinding", f"{NAMESPACE}-shards")
    assert binding["metadata"]["namespace"] == NAMESPACE
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": f"{NAMESPACE}-shards",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": NAMESPACE, "namespace": NAMESPACE}
    ]
    kustomization = yaml.safe_load(
        (CONFIG / "components" / "shards" / "kustomization.yaml").read_text()
    )
    assert kustomization["kind"] == "Component"
    assert kustomization["resources"] == ["shards.yaml"]


def test_aggregated_roles() -> None:
    spa_and_schedules = "scheduledpodautoscalers schedules"
    view = _one(_install(), "ClusterRole", f"{NAMESPACE}-view")
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    assert _rules("ClusterRole", f"{NAMESPACE}-view") == _grant(
        GROUP, f"{spa_and_schedules} calendars clustercalendars", "get list watch"
    )
    edit = _one(_install(), "ClusterRole", f"{NAMESPACE}-edit")
    labels = edit["metadata"]["labels"]
    assert labels["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert labels["rbac.authorization.k8s.io/aggregate-to-admin"] == "true"
    # ClusterCalendars are the cluster administrators' to write.
    assert _rules("ClusterRole", f"{NAMESPACE}-edit") == _grant(
        GROUP,
        f"{spa_and_schedules} calendars",
        "get list watch create update patch delete deletecollection",
    )


@pytest.mark.parametrize("directory", ["install", "legacy"])
def test_no_wildcards_and_no_secrets(directory: str) -> None:
    for document in _install(directory):
        for rule in document.get("rules", []):
            words = rule["apiGroups"] + rule["resources"] + rule["verbs"]
            assert not any("*" in word for word in words), document["metadata"]["name"]
            assert "secrets" not in rule["resources"]
            assert "resourceNames" not in rule or rule["resourceNames"]
            assert "nonResourceURLs" not in rule


def test_bindings_name_the_controllers_service_account() -> None:
    for kind, name in (
        ("ClusterRoleBinding", NAMESPACE),
        ("RoleBinding", f"{NAMESPACE}-leader-election"),
        ("RoleBinding", f"{NAMESPACE}-capacity"),
    ):
        binding = _one(_install(), kind, name)
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": NAMESPACE, "namespace": NAMESPACE}
        ]
        role_kind = "ClusterRole" if kind == "ClusterRoleBinding" else "Role"
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role_kind,
            "name": name,
        }


# --- the Deployment -------------------------------------------------------------------------------


def _pod() -> dict[str, Any]:
    pod: dict[str, Any] = _one(_install(), "Deployment", NAMESPACE)["spec"]["template"]["spec"]
    return pod


def test_the_deployment_runs_the_controller_with_leader_election() -> None:
    deployment = _one(_install(), "Deployment", NAMESPACE)
    assert deployment["spec"]["replicas"] == 2
    pod = _pod()
    assert pod["serviceAccountName"] == NAMESPACE
    (container,) = pod["containers"]
    image = f"ghcr.io/scheduled-pod-autoscaler/scheduled-pod-autoscaler:{__version__}"
    assert container["image"] == image
    assert container["args"][:3] == [
        "run",
        "--enable-leader-election",
        "--leader-election-namespace=$(POD_NAMESPACE)",
    ]
    assert {
        "name": "POD_NAMESPACE",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
    } in container["env"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"metrics": 8080, "probes": 9090}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "probes"}
    assert container["resources"] == {
        "requests": {"cpu": "100m", "memory": "192Mi"},
        "limits": {"memory": "384Mi"},
    }


def test_the_controller_accepts_the_deployments_arguments() -> None:
    # args replace the image's CMD, so they start with the subcommand; the flags must be ones
    # `spa run` knows, with the ports the probes and the Service use.
    (container,) = _pod()["containers"]
    command, *flags = [a.replace("$(POD_NAMESPACE)", "ns") for a in container["args"]]
    assert command == "run"
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_run_arguments(parser)
    options = parser.parse_args(flags)
    assert options.leader_elect is True
    assert options.leader_election_namespace == "ns"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert options.metrics_addr == f":{ports['metrics']}"
    assert options.probe_addr == f":{ports['probes']}"


def test_the_pod_is_hardened() -> None:
    pod = _pod()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert isinstance(pod["securityContext"]["runAsUser"], int)
    assert pod["securityContext"]["runAsUser"] > 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def test_the_metrics_service_selects_the_controller_pods() -> None:
    service = _one(_install(), "Service", f"{NAMESPACE}-metrics")
    labels = _one(_install(), "Deployment", NAMESPACE)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 8080, "targetPort": "metrics", "protocol": "TCP"}
    ]


def test_the_metrics_port_answers_only_to_labelled_namespaces_and_probes_stay_open() -> None:
    policy = _one(_install(), "NetworkPolicy", f"{NAMESPACE}-metrics")
    pod_labels = _one(_install(), "Deployment", NAMESPACE)["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    metrics, probes = policy["spec"]["ingress"]
    assert metrics["ports"] == [{"port": 8080, "protocol": "TCP"}]
    assert metrics["from"] == [{"namespaceSelector": {"matchLabels": {"metrics": "enabled"}}}]
    assert probes == {"ports": [{"port": 9090, "protocol": "TCP"}]}
