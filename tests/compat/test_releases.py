"""The controller on the real control plane of every release in hack/testenv/releases.

`make test-compat` runs this module once per release (SPA_TESTENV_VERSION selects the
binaries), from Kubernetes 1.21 (the last to serve apiextensions.k8s.io/v1beta1 CRDs, and
autoscaling/v2beta2 but not v2) to the newest the Go module proxy serves. Each run does what a
user of that release would: apply the install manifests the docs name for it, apply the
samples, run `spa run` as the installed ServiceAccount with leader election, and then checks
a window applied and reverted on time, the statuses and printer columns `kubectl get` shows,
the HPA version, owner and garbage collection, and the Lease.

What a release serves is written here from Kubernetes' own release notes (not asked from the
server), so the controller's discovery is checked against an independent answer.
"""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from spa.api.crd import schedule_crd, scheduled_pod_autoscaler_crd
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import (
    EVENT,
    HPA_V2,
    HPA_V2BETA2,
    LEASE,
    BlockingKubeClient,
    Resource,
    connect_blocking,
)
from tests.builders import autoscaler, deployment, schedule
from tests.compat.install import CRD_NAMES, get_or_none, install_command, kubectl, manifest
from tests.integration.processes import (
    CONTROLLER_NAMESPACE,
    log_lines,
    spa_run,
    wait_for,
    writes,
)
from tests.testenv import ControlPlane, kubernetes_version

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.slow, pytest.mark.compat]

REPO = Path(__file__).resolve().parents[2]
FIELD_MANAGER = "scheduled-pod-autoscaler"
# The Lease of the installed Deployment's arguments (spa/controller/options.py's default id).
LEASE_NAME = "scheduled-pod-autoscaler-leader"
# A window must be in force this soon after its boundary (as in tests/integration/test_spa_run).
LAG = 2.0


def serves_v1beta1_crds(minor: int) -> bool:
    """apiextensions.k8s.io/v1beta1 was removed in 1.22."""
    return minor <= 21


def enforces_cel_rules(minor: int) -> bool:
    """x-kubernetes-validations are enforced from 1.25 (docs/install.md); before it only the
    OpenAPI schema (types, patterns, lengths) is checked."""
    return minor >= 25


def hpa_resource(minor: int) -> Resource:
    """autoscaling/v2 came in 1.23; before it the newest HPA version is v2beta2."""
    return HPA_V2 if minor >= 23 else HPA_V2BETA2


