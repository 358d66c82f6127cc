"""Convergence by construction (docs/reliability.md, "Convergence"): for every HPA spec the API
server accepts, `spa run` converges in one write and then sends nothing.

Hypothesis generates HPA specs across every metric source and target type, quantities in every
notation (ints, decimals, `m`, `k`, `Mi`, exponents), empty and missing lists and selectors,
and behavior policies. For each, the real `spa run` (as its own ServiceAccount, with the RBAC
of config/rbac) reconciles one SPA on a private control plane whose audit log records every
request of that ServiceAccount, and the log must show exactly one HPA write (the create) and
one status write, also after the SPA is touched again. The API server rewrites much of what
it stores (`1000` -> `"1k"`, `metrics: []` -> the default CPU metric, empty `matchLabels`
dropped, fields of disabled features dropped); the explicit examples are the cases that made
the first version write thousands of times a minute.

A second test restarts the controller: with nothing remembered it must still write nothing
(it may ask the server with a dry run), and a manual edit is still reverted with one patch.
"""

from __future__ import annotations

import itertools
import re
import socket
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import HPA_V2, BlockingKubeClient, connect_blocking
from tests.integration.harness import REPO, install_crds
from tests.integration.processes import spa_run, wait_for
from tests.testenv.audit import AuditLog, audit_policy, service_account_user
from tests.testenv.controlplane import ControlPlane
from tests.testenv.fixtures import private_control_plane

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

SA_NAMESPACE = "scheduled-pod-autoscaler"
SA_NAME = "scheduled-pod-autoscaler"
USER = service_account_user(SA_NAMESPACE, SA_NAME)
NAMESPACE = "converge"
# How long nothing more may be sent after the last reconcile we waited for. The loop this
# guards against sent ~200 writes a second.
QUIET_SECONDS = 1.0


# -- what is generated ------------------------------------------------------------------------

_SUFFIXES = ["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "e3", "E2", "e-1"]
quantities = st.one_of(
    st.integers(min_value=1, max_value=10**7),
    st.builds(
        lambda number, suffix: f"{number}{suffix}",
        st.integers(min_value=1, max_value=5000),
        st.sampled_from(_SUFFIXES),
    ),
    st.sampled_from(["0.5", "1.5", "0.25", "2.50", "1.0", "100.0", "+5", "0.001", "1500m"]),
)


def _target(*types: str) -> st.SearchStrategy[dict[str, Any]]:
    def build(kind: str, utilization: int, quantity: int | str) -> dict[str, Any]:
        if kind == "Utilization":
            return {"type": kind, "averageUtilization": utilization}
        return {"type": kind, ("value" if kind == "Value" else "averageValue"): quantity}

    return st.builds(
        build, st.sampled_from(types), st.integers(min_value=1, max_value=200), quantities
    )


selectors = st.one_of(
    st.none(),
    st.just({}),
    st.just({"matchLabels": {}}),
    st.just({"matchLabels": {"app": "web"}}),
    st.just({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}),
)


def _identifier(name: str, selector: dict[str, Any] | None) -> dict[str, Any]:
    return {"name": name} if selector is None else {"name": name, "selector": selector}


identifiers = st.builds(_identifier, st.sampled_from(["requests", "queue_depth"]), selectors)
metric_specs = st.one_of(
    st.builds(
        lambda name, target: {"type": "Resource", "resource": {"name": name, "target": target}},
        st.sampled_from(["cpu", "memory"]),
        _target("Utilization", "AverageValue"),
    ),
    st.builds(
        lambda target: {
            "type": "ContainerResource",
            "containerResource": {"name": "cpu", "container": "app", "target": target},
        },
        _target("Utilization", "AverageValue"),
    ),
    st.builds(
        lambda metric, target: {"type": "Pods", "pods": {"metric": metric, "target": target}},
        identifiers,
        _target("AverageValue"),
    ),
    st.builds(
        lambda metric, target: {
            "type": "Object",
            "object": {
                "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress"}
                | {"name": "main"},
                "metric": metric,
                "target": target,
            },
        },
        identifiers,
        _target("Value", "AverageValue"),
    ),
    st.builds(
        lambda metric, target: {
            "type": "External",
            "external": {"metric": metric, "target": target},
        },
        identifiers,
        _target("Value", "AverageValue"),
    ),
)
policies = st.builds(
    lambda kind, value, period: {"type": kind, "value": value, "periodSeconds": period},
    st.sampled_from(["Pods", "Percent"]),
    st.integers(min_value=1, max_value=100),
    st.integers(min_value=1, max_value=1800),
)
scaling_rules = st.fixed_dictionaries(
    {},
    optional={
        "stabilizationWindowSeconds": st.integers(min_value=0, max_value=3600),
        "selectPolicy": st.sampled_from(["Max", "Min", "Disabled"]),
        "policies": st.lists(policies, min_size=1, max_size=3),
        # Behind a feature gate that may be off: then the server drops it.
        "tolerance": st.sampled_from(["0.05", "100m", "0.1"]),
    },
)
behaviors = st.one_of(
    st.none(),
    st.just({}),
    st.fixed_dictionaries({}, optional={"scaleUp": scaling_rules, "scaleDown": scaling_rules}),
)


