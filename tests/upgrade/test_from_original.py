"""From the original Go controller (github.com/d-kuro/scheduled-pod-autoscaler) to this one and
back, on the real control plane (docs/install.md, "Upgrading from the original Go controller"
and "Going back to the original controller"; `make test-from-original`).

The original's source is not in this repository and CI cannot fetch it (GitHub is out of its
reach and the Go module proxy refuses the module): the test reads everything of the original
from a checkout named by SPA_ORIGINAL_SRC, and runs the binary hack/go-original/build.sh made
of it. Without either it is skipped, saying which.

1. Kubernetes 1.21 (the original writes autoscaling/v2beta2 HPAs, which 1.21 serves; this
   release's oldest supported plane), etcd and kube-apiserver with an audit log of both
   controllers' requests. No kube-controller-manager: nothing here is deleted that owns
   something (no garbage collection to wait for), and without its HPA controller the HPA
   writes in the audit log are the controllers' alone.
2. The original installed as its README says (`kubectl apply -f manifests/install/install.yaml`
   of the checkout: CRDs, RBAC and a Deployment in kube-system) and run as its Deployment runs
   it: its arguments (leader election on), as its ServiceAccount, with the pod's namespace file
   (a private mount namespace holds /var/run/secrets/kubernetes.io/serviceaccount/namespace,
   which controller-runtime reads for the leader-election namespace).
3. SPAS SPAs and their Schedules written as the original's README writes them (the whole
   `scaleTargetRef`, Daily without days), applied with kubectl; windows in several zones and
   types open and close at the first four minute boundaries F..F+3 min.
4. After the original has applied F's windows, steps 2-4 of the docs, literally: its
   Deployment removed (the process stopped as a kubelet stops a pod, SIGTERM), the objects the
   docs list deleted by the names they give, `kubectl apply --validate=false -f
   config/install/install.yaml` (the command docs/install.md gives for 1.16 to 1.22), and `spa
   run` started with the Deployment's arguments as the installed ServiceAccount.
5. This controller applies the boundaries F+1 and F+2 min; three more SPAs are written
   meanwhile, one with a Schedule of the short reference (`name` alone), which it attaches.
6. Going back: this controller's Deployment removed and the process stopped, the original's
   install applied without its CRDs, two Schedules written with windows from F+3 min (one with
   the whole reference, one with the short one), the original started again.

Checked against the audit log and the engine on the very manifests (bench/soak.py's oracle):
no transition missed, none written twice, no wrong value, each replica writing only while it
runs; the original's windows within its 30 s requeue, this controller's within LAG; every HPA
keeps its UID (never deleted or created again); the stored specs survive the CRD replacement;
this controller writes its statuses; going back, the Schedule with the whole reference and the
one this controller attached are applied by the original, the short one is refused with a 422
and never applied.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from bench.soak import Oracle, Truth, audit_policy_for_soak, compare, read_audit
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2BETA2, LEASE, ApiError, BlockingKubeClient, connect_blocking
from tests.builders import autoscaler, schedule
from tests.testenv.audit import AuditLog, service_account_user
from tests.testenv.binaries import cache_root, find_binaries
from tests.testenv.controlplane import ControlPlane
from tests.testenv.processes import ManagedProcess
from tests.upgrade.previous import clean_env
from tests.upgrade.switch import deployment_args, documents, errors_in, sleep_until, wait

REPO = Path(__file__).resolve().parents[2]
SOURCE_ENV = "SPA_ORIGINAL_SRC"
RELEASE = "v1.21.14"
# What the original's install.yaml creates (docs/install.md, step 2, names them all).
ORIGINAL_NAMESPACE = "kube-system"
ORIGINAL_NAME = "scheduled-pod-autoscaler"
ORIGINAL_LOCK = "09d94c38.d-kuro.github.io"
ORIGINAL_LEFTOVERS = (
    ("deployment", ORIGINAL_NAME),
    ("serviceaccount", ORIGINAL_NAME),
    ("clusterrole", "scheduled-pod-autoscaler-role"),
    ("clusterrolebinding", "scheduled-pod-autoscaler-rolebinding"),
    ("role", "scheduled-pod-autoscaler-leader-election-role"),
    ("rolebinding", "scheduled-pod-autoscaler-leader-election-rolebinding"),
    ("configmap", ORIGINAL_LOCK),
    ("lease", ORIGINAL_LOCK),
)
# What this release's install.yaml creates.
CONTROLLER_NAMESPACE = "scheduled-pod-autoscaler"
ACCOUNT = "scheduled-pod-autoscaler"
LEASE_NAME = "scheduled-pod-autoscaler-leader"
USERS = {
    service_account_user(ORIGINAL_NAMESPACE, ORIGINAL_NAME): "original",
    service_account_user(CONTROLLER_NAMESPACE, ACCOUNT): "spa",
}
NAMESPACE = "from-original"
SPAS = 20
BASE_MIN, BASE_MAX = 2, 10
ZONES = ("UTC", "Asia/Tokyo", "America/New_York", "Europe/Berlin", "Asia/Kolkata")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# The original reconciles each SPA again 30 s after the last time (its RequeueAfter), so a
# boundary is in force within that; this controller's within LAG (tests/compat's).
ORIGINAL_LAG, LAG = 35.0, 2.0
# Seconds after the first boundary F: the switch to this controller (the original has applied
# F's windows by then), and back to the original after F+2 min, before F+3 min; the end.
SWITCH_S, BACK_S, END_S = 40.0, 140.0, 225.0
BACK_WINDOW_MIN = 3  # the windows written before going back open at F+3 min

pytestmark = pytest.mark.timeout(900)


@dataclass(frozen=True)
class Original:
    source: Path
    binary: Path

    @property
    def install(self) -> Path:
        return self.source / "manifests" / "install" / "install.yaml"


@pytest.fixture(scope="module")
def original() -> Original:
    """The checkout of SPA_ORIGINAL_SRC and its binary; skipped without either, or where a
    private mount namespace cannot be made."""
    named = os.environ.get(SOURCE_ENV)
    if not named:
        pytest.skip(
            f"{SOURCE_ENV} is not set: give it a checkout of "
            "github.com/d-kuro/scheduled-pod-autoscaler (`make test-from-original`)"
        )
    source = Path(named).resolve()
    if not (source / "go.mod").is_file() or not (source / "manifests" / "install").is_dir():
        pytest.skip(f"{SOURCE_ENV}={source} is not a checkout of the original controller")
    revision = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "--short=8", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    binary = Path(
        subprocess.run(
            [str(REPO / "hack" / "go-original" / "build.sh"), "--print-path", revision],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    if not os.access(binary, os.X_OK):
        pytest.skip(f"the original is not built: run hack/go-original/build.sh {source}")
    probe = subprocess.run(
        ["unshare", "--mount", "--map-root-user", "true"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace for the original's pod files: {probe.stderr}")
    return Original(source, binary)


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[ControlPlane]:
    with ControlPlane(
        tmp_path / "plane",
        binaries=find_binaries(cache_root() / RELEASE / "bin"),
        audit_policy=audit_policy_for_soak(USERS),
        controller_manager=False,
        nodes=0,
    ) as started:
        yield started


# In a pod, controller-runtime reads its namespace (for the leader-election lock) from this
# file; a private mount namespace with a tmpfs over /run holds it for the original alone.
IN_POD = (
    'mount -t tmpfs tmpfs /run && mkdir -p "$(dirname "$1")" && printf %s "$2" > "$1" '
    '&& shift 2 && exec "$@"'
)


def original_process(
    original: Original, plane: ControlPlane, tmp_path: Path, number: int
) -> ManagedProcess:
    """The original as its Deployment runs it, as its ServiceAccount (a token of now)."""
    kubeconfig = plane.service_account_kubeconfig(
        ORIGINAL_NAMESPACE,
        ORIGINAL_NAME,
        path=tmp_path / f"original-{number}.kubeconfig",
        expiration_seconds=3600,
        create=False,
    )
    args = deployment_args(original.install, ORIGINAL_NAMESPACE)
    return ManagedProcess(
        f"original-{number}",
        [
            "unshare",
            "--mount",
            "--map-root-user",
            "sh",
            "-c",
            IN_POD,
            "in-pod",
            "/var/run/secrets/kubernetes.io/serviceaccount/namespace",
            ORIGINAL_NAMESPACE,
            str(original.binary),
            *args,
            # Its defaults are :8080 and :9090, on every address.
            "--metrics-addr=127.0.0.1:0",
            "--probe-addr=127.0.0.1:0",
        ],
        tmp_path / f"original-{number}.log",
        env=clean_env() | {"KUBECONFIG": str(kubeconfig)},
    )


def window(rng: random.Random, start: datetime, minutes: int) -> dict[str, Any]:
    """A Schedule spec for [start, start + minutes), as the original's README writes one:
    a zone, the type's own fields only (a Daily has no days), both bounds."""
    kind = rng.choice(["Daily", "Weekly", "OneShot"])
    # The original decides that a OneShot is over by reading its endTime in its own process's
    # zone, not the Schedule's (docs/install.md, "Going back to the original controller"):
    # west of that zone it never applies one, so its OneShots here are in UTC, the pod's zone.
    zone = "UTC" if kind == "OneShot" else rng.choice(ZONES)
    begin = start.astimezone(ZoneInfo(zone))
    end = (start + timedelta(minutes=minutes)).astimezone(ZoneInfo(zone))
    spec: dict[str, Any] = {"type": kind, "timeZone": zone}
    if kind == "OneShot":
        spec |= {"startTime": f"{begin:%Y-%m-%dT%H:%M}", "endTime": f"{end:%Y-%m-%dT%H:%M}"}
    else:
        spec |= {"startTime": f"{begin:%H:%M}", "endTime": f"{end:%H:%M}"}
    if kind == "Weekly":
        spec |= {"startDayOfWeek": DAYS[begin.weekday()], "endDayOfWeek": DAYS[begin.weekday()]}
    return spec | {"minReplicas": rng.randint(3, 6), "maxReplicas": rng.randint(11, 15)}