def table(text: str) -> list[dict[str, str]]:
    """Rows of kubectl's column output; cells are cut at the header's column starts."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [match.start() for match in re.finditer(r"\S+", header)]
    names = header.split()
    rows = []
    for line in lines[1:]:
        bounds = [*starts[1:], len(line) + 1]
        rows.append(
            {
                name: line[start:end].strip()
                for name, start, end in zip(names, starts, bounds, strict=True)
            }
        )
    return rows


def wide_columns(crd: dict[str, Any]) -> list[str]:
    """The columns `kubectl get -o wide` shows for a CRD of spa/api/crd.py, in order."""
    columns = crd["spec"]["versions"][0]["additionalPrinterColumns"]
    return ["NAME", *(str(column["name"]).upper() for column in columns)]


def next_minute(after: float = 15.0) -> datetime:
    """The first whole minute at least `after` seconds away (time to set up before it)."""
    now = datetime.now(UTC)
    start = (now + timedelta(minutes=1)).replace(second=0, microsecond=0)
    return start if (start - now).total_seconds() >= after else start + timedelta(minutes=1)


def autoscaler_and_schedule(
    namespace: str, name: str, start: datetime, end: datetime
) -> list[dict[str, Any]]:
    """SPA `name` (base 2/5) and a Daily Schedule `name` raising it to 4/8 from `start` to `end`,
    with the Deployment it scales (no kubelet here: the pods stay Pending, which the HPA does
    not mind)."""
    cpu_60 = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}
    return [
        deployment(name=name, namespace=namespace),
        autoscaler(
            name=name,
            namespace=namespace,
            minReplicas=2,
            maxReplicas=5,
            metrics=[{"type": "Resource", "resource": cpu_60}],
        ),
        schedule(
            name=name,
            namespace=namespace,
            target=name,
            type="Daily",
            startTime=start.strftime("%H:%M"),
            endTime=end.strftime("%H:%M"),
            timeZone="UTC",
            minReplicas=4,
            maxReplicas=8,
        ),
    ]


def window_objects(namespace: str, boundary: datetime) -> list[dict[str, Any]]:
    """Two windows that meet at `boundary`: `opening` starts there, `closing` (in force since
    two minutes before) ends there, so one wait checks both an apply and a revert."""
    minute = timedelta(minutes=1)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        *autoscaler_and_schedule(namespace, "opening", boundary, boundary + minute),
        *autoscaler_and_schedule(namespace, "closing", boundary - 2 * minute, boundary),
    ]


def bounds(client: BlockingKubeClient, hpa: Resource, namespace: str, name: str) -> tuple[int, int]:
    spec = client.get(hpa, namespace, name)["spec"]
    return spec.get("minReplicas"), spec["maxReplicas"]


def lag_of(check: Callable[[], bool], boundary: datetime, what: str) -> float:
    """Seconds from `boundary` until `check()` first holds (negative: it held before)."""
    wait_for(check, within=(boundary - datetime.now(UTC)).total_seconds() + 15, what=what)
    return (datetime.now(UTC) - boundary).total_seconds()


@pytest.mark.parametrize("manifests", ["install", "legacy"])
def test_release(
    manifests: str, control_plane_factory: Callable[..., ControlPlane], tmp_path: Path
) -> None:
    # No nodes: the suite runs no pods, and build.sh builds kube-scheduler and kwok only for the
    # default release (docs/development.md, "Nodes on other releases").
    plane = control_plane_factory(nodes=0)
    release = kubernetes_version()
    minor = plane.binaries.minor
    version = json.loads(kubectl(plane, "version", "-o", "json"))["serverVersion"]
    assert version["gitVersion"] == release

    if manifests == "install" and minor < 23:
        check_cel_rules_refused(plane)
    install = plane.run_kubectl(*install_command(manifests, minor))
    if manifests == "legacy" and not serves_v1beta1_crds(minor):
        # docs/install.md: config/legacy is for clusters that still serve v1beta1 CRDs only.
        assert install.returncode != 0
        assert "apiextensions.k8s.io/v1beta1" in install.stderr, install.stderr
        return
    assert install.returncode == 0, install.stderr
    kubectl(
        plane,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *(f"crd/{name}" for name in CRD_NAMES),
    )

    # The samples go in before the controller starts: it must pick up what already exists.
    kubectl(
        plane, "apply", "-f", "-", input=manifest([deployment(name="nginx", namespace="default")])
    )
    kubectl(plane, "apply", "--server-side", "-f", str(REPO / "config" / "samples"))

    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    hpa = hpa_resource(minor)
    log = tmp_path / "spa-run.log"
    sa_kubeconfig = plane.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
    )
    election = ["--enable-leader-election", f"--leader-election-namespace={CONTROLLER_NAMESPACE}"]
    try:
        with spa_run(sa_kubeconfig, None, *election, log=log) as process:
            # Discovery: the controller picked the HPA version this release serves.
            wait_for(
                lambda: any(
                    line.get("msg") == f"managing HorizontalPodAutoscalers as {hpa.api_version}"
                    for line in log_lines(log)
                ),
                within=30,
                what=f"controller managing {hpa.api_version}",
            )
            check_samples(plane, admin, hpa)
            check_lease(admin)

            # The timed windows come once it runs (seen through its watches): a boundary
            # chosen before a slow start could pass before the controller is up.
            boundary = next_minute()
            kubectl(plane, "apply", "-f", "-", input=manifest(window_objects("compat", boundary)))
            check_window(admin, hpa, boundary)
            check_garbage_collection(plane, admin, hpa)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
    finally:
        admin.close()
    errors = [line for line in log_lines(log) if line.get("level") in ("error", "critical")]
    assert not errors, errors


# The CRD's pattern accepts it (any digits, 21 characters of the 32 allowed); only the CEL rule
# bounds it, and it is too large even for durationpy (and timedelta) to read.
HUGE_LEAD = "99999999999999999999h"


def test_a_lead_time_too_large_to_read_is_reported_without_cel_rules(
    control_plane_factory: Callable[..., ControlPlane], tmp_path: Path
) -> None:
    """Without the CEL rules a Schedule (or an SPA) with a leadTime far beyond 24h reaches the
    controller. It is reported on that object, field-addressed, as any invalid one is (a
    Degraded status and a Warning event), while the SPA's other Schedule drives the HPA and no
    reconcile fails."""
    if enforces_cel_rules(int(kubernetes_version().split(".")[1])):
        pytest.skip("the API server refuses such a leadTime from 1.25 (a CEL rule of the CRD)")
    plane = control_plane_factory(nodes=0)
    minor = plane.binaries.minor
    assert not enforces_cel_rules(minor)
    install = plane.run_kubectl(*install_command("install", minor))
    assert install.returncode == 0, install.stderr
    kubectl(
        plane,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *(f"crd/{name}" for name in CRD_NAMES),
    )

    # A window in force for the whole test (a Daily window may cross midnight).
    now = datetime.now(UTC)
    namespace = "lead"
    good = autoscaler_and_schedule(
        namespace, "web", now - timedelta(minutes=2), now + timedelta(minutes=30)
    )
    bad_schedule = json.loads(json.dumps(good[-1]))
    bad_schedule["metadata"]["name"] = "web-huge-lead"
    bad_schedule["spec"]["leadTime"] = HUGE_LEAD
    # An SPA with such a leadTime is its own invalid spec (it gets no HPA, so its Deployment
    # need not exist).
    bad_autoscaler = json.loads(json.dumps(good[1]))
    bad_autoscaler["metadata"]["name"] = "huge-lead"
    bad_autoscaler["spec"]["horizontalPodAutoscalerSpec"]["scaleTargetRef"]["name"] = "huge-lead"
    bad_autoscaler["spec"]["leadTime"] = "30000000000h"
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        *good,
        bad_schedule,
        bad_autoscaler,
    ]
    # Nothing refuses them: the OpenAPI schema's pattern and length are all this release checks.
    kubectl(plane, "apply", "-f", "-", input=manifest(objects))

    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    hpa = hpa_resource(minor)
    log = tmp_path / "spa-run.log"
    sa_kubeconfig = plane.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
    )
    election = ["--enable-leader-election", f"--leader-election-namespace={CONTROLLER_NAMESPACE}"]
    lead_error = f"spec.leadTime: must be at most 24h, got '{HUGE_LEAD}'"

    def status(resource: Resource, name: str) -> dict[str, Any]:
        return dict(admin.get(resource, namespace, name).get("status") or {})

    def warned(name: str, reason: str) -> list[str]:
        return [
            event["message"]
            for event in admin.list(EVENT, namespace=namespace).items
            if event["involvedObject"]["name"] == name
            and event["reason"] == reason
            and event["type"] == "Warning"
        ]

    try:
        with spa_run(sa_kubeconfig, None, *election, log=log) as process:
            # The valid Schedule drives the HPA; the SPA lists it alone as active.
            wait_for(
                lambda: (
                    get_or_none(admin, hpa, namespace, "web") is not None
                    and bounds(admin, hpa, namespace, "web") == (4, 8)
                    and status(SCHEDULED_POD_AUTOSCALERS, "web").get("activeSchedules") == ["web"]
                ),
                within=30,
                what="the valid Schedule's bounds on the HPA",
            )
            assert status(SCHEDULED_POD_AUTOSCALERS, "web")["condition"] == "Available"
            # The other is reported on itself, naming the field, like any invalid Schedule.
            wait_for(
                lambda: (
                    status(SCHEDULES, "web-huge-lead").get("condition") == "Degraded"
                    and status(SCHEDULES, "web-huge-lead").get("message") == lead_error
                ),
                within=15,
                what="the Schedule with a huge leadTime Degraded, naming spec.leadTime",
            )
            wait_for(
                lambda: set(warned("web-huge-lead", "InvalidSchedule")) == {lead_error},
                within=15,
                what="an InvalidSchedule Warning event naming spec.leadTime",
            )
            assert status(SCHEDULES, "web")["condition"] == "Progressing"
            # The SPA with such a leadTime: its own invalid spec, and no HPA.
            wait_for(
                lambda: (
                    status(SCHEDULED_POD_AUTOSCALERS, "huge-lead").get("condition") == "Degraded"
                ),
                within=15,
                what="the SPA with a huge leadTime Degraded",
            )
            ready = [
                condition
                for condition in status(SCHEDULED_POD_AUTOSCALERS, "huge-lead")["conditions"]
                if condition["type"] == "Ready"
            ]
            assert [(c["reason"], c["message"]) for c in ready] == [
                (
                    "InvalidSpec",
                    "invalid spec: spec.leadTime: must be at most 24h, got '30000000000h'",
                )
            ]
            assert get_or_none(admin, hpa, namespace, "huge-lead") is None
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
    finally:
        admin.close()
    lines = log_lines(log)
    errors = [line for line in lines if line.get("level") in ("error", "critical")]
    assert not errors, errors
    assert not [line for line in lines if "reconcile failed" in str(line.get("msg", ""))]


# The first release that serves an HPA's behavior tolerance (docs/schedules.md, "Newer HPA
# fields"; alpha behind HPAConfigurableTolerance in 1.33, on by default from 1.35).
TOLERANCE_MINOR = 33


def test_a_tolerance_the_release_does_not_serve_is_warned_about_once(
    control_plane_factory: Callable[..., ControlPlane], tmp_path: Path
) -> None:
    """On a release without the field the API server prunes the SPA's tolerance from the HPA
    silently. The controller keeps the HPA it got (one create, no write after it however often
    it reconciles), the SPA stays Available, and one Warning event says what was dropped."""
    if int(kubernetes_version().split(".")[1]) >= TOLERANCE_MINOR:
        pytest.skip("this release serves behavior tolerance")
    plane = control_plane_factory(nodes=0)
    minor = plane.binaries.minor
    install = plane.run_kubectl(*install_command("install", minor))
    assert install.returncode == 0, install.stderr
    kubectl(
        plane,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        *(f"crd/{name}" for name in CRD_NAMES),
    )
    namespace = "tolerance"
    now = datetime.now(UTC)
    objects = autoscaler_and_schedule(
        namespace, "web", now + timedelta(hours=2), now + timedelta(hours=3)
    )
    spec = objects[1]["spec"]["horizontalPodAutoscalerSpec"]
    spec["behavior"] = {"scaleUp": {"tolerance": "50m"}, "scaleDown": {"tolerance": "100m"}}
    kubectl(
        plane,
        "apply",
        "-f",
        "-",
        input=manifest(
            [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, *objects]
        ),
    )
    # The CRD keeps the field (it is in the SPA's schema): only the HPA's server prunes it.
    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    hpa = hpa_resource(minor)
    log = tmp_path / "spa-run.log"
    sa_kubeconfig = plane.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
    )

    def dropped() -> list[dict[str, Any]]:
        return [
            event
            for event in admin.list(EVENT, namespace=namespace).items
            if event["reason"] == "HPAFieldDropped" and event["involvedObject"]["name"] == "web"
        ]

    try:
        stored = admin.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["spec"]
        assert stored["horizontalPodAutoscalerSpec"]["behavior"] == spec["behavior"]
        with spa_run(sa_kubeconfig, None, log=log) as process:
            created = wait_for(
                lambda: get_or_none(admin, hpa, namespace, "web"), within=30, what="the HPA"
            )
            assert "tolerance" not in (created["spec"].get("behavior") or {}).get("scaleUp", {})
            assert "tolerance" not in (created["spec"].get("behavior") or {}).get("scaleDown", {})
            [warning] = wait_for(dropped, within=15, what="an HPAFieldDropped Warning")
            assert warning["type"] == "Warning"
            assert warning["message"].startswith(
                "the API server stored the HorizontalPodAutoscaler without "
                "behavior.scaleUp.tolerance, behavior.scaleDown.tolerance: "
            )
            status = admin.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["status"]
            assert status["condition"] == "Available"
            # A change of the spec is one patch, pruned again and not warned about again; the
            # HPA controller's status updates (every second here) keep reconciling meanwhile.
            admin.patch(
                SCHEDULED_POD_AUTOSCALERS,
                namespace,
                "web",
                {"spec": {"horizontalPodAutoscalerSpec": {"maxReplicas": 6}}},
                patch_type="merge",
                field_manager="test",
            )
            wait_for(
                lambda: (
                    bounds(admin, hpa, namespace, "web") == (2, 6)
                    and admin.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["status"].get(
                        "maxReplicas"
                    )
                    == 6
                ),
                within=15,
                what="the new maxReplicas on the HPA and in the status",
            )
            time.sleep(3)  # room for a loop of writes to show, were there one
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
        [said] = dropped()
        assert said.get("count", 1) == 1
        assert [line["msg"].split(" ")[0] for line in writes(log)] == ["created", "applied"]
    finally:
        admin.close()


def check_cel_rules_refused(plane: ControlPlane) -> None:
    """Why docs/install.md says `--validate=false` before 1.23: kubectl's schema check refuses
    the CEL rules, and a server-side apply refuses them even without that check."""
    manifest_file = str(REPO / "config/install/install.yaml")
    checked = plane.run_kubectl("apply", "--dry-run=server", "-f", manifest_file)
    assert checked.returncode != 0
    assert 'unknown field "x-kubernetes-validations"' in checked.stderr, checked.stderr
    server_side = plane.run_kubectl(
        "apply", "--server-side", "--validate=false", "--dry-run=server", "-f", manifest_file
    )
    assert server_side.returncode != 0
    assert "field not declared in schema" in server_side.stderr, server_side.stderr


def check_window(admin: BlockingKubeClient, hpa: Resource, boundary: datetime) -> None:
    """At `boundary` one window opens and another closes, each on time, statuses following."""

    def at(name: str, expected: tuple[int, int]) -> bool:
        return bounds(admin, hpa, "compat", name) == expected

    def status(name: str) -> dict[str, Any]:
        return dict(admin.get(SCHEDULED_POD_AUTOSCALERS, "compat", name)["status"])

    def active(name: str) -> list[str]:
        return list(status(name)["activeSchedules"])

    def next_transition(name: str) -> str:
        return str(status(name)["nextTransitionTime"])

    # The HPAs first, then the statuses that report them.
    wait_for(
        lambda: (
            at("opening", (2, 5))
            and at("closing", (4, 8))
            and active("closing") == ["closing"]
            and active("opening") == []
            and next_transition("opening") == boundary.strftime("%Y-%m-%dT%H:%M:%SZ")
        ),
        within=15,
        what="both windows' HPAs and statuses before the boundary",
    )
    lag_open = lag_of(lambda: at("opening", (4, 8)), boundary, "window opened")
    lag_close = lag_of(lambda: at("closing", (2, 5)), boundary, "window closed")
    assert -0.5 < lag_open < LAG, lag_open
    assert -0.5 < lag_close < LAG, lag_close
    wait_for(
        lambda: active("opening") == ["opening"] and active("closing") == [],
        within=5,
        what="statuses after the boundary",
    )


def check_samples(plane: ControlPlane, admin: BlockingKubeClient, hpa: Resource) -> None:
    """config/samples: the HPA, owned by its SPA and written as `hpa`; statuses and columns."""
    spa = wait_for(
        lambda: (
            (obj := admin.get(SCHEDULED_POD_AUTOSCALERS, "default", "nginx"))
            .get("status", {})
            .get("condition")
            == "Available"
            and obj
        ),
        within=30,
        what="sample SPA Available",
    )
    current = wait_for(
        lambda: get_or_none(admin, hpa, "default", "nginx"), within=15, what="sample HPA"
    )
    assert current["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "autoscaling.d-kuro.github.io/v1",
            "kind": "ScheduledPodAutoscaler",
            "name": "nginx",
            "uid": spa["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    # The server records the version each manager wrote with.
    written = {
        entry["apiVersion"]
        for entry in current["metadata"]["managedFields"]
        if entry["manager"] == FIELD_MANAGER
    }
    assert written == {hpa.api_version}, current["metadata"]["managedFields"]
    # Which sample windows are in force depends on the hour the test runs (nginx-lunch is
    # 11:30-14:00 in Berlin): a Schedule is Progressing exactly while the SPA lists it active,
    # Available otherwise.
    names = sorted(
        item["metadata"]["name"] for item in admin.list(SCHEDULES, namespace="default").items
    )
    assert names == [
        "nginx-lunch",
        "nginx-nightly-import",
        "nginx-push-notification",
        "nginx-tv-appearance",
    ]
    wait_for(
        lambda: schedule_conditions(admin, names) == expected_conditions(admin, names),
        within=15,
        what="sample Schedules Available, or Progressing where the SPA lists them active",
    )
    spa = admin.get(SCHEDULED_POD_AUTOSCALERS, "default", "nginx")
    current = admin.get(hpa, "default", "nginx")
    assert (spa["status"]["minReplicas"], spa["status"]["maxReplicas"]) == (
        current["spec"]["minReplicas"],
        current["spec"]["maxReplicas"],
    )
    # Printer columns, through the server's Table and the real kubectl, against the statuses
    # read around them (retried should a window boundary fall in between).
    wait_for(lambda: columns_show_statuses(plane, admin, names), within=15, what="columns")
    # Both kinds at once, as docs/install.md shows them (the `autoscaling` category too).
    both = kubectl(plane, "get", "spa,schedule", "-n", "default", "-o", "wide")
    assert "scheduledpodautoscaler.autoscaling.d-kuro.github.io/nginx" in both
    assert "schedule.autoscaling.d-kuro.github.io/nginx-tv-appearance" in both
    category = kubectl(plane, "get", "autoscaling", "-n", "default", "-o", "name").splitlines()
    assert "scheduledpodautoscaler.autoscaling.d-kuro.github.io/nginx" in category
    assert "schedule.autoscaling.d-kuro.github.io/nginx-lunch" in category


def schedule_conditions(admin: BlockingKubeClient, names: list[str]) -> dict[str, str | None]:
    return {
        name: admin.get(SCHEDULES, "default", name).get("status", {}).get("condition")
        for name in names
    }


def expected_conditions(admin: BlockingKubeClient, names: list[str]) -> dict[str, str]:
    """Progressing for the Schedules the sample SPA lists active, Available for the others."""
    status = admin.get(SCHEDULED_POD_AUTOSCALERS, "default", "nginx").get("status", {})
    active = set(status.get("activeSchedules") or [])
    return {name: "Progressing" if name in active else "Available" for name in names}


def columns_show_statuses(plane: ControlPlane, admin: BlockingKubeClient, names: list[str]) -> bool:
    """`kubectl get -o wide` of the samples shows the specs and the statuses the API holds."""
    spa = admin.get(SCHEDULED_POD_AUTOSCALERS, "default", "nginx")
    conditions = schedule_conditions(admin, names)
    autoscalers = table(
        kubectl(plane, "get", "scheduledpodautoscalers", "-n", "default", "-o", "wide")
    )
    assert list(autoscalers[0]) == wide_columns(scheduled_pod_autoscaler_crd())
    row = autoscalers[0]
    assert (row["NAME"], row["MINPODS"], row["MAXPODS"], row["STATUS"]) == (
        "nginx",
        "3",
        "10",
        "Available",
    )
    assert (row["CURRENTMIN"], row["CURRENTMAX"]) == (
        str(spa["status"]["minReplicas"]),
        str(spa["status"]["maxReplicas"]),
    )
    assert row["NEXTTRANSITION"] == spa["status"]["nextTransitionTime"]
    rows = {
        r["NAME"]: r
        for r in table(kubectl(plane, "get", "schedules", "-n", "default", "-o", "wide"))
    }
    assert sorted(rows) == names
    assert list(next(iter(rows.values()))) == wide_columns(schedule_crd())
    assert rows["nginx-lunch"] == {
        **rows["nginx-lunch"],
        "REFERENCE": "nginx",
        "TYPE": "Daily",
        "STARTTIME": "11:30",
        "ENDTIME": "14:00",
        "MINPODS": "6",
        "MAXPODS": "",
    }
    assert {name: row["STATUS"] for name, row in rows.items()} == conditions
    assert rows["nginx-push-notification"]["STARTDAYOFWEEK"] == "Monday"
    return True


def check_lease(admin: BlockingKubeClient) -> None:
    """The installed ServiceAccount holds the Deployment's Lease and keeps renewing it."""
    lease = wait_for(
        lambda: get_or_none(admin, LEASE, CONTROLLER_NAMESPACE, LEASE_NAME),
        within=15,
        what="leader Lease",
    )
    holder = lease["spec"]["holderIdentity"]
    assert holder
    renewed = lease["spec"]["renewTime"]
    wait_for(
        lambda: admin.get(LEASE, CONTROLLER_NAMESPACE, LEASE_NAME)["spec"]["renewTime"] != renewed,
        within=lease["spec"]["leaseDurationSeconds"],
        what="Lease renewed",
    )
    assert admin.get(LEASE, CONTROLLER_NAMESPACE, LEASE_NAME)["spec"]["holderIdentity"] == holder


def check_garbage_collection(plane: ControlPlane, admin: BlockingKubeClient, hpa: Resource) -> None:
    """Deleting the SPA with kubectl: the release's garbage collector removes its HPA and its
    Schedule (both carry its controller ownerReference)."""
    spa = admin.get(SCHEDULED_POD_AUTOSCALERS, "compat", "opening")
    for dependent in (
        admin.get(hpa, "compat", "opening"),
        admin.get(SCHEDULES, "compat", "opening"),
    ):
        owners = dependent["metadata"]["ownerReferences"]
        assert [(o["uid"], o.get("controller")) for o in owners] == [(spa["metadata"]["uid"], True)]
    kubectl(plane, "delete", "scheduledpodautoscaler", "opening", "-n", "compat", "--wait=false")
    wait_for(
        lambda: (
            get_or_none(admin, hpa, "compat", "opening") is None
            and get_or_none(admin, SCHEDULES, "compat", "opening") is None
        ),
        within=30,
        what="HPA and Schedule collected",
    )
    # Only the deleted SPA's dependents: the other window's HPA stays.
    assert get_or_none(admin, hpa, "compat", "closing") is not None
