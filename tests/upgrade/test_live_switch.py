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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bench.fleet import create_all
from bench.soak import Oracle, audit_policy_for_soak, compare, read_audit, window
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, LEASE, ApiError, BlockingKubeClient, connect_blocking
from tests.builders import autoscaler, schedule
from tests.testenv.audit import AuditLog, service_account_user
from tests.testenv.controlplane import ControlPlane
from tests.testenv.processes import ManagedProcess
from tests.upgrade.previous import PREVIOUS_VERSION, Previous, build, clean_env
from tests.upgrade.switch import (
    deployment_args,
    documents,
    errors_in,
    identity,
    sleep_until,
    wait,
)

REPO = Path(__file__).resolve().parents[2]
# What both releases' install.yaml create and their Deployments run with.
CONTROLLER_NAMESPACE = "scheduled-pod-autoscaler"
OLD_ACCOUNT = "scheduled-pod-autoscaler"
NEW_ACCOUNT = "scheduled-pod-autoscaler-next"
LEASE_NAME = "scheduled-pod-autoscaler-leader"
USERS = {
    service_account_user(CONTROLLER_NAMESPACE, OLD_ACCOUNT): "old",
    service_account_user(CONTROLLER_NAMESPACE, NEW_ACCOUNT): "new",
}
NAMESPACE = "upgrade"
SPAS = 6
BASE_MIN, BASE_MAX = 2, 10
# Seconds after the first boundary (F): the new replica starts beside the old one at F+70 and
# the old one stops at F+95, so F and F+1 min are the old release's boundaries, F+2 and F+3
# min the new one's; the downgrade begins 10 s after the last boundary.
NEW_STARTS_S, OLD_STOPS_S = 70.0, 95.0
# Statuses and annotations are compared before the old one stops and here, before F+2 min.
TAKEN_OVER_S = 110.0
WINDOW_MINUTES = 3
DOWNGRADE_AFTER_LAST_S = 10.0
# After the old release takes the Lease back: time to catch up, then the quiet minute.
QUIET_AFTER_S, QUIET_S = 20.0, 60.0

pytestmark = pytest.mark.timeout(900)


def fleet(rng: random.Random, first: datetime) -> list[dict[str, Any]]:
    """SPAS SPAs (base 2/10), each with two windows of 1-2 minutes that start at F, F+1 or
    F+2 min: every boundary falls in [F, F+3 min]."""
    objects: list[dict[str, Any]] = []
    for index in range(SPAS):
        name = f"app-{index}"
        objects.append(
            autoscaler(name=name, namespace=NAMESPACE, minReplicas=BASE_MIN, maxReplicas=BASE_MAX)
        )
        for number in range(2):
            start = first + timedelta(minutes=rng.randrange(WINDOW_MINUTES - 1))
            spec = window(rng, start, rng.randint(1, 2))
            objects.append(
                schedule(name=f"{name}-w{number}", namespace=NAMESPACE, target=name, **spec)
            )
    return objects


