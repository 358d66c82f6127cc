"""Pause and override for incidents against the real control plane (docs/operations.md,
"Incidents: pause and override").

The first tests run the controller in-process with a fake clock, so that the window boundary
and each expiry happen at an exact second; the last runs `spa run` and the real `kubectl`
with the plugin, as an operator would, on the real clock.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from spa.api.incident import OVERRIDE_ANNOTATION, PAUSED_UNTIL_ANNOTATION
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import HPA_V2
from tests.builders import DAILY_NOON, autoscaler, schedule
from tests.integration.harness import Kube, Running, eventually, utc
from tests.integration.kubectl import kubectl_spa, status_json
from tests.integration.processes import spa_run, wait_for

pytestmark = pytest.mark.integration


def annotate(kube: Kube, namespace: str, annotations: dict[str, str | None]) -> None:
    kube.merge(
        SCHEDULED_POD_AUTOSCALERS, namespace, "web", {"metadata": {"annotations": annotations}}
    )


def condition(kube: Kube, namespace: str, type_: str) -> tuple[str, str, str] | None:
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    for entry in status.get("conditions") or ():
        if entry["type"] == type_:
            return entry["status"], entry["reason"], entry.get("message", "")
    return None


def events(kube: Kube, namespace: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in kube.events(namespace) if e["reason"] == reason]


async def web_with_noon_window(kube: Kube, namespace: str) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(
        schedule(
            name="noon",
            namespace=namespace,
            target="web",
            minReplicas=5,
            maxReplicas=20,
            **DAILY_NOON,
        )
    )
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="HPA at base")


async def test_a_pause_holds_the_hpa_across_a_window_start_until_it_expires(
    controller: Running, kube: Kube, namespace: str
) -> None:
    await web_with_noon_window(kube, namespace)
    annotate(kube, namespace, {PAUSED_UNTIL_ANNOTATION: "2026-11-16T12:30:00Z"})
    await eventually(
        lambda: (condition(kube, namespace, "Paused") or ("",))[0] == "True", what="Paused"
    )
    # A manual edit of the paused HPA is kept: nothing is written to it.
    kube.merge(HPA_V2, namespace, "web", {"spec": {"maxReplicas": 11}})
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(
        lambda: (
            kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("activeSchedules")
            == ["noon"]
        ),
        what="window active in the status",
    )
    await asyncio.sleep(0.5)
    assert kube.bounds(namespace, "web") == (3, 11)
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    assert (status["minReplicas"], status["maxReplicas"]) == (3, 11)
    assert status["condition"] == "Available"
    assert (condition(kube, namespace, "Ready") or ())[:2] == ("False", "Paused")
    assert status["nextTransitionTime"] == "2026-11-16T12:30:00Z"

    controller.clock.set(utc("2026-11-16T12:29:59"))
    await asyncio.sleep(0.3)
    assert kube.bounds(namespace, "web") == (3, 11), "the pause ended early"
    controller.clock.set(utc("2026-11-16T12:30:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (5, 20), what="window applied")
    await eventually(
        lambda: (
            condition(kube, namespace, "Paused")
            == (
                "False",
                "PauseExpired",
                "the pause ended at 2026-11-16T12:30:00Z; the schedule applies",
            )
        ),
        what="PauseExpired",
    )
    await eventually(lambda: events(kube, namespace, "PauseExpired"), what="PauseExpired event")
    [paused] = events(kube, namespace, "Paused")
    assert paused["message"] == (
        "paused until 2026-11-16T12:30:00Z: the controller leaves the HorizontalPodAutoscaler "
        "as it is"
    )


async def test_an_override_holds_its_bounds_and_returns_to_the_schedule_at_its_end(
    controller: Running, kube: Kube, namespace: str
) -> None:
    await web_with_noon_window(kube, namespace)
    annotate(kube, namespace, {OVERRIDE_ANNOTATION: "min=8,max=12,until=2026-11-16T12:15:00Z"})
    await eventually(lambda: kube.bounds(namespace, "web") == (8, 12), what="override applied")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(
        lambda: (
            kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("activeSchedules")
            == ["noon"]
        ),
        what="window active in the status",
    )
    assert kube.bounds(namespace, "web") == (8, 12)
    controller.clock.set(utc("2026-11-16T12:15:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (5, 20), what="schedule again")
    await eventually(lambda: events(kube, namespace, "OverrideExpired"), what="expiry event")
    assert (condition(kube, namespace, "Overridden") or ())[:2] == ("False", "OverrideExpired")
    [started] = events(kube, namespace, "Overridden")
    assert started["message"] == (
        "overridden to minReplicas 8, maxReplicas 12 until 2026-11-16T12:15:00Z"
    )


async def test_resume_returns_to_the_schedule_at_once(
    controller: Running, kube: Kube, namespace: str
) -> None:
    await web_with_noon_window(kube, namespace)
    annotate(kube, namespace, {PAUSED_UNTIL_ANNOTATION: "indefinite"})
    await eventually(
        lambda: (condition(kube, namespace, "Paused") or ("",))[0] == "True", what="Paused"
    )
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(
        lambda: (condition(kube, namespace, "Ready") or ("",))[2].endswith(
            "(the schedule wants minReplicas 5, maxReplicas 20)"
        ),
        what="window wanted, not applied",
    )
    assert kube.bounds(namespace, "web") == (3, 10)
    annotate(kube, namespace, {PAUSED_UNTIL_ANNOTATION: None})
    await eventually(lambda: kube.bounds(namespace, "web") == (5, 20), what="resumed")
    await eventually(lambda: events(kube, namespace, "PauseEnded"), what="PauseEnded event")


async def test_a_malformed_annotation_is_a_warning_and_the_schedule_keeps_applying(
    controller: Running, kube: Kube, namespace: str
) -> None:
    await web_with_noon_window(kube, namespace)
    annotate(kube, namespace, {OVERRIDE_ANNOTATION: "min=twenty,until=2026-11-16T12:15:00Z"})
    [warning] = await eventually(
        lambda: events(kube, namespace, "InvalidAnnotation"), what="Warning"
    )
    assert warning["type"] == "Warning"
    assert warning["message"].startswith(
        f'metadata.annotations["{OVERRIDE_ANNOTATION}"]: min must be an integer'
    )
    assert (condition(kube, namespace, "Overridden") or ())[:2] == ("False", "InvalidAnnotation")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (5, 20), what="window applied")
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    assert status["condition"] == "Available"


def test_kubectl_spa_pause_override_resume(
    cluster: Any, controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    kube.create(autoscaler(name="web", namespace=namespace))
    admin = cluster.kubeconfig
    with spa_run(controller_kubeconfig, namespace, log=tmp_path / "spa-run.log"):
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA")

        # An override with a short --for: applied, then the schedule again at its end.
        result = kubectl_spa(
            "override", "web", "--min", "5", "--max", "7", "--for", "4s", "-n", namespace,
            kubeconfig=admin,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(
            f"scheduledpodautoscaler {namespace}/web overridden to minReplicas 5, maxReplicas 7 "
            "until "
        )
        annotations = kube.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["metadata"][
            "annotations"
        ]
        assert annotations[OVERRIDE_ANNOTATION].startswith("min=5,max=7,until=")
        wait_for(lambda: kube.bounds(namespace, "web") == (5, 7), within=10, what="override")
        document = status_json(admin, "web", "-n", namespace)
        [web] = document["autoscalers"]
        assert web["incident"]["override"]["minReplicas"] == 5
        assert web["wanted"]["minReplicas"] == 5
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=15, what="expired")

        # A pause without --for: the HPA is left alone, even a manual edit of it.
        result = kubectl_spa("pause", "web", "-n", namespace, kubeconfig=admin)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (f"scheduledpodautoscaler {namespace}/web paused until resumed\n")
        wait_for(
            lambda: (
                status_json(admin, "web", "-n", namespace)["autoscalers"][0]["hpa"]["state"]
                == "Paused"
            ),
            within=10,
            what="status Paused",
        )
        wait_for(
            lambda: any(e["reason"] == "Paused" for e in kube.events(namespace)),
            within=10,
            what="Paused event",
        )
        paused = kube.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["metadata"]
        assert any(entry["manager"] == "kubectl-spa" for entry in paused["managedFields"])
        kube.merge(HPA_V2, namespace, "web", {"spec": {"minReplicas": 2}})
        table = kubectl_spa("status", "web", "-n", namespace, kubeconfig=admin).stdout
        assert "  paused until resumed: the controller leaves the HPA as it is" in table
        assert kube.bounds(namespace, "web") == (2, 10)

        result = kubectl_spa("resume", "web", "-n", namespace, kubeconfig=admin)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (
            f"scheduledpodautoscaler {namespace}/web resumed: the schedule applies\n"
        )
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=10, what="resumed")
        metadata = kube.get(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["metadata"]
        assert PAUSED_UNTIL_ANNOTATION not in (metadata.get("annotations") or {})
        again = kubectl_spa("resume", "web", "-n", namespace, kubeconfig=admin)
        assert (again.returncode, again.stdout) == (
            0,
            f"scheduledpodautoscaler {namespace}/web: neither paused nor overridden; "
            "nothing to resume\n",
        )

    missing = kubectl_spa("pause", "gone", "-n", namespace, kubeconfig=admin)
    assert (missing.returncode, missing.stderr) == (
        1,
        f"error: ScheduledPodAutoscaler {namespace}/gone not found\n",
    )
    bad = kubectl_spa("override", "web", "--min", "3", "-n", namespace, kubeconfig=admin)
    assert bad.returncode == 2
    assert "the following arguments are required: --for" in bad.stderr
    after = kubectl_spa("status", "web", "-n", namespace, "-o", "json", kubeconfig=admin)
    assert json.loads(after.stdout)["autoscalers"][0]["incident"] is None