def whole_reference(document: dict[str, Any]) -> dict[str, Any]:
    document["spec"]["scaleTargetRef"] = {
        "apiVersion": SCHEDULED_POD_AUTOSCALERS.api_version,
        "kind": SCHEDULED_POD_AUTOSCALERS.kind,
        "name": document["spec"]["scaleTargetRef"]["name"],
    }
    return document


def fleet(rng: random.Random, first: datetime) -> list[dict[str, Any]]:
    """SPAS SPAs, each with one window: [F, F+1), [F+1, F+2), [F, F+2) or [F+1, F+3) min, in
    turn, so that windows open under the original, are in progress across the switch, open
    and close under this controller, and close under the original again."""
    objects: list[dict[str, Any]] = []
    for index in range(SPAS):
        name = f"app-{index:02d}"
        objects.append(
            autoscaler(name=name, namespace=NAMESPACE, minReplicas=BASE_MIN, maxReplicas=BASE_MAX)
        )
        start = first + timedelta(minutes=index % 2)
        spec = window(rng, start, 1 + (index // 2) % 2)
        objects.append(
            whole_reference(schedule(name=f"{name}-w", namespace=NAMESPACE, target=name, **spec))
        )
    return objects


def kubectl_apply(plane: ControlPlane, objects: list[dict[str, Any]], *args: str) -> None:
    plane.run_kubectl(
        "apply", *args, "-f", "-", input=yaml.safe_dump_all(objects), check=True, timeout=120
    )


def stored(admin: BlockingKubeClient) -> dict[str, dict[str, Any]]:
    """Every SPA's and Schedule's spec and owners, and every HPA's UID and bounds."""
    found: dict[str, dict[str, Any]] = {}
    for resource in (SCHEDULED_POD_AUTOSCALERS, SCHEDULES, HPA_V2BETA2):
        for obj in admin.list(resource, namespace=NAMESPACE).items:
            found[f"{obj['kind']}/{obj['metadata']['name']}"] = {
                "uid": obj["metadata"]["uid"],
                "spec": obj["spec"],
                "owners": obj["metadata"].get("ownerReferences") or [],
                "status": obj.get("status") or {},
            }
    return found


def controller_of(obj: dict[str, Any]) -> str:
    owners = obj["metadata"].get("ownerReferences") or []
    return next((str(o["name"]) for o in owners if o.get("controller")), "")


def lease_holder(admin: BlockingKubeClient) -> str:
    try:
        lease = admin.get(LEASE, CONTROLLER_NAMESPACE, LEASE_NAME)
    except ApiError as error:
        if error.status == 404:
            return ""
        raise
    return str(lease.get("spec", {}).get("holderIdentity") or "")


def hpa_bounds(admin: BlockingKubeClient) -> dict[str, tuple[int, int]]:
    return {
        hpa["metadata"]["name"]: (hpa["spec"].get("minReplicas", 1), hpa["spec"]["maxReplicas"])
        for hpa in admin.list(HPA_V2BETA2, namespace=NAMESPACE).items
    }


def reached(
    oracle: Oracle, writes: list[Any], first: float, last: float
) -> list[tuple[str, float, str, float]]:
    """Per transition in [first, last]: (HPA, instant, the replica whose write put the new
    bounds in force, seconds after the instant)."""
    found = []
    for hpa, steps in oracle.steps.items():
        history = [w for w in writes if w.hpa == hpa]
        for number, (instant, bounds) in enumerate(steps):
            if not first <= instant <= last:
                continue
            until = steps[number + 1][0] if number + 1 < len(steps) else float("inf")
            write = next(
                (w for w in history if instant < w.completed < until and w.bounds == bounds),
                None,
            )
            if write is not None:
                found.append((hpa, instant, write.replica, write.completed - instant))
    return found


def test_from_original_and_back(original: Original, plane: ControlPlane, tmp_path: Path) -> None:
    admin = connect_blocking(kubeconfig=str(plane.kubeconfig))
    processes: list[ManagedProcess] = []
    new_install = REPO / "config" / "install" / "install.yaml"
    try:
        # Step 0: the original, installed as its README says.
        plane.run_kubectl("apply", "-f", str(original.install), check=True, timeout=120)
        plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
        first_dt = (datetime.now(UTC) + timedelta(seconds=45)).replace(second=0, microsecond=0)
        first_dt += timedelta(minutes=1)
        first = first_dt.timestamp()
        objects = fleet(random.Random(first_dt.isoformat()), first_dt)
        kubectl_apply(plane, objects)
        started = time.time()
        old = original_process(original, plane, tmp_path, 1)
        processes.append(old)
        old.start()
        wait(
            lambda: len(admin.list(HPA_V2BETA2, namespace=NAMESPACE).items) == SPAS,
            within=60,
            what="the original creates every HPA",
        )
        wait(
            lambda: all(
                controller_of(s) == s["spec"]["scaleTargetRef"]["name"]
                for s in admin.list(SCHEDULES, namespace=NAMESPACE).items
            ),
            within=60,
            what="the original attaches every Schedule",
        )
        created = stored(admin)

        # The original applies F's windows; then the switch, as the docs' steps 2-4 say.
        sleep_until(first + SWITCH_S)
        before_switch = stored(admin)
        assert {k: v["uid"] for k, v in before_switch.items()} == {
            k: v["uid"] for k, v in created.items()
        }
        leftovers = {
            (kind, name): plane.run_kubectl(
                "get", kind, name, "-n", ORIGINAL_NAMESPACE, "-o", "name"
            ).returncode
            == 0
            for kind, name in ORIGINAL_LEFTOVERS
        }
        # Step 2: its Deployment removed (a kubelet then stops the pod: SIGTERM), then the rest.
        plane.run_kubectl(
            "delete", "deployment", ORIGINAL_NAME, "-n", ORIGINAL_NAMESPACE, check=True
        )
        old.stop(timeout=30)
        stopped_original = time.time()
        for kind, name in ORIGINAL_LEFTOVERS[1:]:
            plane.run_kubectl("delete", kind, name, "-n", ORIGINAL_NAMESPACE, "--ignore-not-found")
        # Step 3: this release's install, the command for Kubernetes 1.16 to 1.22.
        applied = plane.run_kubectl(
            "apply", "--validate=false", "-f", str(new_install), timeout=120
        )
        assert applied.returncode == 0, applied.stderr
        after_crds = stored(admin)
        # Step 4: this controller, as its Deployment runs it.
        spa_kubeconfig = plane.service_account_kubeconfig(
            CONTROLLER_NAMESPACE,
            ACCOUNT,
            path=tmp_path / "spa.kubeconfig",
            expiration_seconds=3600,
            create=False,
        )
        new = ManagedProcess(
            "spa",
            [
                sys.executable,
                "-m",
                "spa.cli",
                *deployment_args(new_install, CONTROLLER_NAMESPACE),
                "--kubeconfig",
                str(spa_kubeconfig),
            ],
            tmp_path / "spa.log",
            env=clean_env() | {"PYTHONPATH": str(REPO)},
        )
        processes.append(new)
        new.start()
        started_spa = time.time()
        wait(lambda: lease_holder(admin) != "", within=60, what="this controller leads")

        def statuses_written() -> bool:
            spas = admin.list(SCHEDULED_POD_AUTOSCALERS, namespace=NAMESPACE).items
            schedules = admin.list(SCHEDULES, namespace=NAMESPACE).items
            return all(
                (s.get("status") or {}).get("observedGeneration") == s["metadata"]["generation"]
                for s in [*spas, *schedules]
            ) and all(
                any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (s.get("status") or {}).get("conditions") or []
                )
                for s in spas
            )

        wait(statuses_written, within=60, what="this controller writes every status")
        taken_over = stored(admin)

        # Written under this controller: an SPA whose Schedule has the short reference (it
        # attaches it), and the two SPAs whose Schedules are written while going back.
        back_start = first_dt + timedelta(minutes=BACK_WINDOW_MIN)
        later = [
            autoscaler(name=name, namespace=NAMESPACE, minReplicas=BASE_MIN, maxReplicas=BASE_MAX)
            for name in ("attached-short", "back-whole", "back-short")
        ]
        attached = schedule(
            name="attached-short-w",
            namespace=NAMESPACE,
            target="attached-short",
            **window(random.Random(1), back_start, 2),
        )
        kubectl_apply(plane, [*later, attached])
        wait(
            lambda: len(admin.list(HPA_V2BETA2, namespace=NAMESPACE).items) == SPAS + 3,
            within=30,
            what="this controller creates the new SPAs' HPAs",
        )
        wait(
            lambda: (
                controller_of(admin.get(SCHEDULES, NAMESPACE, "attached-short-w"))
                == "attached-short"
            ),
            within=30,
            what="this controller attaches the Schedule of the short reference",
        )

        # Going back: this controller's Deployment removed, the original's install applied
        # without its CRDs (this release's stay), two Schedules written, the original started.
        sleep_until(first + BACK_S)
        plane.run_kubectl("delete", "deployment", ACCOUNT, "-n", CONTROLLER_NAMESPACE, check=True)
        new.stop(timeout=30)
        stopped_spa = time.time()
        kubectl_apply(
            plane,
            [
                doc
                for doc in documents(original.install)
                if doc["kind"] != "CustomResourceDefinition"
            ],
        )
        back_schedules = [
            whole_reference(
                schedule(
                    name="back-whole-w",
                    namespace=NAMESPACE,
                    target="back-whole",
                    **window(random.Random(2), back_start, 2),
                )
            ),
            schedule(
                name="back-short-w",
                namespace=NAMESPACE,
                target="back-short",
                **window(random.Random(3), back_start, 2),
            ),
        ]
        kubectl_apply(plane, back_schedules)
        again = original_process(original, plane, tmp_path, 2)
        processes.append(again)
        again.start()
        restarted_original = time.time()
        sleep_until(first + END_S)
        end = time.time()
        final = stored(admin)
        final_bounds = hpa_bounds(admin)
    finally:
        for process in processes:
            process.stop(timeout=30)
        admin.close()

    # What each side wrote, against the engine on the very manifests, up to the last boundary
    # before going back: every transition in force on time, by the side that ran.
    assert plane.audit_log is not None
    truth = read_audit(plane.audit_log, USERS, LEASE_NAME)
    everything = [*objects, *later, attached, back_schedules[0]]
    (tmp_path / "manifests.json").write_text(json.dumps(everything))
    oracle = Oracle(everything, at=int(started), until=int(end) + 1)
    last_spa = first + 120
    # Going back is checked apart, below: the original does not revert a window that ends.
    before_back = Truth(
        [w for w in truth.writes if w.received < stopped_spa], truth.lease_writes, truth.requests
    )
    result = compare(oracle, before_back, [], [], first, last_spa, stopped_spa)
    lags = reached(oracle, before_back.writes, first, last_spa)
    # This controller's first write to each HPA it takes over: its label and spec-hash
    # annotation added, the bounds unchanged (docs/install.md, step 4).
    adoptions = [
        d for d in result["duplicates"] if d["replica"] == "spa" and d["received"] < first + 60
    ]
    back = first + BACK_WINDOW_MIN * 60
    opened_back: dict[str, float | None] = {
        name: next(
            (
                w.completed - back
                for w in truth.writes
                if w.hpa == name
                and w.replica == "original"
                and back < w.completed
                and w.bounds == oracle.at_instant(name, back)
            ),
            None,
        )
        for name in ("back-whole", "attached-short")
    }
    closing_back = [hpa for hpa, steps in oracle.steps.items() if any(i == back for i, _ in steps)]
    figures = {
        "hpas": len(final_bounds),
        "transitions_until_going_back": result["transitions"],
        "by": {
            who: {
                "transitions": len([lag for _, _, by, lag in lags if by == who]),
                "max_lag_s": round(max([lag for _, _, by, lag in lags if by == who] or [0]), 2),
            }
            for who in ("original", "spa")
        },
        "taken_over_with_one_patch": len(adoptions),
        "hpa_writes_by_replica": result["hpa_writes_by_replica"],
        "original_writes_that_change_nothing": len(
            [d for d in result["duplicates"] if d["replica"] == "original"]
        ),
        "going_back_opened_s": opened_back,
        "going_back_not_reverted": sorted(
            hpa for hpa in closing_back if hpa not in opened_back and final_bounds[hpa] != (2, 10)
        ),
    }
    (tmp_path / "figures.json").write_text(json.dumps(figures, indent=2))
    (tmp_path / "result.json").write_text(json.dumps(result, indent=2, default=str))
    print(json.dumps(figures))
    assert result["missed"] == [], result["missed"]
    assert result["wrong"] == [], result["wrong"]
    assert result["transitions"] >= SPAS + 5, result  # F .. F+2 min
    for hpa, instant, by, lag in lags:
        # F's are the original's, F+1 and F+2 min's this controller's.
        assert by == ("original" if instant == first else "spa"), (hpa, instant, by)
        assert lag <= (LAG if by == "spa" else ORIGINAL_LAG), (hpa, instant, by, lag)
    # This controller: one write per HPA it takes over, then only transitions; the original
    # rewrites its HPAs whether they change or not (its own behaviour, counted above).
    assert sorted(d["hpa"] for d in adoptions) == [f"app-{i:02d}" for i in range(SPAS)]
    spa_duplicates = [d for d in result["duplicates"] if d["replica"] == "spa"]
    assert spa_duplicates == adoptions, spa_duplicates
    # Each writes only while it runs (the original has no Lease of this controller's).
    for write in truth.writes:
        if write.replica == "spa":
            assert started_spa < write.received < stopped_spa, write
        else:
            assert not stopped_original < write.received < restarted_original, write

    # Taken over: the same HPAs (no delete, no second create), the same stored specs and
    # owners after the CRDs were replaced, and this controller's statuses.
    audit = AuditLog(plane.audit_log)
    hpa_writes = audit.writes(resource="horizontalpodautoscalers")
    assert [e for e in hpa_writes if e.verb == "delete"] == []
    created_names = [str(e.name) for e in hpa_writes if e.verb == "create" and e.code == 201]
    assert sorted(created_names) == sorted(
        [f"app-{i:02d}" for i in range(SPAS)] + ["attached-short", "back-whole", "back-short"]
    )
    for key, entry in created.items():
        assert final[key]["uid"] == entry["uid"], f"{key} was recreated"
        if not key.startswith("HorizontalPodAutoscaler/"):
            assert after_crds[key]["spec"] == before_switch[key]["spec"], key
            assert after_crds[key]["owners"] == before_switch[key]["owners"], key
    assert taken_over.keys() == before_switch.keys()
    assert leftovers == dict.fromkeys(ORIGINAL_LEFTOVERS, True), leftovers
    assert errors_in(tmp_path / "spa.log") == []

    # Going back (docs/install.md, "Going back to the original controller"): the Schedule
    # with the whole reference is attached and its window applied, and so is the one of the
    # short reference that this controller attached; the short one written while going back
    # is refused (422) and never applied; a window that ends is not reverted by the original.
    assert [o["name"] for o in final["Schedule/back-whole-w"]["owners"]] == ["back-whole"]
    assert final["Schedule/back-short-w"]["owners"] == []
    refused = [
        e
        for e in audit.select(resource="schedules", verbs=["update"])
        if e.name == "back-short-w" and e.code == 422
    ]
    assert refused, "the original's update of the short reference was not refused"
    assert final_bounds["back-short"] == (BASE_MIN, BASE_MAX)
    for name, opened in opened_back.items():
        assert opened is not None, f"{name}: the original did not apply its window"
        assert opened <= ORIGINAL_LAG, (name, opened)
        assert final_bounds[name] == oracle.at_instant(name, end), name
    assert figures["going_back_not_reverted"] == sorted(
        hpa for hpa in closing_back if hpa not in opened_back
    )
