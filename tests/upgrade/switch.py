"""What the upgrade tests do to a controller on the real plane (docs/install.md, "Version
skew" and "Upgrading from the original Go controller"): read a release's manifests, run its
Deployment's arguments on this machine, and wait on what the API server and the logs say; and,
for a switch between two releases of this project (tests/upgrade/test_live_switch.py and
tests/upgrade/test_switch_faults.py), the fleet of windows, the replicas, what is kept across
the switch and the soak's oracle on the audit log."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from bench.fleet import create_all
from bench.soak import Oracle, compare, read_audit, window
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, LEASE, ApiError, BlockingKubeClient
from tests.builders import autoscaler, schedule
from tests.testenv.audit import AuditLog
from tests.testenv.controlplane import ControlPlane
from tests.testenv.processes import ManagedProcess
from tests.upgrade.previous import clean_env

REPO = Path(__file__).resolve().parents[2]


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def deployment_args(install: Path, namespace: str) -> list[str]:
    """The controller's arguments as the release's Deployment gives them, with the pod's
    namespace filled in and the ports on the loopback (two replicas on one machine)."""
    (deployment,) = (doc for doc in documents(install) if doc["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = [arg.replace("$(POD_NAMESPACE)", namespace) for arg in container.get("args") or []]
    ports = {"--metrics-addr": "127.0.0.1:0", "--probe-addr": "127.0.0.1:0"}
    return [
        f"{arg.split('=')[0]}={ports[arg.split('=')[0]]}" if arg.split("=")[0] in ports else arg
        for arg in args
    ]


def wait(check: Callable[[], bool], *, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:.0f} s: {what}")
        time.sleep(0.5)


def sleep_until(instant: float) -> None:
    time.sleep(max(0.0, instant - time.time()))


def identity(log: Path) -> str:
    """The Lease identity the process last started campaigns as (its log says it)."""
    text = log.read_text(errors="replace")
    for line in text[text.rfind("\n=== ") :].splitlines():  # ManagedProcess marks each start
        if "campaigning for lease" in line:
            try:
                return str(json.loads(line)["msg"]).rsplit(" as ", 1)[1]
            except (ValueError, KeyError, IndexError):
                continue
    return ""


def last_start(log: Path) -> Path:
    """What the process wrote since it last started (ManagedProcess marks each start), saved
    beside its log as <name>.last.log."""
    text = log.read_text(errors="replace")
    since = log.with_suffix(".last.log")
    since.write_text(text[text.rfind("\n=== ") + 1 :])
    return since


def errors_in(log: Path) -> list[str]:
    """Error lines of a JSON log, and any traceback printed outside one."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("Traceback"):
            found.append(line)
        elif line.startswith("{"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if str(entry.get("level", "")).lower() in ("error", "critical"):
                found.append(line[:300])
    return found


# -- a live switch between two releases of this project (tests/upgrade/test_live_switch.py,
# tests/upgrade/test_switch_faults.py) ----------------------------------------------------------

# What both releases' manifests create and their Deployments run with.
CONTROLLER_NAMESPACE = "scheduled-pod-autoscaler"
OLD_ACCOUNT = "scheduled-pod-autoscaler"
LEASE_NAME = "scheduled-pod-autoscaler-leader"
NAMESPACE = "upgrade"
SPAS = 6
BASE_MIN, BASE_MAX = 2, 10
WINDOW_MINUTES = 3


def first_boundary(now: datetime) -> datetime:
    """The minute boundary F the fleet's windows start from: at least 30 s ahead, then one
    more minute (time to install and start the old release)."""
    return (now + timedelta(seconds=30)).replace(second=0, microsecond=0) + timedelta(minutes=1)


def fleet(
    rng: random.Random, first: datetime, *, late_minute: int | None = None
) -> list[dict[str, Any]]:
    """SPAS SPAs (base 2/10), each with two windows of 1-2 minutes that start at F or F+1
    min: every boundary falls in [F, F+3 min]. With `late_minute` m (> 3), each SPA also has
    a window `-late` of [F+m, F+m+1 min), drawn after the others so that those stay the same:
    two boundaries more, between which the state differs from the base (2/10) of F+3 min. A
    `-late` window repeats (Daily or Weekly, not OneShot), so that after it every status has
    the fields it had before it (a OneShot that has ended has no next transition)."""
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
    if late_minute is not None:
        assert late_minute > WINDOW_MINUTES, late_minute
        for index in range(SPAS):
            name = f"app-{index}"
            spec = window(rng, first + timedelta(minutes=late_minute), 1)
            while spec["type"] == "OneShot":
                spec = window(rng, first + timedelta(minutes=late_minute), 1)
            objects.append(schedule(name=f"{name}-late", namespace=NAMESPACE, target=name, **spec))
    return objects


def create_fleet(admin: BlockingKubeClient, objects: list[dict[str, Any]]) -> None:
    create_all(
        admin,
        NAMESPACE,
        [
            (SCHEDULES if obj["kind"] == "Schedule" else SCHEDULED_POD_AUTOSCALERS, obj)
            for obj in objects
        ],
    )


def bind_account(plane: ControlPlane, install: Path, account: str) -> None:
    """`account` (created if missing), bound to every role `install` binds OLD_ACCOUNT to:
    a replica of its own in the audit log, with the release's permissions."""
    plane.run_kubectl("create", "serviceaccount", account, "-n", CONTROLLER_NAMESPACE)
    subject = f"--serviceaccount={CONTROLLER_NAMESPACE}:{account}"
    suffix = account.removeprefix(OLD_ACCOUNT)
    for doc in documents(install):
        if doc["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        subjects = doc.get("subjects") or []
        if not any(s.get("name") == OLD_ACCOUNT for s in subjects):
            continue
        name = f"{doc['metadata']['name']}{suffix}"
        role = doc["roleRef"]
        if doc["kind"] == "ClusterRoleBinding":
            command = ["create", "clusterrolebinding", name, f"--clusterrole={role['name']}"]
        else:
            kind = "role" if role["kind"] == "Role" else "clusterrole"
            namespace = doc["metadata"]["namespace"]
            command = ["create", "rolebinding", name, "-n", namespace, f"--{kind}={role['name']}"]
        rendered = plane.run_kubectl(
            *command, subject, "--dry-run=client", "-o", "yaml", check=True
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


def hpa_bounds(admin: BlockingKubeClient) -> dict[str, tuple[int, int]]:
    return {
        h["metadata"]["name"]: (h["spec"].get("minReplicas", 1), h["spec"]["maxReplicas"])
        for h in admin.list(HPA_V2, namespace=NAMESPACE).items
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


class Replicas:
    """Controller processes on this machine, each as a ServiceAccount of CONTROLLER_NAMESPACE
    with the arguments of a release's Deployment (as a pod of it would run)."""

    def __init__(self, plane: ControlPlane, workdir: Path) -> None:
        self.plane = plane
        self.workdir = workdir
        self.processes: list[ManagedProcess] = []

    def replica(
        self, name: str, command: list[str], install: Path, account: str, *, current: bool
    ) -> ManagedProcess:
        """`current`: this checkout's package (PYTHONPATH); else the previous release's venv
        with nothing of this checkout."""
        kubeconfig = self.plane.service_account_kubeconfig(
            CONTROLLER_NAMESPACE,
            account,
            path=self.workdir / f"{name}.kubeconfig",
            expiration_seconds=3600,
            create=False,
        )
        env = clean_env() | ({"PYTHONPATH": str(REPO)} if current else {})
        process = ManagedProcess(
            f"spa-{name}",
            [
                *command,
                *deployment_args(install, CONTROLLER_NAMESPACE),
                "--kubeconfig",
                str(kubeconfig),
            ],
            self.workdir / f"{name}.log",
            env=env,
        )
        self.processes.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.processes:
            process.stop(timeout=30)


def writes_besides_lease(
    plane: ControlPlane, users: list[str], *, since: float, until: float
) -> list[str]:
    """Every write of `users` received in [since, until) but to the Lease: what a controller
    must not do while no boundary falls (a write loop, a status it rewrites)."""
    assert plane.audit_log is not None
    return [
        f"{event.user} {event.verb} {event.resource} {event.name}"
        for user in users
        for event in AuditLog(plane.audit_log).writes(user=user, since=since, until=until)
        if event.resource != "leases"
    ]


def judged(
    plane: ControlPlane,
    users: dict[str, str],
    objects: list[dict[str, Any]],
    *,
    started: float,
    first: float,
    last: float,
    end: float,
    workdir: Path,
) -> dict[str, Any]:
    """The soak's oracle (the engine on `objects`) against the audit log's HPA and Lease
    writes of `users`, saved as result.json beside the logs; the checks every switch makes:
    no transition missed, no write that changed nothing, no wrong value, no write by a replica
    that did not hold the Lease or after its renew deadline."""
    assert plane.audit_log is not None
    truth = read_audit(plane.audit_log, users, LEASE_NAME)
    oracle = Oracle(objects, at=int(started), until=int(end) + 1)
    result = compare(oracle, truth, [], [], first, last, end)
    (workdir / "result.json").write_text(json.dumps(result, indent=2, default=str))
    assert result["transitions"] >= 2 * SPAS, result  # measured something
    assert result["missed"] == [], result["missed"]
    assert result["duplicates"] == [], result["duplicates"]
    assert result["wrong"] == [], result["wrong"]
    assert result["not_leader"] == [], result["not_leader"]
    assert result["after_renew_deadline"] == [], result["after_renew_deadline"]
    result["expected_at_end"] = {name: oracle.at_instant(name, end) for name in oracle.steps}
    result["lease_writes"] = truth.lease_writes
    return result
