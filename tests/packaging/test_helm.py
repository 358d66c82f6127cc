"""The Helm chart with the real helm (hack/helm builds the pinned release; `make test-helm`).

- `helm lint --strict` with every values file of tests/packaging/helm/values;
- golden renderings of those values files (`SPA_UPDATE_GOLDEN=1` rewrites them), each object
  valid against the Kubernetes 1.25 API schemas;
- one source of truth: with default values the chart renders what `kubectl kustomize
  config/install` renders, and with its monitoring values what config/prometheus renders,
  apart from Helm's own labels, the Namespace (Helm's --create-namespace) and the chart's
  PodDisruptionBudget;
- install, upgrade and uninstall on the local control plane, with `spa run` authenticated as
  the chart's ServiceAccount applying a window after each, so the chart's RBAC is proven
  sufficient (and, with watchNamespaces, confined);
- a sharded install: each shard's Deployment, run with its flags, applies its own SPA's window
  and reads the other shards' Leases (the Role config/components/shards also is).
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa import __version__
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import LEASE
from tests.builders import autoscaler
from tests.integration.harness import CRD_NAMES, Kube, admin
from tests.integration.processes import leader_election_args, spa_run, writes
from tests.kubernetes_schemas import validate
from tests.packaging.common import REPO, active_window, helm_binary, window_applied
from tests.testenv.controlplane import ControlPlane

pytestmark = [pytest.mark.packaging]

CHART = REPO / "charts" / "scheduled-pod-autoscaler"
HERE = Path(__file__).resolve().parent / "helm"
NAMESPACE = "scheduled-pod-autoscaler"
# Labels only Helm adds; config/ has app.kubernetes.io/name (and component) alone.
HELM_LABELS = {
    "helm.sh/chart",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
}
# name -> (release, namespace, values file or None)
GOLDEN = {
    "default": ("scheduled-pod-autoscaler", NAMESPACE, None),
    "namespaced": ("spa", "platform", "namespaced.yaml"),
    "monitoring": ("scheduled-pod-autoscaler", NAMESPACE, "monitoring.yaml"),
    "single": ("spa", "spa-system", "single.yaml"),
    "sharded": ("scheduled-pod-autoscaler", NAMESPACE, "sharded.yaml"),
    "hashed": ("scheduled-pod-autoscaler", NAMESPACE, "hashed.yaml"),
    "placeholders": ("scheduled-pod-autoscaler", NAMESPACE, "placeholders.yaml"),
}


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    binary = helm_binary()
    home = tmp_path_factory.mktemp("helm-home")
    # Helm's cache, configuration and data under the test's directory, not the user's.
    env = {
        **os.environ,
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }

    def run(*args: str, check: bool = True) -> str:
        result = subprocess.run(
            [binary, *args], capture_output=True, text=True, env=env, timeout=120
        )
        if check:
            assert result.returncode == 0, f"helm {' '.join(args)}\n{result.stderr}"
            return result.stdout
        return result.stdout + result.stderr

    return run


def _template(helm: Callable[..., str], name: str, *extra: str) -> str:
    release, namespace, values = GOLDEN[name]
    arguments = ["template", release, str(CHART), "--namespace", namespace, *extra]
    if values:
        arguments += ["--values", str(HERE / "values" / values)]
    return helm(*arguments)


def _documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def _without_helm_labels(node: Any) -> Any:
    """The object with Helm's labels removed from labels and from every label selector."""
    if isinstance(node, dict):
        result = {}
        for key, value in node.items():
            flat = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
            if key in {"labels", "matchLabels", "selector"} and flat:
                value = {k: v for k, v in value.items() if k not in HELM_LABELS}
            result[key] = _without_helm_labels(value)
        return result
    if isinstance(node, list):
        return [_without_helm_labels(item) for item in node]
    return node


def _by_identity(documents: list[dict[str, Any]]) -> dict[tuple[str, str, str], Any]:
    return {
        (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): (
            _without_helm_labels(d)
        )
        for d in documents
    }