@st.composite
def hpa_specs(draw: st.DrawFn) -> dict[str, Any]:
    minimum = draw(st.one_of(st.none(), st.integers(min_value=1, max_value=5)))
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": draw(st.integers(min_value=5, max_value=50)),
    }
    if minimum is not None:
        spec["minReplicas"] = minimum
    metrics = draw(st.one_of(st.none(), st.just([]), st.lists(metric_specs, max_size=3)))
    if metrics is not None:
        spec["metrics"] = metrics
    behavior = draw(behaviors)
    if behavior is not None:
        spec["behavior"] = behavior
    return spec


def _with_metrics(*metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 10,
        "metrics": list(metrics),
    }


# The regressions of issue 9, as the user wrote them.
PODS_1000 = _with_metrics(
    {
        "type": "Pods",
        "pods": {
            "metric": {"name": "requests"},
            "target": {"type": "AverageValue", "averageValue": 1000},
        },
    }
)
HALF_A_CPU = _with_metrics(
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "0.5"}},
    }
)
NO_METRICS = _with_metrics()
EMPTY_MATCH_LABELS = _with_metrics(
    {
        "type": "External",
        "external": {
            "metric": {"name": "queue_depth", "selector": {"matchLabels": {}}},
            "target": {"type": "Value", "value": 100},
        },
    }
)


