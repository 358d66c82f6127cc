"""Shards (docs/runtime.md, "Shards") as real `spa run` processes on the real control plane,
each as the controller's ServiceAccount with the RBAC of config/rbac and a Lease of its own.

The label test tries to make two shards write one HPA: shard `b` is given a selector that also
selects shard `a`'s SPA and Schedule (a mistake a user can make). What protects is the shard
label: `b` drops what is labelled for `a` before its cache, says so, and writes nothing of it.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL, owner_reference
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.controller.shards import SHARD_LABEL, namespace_shard
from spa.kube import LEASE
from tests.builders import autoscaler, schedule
from tests.integration.harness import Kube
from tests.integration.processes import (
    CONTROLLER_NAMESPACE,
    leader_election_args,
    log_lines,
    spa_run,
    wait_for,
    writes,
)

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def active_now() -> dict[str, Any]:
    """A Daily window around now (UTC), active for the whole test."""
    now = datetime.now(UTC)
    start, end = now - timedelta(minutes=30), now + timedelta(minutes=30)
    return {"type": "Daily", "startTime": start.strftime("%H:%M"), "endTime": end.strftime("%H:%M")}


def labelled(shard: str, **more: str) -> dict[str, Any]:
    return {"labels": {SHARD_LABEL: shard, **more}}


def written_names(log: Path) -> set[str]:
    return {str(line.get("name")) for line in writes(log)}


def holder(kube: Kube, lease: str) -> str:
    spec = kube.get(LEASE, CONTROLLER_NAMESPACE, lease).get("spec") or {}
    return str(spec.get("holderIdentity") or "")


def stop(process: Any) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0


@pytest.mark.slow
def test_overlapping_selectors_never_make_two_writers_of_one_hpa(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    window = active_now()
    for shard in ("a", "b"):
        kube.create(
            autoscaler(
                name=f"web-{shard}", namespace=namespace, metadata=labelled(shard, app="web")
            )
        )
        kube.create(
            schedule(
                name=f"peak-{shard}",
                namespace=namespace,
                target=f"web-{shard}",
                metadata=labelled(shard, app="web"),
                minReplicas=6,
                maxReplicas=12,
                **window,
            )
        )
    # Labelled for shard a, naming shard b's SPA: a reports it, b never applies it.
    kube.create(
        schedule(
            name="stray",
            namespace=namespace,
            target="web-b",
            metadata=labelled("a"),
            minReplicas=9,
            maxReplicas=30,
            **window,
        )
    )
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    lease = "shards-overlap"
    with (
        spa_run(
            controller_kubeconfig,
            namespace,
            "--shard-name",
            "a",
            *leader_election_args(lease),
            log=log_a,
        ) as a,
        spa_run(
            controller_kubeconfig,
            namespace,
            "--shard-name",
            "b",
            # The mistake: b is sent a's objects too.
            "--shard-selector",
            "app=web",
            *leader_election_args(lease),
            log=log_b,
        ) as b,
    ):
        for name in ("web-a", "web-b"):
            wait_for(
                lambda name=name: kube.bounds(namespace, name) == (6, 12),
                within=60,
                what=f"{name} raised",
            )
        wait_for(
            lambda: kube.status(SCHEDULES, namespace, "stray").get("condition") == "Degraded",
            within=30,
            what="the stray Schedule reported",
        )
        # Both have reconciled everything: web-b's status names its one Schedule.
        wait_for(
            lambda: (
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web-b").get("activeSchedules")
                == ["peak-b"]
            ),
            within=30,
            what="web-b's status",
        )
        # Each shard its own Lease, each held.
        assert holder(kube, f"{lease}-shard-a")
        assert holder(kube, f"{lease}-shard-b")
        assert holder(kube, f"{lease}-shard-a") != holder(kube, f"{lease}-shard-b")
        stop(a)
        stop(b)

    assert written_names(log_a) == {"web-a"}
    assert written_names(log_b) == {"web-b"}
    # The stray Schedule (shard a's) never reached web-b's HPA, and a did not touch web-b.
    assert kube.bounds(namespace, "web-b") == (6, 12)
    stray = kube.status(SCHEDULES, namespace, "stray")
    assert "not found" in str(stray), stray
    said_b = [str(line.get("msg")) for line in log_lines(log_b)]
    for kind, name in (("ScheduledPodAutoscaler", "web-a"), ("Schedule", "peak-a")):
        assert (
            f"{kind} {namespace}/{name} is selected by --shard-selector app=web but labelled "
            "for shard a: left alone"
        ) in said_b
    # Each says its shard at the start.
    assert any(m.startswith("shard a: ") and "-shard-a" in m for m in map(str, _msgs(log_a)))
    assert any(m.startswith("shard b: ") and "app=web" in m for m in map(str, _msgs(log_b)))


def synced_hpas(log: Path) -> list[int]:
    """The HPAs each start of a process had in its cache when synced, in order."""
    counts = []
    for message in map(str, _msgs(log)):
        if message.startswith("caches synced: "):
            counts.append(int(message.rsplit(", ", 1)[1].split()[0]))
    return counts


@pytest.mark.slow
def test_a_label_shard_is_sent_its_own_hpas_and_labels_those_written_before(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    """web-a's HPA was written by a release that did not label HPAs (our owner and label, no
    shard label): shard a is not sent it, finds it by the create's 409 and labels it in place.
    Shard b's labelled HPA is never sent to shard a."""
    window = active_now()
    for shard in ("a", "b"):
        created = kube.create(
            autoscaler(name=f"web-{shard}", namespace=namespace, metadata=labelled(shard))
        )
        kube.create(
            schedule(
                name=f"peak-{shard}",
                namespace=namespace,
                target=f"web-{shard}",
                metadata=labelled(shard),
                minReplicas=6,
                maxReplicas=12,
                **window,
            )
        )
        kube.create(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {
                    "name": f"web-{shard}",
                    "namespace": namespace,
                    "labels": {
                        MANAGED_BY_LABEL: FIELD_MANAGER,
                        # b's as this release writes it, a's as the last one did.
                        **({SHARD_LABEL: "b"} if shard == "b" else {}),
                    },
                    "ownerReferences": [owner_reference(created)],
                },
                "spec": {
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": f"web-{shard}",
                    },
                    "minReplicas": 3,
                    "maxReplicas": 10,
                },
            }
        )
    before = kube.hpa(namespace, "web-a")["metadata"]["uid"]
    log = tmp_path / "a.log"
    for start in (1, 2):
        with spa_run(
            controller_kubeconfig,
            namespace,
            "--shard-name",
            "a",
            *leader_election_args("shards-hpa-label"),
            log=log,
        ) as a:
            wait_for(
                lambda start=start: (
                    len(synced_hpas(log)) == start and kube.bounds(namespace, "web-a") == (6, 12)
                ),
                within=60,
                what=f"start {start} synced, and web-a raised",
            )
            stop(a)
    hpa = kube.hpa(namespace, "web-a")
    assert hpa["metadata"]["uid"] == before
    assert hpa["metadata"]["labels"][SHARD_LABEL] == "a"
    # The first start was sent neither HPA; the second its own only.
    assert synced_hpas(log) == [0, 1]
    assert written_names(log) == {"web-a"}
    assert kube.bounds(namespace, "web-b") == (3, 10)


