"""The optional kinds on the real control plane (docs/runtime.md, "Optional kinds"): a
controller started where only the ScheduledPodAutoscaler and Schedule CRDs are installed is
ready and applies the Schedules that need no calendar; a Schedule that refers to a Calendar is
Degraded, with the missing CRD named, and a Warning Event; once the Calendar CRD and the
Calendar are applied, the Schedule applies, with no restart. A private control plane, because
the shared one has every CRD. The controller runs in-process, on a fake clock (Monday
2026-11-16 12:30 UTC, in the noon window), and asks discovery every half second instead of
every minute."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from spa.api import GROUP
from spa.controller.resources import CALENDARS, SCHEDULES
from tests.builders import DAILY_NOON, autoscaler, calendar, schedule
from tests.integration.harness import (
    REPO,
    Kube,
    admin,
    condition_becomes,
    eventually,
    running_controller,
    utc,
)
from tests.testenv.controlplane import ControlPlane

pytestmark = pytest.mark.integration

NAMESPACE = "shop"
CRDS = REPO / "config" / "crd"
MISSING = (
    "spec.calendars[0]: the Calendar CRD (calendars.autoscaling.d-kuro.github.io) is not "
    "installed: apply config/crd, or helm upgrade the chart (docs/install.md)"
)


def _apply_crds(plane: ControlPlane, *plurals: str) -> None:
    files = [f"--filename={CRDS / f'{GROUP}_{plural}.yaml'}" for plural in plurals]
    plane.run_kubectl("apply", "--server-side", *files, check=True)
    plane.run_kubectl(
        "wait",
        "--for=condition=Established",
        *(f"crd/{plural}.{GROUP}" for plural in plurals),
        "--timeout=60s",
        check=True,
    )


def _readyz(port: int | None) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
        return int(response.status)


def _warnings(kube: Kube, name: str) -> list[tuple[str, str]]:
    return [
        (event["reason"], event["message"])
        for event in kube.events(NAMESPACE)
        if event["involvedObject"]["name"] == name and event["type"] == "Warning"
    ]


async def test_a_calendar_crd_installed_while_the_controller_runs_is_taken_up(
    control_plane_factory: Callable[..., ControlPlane],
) -> None:
    plane = control_plane_factory()
    _apply_crds(plane, "scheduledpodautoscalers", "schedules")
    plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
    with admin(plane) as kube:
        async with running_controller(
            plane.kubeconfig,
            [NAMESPACE],
            start=utc("2026-11-16T12:30:00"),
            discovery_interval=0.5,
        ) as running:
            # Ready without the calendar kinds (the harness waited for it; /readyz agrees).
            assert await asyncio.to_thread(_readyz, running.manager.probe_port) == 200
            kube.create(autoscaler(name="web", namespace=NAMESPACE))
            kube.create(
                schedule(
                    name="plain",
                    namespace=NAMESPACE,
                    minReplicas=4,
                    maxReplicas=12,
                    **DAILY_NOON,
                )
            )
            peak: dict[str, Any] = schedule(
                name="peak",
                namespace=NAMESPACE,
                minReplicas=6,
                maxReplicas=20,
                calendars=[{"name": "freeze"}],
                **DAILY_NOON,
            )
            kube.create(peak)
            # The Schedule without calendars applies; the one with is Degraded and says why.
            await eventually(lambda: kube.bounds(NAMESPACE, "web") == (4, 12), what="(4, 12)")
            await condition_becomes(kube, SCHEDULES, NAMESPACE, "plain", "Progressing")
            status = await condition_becomes(kube, SCHEDULES, NAMESPACE, "peak", "Degraded")
            assert status["message"] == MISSING
            await eventually(
                lambda: ("InvalidSchedule", MISSING) in _warnings(kube, "peak"),
                what="the Warning Event",
            )

            # The CRD and the Calendar (a Skip calendar whose dates are not today): the
            # Schedule applies, in the same process.
            _apply_crds(plane, "calendars")
            kube.create(calendar(name="freeze", namespace=NAMESPACE, dates=["2026-12-24"]))
            await condition_becomes(kube, SCHEDULES, NAMESPACE, "peak", "Progressing")
            await eventually(lambda: kube.bounds(NAMESPACE, "web") == (6, 20), what="(6, 20)")
            assert not running.task.done()

            # And the Calendar is watched: today added to it, the Schedule's window goes.
            kube.merge(CALENDARS, NAMESPACE, "freeze", {"spec": {"dates": ["2026-11-16"]}})
            await eventually(lambda: kube.bounds(NAMESPACE, "web") == (4, 12), what="skipped")
