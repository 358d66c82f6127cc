"""The alerts, recording rules and dashboard of config/prometheus with the real Prometheus tools
(Debian's `prometheus` package; `make test-prometheus`).

- `promtool check rules`, and `promtool test rules` with a unit test for every alert;
- a real Prometheus scrapes `spa run` on the local control plane, through a scenario that makes
  every series the rules and the dashboard read exist (a window, a refused HPA, a Schedule
  without its SPA, a leader, watches that break and relist); then every metric name and label
  they use is in its database, every rule evaluates without error, the Degraded alerts are
  raised for exactly the broken objects (and the error alerts while the API server's
  restart weighs), and every dashboard query answers with data;
- `promtool check metrics` finds nothing to say about the controller's exposition.
"""

from __future__ import annotations

import json
import re
import subprocess
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml

from spa import __version__
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import connect_blocking
from tests.builders import autoscaler, schedule
from tests.integration.harness import Kube
from tests.integration.processes import (
    CONTROLLER_NAMESPACE,
    leader_election_args,
    spa_run,
    wait_for,
)
from tests.packaging.common import (
    REPO,
    active_window,
    answers,
    http_get,
    require_tool,
    window_applied,
)
from tests.testenv.controlplane import ControlPlane, free_port
from tests.testenv.processes import ManagedProcess

pytestmark = [pytest.mark.packaging]

RULES = REPO / "config" / "prometheus" / "rules.yaml"
DASHBOARD = REPO / "config" / "prometheus" / "dashboard.json"
UNIT_TESTS = Path(__file__).resolve().parent / "prometheus" / "rules_test.yaml"
# Added by every scrape, so present on every series.
SCRAPE_LABELS = {"instance", "job"}
# The dashboard's variables, as Grafana would expand them with "All" selected.
VARIABLES = {"$__rate_interval": "1m", "$namespace": ".*", "$autoscaler": ".*"}


def _promtool() -> str:
    return require_tool(
        "promtool", "apt-get install prometheus (hack/system/install.sh test-packaging)"
    )


def _rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def _alerts() -> set[str]:
    return {rule["alert"] for rule in _rules() if "alert" in rule}


def _dashboard_queries() -> list[str]:
    """Every PromQL expression of the dashboard's panels, variables expanded."""

    def expand(expression: str) -> str:
        for variable, value in VARIABLES.items():
            expression = expression.replace(variable, value)
        return expression

    dashboard = json.loads(DASHBOARD.read_text())
    return [
        expand(target["expr"])
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
    ]


def _dashboard_variable_selectors() -> list[tuple[str, set[str]]]:
    """label_values(SELECTOR, LABEL) of the dashboard's variables, as (metric, labels)."""
    found = []
    for variable in json.loads(DASHBOARD.read_text())["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", variable["definition"])
        assert match, variable["definition"]
        selector = promql_parser.parse(match[1].replace("$namespace", ".*"))
        for metric, labels in _used(selector):
            found.append((metric, labels | {match[2]}))
    return found


def _used(node: Any, inherited: frozenset[str] = frozenset()) -> Iterator[tuple[str, set[str]]]:
    """(metric name, label names it must carry) for every selector under `node`: the labels it
    is matched on, and those the aggregations and vector matches above it group by."""
    if isinstance(node, promql_parser.VectorSelector):
        matched = {matcher.name for matcher in node.matchers.matchers}
        yield str(node.name), set(inherited | matched)
    elif isinstance(node, promql_parser.MatrixSelector):
        yield from _used(node.vector_selector, inherited)
    elif isinstance(node, promql_parser.AggregateExpr):
        grouped = inherited
        if node.modifier is not None and node.modifier.type == promql_parser.AggModifierType.By:
            grouped = inherited | set(node.modifier.labels)
        yield from _used(node.expr, grouped)
        if node.param is not None:
            yield from _used(node.param, inherited)
    elif isinstance(node, promql_parser.BinaryExpr):
        matching = node.modifier.matching if node.modifier is not None else None
        if matching is not None and matching.type == promql_parser.LabelModifierType.Include:
            inherited = inherited | set(matching.labels)
        yield from _used(node.lhs, inherited)
        yield from _used(node.rhs, inherited)
    elif isinstance(node, promql_parser.Call):
        for argument in node.args:
            yield from _used(argument, inherited)
    elif isinstance(
        node, promql_parser.ParenExpr | promql_parser.UnaryExpr | promql_parser.SubqueryExpr
    ):
        yield from _used(node.expr, inherited)


