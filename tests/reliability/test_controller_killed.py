"""Fault 4: `spa run` is SIGKILLed in the middle of applying one transition to 200 SPAs.

The 200 Schedules are created while no controller runs, with a window that started two
minutes ago (real time), so that the next controller starts with 200 transitions due at once
(what a restart just after a boundary looks like). It is killed when a few dozen HPAs have been
written; a new process must finish the rest without writing any HPA twice.
"""

from __future__ import annotations

import signal
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from tests.builders import autoscaler, schedule
from tests.integration.harness import Kube
from tests.integration.processes import (
    count_writes,
    spa_run,
    wait_for,
    writes,
)
from tests.reliability.common import bounds_of, report

pytestmark = [pytest.mark.integration, pytest.mark.reliability, pytest.mark.e2e]

COUNT = 200
NAMES = [f"app-{i:03d}" for i in range(COUNT)]
KILL_AFTER = 40


def test_sigkill_during_a_mass_transition_then_restart_finishes_without_double_writes(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    for name in NAMES:
        kube.create(autoscaler(name=name, namespace=namespace))
    first, second, third = (tmp_path / f"{n}.log" for n in ("first", "second", "third"))
    with spa_run(controller_kubeconfig, namespace, log=first) as process:
        wait_for(
            lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
            within=180,
            what="200 HPAs at base",
            interval=1.0,
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0

    now = datetime.now(UTC)
    start = (now - timedelta(minutes=2)).strftime("%H:%M")
    end = (now + timedelta(minutes=30)).strftime("%H:%M")
    for name in NAMES:
        kube.create(
            schedule(
                name=f"{name}-now",
                namespace=namespace,
                target=name,
                type="Daily",
                startTime=start,
                endTime=end,
                minReplicas=6,
                maxReplicas=12,
            )
        )

    with spa_run(controller_kubeconfig, namespace, log=second) as process:
        started = time.monotonic()
        wait_for(
            lambda: count_writes(second) >= KILL_AFTER,
            within=180,
            what=f"{KILL_AFTER} HPAs written",
            interval=0.01,
        )
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        killed_after = time.monotonic() - started
    before_kill = writes(second)
    assert KILL_AFTER <= len(before_kill) < COUNT, "the kill did not land mid-transition"
    applied_at_kill = sum(1 for v in bounds_of(kube, namespace).values() if v == (6, 12))

    with spa_run(controller_kubeconfig, namespace, log=third) as process:
        restarted = time.monotonic()
        wait_for(
            lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (6, 12)),
            within=180,
            what="every HPA at the window's values after the restart",
            interval=0.5,
        )
        finished = time.monotonic() - restarted

        def statuses_done() -> bool:
            spas = kube.client.list(SCHEDULED_POD_AUTOSCALERS, namespace=namespace).items
            schedules = kube.client.list(SCHEDULES, namespace=namespace).items
            return all(
                (s.get("status") or {}).get("activeSchedules") == [f"{s['metadata']['name']}-now"]
                for s in spas
            ) and all((s.get("status") or {}).get("condition") == "Progressing" for s in schedules)

        wait_for(statuses_done, within=120, what="statuses", interval=1.0)
        after_restart = writes(third)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0

    written_before = {line["name"] for line in before_kill}
    written_after = [line["name"] for line in after_restart]
    twice = written_before & set(written_after)
    report(
        "SIGKILL mid-transition",
        spas=COUNT,
        killed_after_s=killed_after,
        written_before_kill=len(before_kill),
        applied_at_kill=applied_at_kill,
        written_after_restart=len(written_after),
        restart_to_all_applied_s=finished,
        written_twice=len(twice),
    )
    assert not twice, f"written again after the restart: {sorted(twice)[:10]}"
    assert len(written_after) == len(set(written_after)), "an HPA written twice by one process"
    # Every HPA was written exactly once overall, except those whose write landed but whose
    # log line was lost with the process (at most one per worker).
    assert COUNT - 4 <= len(before_kill) + len(written_after) <= COUNT
