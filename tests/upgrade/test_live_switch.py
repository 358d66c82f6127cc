"""A live switch between two releases on the real control plane, up and then down
(docs/install.md, "Version skew"; `make test-upgrade`).

1. A control plane with an audit log of the controllers' requests (HPA writes with their
   bodies: bench/soak.py's policy). The previous release (tests/upgrade/previous.py: a pinned
   commit in a venv of its own) installed as its docs say: `kubectl apply --server-side -f
   config/install/install.yaml` of that commit; its controller run with its Deployment's
   arguments (same Lease) as the ServiceAccount that file creates.
2. SPAs with Schedules whose windows open and close at the minute boundaries of the next three
   minutes, in several zones and types (bench/soak.py's windows).
3. The current release installed the documented way over it (`kubectl apply --server-side -f
   config/install/install.yaml`), its controller started beside the old one with its own
   Deployment's arguments, as a second ServiceAccount with the same bindings (so that the
   audit log tells the two apart); then the old one is stopped as a kubelet stops a pod
   (SIGTERM), and the Lease moves to the new one.
4. The downgrade: the old release's RBAC applied (`kubectl apply --server-side -k
   config/rbac` of that commit; the newer CRDs stay), the old release started again, the new
   one stopped; the Lease moves back; then a quiet minute without boundaries.

Checked with the soak's oracle (the engine on the very manifests, against the audit log):
no transition missed, no write that changed nothing, no wrong value, no write by a replica
that did not hold the Lease; every HPA has the UID it was created with; no status field or
annotation the one release wrote is gone once the other has taken over (compared between two
boundaries, so that the state is the same); the old release, reading what the
new one wrote, logs no error and writes nothing to any SPA, Schedule or HPA in the quiet minute.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.soak import audit_policy_for_soak
from spa.kube import connect_blocking
from tests.testenv.audit import AuditLog, service_account_user
from tests.testenv.controlplane import ControlPlane
from tests.upgrade.previous import Previous
from tests.upgrade.switch import (
    CONTROLLER_NAMESPACE,
    NAMESPACE,
    OLD_ACCOUNT,
    REPO,
    SPAS,
    WINDOW_MINUTES,
    Replicas,
    apply,
    bind_account,
    create_fleet,
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

NEW_ACCOUNT = "scheduled-pod-autoscaler-next"
USERS = {
    service_account_user(CONTROLLER_NAMESPACE, OLD_ACCOUNT): "old",
    service_account_user(CONTROLLER_NAMESPACE, NEW_ACCOUNT): "new",
}
# Seconds after the first boundary (F): the new replica starts beside the old one at F+70 and
# the old one stops at F+95, so F and F+1 min are the old release's boundaries, F+2 and F+3
# min the new one's; the downgrade begins 10 s after the last boundary.
NEW_STARTS_S, OLD_STOPS_S = 70.0, 95.0
# Statuses and annotations are compared before the old one stops and here, before F+2 min.
TAKEN_OVER_S = 110.0
DOWNGRADE_AFTER_LAST_S = 10.0
# After the old release takes the Lease back: time to catch up, then the quiet minute.
QUIET_AFTER_S, QUIET_S = 20.0, 60.0

pytestmark = pytest.mark.timeout(900)


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[ControlPlane]:
    with ControlPlane(
        tmp_path / "plane", audit_policy=audit_policy_for_soak(USERS), controller_manager=False
    ) as started:
        yield started


def test_switch_up_and_down(previous: Previous, plane: ControlPlane, tmp_path: Path) -> None:
    old_install = previous.source / "config" / "install" / "install.yaml"
    new_install = REPO / "config" / "install" / "install.yaml"
    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    replicas = Replicas(plane, tmp_path)

    try:
        apply(plane, old_install)
        plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
        first_dt = first_boundary(datetime.now(UTC))
        first = first_dt.timestamp()
        last = first + WINDOW_MINUTES * 60
        objects = fleet(random.Random(first_dt.isoformat()), first_dt)
        create_fleet(admin, objects)
        started = time.time()
        (tmp_path / "manifests.json").write_text(json.dumps(objects))

        old = replicas.replica("old", [str(previous.spa)], old_install, OLD_ACCOUNT, current=False)
        old.start()
        wait(
            lambda: len(hpa_uids(admin)) == SPAS,
            within=60,
            what="the old release creates every HPA",
        )
        uids = hpa_uids(admin)
        wait(lambda: lease_holder(admin) != "", within=30, what="the old release leads")
        old_identity = lease_holder(admin)

        # The upgrade: the new manifests over the old ones, a second replica beside the old.
        sleep_until(first + NEW_STARTS_S)
        apply(plane, new_install)
        bind_account(plane, new_install, NEW_ACCOUNT)
        new = replicas.replica(
            "new", [sys.executable, "-m", "spa.cli"], new_install, NEW_ACCOUNT, current=True
        )
        new.start()
        wait(lambda: identity(new.log_path) != "", within=60, what="the new release campaigns")
        new_identity = identity(new.log_path)
        assert lease_holder(admin) == old_identity, "the standby took the Lease from a leader"
        sleep_until(first + OLD_STOPS_S)
        under_old = kept(admin)
        old.stop(timeout=30)
        wait(
            lambda: lease_holder(admin) == new_identity,
            within=30,
            what="the Lease moves to the new release",
        )
        # Compared with what the old release left, in the same state (no boundary between).
        sleep_until(first + TAKEN_OVER_S)
        under_new = kept(admin)

        # The downgrade, after the last boundary.
        sleep_until(last + DOWNGRADE_AFTER_LAST_S)
        before_downgrade = kept(admin)
        # Its own RBAC first (docs/install.md, "Version skew"): 0.1.0 lists Deployments in all
        # namespaces, which 0.2.0's ClusterRole no longer grants; the newer CRDs stay.
        plane.run_kubectl(
            "apply", "--server-side", "-k", str(previous.source / "config" / "rbac"), check=True
        )
        old.start()
        wait(lambda: identity(old.log_path) != "", within=60, what="the old release campaigns")
        downgrade_identity = identity(old.log_path)
        new.stop(timeout=30)
        wait(
            lambda: lease_holder(admin) == downgrade_identity,
            within=30,
            what="the Lease moves back to the old release",
        )
        quiet_from = time.time() + QUIET_AFTER_S
        sleep_until(quiet_from + QUIET_S)
        after_downgrade = kept(admin)
        end = time.time()
        final_uids = hpa_uids(admin)
        final = hpa_bounds(admin)
    finally:
        replicas.stop_all()
        admin.close()

    result = judged(
        plane, USERS, objects, started=started, first=first, last=last, end=end, workdir=tmp_path
    )
    by_replica = result["hpa_writes_by_replica"]
    assert by_replica.get("old", 0) > 0, by_replica  # measured on both sides
    assert by_replica.get("new", 0) > 0, by_replica
    assert final == result["expected_at_end"]
    assert final_uids == uids, "an HPA was recreated"
    assert lost(under_old, under_new) == {}, "the new release dropped what the old one wrote"
    assert lost(before_downgrade, after_downgrade) == {}, "the old release dropped the new's"

    old_user = service_account_user(CONTROLLER_NAMESPACE, OLD_ACCOUNT)
    quiet = writes_besides_lease(plane, [old_user], since=quiet_from, until=quiet_from + QUIET_S)
    assert quiet == [], f"the old release writes in a quiet minute: {quiet}"
    assert plane.audit_log is not None
    deleted = AuditLog(plane.audit_log).writes(resource="horizontalpodautoscalers")
    assert [e for e in deleted if e.verb == "delete"] == []
    downgraded = last_start(tmp_path / "old.log")
    assert errors_in(downgraded) == [], "the old release errs on newer data"
    assert errors_in(tmp_path / "new.log") == []