def _everything_used() -> dict[str, set[str]]:
    """metric -> every label the rules and the dashboard expect it to carry."""
    used: dict[str, set[str]] = {}
    expressions = [rule["expr"] for rule in _rules()] + _dashboard_queries()
    pairs = [pair for e in expressions for pair in _used(promql_parser.parse(e))]
    for metric, labels in pairs + _dashboard_variable_selectors():
        used.setdefault(metric, set()).update(labels)
    return used


# --- promtool, without a cluster ------------------------------------------------------------


def test_promtool_check_rules() -> None:
    result = subprocess.run(
        [_promtool(), "check", "rules", str(RULES)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


def test_promtool_unit_tests_pass() -> None:
    result = subprocess.run(
        [_promtool(), "test", "rules", str(UNIT_TESTS)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_unit_test_that_fires_it_and_a_runbook() -> None:
    tested = yaml.safe_load(UNIT_TESTS.read_text())
    fired = {
        case["alertname"]
        for test in tested["tests"]
        for case in test.get("alert_rule_test", [])
        if case["exp_alerts"]
    }
    quiet = {
        case["alertname"]
        for test in tested["tests"]
        for case in test.get("alert_rule_test", [])
        if not case["exp_alerts"]
    }
    assert fired == _alerts()
    assert quiet == _alerts(), "every alert also has a case where it must stay quiet"
    operations = (REPO / "docs" / "operations.md").read_text()
    missing = sorted(alert for alert in _alerts() if f"`{alert}`" not in operations)
    assert missing == [], "docs/operations.md explains every alert"


def test_every_dashboard_query_parses_and_panels_are_laid_out() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]
    for expression in _dashboard_queries():
        promql_parser.parse(expression)
    recorded = {rule["record"] for rule in _rules() if "record" in rule}
    # The dashboard's recording rules exist; everything else it reads is the controller's.
    assert {m for m in _everything_used() if ":" in m} <= recorded


# --- a real Prometheus scraping `spa run` -----------------------------------------------------


class Prometheus:
    def __init__(self, workdir: Path, targets: list[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = workdir / "prometheus.yml"
        config.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(RULES)],
                    "scrape_configs": [
                        {
                            "job_name": "scheduled-pod-autoscaler",
                            "static_configs": [{"targets": targets}],
                        }
                    ],
                }
            )
        )
        binary = require_tool(
            "prometheus", "apt-get install prometheus (hack/system/install.sh test-packaging)"
        )
        self.process = ManagedProcess(
            "prometheus",
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            workdir / "prometheus.log",
        )

    def api(self, path: str, **query: str) -> Any:
        status, body = http_get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(query)}")
        assert status == 200, body
        answer = json.loads(body)
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expression: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.api("query", query=expression)["result"]
        return result

    def label_names(self, metric: str) -> set[str]:
        series = self.api("series", **{"match[]": metric})
        return {name for labels in series for name in labels}


LATE_WINDOW = {
    "schedule": "late-now",
    "boundary": "2026-11-26T12:00:00Z",
    "minReplicas": 5,
    "raisedAt": "2026-11-26T12:00:00Z",
    "readyAt": "2026-11-26T12:01:15Z",
    "readySeconds": 75,
    "outcome": "Late",
}


@pytest.fixture
def plane(control_plane_factory: Callable[..., ControlPlane]) -> ControlPlane:
    """A control plane of its own: the test restarts its API server."""
    plane = control_plane_factory()
    for directory in ("crd", "rbac"):
        plane.run_kubectl("apply", "--server-side", "-k", str(REPO / "config" / directory),
                          check=True)  # fmt: skip
    return plane