def bind_second_account(plane: ControlPlane, install: Path) -> None:
    """NEW_ACCOUNT, bound to every role the release binds its own ServiceAccount to."""
    plane.run_kubectl("create", "serviceaccount", NEW_ACCOUNT, "-n", CONTROLLER_NAMESPACE)
    account = f"--serviceaccount={CONTROLLER_NAMESPACE}:{NEW_ACCOUNT}"
    for doc in documents(install):
        if doc["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        subjects = doc.get("subjects") or []
        if not any(s.get("name") == OLD_ACCOUNT for s in subjects):
            continue
        name = f"{doc['metadata']['name']}-next"
        role = doc["roleRef"]
        if doc["kind"] == "ClusterRoleBinding":
            command = ["create", "clusterrolebinding", name, f"--clusterrole={role['name']}"]
        else:
            kind = "role" if role["kind"] == "Role" else "clusterrole"
            namespace = doc["metadata"]["namespace"]
            command = ["create", "rolebinding", name, "-n", namespace, f"--{kind}={role['name']}"]
        rendered = plane.run_kubectl(
            *command, account, "--dry-run=client", "-o", "yaml", check=True
        ).stdout
        plane.run_kubectl("apply", "--server-side", "-f", "-", input=rendered, check=True)


def apply(plane: ControlPlane, install: Path) -> None:
    """docs/install.md of each release: `kubectl apply --server-side -f install.yaml`
    (Kubernetes 1.23 and later)."""
    plane.run_kubectl("apply", "--server-side", "-f", str(install), check=True, timeout=120)


def lease_holder(admin: BlockingKubeClient) -> str:
    try:
        lease = admin.get(LEASE, CONTROLLER_NAMESPACE, LEASE_NAME)
    except ApiError as error:
        if error.status == 404:
            return ""
        raise
    return str(lease.get("spec", {}).get("holderIdentity") or "")


def hpa_uids(admin: BlockingKubeClient) -> dict[str, str]:
    return {
        hpa["metadata"]["name"]: hpa["metadata"]["uid"]
        for hpa in admin.list(HPA_V2, namespace=NAMESPACE).items
    }


def paths(value: Any, prefix: str = "") -> set[str]:
    """Every field path of a JSON value; a list's items by their `type` (conditions) or
    index."""
    found = {prefix} if prefix else set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= paths(item, f"{prefix}.{key}")
    elif isinstance(value, list):
        for number, item in enumerate(value):
            key = item.get("type", number) if isinstance(item, dict) else number
            found |= paths(item, f"{prefix}[{key}]")
    return found


def kept(admin: BlockingKubeClient) -> dict[str, set[str]]:
    """Per object of NAMESPACE: the paths of its status and its annotations' keys."""
    found: dict[str, set[str]] = {}
    for resource in (SCHEDULED_POD_AUTOSCALERS, SCHEDULES, HPA_V2):
        for obj in admin.list(resource, namespace=NAMESPACE).items:
            key = f"{obj['kind']}/{obj['metadata']['name']}"
            annotations = {f"@{name}" for name in obj["metadata"].get("annotations") or {}}
            found[key] = paths(obj.get("status") or {}, "status") | annotations
    return found


def lost(before: dict[str, set[str]], after: dict[str, set[str]]) -> dict[str, list[str]]:
    return {
        key: sorted(fields - after.get(key, set()))
        for key, fields in before.items()
        if fields - after.get(key, set())
    }


@pytest.fixture(scope="module")
def previous() -> Previous:
    built = build()
    assert built.version() == PREVIOUS_VERSION
    return built


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
    processes: list[ManagedProcess] = []

    def replica(name: str, command: list[str], install: Path, account: str) -> ManagedProcess:
        kubeconfig = plane.service_account_kubeconfig(
            CONTROLLER_NAMESPACE,
            account,
            path=tmp_path / f"{name}.kubeconfig",
            expiration_seconds=3600,
            create=False,
        )
        env = clean_env() | ({"PYTHONPATH": str(REPO)} if name == "new" else {})
        process = ManagedProcess(
            f"spa-{name}",
            [
                *command,
                *deployment_args(install, CONTROLLER_NAMESPACE),
                "--kubeconfig",
                str(kubeconfig),
            ],
            tmp_path / f"{name}.log",
            env=env,
        )
        processes.append(process)
        return process

    try:
        apply(plane, old_install)
        plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
        began = datetime.now(UTC)
        first_dt = (began + timedelta(seconds=30)).replace(second=0, microsecond=0)
        first_dt += timedelta(minutes=1)
        first = first_dt.timestamp()
        last = first + WINDOW_MINUTES * 60
        objects = fleet(random.Random(first_dt.isoformat()), first_dt)
        create_all(
            admin,
            NAMESPACE,
            [
                (SCHEDULES if obj["kind"] == "Schedule" else SCHEDULED_POD_AUTOSCALERS, obj)
                for obj in objects
            ],
        )
        started = time.time()
        (tmp_path / "manifests.json").write_text(json.dumps(objects))

        old = replica("old", [str(previous.spa)], old_install, OLD_ACCOUNT)
        old.start()
        wait(
            lambda: len(admin.list(HPA_V2, namespace=NAMESPACE).items) == SPAS,
            within=60,
            what="the old release creates every HPA",
        )
        uids = hpa_uids(admin)
        wait(lambda: lease_holder(admin) != "", within=30, what="the old release leads")
        old_identity = lease_holder(admin)

        # The upgrade: the new manifests over the old ones, a second replica beside the old.
        sleep_until(first + NEW_STARTS_S)
        apply(plane, new_install)
        bind_second_account(plane, new_install)
        new = replica("new", [sys.executable, "-m", "spa.cli"], new_install, NEW_ACCOUNT)
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
        final = {
            h["metadata"]["name"]: (h["spec"].get("minReplicas", 1), h["spec"]["maxReplicas"])
            for h in admin.list(HPA_V2, namespace=NAMESPACE).items
        }
    finally:
        for process in processes:
            process.stop(timeout=30)
        admin.close()

    assert plane.audit_log is not None
    truth = read_audit(plane.audit_log, USERS, LEASE_NAME)
    oracle = Oracle(objects, at=int(started), until=int(end) + 1)
    result = compare(oracle, truth, [], [], first, last, end)
    (tmp_path / "result.json").write_text(json.dumps(result, indent=2, default=str))
    by_replica = result["hpa_writes_by_replica"]
    assert result["transitions"] >= 2 * SPAS, result  # measured something, on both sides
    assert by_replica.get("old", 0) > 0, by_replica
    assert by_replica.get("new", 0) > 0, by_replica
    assert result["missed"] == [], result["missed"]
    assert result["duplicates"] == [], result["duplicates"]
    assert result["wrong"] == [], result["wrong"]
    assert result["not_leader"] == [], result["not_leader"]
    assert result["after_renew_deadline"] == [], result["after_renew_deadline"]
    assert final == {name: oracle.at_instant(name, end) for name in oracle.steps}
    assert final_uids == uids, "an HPA was recreated"
    assert lost(under_old, under_new) == {}, "the new release dropped what the old one wrote"
    assert lost(before_downgrade, after_downgrade) == {}, "the old release dropped the new's"

    audit = AuditLog(plane.audit_log)
    old_user = service_account_user(CONTROLLER_NAMESPACE, OLD_ACCOUNT)
    quiet = [
        f"{event.verb} {event.resource} {event.name}"
        for event in audit.writes(user=old_user, since=quiet_from, until=quiet_from + QUIET_S)
        if event.resource != "leases"
    ]
    assert quiet == [], f"the old release writes in a quiet minute: {quiet}"
    deleted = audit.writes(resource="horizontalpodautoscalers")
    assert [e for e in deleted if e.verb == "delete"] == []
    old_log = tmp_path / "old.log"
    downgraded = old_log.read_text(errors="replace").rsplit("\n=== ", 1)[1]
    (tmp_path / "downgraded.log").write_text(downgraded)
    assert errors_in(tmp_path / "downgraded.log") == [], "the old release errs on newer data"
    assert errors_in(tmp_path / "new.log") == []