# -- the controller under test ----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Setup:
    plane: ControlPlane
    audit: AuditLog
    client: BlockingKubeClient
    kubeconfig: Path
    log: Path
    names: Iterator[str] = field(default_factory=lambda: (f"c{n}" for n in itertools.count()))
    created: dict[str, dict[str, Any]] = field(default_factory=dict)
    metrics_port: int = 0
    process: subprocess.Popen[bytes] | None = None

    def reconciles(self) -> float:
        """spa_reconcile_total of the running controller, all results."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("spa_reconcile_total{")
        )


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    with private_control_plane(audit_policy=audit_policy(users=[USER])) as plane:
        assert plane.audit_log is not None
        install_crds(plane)
        plane.run_kubectl("apply", "--server-side", "-k", str(REPO / "config/rbac"), check=True)
        plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
        kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
        client = connect_blocking(kubeconfig=str(plane.kubeconfig))
        try:
            yield Setup(
                plane,
                AuditLog(plane.audit_log),
                client,
                kubeconfig,
                tmp_path_factory.mktemp("convergence") / "spa-run.log",
            )
        finally:
            client.close()


def _start(setup: Setup) -> Iterator[Setup]:
    setup.metrics_port = _free_port()
    address = f"127.0.0.1:{setup.metrics_port}"
    with spa_run(setup.kubeconfig, NAMESPACE, "--metrics-addr", address, log=setup.log) as process:
        setup.process = process
        wait_for(lambda: _answers(setup), within=30, what="spa run serving metrics")
        yield setup


def _answers(setup: Setup) -> bool:
    try:
        setup.reconciles()
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def running(setup: Setup) -> Iterator[Setup]:
    yield from _start(setup)


def _reconciled(setup: Setup, name: str) -> bool:
    spa = setup.client.get(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, name)
    status = spa.get("status") or {}
    if status.get("observedGeneration") != spa["metadata"]["generation"]:
        return False
    assert status.get("condition") == "Available", (
        f"the API server did not take the generated spec: {status}"
    )
    return True


def _touch_and_settle(setup: Setup, names: list[str]) -> None:
    """Make every SPA reconcile again (a metadata change is a watch event), wait until the
    controller has run that many reconciles, then give it a quiet period to misbehave in."""
    before = setup.reconciles()
    stamp = str(time.time_ns())
    for name in names:
        setup.client.patch(
            SCHEDULED_POD_AUTOSCALERS,
            NAMESPACE,
            name,
            {"metadata": {"labels": {"touched": stamp}}},
            patch_type="merge",
            field_manager="test",
        )
    wait_for(lambda: setup.reconciles() >= before + len(names), within=30, what="reconciles")
    time.sleep(QUIET_SECONDS)


def _writes_of(setup: Setup, name: str, since: float) -> Counter[tuple[str, str]]:
    return Counter(
        (event.verb, event.resource)
        for event in setup.audit.writes(user=USER, namespace=NAMESPACE, since=since)
        if event.name == name and event.resource != "events"
    )


# -- the tests --------------------------------------------------------------------------------


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@example(spec=PODS_1000)
@example(spec=HALF_A_CPU)
@example(spec=NO_METRICS)
@example(spec=EMPTY_MATCH_LABELS)
@given(spec=hpa_specs())
def test_one_write_per_spec_then_nothing(running: Setup, spec: dict[str, Any]) -> None:
    name = next(running.names)
    since = time.time() - 0.5
    running.client.create(
        SCHEDULED_POD_AUTOSCALERS,
        NAMESPACE,
        {
            "apiVersion": "autoscaling.d-kuro.github.io/v1",
            "kind": "ScheduledPodAutoscaler",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"horizontalPodAutoscalerSpec": spec},
        },
    )
    running.created[name] = spec
    wait_for(lambda: _reconciled(running, name), within=20, what=f"{name} reconciled")
    _touch_and_settle(running, [name])
    assert running.process is not None
    assert running.process.poll() is None
    writes = _writes_of(running, name, since)
    assert writes == Counter(
        {("create", "horizontalpodautoscalers"): 1, ("patch", "scheduledpodautoscalers/status"): 1}
    ), (spec, running.client.get(HPA_V2, NAMESPACE, name)["spec"])


def test_a_restarted_controller_writes_nothing_and_still_reverts_an_edit(setup: Setup) -> None:
    names = list(setup.created)
    assert len(names) >= 4, "runs after the property test, on the HPAs it left"
    [pods_1000] = [name for name, spec in setup.created.items() if spec == PODS_1000]
    if setup.process is not None and setup.process.poll() is None:
        setup.process.kill()  # the first controller, and all it remembered, is gone
        setup.process.wait(timeout=10)
    edited = names[0]
    # From before the start: its first reconciles may come before its metrics answer.
    since = time.time()
    for running in _start(setup):
        _touch_and_settle(running, names)
        writes = setup.audit.writes(user=USER, namespace=NAMESPACE, since=since)
        assert writes == [], [(e.verb, e.resource, e.name) for e in writes]
        # The server's rewriting of `1000` is asked once, with a dry run, and remembered.
        dry_runs = Counter(e.name for e in setup.audit.dry_runs(user=USER, since=since))
        assert dry_runs[pods_1000] == 1, dry_runs
        assert max(dry_runs.values()) == 1, dry_runs

        since = time.time()
        setup.client.patch(
            HPA_V2,
            NAMESPACE,
            edited,
            {"spec": {"minReplicas": 1, "maxReplicas": 99}},
            patch_type="merge",
            field_manager="someone",
        )
        wait_for(
            lambda: setup.client.get(HPA_V2, NAMESPACE, edited)["spec"]["maxReplicas"] == 10,
            within=20,
            what="the edit reverted",
        )
        _touch_and_settle(running, [edited])
        assert _writes_of(setup, edited, since) == Counter(
            {("patch", "horizontalpodautoscalers"): 1}
        )
        assert re.search(r"Traceback", setup.log.read_text()) is None