@pytest.mark.integration
def test_a_real_prometheus_finds_every_series_the_rules_and_dashboard_use(
    plane: ControlPlane, tmp_path: Path
) -> None:
    kubeconfig = plane.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
    )
    client = connect_blocking(kubeconfig=str(plane.kubeconfig))
    kube = Kube(client)
    plane.run_kubectl("wait", "--for=condition=Established", "crd", "--all", check=True)
    for namespace in ("shop", "faults"):
        plane.run_kubectl("create", "namespace", namespace, check=True)
    # `shop`: a window in force, an SPA whose HPA the API server refuses (a metric without its
    # source passes the CRD, not the HPA validation), a Schedule whose SPA does not exist.
    active_window(kube, "shop")
    # An SPA whose window orders node capacity for a target that does not exist: its capacity
    # is never ready (spa_capacity_not_ready 1, SpaCapacityNotReady pending).
    active_window(kube, "shop", name="nodes")
    kube.merge(
        SCHEDULED_POD_AUTOSCALERS, "shop", "nodes", {"spec": {"capacity": {"leadTime": "10m"}}}
    )
    # An SPA whose last measured window was late, as its status.windows says (written by a
    # controller before this one): spa_window_late is set from it at the first reconcile
    # (restart-safe, docs/api.md, "status.windows"), and SpaWindowLate fires.
    active_window(kube, "shop", name="late")
    kube.client.patch(
        SCHEDULED_POD_AUTOSCALERS,
        "shop",
        "late",
        {"status": {"windows": [LATE_WINDOW]}},
        patch_type="merge",
        field_manager="test",
        subresource="status",
    )
    kube.create(autoscaler(name="refused", namespace="shop", metrics=[{"type": "Resource"}]))
    kube.create(
        schedule(
            name="orphan",
            namespace="shop",
            target="ghost",
            type="Daily",
            startTime="01:00",
            endTime="02:00",
            minReplicas=2,
            maxReplicas=4,
        )
    )
    # `faults`: another process, without leader election, whose watches break and relist.
    active_window(kube, "faults")
    ports = {name: free_port() for name in ("leader", "leader-probes", "plain", "plain-probes")}

    def endpoints(name: str) -> tuple[str, ...]:
        return (
            f"--metrics-addr=127.0.0.1:{ports[name]}",
            f"--probe-addr=127.0.0.1:{ports[name + '-probes']}",
        )

    prometheus = Prometheus(tmp_path, [f"127.0.0.1:{ports[n]}" for n in ("leader", "plain")])
    prometheus.process.start()
    try:
        _scenario(plane, kube, kubeconfig, prometheus, ports, endpoints, tmp_path)
    finally:
        prometheus.process.stop()
        client.close()


def _scenario(
    plane: ControlPlane,
    kube: Kube,
    kubeconfig: Path,
    prometheus: Prometheus,
    ports: dict[str, int],
    endpoints: Callable[[str], tuple[str, ...]],
    tmp_path: Path,
) -> None:
    with spa_run(kubeconfig, "faults", *endpoints("plain"), log=tmp_path / "plain.log"):
        wait_for(answers(f"{prometheus.url}/-/ready"), within=60, what="Prometheus ready")
        window_applied(kube, "faults")
        # Watches see the API server go away and their resourceVersions compacted.
        plane.expire_resource_versions()
        plain_metrics = f"http://127.0.0.1:{ports['plain']}/metrics"
        wait_for(
            lambda: "spa_watch_relists_total{" in http_get(plain_metrics)[1],
            within=60,
            what="a relist after the resourceVersions expired",
        )
        election = leader_election_args("scheduled-pod-autoscaler-leader")
        with spa_run(kubeconfig, "shop", *election, *endpoints("leader"),
                     log=tmp_path / "leader.log"):  # fmt: skip
            window_applied(kube, "shop")
            wait_for(
                lambda: (
                    kube.status(SCHEDULED_POD_AUTOSCALERS, "shop", "refused").get("condition")
                    == "Degraded"
                ),
                within=30,
                what="the refused SPA Degraded",
            )
            used = _everything_used()

            def all_present() -> bool:
                missing = [m for m in sorted(used) if not prometheus.query(f"count({m})")]
                assert missing == [], f"not in Prometheus: {missing}"
                return True

            wait_for(
                all_present,
                within=60,
                interval=1,
                what="every metric the rules and dashboard use in Prometheus",
            )
            _check_database(prometheus, used)
            _check_rules_and_alerts(prometheus)
            _check_dashboard(prometheus)
            _check_exposition(http_get(f"http://127.0.0.1:{ports['leader']}/metrics")[1])