def _kustomize(directory: str) -> list[dict[str, Any]]:
    kubectl = REPO / ".venv" / "bin" / "kubectl"
    rendered = subprocess.run(
        [str(kubectl), "kustomize", str(REPO / "config" / directory)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return _documents(rendered)


def _assert_same(chart: dict[Any, Any], config: dict[Any, Any]) -> None:
    for identity in sorted(chart.keys() & config.keys()):
        if chart[identity] != config[identity]:
            diff = difflib.unified_diff(
                yaml.safe_dump(config[identity]).splitlines(),
                yaml.safe_dump(chart[identity]).splitlines(),
                "config/",
                "chart",
                lineterm="",
            )
            pytest.fail(f"{identity} differs:\n" + "\n".join(diff))


# --- without a cluster ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_lint_strict(helm: Callable[..., str], name: str) -> None:
    values = GOLDEN[name][2]
    extra = ["--values", str(HERE / "values" / values)] if values else []
    output = helm("lint", "--strict", str(CHART), *extra)
    assert "1 chart(s) linted, 0 chart(s) failed" in output


def _without_crds(rendered: str) -> str:
    """The rendering less templates/crds.yaml: the CRDs are config/crd's, which
    test_crds_are_the_generated_templates_kept_on_uninstall checks, and would be most of every
    golden file."""
    sources = rendered.split("---\n# Source: ")
    return "---\n# Source: ".join(
        s for s in sources if not s.startswith(f"{CHART.name}/templates/crds.yaml")
    )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_rendering_matches_its_golden_file(helm: Callable[..., str], name: str) -> None:
    rendered = _without_crds(_template(helm, name))
    golden = HERE / "golden" / f"{name}.yaml"
    if os.environ.get("SPA_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert golden.is_file(), f"{golden} is missing: run with SPA_UPDATE_GOLDEN=1"
    expected = golden.read_text()
    if rendered != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), rendered.splitlines(), "golden", "rendered", lineterm=""
        )
        pytest.fail(
            f"{name}: the chart renders differently (SPA_UPDATE_GOLDEN=1 to accept):\n"
            + "\n".join(diff)
        )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_every_rendered_object_is_valid_for_kubernetes_1_25(
    helm: Callable[..., str], name: str
) -> None:
    for document in _documents(_template(helm, name)):
        if document["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # prometheus-operator kinds: not in the Kubernetes schemas
        assert validate(document, "1.25") is None


def _crd_metadata_as_config(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents with each CRD's metadata reduced to its name, as config/crd has it: the
    chart adds labels and the keep policy (test_crds_are_the_generated_templates_kept_...)."""
    return [
        {**d, "metadata": {"name": d["metadata"]["name"]}}
        if d["kind"] == "CustomResourceDefinition"
        else d
        for d in documents
    ]


def test_default_values_render_what_config_install_renders(helm: Callable[..., str]) -> None:
    chart = _by_identity(_crd_metadata_as_config(_documents(_template(helm, "default"))))
    config = _by_identity(_kustomize("install"))
    assert sorted(chart.keys() - config.keys()) == [("PodDisruptionBudget", NAMESPACE, NAMESPACE)]
    assert sorted(config.keys() - chart.keys()) == [("Namespace", "", NAMESPACE)]
    _assert_same(chart, config)


def test_monitoring_values_render_what_config_prometheus_renders(
    helm: Callable[..., str],
) -> None:
    chart = _by_identity(
        _documents(
            _template(
                helm,
                "default",
                "--set",
                "serviceMonitor.enabled=true,prometheusRule.enabled=true",
                "--set",
                "grafanaDashboard.enabled=true",
            )
        )
    )
    config = _by_identity(_kustomize("prometheus"))
    assert config.keys() <= chart.keys()
    assert {kind for kind, _, _ in config} == {"ServiceMonitor", "PrometheusRule", "ConfigMap"}
    # config/prometheus's ConfigMap has the Grafana sidecar's label like the chart's default.
    _assert_same(chart, config)


def _crds(helm: Callable[..., str], *values: str) -> dict[str, dict[str, Any]]:
    rendered = _documents(_template(helm, "default", *(f"--set={v}" for v in values)))
    return {d["metadata"]["name"]: d for d in rendered if d["kind"] == "CustomResourceDefinition"}


def test_crds_are_the_generated_templates_kept_on_uninstall(helm: Callable[..., str]) -> None:
    # Templates, not crds/ (installed once, never upgraded): `helm upgrade` upgrades them.
    assert not (CHART / "crds").exists()
    crds = _crds(helm)
    assert sorted(crds) == sorted(CRD_NAMES)
    for path in (REPO / "config" / "crd").glob("*_*.yaml"):
        generated = yaml.safe_load(path.read_text())
        crd = crds[generated["metadata"]["name"]]
        assert {k: v for k, v in crd.items() if k != "metadata"} == {
            k: v for k, v in generated.items() if k != "metadata"
        }
        # `helm uninstall` leaves them (and every SPA, Schedule and HPA with them).
        assert crd["metadata"]["annotations"] == {
            "helm.sh/resource-policy": "keep",
            # Argo CD renders the chart and applies it itself: it neither prunes them nor
            # deletes them with the Application.
            "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
        }
        # Which chart's CRDs are installed: `kubectl get crd -L app.kubernetes.io/version`.
        assert crd["metadata"]["labels"]["app.kubernetes.io/version"] == __version__


def test_crds_values_leave_them_out_or_let_uninstall_delete_them(
    helm: Callable[..., str],
) -> None:
    assert _crds(helm, "crds.enabled=false") == {}
    unkept = _crds(helm, "crds.keep=false")
    assert sorted(unkept) == sorted(CRD_NAMES)
    assert all("annotations" not in crd["metadata"] for crd in unkept.values())


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["leaderElection.enabled=false"], "replicaCount > 1 needs leaderElection.enabled"),
        (["logLevel=verbose"], "at '/logLevel': value must be one of"),
        (["replicas=3"], "additional properties 'replicas' not allowed"),
        (["image.digest=latest"], "at '/image/digest'"),
        (["crds.enabled=no"], "at '/crds/enabled'"),
        (["serviceMonitor.enabled=true,metrics.service.enabled=false"], "needs metrics.service"),
        (["serviceAccount.create=false"], "serviceAccount.name is required"),
        (["shards[0].name=a,shardCount=2"], "shards and shardCount are two ways to shard"),
        (["shards[0].name=a,shards[1].name=a"], 'the name "a" is given twice'),
        (["shards[0].name=A"], "at '/shards/0/name'"),
        (["shardCount=-1"], "at '/shardCount'"),
        (["kubeApi.qps=0"], "at '/kubeApi/qps'"),
        (["kubeApi.burst=2.5"], "at '/kubeApi/burst'"),
    ],
)
def test_invalid_values_are_refused_with_the_field_named(
    helm: Callable[..., str], values: list[str], message: str
) -> None:
    output = helm("template", "x", str(CHART), *(f"--set={v}" for v in values), check=False)
    assert message in output


def _controllers(helm: Callable[..., str], name: str) -> dict[str, dict[str, Any]]:
    return {
        d["metadata"]["name"]: d
        for d in _documents(_template(helm, name))
        if d["kind"] == "Deployment"
    }


def test_each_shard_is_a_deployment_of_its_own_with_its_flags(helm: Callable[..., str]) -> None:
    """docs/install.md, "Shards": a Deployment (and a PodDisruptionBudget) per shard, whose
    pods alone it selects, running `spa run` with the shard's flags; the Lease is the shard's
    (`spa run` adds `-shard-<name>` to --leader-election-id); every series gets `shard`."""
    documents = _documents(_template(helm, "sharded"))
    shard_label = "autoscaling.d-kuro.github.io/shard"
    deployments = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Deployment"}
    assert sorted(deployments) == [f"{NAMESPACE}-shard-{s}" for s in "abc"]
    flags = {}
    for shard in "abc":
        spec = deployments[f"{NAMESPACE}-shard-{shard}"]["spec"]
        assert spec["selector"]["matchLabels"][shard_label] == shard
        assert spec["template"]["metadata"]["labels"][shard_label] == shard
        args = spec["template"]["spec"]["containers"][0]["args"]
        assert f"--leader-election-id={NAMESPACE}-leader" in args
        flags[shard] = [a for a in args if a.startswith("--shard")]
    assert flags == {
        "a": ["--shard-name=a"],
        "b": ["--shard-name=b"],
        "c": ["--shard-name=c", f"--shard-selector={shard_label}=c,environment!=test"],
    }
    budgets = [d for d in documents if d["kind"] == "PodDisruptionBudget"]
    assert sorted(b["spec"]["selector"]["matchLabels"][shard_label] for b in budgets) == list("abc")
    (monitor,) = [d for d in documents if d["kind"] == "ServiceMonitor"]
    assert {
        "sourceLabels": ["__meta_kubernetes_pod_label_autoscaling_d_kuro_github_io_shard"],
        "targetLabel": "shard",
    } in monitor["spec"]["endpoints"][0]["relabelings"]
    hashed = _controllers(helm, "hashed")
    assert {
        name: [a for a in d["spec"]["template"]["spec"]["containers"][0]["args"] if "shard" in a]
        for name, d in hashed.items()
    } == {f"{NAMESPACE}-shard-{k}-of-4": ["--shards=4", f"--shard={k}"] for k in range(4)}


def test_shards_get_the_role_config_components_shards_is(helm: Callable[..., str]) -> None:
    """docs/install.md, "Shards": by label or by namespace hash, the chart grants the shards
    the list of Leases that config/components/shards grants (the same Role and RoleBinding);
    one controller, and shards without leader election (no Leases), get nothing of it."""
    shards = REPO / "config" / "components" / "shards" / "shards.yaml"
    config = _by_identity(_documents(shards.read_text()))
    assert sorted(config) == [
        ("Role", NAMESPACE, f"{NAMESPACE}-shards"),
        ("RoleBinding", NAMESPACE, f"{NAMESPACE}-shards"),
    ]
    for name in ("sharded", "hashed"):
        chart = _by_identity(_documents(_template(helm, name)))
        assert config.keys() <= chart.keys(), name
        _assert_same(chart, config)
    without_leases = ("--set", "leaderElection.enabled=false,replicaCount=1,shardCount=2")
    for extra in ((), without_leases):
        rendered = _documents(_template(helm, "default", *extra))
        assert [d for d in rendered if d["metadata"]["name"].endswith("-shards")] == [], extra
        assert any(d["kind"] == "Deployment" for d in rendered)


# --- on the local control plane -------------------------------------------------------------


@pytest.fixture
def plane(control_plane_factory: Callable[..., ControlPlane]) -> ControlPlane:
    """A control plane of its own: nothing installed, not even the CRDs."""
    return control_plane_factory()


@pytest.fixture
def plane_kube(plane: ControlPlane) -> Iterator[Kube]:
    with admin(plane) as client:
        yield client


def _kubectl(plane: ControlPlane, *args: str) -> str:
    return plane.run_kubectl(*args, check=True).stdout


def _exists(plane: ControlPlane, *args: str) -> bool:
    result = plane.run_kubectl("get", *args, "--ignore-not-found", "-o", "name")
    assert result.returncode == 0, result.stderr
    return bool(result.stdout.strip())


def _reconciles_as_the_chart(
    plane: ControlPlane, kube: Kube, namespace: str, name: str, log: Path
) -> None:
    """`spa run` with a token of the chart's ServiceAccount, the chart's Lease, applies a window
    in `namespace`."""
    kubeconfig = plane.service_account_kubeconfig(NAMESPACE, NAMESPACE, create=False)
    active_window(kube, namespace, name)
    election = leader_election_args(f"{NAMESPACE}-leader")
    with spa_run(kubeconfig, namespace, *election, log=log) as process:
        window_applied(kube, namespace, name)
        assert process.poll() is None, log.read_text()


def _can(plane: ControlPlane, verb: str, resource: str, namespace: str) -> bool:
    result = plane.run_kubectl(
        "auth", "can-i", verb, resource, "--namespace", namespace,
        f"--as=system:serviceaccount:{NAMESPACE}:{NAMESPACE}",
    )  # fmt: skip
    return result.stdout.strip() == "yes"


@pytest.mark.integration
def test_install_upgrade_uninstall(
    helm: Callable[..., str], plane: ControlPlane, plane_kube: Kube, tmp_path: Path
) -> None:
    kubeconfig = ["--kubeconfig", str(plane.kubeconfig)]
    release = ["scheduled-pod-autoscaler", str(CHART), "--namespace", NAMESPACE]
    for team in ("team-a", "team-b"):
        _kubectl(plane, "create", "namespace", team)

    # Install: the CRDs (templates/crds.yaml), then every object of the chart.
    helm("install", *release, "--create-namespace", *kubeconfig)
    _kubectl(plane, "wait", "--for=condition=Established", *(f"crd/{n}" for n in CRD_NAMES))
    for kind in ("deployment", "serviceaccount", "service", "poddisruptionbudget"):
        name = f"{NAMESPACE}-metrics" if kind == "service" else NAMESPACE
        assert _exists(plane, kind, name, "-n", NAMESPACE), kind
    assert _exists(plane, "role,rolebinding", f"{NAMESPACE}-leader-election", "-n", NAMESPACE)
    assert not _can(plane, "list", "leases.coordination.k8s.io", NAMESPACE)  # shards only
    assert _exists(plane, "clusterrole,clusterrolebinding", NAMESPACE)
    assert _exists(plane, "clusterrole", f"{NAMESPACE}-view")
    _reconciles_as_the_chart(plane, plane_kube, "team-b", "web", tmp_path / "install.log")

    # Upgrade: confined to team-a, more replicas, another log level, an extra rule.
    values = tmp_path / "upgrade.yaml"
    values.write_text(
        yaml.safe_dump(
            {
                "replicaCount": 3,
                "watchNamespaces": ["team-a"],
                "logLevel": "debug",
                "rbac": {
                    "extraRules": [
                        {
                            "apiGroups": ["argoproj.io"],
                            "resources": ["rollouts/scale"],
                            "verbs": ["get", "patch"],
                        }
                    ]
                },
            }
        )
    )
    helm("upgrade", *release, "--values", str(values), *kubeconfig)
    deployment = yaml.safe_load(_kubectl(plane, "get", "deployment", NAMESPACE, "-n", NAMESPACE,
                                         "-o", "yaml"))  # fmt: skip
    assert deployment["spec"]["replicas"] == 3
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--log-level=debug" in args
    assert "--namespace=team-a" in args
    assert not _exists(plane, "clusterrolebinding", NAMESPACE)
    assert _exists(plane, "rolebinding", NAMESPACE, "-n", "team-a")
    role = yaml.safe_load(_kubectl(plane, "get", "clusterrole", NAMESPACE, "-o", "yaml"))
    assert role["rules"][-1]["resources"] == ["rollouts/scale"]
    spas = "scheduledpodautoscalers.autoscaling.d-kuro.github.io"
    assert _can(plane, "list", spas, "team-a")
    assert not _can(plane, "list", spas, "team-b")
    _reconciles_as_the_chart(plane, plane_kube, "team-a", "api", tmp_path / "upgrade.log")
    history = helm("history", "scheduled-pod-autoscaler", "--namespace", NAMESPACE, *kubeconfig)
    assert len(history.strip().splitlines()) == 3  # a header and two revisions

    # Uninstall: the chart's objects go; the CRDs, and with them the users' objects, stay.
    helm("uninstall", "scheduled-pod-autoscaler", "--namespace", NAMESPACE, *kubeconfig)
    assert not _exists(plane, "deployment,serviceaccount", NAMESPACE, "-n", NAMESPACE)
    assert not _exists(plane, "clusterrole", NAMESPACE)
    assert not _exists(plane, "rolebinding", NAMESPACE, "-n", "team-a")
    for crd in CRD_NAMES:
        assert _exists(plane, "crd", crd)
    assert _exists(plane, spas, "web", "-n", "team-b")
    assert _exists(plane, spas, "api", "-n", "team-a")


def _chart_flags(plane: ControlPlane, deployment: str) -> list[str]:
    """The `spa run` flags of the installed Deployment that say what it does (its shard, its
    Lease), without its addresses and log settings (the test gives its own)."""
    installed = yaml.safe_load(
        _kubectl(plane, "get", "deployment", deployment, "-n", NAMESPACE, "-o", "yaml")
    )
    args = installed["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "run"
    own = ("--metrics-addr", "--probe-addr", "--log-level", "--log-format")
    return [
        arg.replace("$(POD_NAMESPACE)", NAMESPACE) for arg in args[1:] if not arg.startswith(own)
    ]


@pytest.mark.integration
def test_sharded_install_from_the_chart(
    helm: Callable[..., str], plane: ControlPlane, plane_kube: Kube, tmp_path: Path
) -> None:
    """docs/install.md, "Shards": the chart's shards, each run as its Deployment says with
    the chart's ServiceAccount, each apply the window of their own SPA and hold their Lease."""
    kubeconfig = ["--kubeconfig", str(plane.kubeconfig)]
    values = tmp_path / "shards.yaml"
    values.write_text(yaml.safe_dump({"shards": [{"name": "a"}, {"name": "b"}]}))
    helm(
        "install", "scheduled-pod-autoscaler", str(CHART), "--namespace", NAMESPACE,
        "--create-namespace", "--values", str(values), *kubeconfig,
    )  # fmt: skip
    _kubectl(plane, "wait", "--for=condition=Established", *(f"crd/{n}" for n in CRD_NAMES))
    _kubectl(plane, "create", "namespace", "team")
    label = "autoscaling.d-kuro.github.io/shard"
    for name, shard in (("web", "a"), ("api", "b")):
        active_window(plane_kube, "team", name)
        labelled = {"metadata": {"labels": {label: shard}}}
        plane_kube.merge(SCHEDULED_POD_AUTOSCALERS, "team", name, labelled)
        plane_kube.merge(SCHEDULES, "team", f"{name}-now", labelled)
    token = plane.service_account_kubeconfig(NAMESPACE, NAMESPACE, create=False)
    flags = {shard: _chart_flags(plane, f"{NAMESPACE}-shard-{shard}") for shard in "ab"}
    assert "--shard-name=a" in flags["a"]
    assert "--shard-name=b" in flags["b"]
    with (
        spa_run(token, None, *flags["a"], log=tmp_path / "a.log") as a,
        spa_run(token, None, *flags["b"], log=tmp_path / "b.log") as b,
    ):
        window_applied(plane_kube, "team", "web")
        window_applied(plane_kube, "team", "api")
        for shard in "ab":
            lease = plane_kube.get(LEASE, NAMESPACE, f"{NAMESPACE}-leader-shard-{shard}")
            assert lease["spec"].get("holderIdentity"), lease
        assert a.poll() is None
        assert b.poll() is None
    for shard, mine in (("a", "web"), ("b", "api")):
        written = {str(line.get("name")) for line in writes(tmp_path / f"{shard}.log")}
        assert written == {mine}, (shard, written)
        # Each read the other's Lease: the chart's `-shards` Role lets it list them.
        assert "cannot list the Leases" not in (tmp_path / f"{shard}.log").read_text()
    assert _can(plane, "list", "leases.coordination.k8s.io", NAMESPACE)


# --- the CRDs across upgrades ---------------------------------------------------------------

SPA_CRD = "scheduledpodautoscalers.autoscaling.d-kuro.github.io"
CALENDAR_CRDS = (
    "calendars.autoscaling.d-kuro.github.io",
    "clustercalendars.autoscaling.d-kuro.github.io",
)


def _older_chart(tmp_path: Path, *, crds_directory: bool) -> Path:
    """The chart as an older release had it: version 0.1.0, no Calendar CRDs and an SPA CRD
    without `scaleUpImmediately`; with `crds_directory`, its CRDs in crds/ as charts before
    0.2.0 had them (installed once, never upgraded, never owned by the release)."""
    old = tmp_path / "old-chart"
    shutil.copytree(CHART, old)
    chart = yaml.safe_load((old / "Chart.yaml").read_text())
    (old / "Chart.yaml").write_text(yaml.safe_dump({**chart, "version": "0.1.0",
                                                    "appVersion": "0.1.0"}))  # fmt: skip
    crds = old / "files" / "crds"
    for name in CALENDAR_CRDS:
        plural, group = name.split(".", 1)
        (crds / f"{group}_{plural}.yaml").unlink()
    spa_file = crds / "autoscaling.d-kuro.github.io_scheduledpodautoscalers.yaml"
    crd = yaml.safe_load(spa_file.read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec["properties"]["scaleUpImmediately"]
    spa_file.write_text(yaml.safe_dump(crd))
    if crds_directory:
        crds.rename(old / "crds")
        (old / "templates" / "crds.yaml").unlink()
    return old


def _crd_labels(plane: ControlPlane, name: str) -> dict[str, str]:
    crd = yaml.safe_load(_kubectl(plane, "get", "crd", name, "-o", "yaml"))
    labels: dict[str, str] = crd["metadata"].get("labels", {})
    return labels


def _serves_scale_up_immediately(plane_kube: Kube, namespace: str, name: str) -> bool:
    """Whether an SPA written with `scaleUpImmediately: false` keeps it (a CRD without the
    field prunes it)."""
    plane_kube.create(autoscaler(name=name, namespace=namespace, scaleUpImmediately=False))
    stored = plane_kube.get(SCHEDULED_POD_AUTOSCALERS, namespace, name)
    return "scaleUpImmediately" in stored["spec"]


@pytest.mark.integration
def test_helm_upgrade_upgrades_the_crds_and_uninstall_keeps_them(
    helm: Callable[..., str], plane: ControlPlane, plane_kube: Kube, tmp_path: Path
) -> None:
    kubeconfig = ["--kubeconfig", str(plane.kubeconfig)]
    release = ["scheduled-pod-autoscaler", "--namespace", NAMESPACE, *kubeconfig]
    _kubectl(plane, "create", "namespace", "shop")
    helm("install", *release, str(_older_chart(tmp_path, crds_directory=False)),
         "--create-namespace")  # fmt: skip
    _kubectl(plane, "wait", "--for=condition=Established", f"crd/{SPA_CRD}")
    assert not _serves_scale_up_immediately(plane_kube, "shop", "before")
    assert not any(_exists(plane, "crd", name) for name in CALENDAR_CRDS)

    # One `helm upgrade` is the whole upgrade: the CRD gets its new field, the new CRDs come.
    helm("upgrade", *release, str(CHART))
    _kubectl(plane, "wait", "--for=condition=Established", *(f"crd/{n}" for n in CRD_NAMES))
    assert _serves_scale_up_immediately(plane_kube, "shop", "after")
    assert _crd_labels(plane, SPA_CRD)["app.kubernetes.io/version"] == __version__

    # Turning the CRDs off removes them from the release, and the keep policy leaves them.
    helm("upgrade", *release, str(CHART), "--set", "crds.enabled=false")
    assert all(_exists(plane, "crd", name) for name in CRD_NAMES)
    helm("upgrade", *release, str(CHART))

    # `helm uninstall` keeps every CRD, and with them the users' objects.
    helm("uninstall", *release)
    assert not _exists(plane, "deployment", NAMESPACE, "-n", NAMESPACE)
    assert all(_exists(plane, "crd", name) for name in CRD_NAMES)
    assert _exists(plane, SPA_CRD, "before", "-n", "shop")
    assert _exists(plane, SPA_CRD, "after", "-n", "shop")


@pytest.mark.integration
def test_upgrade_from_a_chart_with_crds_directory_takes_the_crds_over(
    helm: Callable[..., str], plane: ControlPlane, plane_kube: Kube, tmp_path: Path
) -> None:
    """docs/install.md, "Upgrading to 0.2.0": the CRDs a chart installed from crds/ belong to
    no release, so the first upgrade to a chart that renders them must be told to adopt them."""
    kubeconfig = ["--kubeconfig", str(plane.kubeconfig)]
    release = ["scheduled-pod-autoscaler", "--namespace", NAMESPACE, *kubeconfig]
    _kubectl(plane, "create", "namespace", "shop")
    helm("install", *release, str(_older_chart(tmp_path, crds_directory=True)),
         "--create-namespace")  # fmt: skip
    _kubectl(plane, "wait", "--for=condition=Established", f"crd/{SPA_CRD}")
    assert "app.kubernetes.io/version" not in _crd_labels(plane, SPA_CRD)

    refused = helm("upgrade", *release, str(CHART), check=False)
    assert "exists and cannot be imported into the current release" in refused, refused
    assert not _serves_scale_up_immediately(plane_kube, "shop", "before")

    helm("upgrade", *release, str(CHART), "--take-ownership")
    _kubectl(plane, "wait", "--for=condition=Established", *(f"crd/{n}" for n in CRD_NAMES))
    assert _serves_scale_up_immediately(plane_kube, "shop", "after")
    crd = yaml.safe_load(_kubectl(plane, "get", "crd", SPA_CRD, "-o", "yaml"))
    assert crd["metadata"]["annotations"]["meta.helm.sh/release-name"] == release[0]

    helm("uninstall", *release)
    assert all(_exists(plane, "crd", name) for name in CRD_NAMES)
    assert _exists(plane, SPA_CRD, "before", "-n", "shop")


@pytest.mark.integration
def test_helm_install_takes_over_crds_applied_with_kubectl(
    helm: Callable[..., str], plane: ControlPlane, plane_kube: Kube, tmp_path: Path
) -> None:
    """docs/install.md, "Upgrading from the original Go controller", step 3 with Helm: CRDs
    that kubectl applied (the original's, or config/crd) are adopted by `helm install
    --take-ownership --force-conflicts` and replaced by the chart's."""
    kubeconfig = ["--kubeconfig", str(plane.kubeconfig)]
    release = ["scheduled-pod-autoscaler", "--namespace", NAMESPACE, *kubeconfig]
    older = _older_chart(tmp_path, crds_directory=True)
    _kubectl(plane, "apply", "-f", str(older / "crds"))
    _kubectl(plane, "wait", "--for=condition=Established", f"crd/{SPA_CRD}")
    _kubectl(plane, "create", "namespace", "shop")
    assert not _serves_scale_up_immediately(plane_kube, "shop", "before")

    # Adopted, and the fields kubectl's apply manages taken over by Helm 4's server-side apply.
    refused = helm("install", *release, str(CHART), "--create-namespace", "--take-ownership",
                   check=False)  # fmt: skip
    assert 'conflict with "kubectl-client-side-apply"' in refused, refused
    helm("uninstall", *release)
    helm("install", *release, str(CHART), "--take-ownership", "--force-conflicts")
    _kubectl(plane, "wait", "--for=condition=Established", *(f"crd/{n}" for n in CRD_NAMES))
    assert _serves_scale_up_immediately(plane_kube, "shop", "after")
    assert _crd_labels(plane, SPA_CRD)["app.kubernetes.io/version"] == __version__
