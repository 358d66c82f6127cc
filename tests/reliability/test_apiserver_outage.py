"""Fault 2: kube-apiserver is stopped for about 30 s and a window starts while it is down.

While it is down the HPAs keep their last values (nothing can change them) and the metrics say
what the controller last applied; once it is back, the transition must be applied within
seconds, not after the work queue's exponential backoff has grown through the outage.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from tests.integration.harness import (
    Kube,
    create_noon_fleet,
    eventually,
    running_controller,
    utc,
)
from tests.reliability.common import (
    MONDAY_11,
    Requests,
    bounds_of,
    most_attempts,
    report,
    sample,
    ticking,
)

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

NAMES = [f"web-{i}" for i in range(5)]
OUTAGE_SECONDS = 36.0


async def test_transition_during_an_apiserver_outage_is_applied_when_it_returns(
    control_plane: Any, kube: Kube, namespace: str
) -> None:
    create_noon_fleet(kube, namespace, NAMES)
    requests = Requests()
    try:
        async with running_controller(
            control_plane.kubeconfig, [namespace], start=utc(MONDAY_11)
        ) as running:
            running.manager.client.add_request_hook(requests.hook)
            async with ticking(running.clock) as clock:
                await eventually(
                    lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
                    within=30,
                    what="HPAs at base",
                )
                last_success = "spa_last_successful_reconcile_timestamp_seconds"
                await eventually(
                    lambda: all(
                        sample(last_success, namespace=namespace, name=name) for name in NAMES
                    ),
                    what="every SPA reconciled to the end",
                )
                clock.set(utc("2026-11-16T11:59:50"))
                errors_before = sample(
                    "spa_reconcile_total", controller="scheduledpodautoscaler", result="error"
                )
                succeeded_before = sample(last_success, namespace=namespace, name=NAMES[0])
                watch_errors = {
                    "resource": str(SCHEDULED_POD_AUTOSCALERS),
                    "reason": "error",
                }
                restarts_before = sample("spa_watch_restarts_total", **watch_errors)
                down_at = time.monotonic()
                await asyncio.to_thread(control_plane.stop_apiserver)
                try:
                    # The boundary passes (fake time) while the API server is down.
                    clock.set(utc("2026-11-16T12:00:00"))
                    await asyncio.sleep(OUTAGE_SECONDS - (time.monotonic() - down_at))
                    # During the outage the metrics still show what is in force on the HPAs.
                    gauge = (
                        "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler_min_replicas"
                    )
                    assert sample(gauge, name=NAMES[0], namespace=namespace) == 3
                    # The alert's signal: the last success stops advancing, while the
                    # boundary is due.
                    assert (
                        sample(last_success, namespace=namespace, name=NAMES[0]) == succeeded_before
                    )
                    watch_restarts = (
                        sample("spa_watch_restarts_total", **watch_errors) - restarts_before
                    )
                    errors_during = (
                        sample(
                            "spa_reconcile_total",
                            controller="scheduledpodautoscaler",
                            result="error",
                        )
                        - errors_before
                    )
                    outage_requests = len(requests.between(down_at, time.monotonic()))
                finally:
                    up_began = time.monotonic()
                    await asyncio.to_thread(control_plane.start_apiserver)
                up_at = time.monotonic()
                await eventually(
                    lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (5, 20)),
                    within=120,
                    what="window applied after the outage",
                )
                recovery = time.monotonic() - up_at
                # The HPA is written before the reconcile ends (its status comes next): the
                # last success follows a moment after the bounds.
                await eventually(
                    lambda: (
                        sample(last_success, namespace=namespace, name=NAMES[0])
                        >= utc("2026-11-16T12:00:00")
                    ),
                    within=30,
                    what="the last successful reconcile advanced past the boundary",
                )
                succeeded_after = sample(last_success, namespace=namespace, name=NAMES[0])
                report(
                    "apiserver outage",
                    outage_s=up_at - down_at,
                    apiserver_start_s=up_at - up_began,
                    recovery_s=recovery,
                    reconcile_errors_during_outage=errors_during,
                    requests_during_outage=outage_requests,
                    spa_watch_restarts_during_outage=watch_restarts,
                )
                assert errors_during >= len(NAMES), "the boundary did not hit the outage"
                assert watch_restarts >= 1, "the SPA watch did not see the outage"
                assert succeeded_after >= utc("2026-11-16T12:00:00") > succeeded_before
                # No busy loop while the server was away (docs/reliability.md): one probe loop
                # (0.5 s doubling to 2 s), each of the controller's watches reconnecting (0.2 s
                # doubling to 30 s), and at most one failure and one retry per key.
                outage = up_began - down_at
                watches = len(running.manager.informers)
                busy_bound = (
                    most_attempts(outage, initial=0.5, maximum=2.0)
                    + watches * most_attempts(outage, initial=0.2, maximum=30.0)
                    + 2 * len(NAMES)
                )
                assert outage_requests <= busy_bound, (outage_requests, busy_bound)
                assert recovery < 5.0, f"transition applied {recovery:.1f}s after the API returned"
    finally:
        # Leave the shared control plane as a real cluster is after such an outage.
        await asyncio.to_thread(control_plane.restart_controller_manager)