def _check_database(prometheus: Prometheus, used: dict[str, set[str]]) -> None:
    missing = {}
    for metric, labels in sorted(used.items()):
        if ":" in metric:
            continue  # recorded by the rules: their labels are what the rules keep
        absent = labels - prometheus.label_names(metric) - {"__name__"}
        if absent:
            missing[metric] = sorted(absent)
    assert missing == {}, f"labels the rules or dashboard use that no series carries: {missing}"
    build = prometheus.query(f'spa_build_info{{version="{__version__}"}}')
    assert len(build) == 2, build  # both processes


def _check_rules_and_alerts(prometheus: Prometheus) -> None:
    def evaluated() -> list[dict[str, Any]]:
        groups = prometheus.api("rules")["groups"]
        rules = [rule for group in groups for rule in group["rules"]]
        # Prometheus reports the zero time for a rule never evaluated.
        never = [rule for rule in rules if rule["lastEvaluation"].startswith("0001-")]
        return [] if never else rules

    rules = wait_for(evaluated, within=30, interval=1, what="every rule evaluated")
    assert {rule["name"] for rule in rules} == {
        rule.get("alert") or rule["record"] for rule in _rules()
    }
    broken = {rule["name"]: rule.get("lastError") for rule in rules if rule["health"] != "ok"}
    assert broken == {}

    def active() -> dict[str, set[tuple[str, ...]]]:
        found: dict[str, set[tuple[str, ...]]] = {}
        for alert in prometheus.api("alerts")["alerts"]:
            labels = alert["labels"]
            found.setdefault(labels["alertname"], set()).add(
                (labels.get("namespace", ""), labels.get("name", ""))
            )
        return found

    def expected() -> dict[str, set[tuple[str, ...]]]:
        # Pending (their `for` is 2 or 10 minutes) for exactly the broken objects. The restarted API
        # server failed some requests, and reconciles with them: SpaApiErrors and
        # SpaReconcileErrors are pending too while their expressions hold (a few hundred
        # requests in five minutes make each failure weigh).
        alerts = {
            "SpaAutoscalerDegraded": {("shop", "refused")},
            "SpaScheduleDegraded": {("shop", "orphan")},
            "SpaCapacityNotReady": {("shop", "nodes")},
            "SpaWindowLate": {("shop", "late")},
        }
        if prometheus.query("spa:kube_request_errors:ratio_rate5m > 0.1"):
            alerts["SpaApiErrors"] = {("", "")}
        if prometheus.query("spa:reconcile_errors:rate5m > 0"):
            alerts["SpaReconcileErrors"] = {("", "")}
        return alerts

    # Nothing else is raised. Compared until both answers come from the same evaluation.
    def matches() -> bool:
        assert active() == expected()
        return True

    wait_for(
        matches,
        within=30,
        interval=1,
        what="exactly the expected alerts pending",
    )


def _check_dashboard(prometheus: Prometheus) -> None:
    # A rate or increase needs two samples in its range: a series that appeared a scrape ago
    # (a refusal, say), or a scrape that timed out on a loaded machine, gives no data yet.
    def answered() -> bool:
        empty = [e for e in _dashboard_queries() if not prometheus.query(e)]
        assert empty == [], "dashboard queries without data"
        return True

    wait_for(answered, within=60, interval=2, what="every dashboard query answered with data")


def _check_exposition(exposition: str) -> None:
    result = subprocess.run(
        [_promtool(), "check", "metrics"], input=exposition, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout + result.stderr == ""