def _msgs(log: Path) -> list[object]:
    return [line.get("msg") for line in log_lines(log)]


@contextlib.contextmanager
def extra_namespace(cluster: Any, name: str) -> Iterator[str]:
    cluster.run_kubectl("create", "namespace", name, check=True)
    try:
        yield name
    finally:
        cluster.run_kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.mark.slow
def test_namespace_hash_shards_each_write_their_namespaces_only(
    cluster: Any,
    controller_kubeconfig: Path,
    kube: Kube,
    namespace: str,
    tmp_path: Path,
) -> None:
    # A second namespace in the other shard of two.
    other = next(
        f"{namespace}-{i}"
        for i in range(100)
        if namespace_shard(f"{namespace}-{i}", 2) != namespace_shard(namespace, 2)
    )
    window = active_now()
    with extra_namespace(cluster, other):
        for ns in (namespace, other):
            kube.create(autoscaler(name="web", namespace=ns))
            kube.create(
                schedule(
                    name="peak",
                    namespace=ns,
                    target="web",
                    minReplicas=6,
                    maxReplicas=12,
                    **window,
                )
            )
        logs = [tmp_path / "0.log", tmp_path / "1.log"]
        scope = ["--namespace", namespace, "--namespace", other]
        with (
            spa_run(
                controller_kubeconfig, None, *scope, "--shards", "2", "--shard", "0", log=logs[0]
            ) as zero,
            spa_run(
                controller_kubeconfig, None, *scope, "--shards", "2", "--shard", "1", log=logs[1]
            ) as one,
        ):
            for ns in (namespace, other):
                wait_for(
                    lambda ns=ns: kube.bounds(ns, "web") == (6, 12),
                    within=60,
                    what=f"{ns}/web raised",
                )
            stop(zero)
            stop(one)
        for index, log in enumerate(logs):
            mine = {ns for ns in (namespace, other) if namespace_shard(ns, 2) == index}
            assert {str(line.get("namespace")) for line in writes(log)} == mine
            assert any(str(m).startswith(f"shard {index}-of-2: ") for m in _msgs(log))
