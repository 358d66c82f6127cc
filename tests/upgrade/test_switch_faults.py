"""The live switch from the previous release to this one with Helm and back with `helm
rollback`, with faults in the middle of each handover (docs/install.md, "Version skew"; `make
test-upgrade`): a replica killed right after it takes the Lease, the API server restarted
while the Lease moves, and this release's replica killed while it leads during the downgrade.

1. As tests/upgrade/test_live_switch.py (which installs with `kubectl apply`): a control plane
   with an audit log, SPAs whose windows open and close at the minute boundaries F .. F+3 min.
   The previous release installed from its own chart with `helm install` (its CRDs in
   `crds/`), and two replicas of it run (the chart's two) with its Deployment's arguments: A
   leads, B stands by, each as a ServiceAccount of its own with the release's bindings.
2. At F+70 s this release's chart is installed over it with the `helm upgrade` of
   docs/install.md, "Upgrading to 0.2.0 with Helm" (the chart takes the CRDs over and upgrades
   them), and its replica N started beside A and B.
3. The kill (F+108 s): B is paused (SIGSTOP) so that N, not B, takes the Lease that A releases
   when it is stopped (SIGTERM); in a cluster the two standbys race, and either may win. N is
   SIGKILLed as soon as the Lease names it and B resumes: nobody leads until the Lease N
   wrote expires, and the boundary F+2 min falls in that gap; B takes the Lease and applies it.
   (B, not A restarted: a 0.1.0 replica that restarts under 0.2.0's RBAC never campaigns,
   docs/install.md, "Version skew".)
4. N restarts (as the kubelet restarts a killed container) and stands by.
5. The API server restart (F+140 s): the API server stops, B is stopped (SIGTERM; its release
   of the Lease cannot reach the server), the API server starts again; N takes the Lease once
   B's expires and applies F+3 min.
6. The downgrade (F+185 s, once N has applied F+3 min): `helm rollback` to 0.1.0's revision,
   as docs/install.md says (the CRDs stay as they are, the RBAC goes back with the
   Deployment); 0.1.0's two replicas started again beside N, which leads. N is SIGKILLed at
   F+4 min minus the Lease duration (+3 s), so that the boundary F+4 min (each SPA's `-late`
   window opens) falls while the Lease names a dead replica; A or B takes the Lease when it
   expires and applies it, then F+5 min (the window closes); then a quiet minute.

The oracle as in the switch without faults (no transition missed, no write that changed
nothing, no wrong value, no write by a replica that did not hold the Lease or after its renew
deadline; HPA UIDs and the status fields and annotations kept between two boundaries), every
transition reached within the Lease duration plus the retry period of its boundary (a
transition due while no replica leads waits for the Lease to expire, never longer), and the
SPA CRD serves after the upgrade the fields 0.1.0's lacked, labelled with this version. Over
the downgrade: the release's manifest is 0.1.0's again, the SPA CRD still serves the newer
fields, no status field or annotation this release wrote is gone once 0.1.0 has applied two
boundaries (compared in the same state, the base of F+3 and F+5 min), and 0.1.0, reading
what this release wrote, logs no error and writes nothing but the Lease in the quiet minute.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.soak import Oracle, audit_policy_for_soak
from spa import __version__
from spa.controller.manager import LeaderElection
from spa.kube import connect_blocking
from tests.packaging.common import helm_binary
from tests.testenv.audit import service_account_user
from tests.testenv.controlplane import ControlPlane
from tests.upgrade.previous import PREVIOUS_VERSION, Previous, clean_env
from tests.upgrade.switch import (
    CONTROLLER_NAMESPACE,
    LEASE_NAME,
    NAMESPACE,
    OLD_ACCOUNT,
    REPO,
    SPAS,
    WINDOW_MINUTES,
    Replicas,
    bind_account,
    create_fleet,
    documents,
    errors_in,
    first_boundary,
    fleet,
    hpa_bounds,
    hpa_uids,
    identity,
    judged,
    kept,
    last_start,
    lease_holder,
    lost,
    sleep_until,
    wait,
    writes_besides_lease,
)

CHART = Path("charts") / "scheduled-pod-autoscaler"
SPA_CRD = "scheduledpodautoscalers.autoscaling.d-kuro.github.io"
SPA_CRD_FILE = "autoscaling.d-kuro.github.io_scheduledpodautoscalers.yaml"
STANDBY_ACCOUNT = "scheduled-pod-autoscaler-standby"
NEW_ACCOUNT = "scheduled-pod-autoscaler-next"
USERS = {
    service_account_user(CONTROLLER_NAMESPACE, OLD_ACCOUNT): "old-a",
    service_account_user(CONTROLLER_NAMESPACE, STANDBY_ACCOUNT): "old-b",
    service_account_user(CONTROLLER_NAMESPACE, NEW_ACCOUNT): "new",
}
# What both releases' `spa run` lead with (their Deployments set no flag of the Lease).
ELECTION = LeaderElection(namespace=CONTROLLER_NAMESPACE, name=LEASE_NAME)
# Seconds after the first boundary F.
NEW_STARTS_S = 70.0
# A stops here; N is killed a moment later, so that the Lease it wrote outlives F+2 min
# (its expiry is at least the Lease duration after the kill).
HANDOVER_S = 2 * 60 - ELECTION.lease_duration + 3.0
NEW_RESTARTS_S = 130.0
# Statuses and annotations under B (once it has applied F+2 min) and under N, before F+3 min.
UNDER_OLD_BY_S = 138.0
APISERVER_RESTART_S = 140.0
LATEST_UNDER_NEW_S = 178.0
TAKEN_OVER_SETTLE_S = 8.0
# The downgrade: `helm rollback` once N has applied F+3 min; N killed so that the Lease it
# wrote outlives F+4 min, the boundary of the `-late` windows (closed at F+5 min).
LATE_MINUTE = WINDOW_MINUTES + 1
ROLLBACK_S = WINDOW_MINUTES * 60 + 5.0
DOWN_HANDOVER_S = LATE_MINUTE * 60 - ELECTION.lease_duration + 3.0
# After the last boundary (F+5 min): time to apply it, then the quiet minute.
QUIET_AFTER_S, QUIET_S = 15.0, 60.0

pytestmark = pytest.mark.timeout(1200)


class Helm:
    """The pinned helm (tests/packaging/common.py) with its cache, configuration and data under
    the test's directory, on the plane as admin; the release as docs/install.md names it."""

    RELEASE = "scheduled-pod-autoscaler"

    def __init__(self, plane: ControlPlane, home: Path) -> None:
        self.binary = helm_binary()
        self.kubeconfig = str(plane.kubeconfig)
        self.env = clean_env() | {
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            [self.binary, *args, "--namespace", CONTROLLER_NAMESPACE, "--kubeconfig",
             self.kubeconfig],
            capture_output=True, text=True, env=self.env, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, f"helm {' '.join(args)}\n{done.stderr}"
        return done.stdout

    def manifest(self, path: Path) -> Path:
        """What the release's last revision rendered (its Deployment, its bindings)."""
        path.write_text(self("get", "manifest", self.RELEASE))
        return path

    def revision_of(self, version: str) -> int:
        """The newest revision of the release whose chart is `version`."""
        history = json.loads(self("history", self.RELEASE, "--output", "json"))
        chart = f"{self.RELEASE}-{version}"
        return max(int(entry["revision"]) for entry in history if entry["chart"] == chart)


def spa_crd(plane: ControlPlane) -> tuple[set[str], dict[str, str]]:
    """The fields the SPA CRD's stored version serves, and its labels."""
    crd = json.loads(plane.run_kubectl("get", "crd", SPA_CRD, "-o", "json", check=True).stdout)
    (stored,) = (version for version in crd["spec"]["versions"] if version["storage"])
    return schema_fields(stored["schema"]["openAPIV3Schema"]), crd["metadata"].get("labels", {})


def schema_fields(schema: dict[str, Any], prefix: str = "") -> set[str]:
    found: set[str] = set()
    for name, child in (schema.get("properties") or {}).items():
        found |= {prefix + name} | schema_fields(child, f"{prefix}{name}.")
    if "items" in schema:
        found |= schema_fields(schema["items"], f"{prefix}[].")
    return found


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[ControlPlane]:
    with ControlPlane(
        tmp_path / "plane", audit_policy=audit_policy_for_soak(USERS), controller_manager=False
    ) as started:
        yield started


def test_helm_switch_and_rollback_with_replicas_killed_and_the_apiserver_restarted(
    previous: Previous, plane: ControlPlane, tmp_path: Path
) -> None:
    helm = Helm(plane, tmp_path / "helm-home")
    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    replicas = Replicas(plane, tmp_path)
    old_command = [str(previous.spa)]
    timeline: dict[str, float] = {}
    # A transition due while no replica leads waits for the Lease to expire, never longer.
    late = ELECTION.lease_duration + ELECTION.retry_period

    try:
        # 0.1.0's chart as its docs say (its CRDs in crds/, installed once by Helm).
        helm("install", Helm.RELEASE, str(previous.source / CHART), "--create-namespace")
        old_install = helm.manifest(tmp_path / "old-release.yaml")
        plane.run_kubectl(
            "wait", "--for=condition=Established", f"crd/{SPA_CRD}", check=True, timeout=60
        )
        before_upgrade, _ = spa_crd(plane)
        bind_account(plane, old_install, STANDBY_ACCOUNT)
        plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
        first_dt = first_boundary(datetime.now(UTC))
        first = first_dt.timestamp()
        last = first + (LATE_MINUTE + 1) * 60
        objects = fleet(random.Random(first_dt.isoformat()), first_dt, late_minute=LATE_MINUTE)
        create_fleet(admin, objects)
        started = time.time()
        (tmp_path / "manifests.json").write_text(json.dumps(objects))

        a = replicas.replica("old-a", old_command, old_install, OLD_ACCOUNT, current=False)
        a.start()
        wait(lambda: len(hpa_uids(admin)) == SPAS, within=60, what="A creates every HPA")
        uids = hpa_uids(admin)
        wait(lambda: lease_holder(admin) != "", within=30, what="A leads")
        a_identity = lease_holder(admin)
        b = replicas.replica("old-b", old_command, old_install, STANDBY_ACCOUNT, current=False)
        b.start()
        wait(lambda: identity(b.log_path) != "", within=60, what="B campaigns")
        b_identity = identity(b.log_path)

        # The upgrade: this release's manifests over the old ones, N beside A and B.
        sleep_until(first + NEW_STARTS_S)
        # docs/install.md, "Upgrading to 0.2.0 with Helm": one upgrade, adopting the CRDs.
        helm(
            "upgrade", Helm.RELEASE, str(REPO / CHART),
            "--reset-then-reuse-values", "--take-ownership", "--force-conflicts",
        )  # fmt: skip
        new_install = helm.manifest(tmp_path / "new-release.yaml")
        upgraded, labels = spa_crd(plane)
        bind_account(plane, new_install, STANDBY_ACCOUNT)  # B keeps A's bindings
        bind_account(plane, new_install, NEW_ACCOUNT)
        new = replicas.replica(
            "new", [sys.executable, "-m", "spa.cli"], new_install, NEW_ACCOUNT, current=True
        )
        new.start()
        wait(lambda: identity(new.log_path) != "", within=60, what="N campaigns")
        n_identity = identity(new.log_path)
        assert lease_holder(admin) == a_identity, "a standby took the Lease from a leader"

        # Fault 1: N killed as soon as it holds the Lease; B takes it once it expires.
        sleep_until(first + HANDOVER_S)
        b.pause()
        try:
            a.stop(timeout=30)
            wait(lambda: lease_holder(admin) == n_identity, within=30, what="N takes the Lease")
            new.kill()
            timeline["killed"] = time.time()
        finally:
            b.resume()
        wait(
            lambda: lease_holder(admin) == b_identity,
            within=ELECTION.lease_duration + 30,
            what="B takes the Lease once it expires",
        )
        timeline["b_leads"] = time.time()

        # N restarts beside B, as the kubelet restarts a killed container.
        sleep_until(first + NEW_RESTARTS_S)
        new.start()
        wait(lambda: identity(new.log_path) not in ("", n_identity), within=60, what="N again")
        n_identity = identity(new.log_path)
        expected = Oracle(objects, at=int(started), until=int(last) + 1)

        def applied() -> bool:
            return hpa_bounds(admin) == {n: expected.at_instant(n, time.time()) for n in uids}

        wait(applied, within=max(1.0, first + UNDER_OLD_BY_S - time.time()), what="B applies F+2")
        under_old = kept(admin)

        # Fault 2: the API server restarted while the Lease moves from B to N.
        sleep_until(first + APISERVER_RESTART_S)
        timeline["apiserver_stopped"] = time.time()
        plane.stop_apiserver()
        b.stop(timeout=30)
        plane.start_apiserver(timeout=120)
        timeline["apiserver_ready"] = time.time()
        wait(
            lambda: lease_holder(admin) == n_identity,
            within=ELECTION.lease_duration + 30,
            what="N takes the Lease after the restart",
        )
        timeline["n_leads"] = time.time()
        time.sleep(TAKEN_OVER_SETTLE_S)
        assert time.time() < first + LATEST_UNDER_NEW_S, f"too late to compare: {timeline}"
        under_new = kept(admin)

        sleep_until(first + WINDOW_MINUTES * 60)
        wait(applied, within=late, what="N applies F+3 min")
        assert new.running, "N exited"
        before_downgrade = kept(admin)

        # The downgrade (docs/install.md, "Version skew"): `helm rollback` to 0.1.0's
        # revision, then its replicas started again beside N.
        sleep_until(first + ROLLBACK_S)
        old_revision = helm.revision_of(PREVIOUS_VERSION)
        timeline["rollback"] = time.time()
        helm("rollback", Helm.RELEASE, str(old_revision))
        timeline["rolled_back"] = time.time()
        rolled_back = helm.manifest(tmp_path / "rolled-back-release.yaml")
        after_rollback, labels_after_rollback = spa_crd(plane)
        a.start()
        b.start()
        wait(lambda: identity(a.log_path) != "", within=60, what="A campaigns again")
        wait(lambda: identity(b.log_path) != "", within=60, what="B campaigns again")
        old_identities = {identity(a.log_path), identity(b.log_path)}

        # Fault 3: N killed while it leads; F+4 min falls before its Lease expires.
        sleep_until(first + DOWN_HANDOVER_S)
        assert lease_holder(admin) == n_identity, "0.1.0 took the Lease from a leader"
        new.kill()
        timeline["killed_in_downgrade"] = time.time()
        wait(
            lambda: lease_holder(admin) in old_identities,
            within=ELECTION.lease_duration + 30,
            what="0.1.0 takes the Lease once it expires",
        )
        timeline["old_leads_again"] = time.time()
        quiet_from = last + QUIET_AFTER_S
        sleep_until(quiet_from)
        assert applied(), "0.1.0 did not apply F+5 min"
        sleep_until(quiet_from + QUIET_S)
        after_downgrade = kept(admin)
        end = time.time()
        final_uids = hpa_uids(admin)
        final = hpa_bounds(admin)
        assert a.running, "A exited"
        assert b.running, "B exited"
    finally:
        replicas.stop_all()  # a paused one too (SIGTERM, then SIGCONT)
        admin.close()

    (tmp_path / "timeline.json").write_text(json.dumps(timeline, indent=2))
    result = judged(
        plane, USERS, objects, started=started, first=first, last=last, end=end, workdir=tmp_path
    )
    assert final == result["expected_at_end"]
    # The chart upgraded the CRDs: the fields 0.1.0's lacked are served.
    chart_crd = yaml.safe_load((REPO / CHART / "files" / "crds" / SPA_CRD_FILE).read_text())
    (stored,) = (version for version in chart_crd["spec"]["versions"] if version["storage"])
    fields = schema_fields(stored["schema"]["openAPIV3Schema"])
    assert fields - before_upgrade, "0.1.0's SPA CRD already had every field: nothing to upgrade"
    assert fields - upgraded == set(), "`helm upgrade` left the SPA CRD as it was"
    assert labels.get("app.kubernetes.io/version") == __version__, labels
    assert final_uids == uids, "an HPA was recreated"
    assert lost(under_old, under_new) == {}, "N dropped what B wrote"
    by_replica = result["hpa_writes_by_replica"]
    assert by_replica.get("old-a", 0) > 0, by_replica  # each applied a boundary
    assert by_replica.get("old-b", 0) > 0, by_replica
    assert by_replica.get("new", 0) > 0, by_replica

    # F+2 min fell while no live replica led: after N's last Lease write before the kill,
    # before B's first; F+4 min likewise, before A's or B's first after the second kill.
    lease_writes = result["lease_writes"]
    gaps = {}
    for boundary, killed in ((first + 120, "killed"), (first + 240, "killed_in_downgrade")):
        n_last = max(r for r, _, who in lease_writes if who == "new" and r < timeline[killed])
        old_first = min(r for r, _, who in lease_writes if who != "new" and r > n_last)
        assert n_last < boundary < old_first, (n_last - first, old_first - first)
        lags = [s["lag_s"] for s in result["slowest"] if s["at"] == int(boundary)]
        gaps[killed] = {
            "killed_to_lease_s": old_first - timeline[killed],
            "boundary_late_s": max(lags, default=None),
        }
    (tmp_path / "gaps.json").write_text(json.dumps(gaps, indent=2))
    assert result["lag_all"]["max_s"] <= late, (
        f"a transition later than the Lease duration ({ELECTION.lease_duration:.0f} s) plus "
        f"the retry period ({ELECTION.retry_period:.0f} s): {result['slowest']}"
    )
    tracebacks = [line for line in errors_in(tmp_path / "new.log") if line.startswith("Traceback")]
    assert tracebacks == []

    # The downgrade: 0.1.0's manifest (its RBAC, its Deployment) again, the newer CRDs kept.
    assert documents(rolled_back) == documents(old_install), "`helm rollback` is not 0.1.0's"
    assert fields - after_rollback == set(), "`helm rollback` took the newer SPA CRD back"
    assert labels_after_rollback == labels, "`helm rollback` changed the SPA CRD"
    assert lost(before_downgrade, after_downgrade) == {}, "0.1.0 dropped what N wrote"
    old_users = [user for user, name in USERS.items() if name != "new"]
    quiet = writes_besides_lease(plane, old_users, since=quiet_from, until=quiet_from + QUIET_S)
    assert quiet == [], f"0.1.0 writes in a quiet minute: {quiet}"
    for replica in (a, b):
        assert errors_in(last_start(replica.log_path)) == [], f"{replica.name} errs on newer data"
