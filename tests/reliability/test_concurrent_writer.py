"""Fault 6: somebody else keeps writing the generated HPAs (a script doing read-modify-write
PUTs, so it gets 409 Conflicts whenever the controller or the HPA controller wrote in
between), while the kube-controller-manager's HPA controller updates their status and a window
starts.

What must hold afterwards: the controller's values win for everything the SPA defines (min,
max, metrics), and what the other writer added beside them (a label, an annotation) stays.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from spa.kube import HPA_V2, BlockingKubeClient, Conflict, connect_blocking
from tests.integration.harness import (
    Kube,
    create_noon_fleet,
    eventually,
    running_controller,
    utc,
)
from tests.reliability.common import MONDAY_11, bounds_of, hpa_writes, report, ticking

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

NAMES = ["web-0", "web-1", "web-2"]
WRITER_SECONDS = 20.0


class Meddler:
    """Read-modify-write PUTs of every HPA, in a loop, from a thread."""

    def __init__(self, client: BlockingKubeClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.writes = 0
        self.conflicts = 0
        self.last_label: dict[str, str] = {}
        self.last_note: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        round_ = 0
        while not self._stop.is_set():
            round_ += 1
            for name in NAMES:
                hpa = self.client.get(HPA_V2, self.namespace, name)
                hpa["metadata"].setdefault("labels", {})["team.example.com/owner"] = f"r{round_}"
                hpa["spec"]["minReplicas"] = 1
                hpa["spec"]["maxReplicas"] = 99
                hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = 50
                if not self._put(name, hpa):
                    continue
                self.last_label[name] = f"r{round_}"
                # A second edit from the copy it already has, as a sloppy script would: the
                # controller reverted min/max meanwhile, so this one gets a 409; it then reads
                # again and retries, as it should.
                time.sleep(0.05)
                hpa["metadata"].setdefault("annotations", {})["example.com/note"] = f"r{round_}"
                while not self._put(name, hpa):
                    hpa = self.client.get(HPA_V2, self.namespace, name)
                    hpa["metadata"].setdefault("annotations", {})["example.com/note"] = f"r{round_}"
                self.last_note[name] = f"r{round_}"
            time.sleep(0.02)

    def _put(self, name: str, hpa: dict[str, Any]) -> bool:
        try:
            self.client.update(HPA_V2, self.namespace, name, hpa)
        except Conflict:
            self.conflicts += 1
            return False
        self.writes += 1
        return True

    def __enter__(self) -> Meddler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


async def test_controller_values_win_and_other_fields_stay_under_a_concurrent_writer(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    create_noon_fleet(kube, namespace, NAMES)
    other = connect_blocking(kubeconfig=str(cluster.kubeconfig))
    try:
        async with (
            running_controller(cluster.kubeconfig, [namespace], start=utc(MONDAY_11)) as running,
            ticking(running.clock) as clock,
        ):
            await eventually(
                lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
                within=30,
                what="HPAs at base",
            )
            writes_before = hpa_writes()
            with Meddler(other, namespace) as meddler:
                await asyncio.sleep(WRITER_SECONDS / 2)
                clock.set(utc("2026-11-16T12:00:00"))
                await asyncio.sleep(WRITER_SECONDS / 2)
            stopped = time.monotonic()
            await eventually(
                lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (5, 20)),
                within=30,
                what="controller's bounds back after the writer stopped",
            )
            settled = time.monotonic() - stopped
            patches = hpa_writes()["patch"] - writes_before["patch"]
            for name in NAMES:
                hpa = kube.hpa(namespace, name)
                metadata = hpa["metadata"]
                target = hpa["spec"]["metrics"][0]["resource"]["target"]
                assert target["averageUtilization"] == 70, name
                assert metadata["labels"]["team.example.com/owner"] == meddler.last_label[name]
                assert metadata["annotations"]["example.com/note"] == meddler.last_note[name]
            # The HPA controller's status writes go on beside ours (after an API server
            # restart earlier in the session its informers may take a while to come back).
            await eventually(
                lambda: all(
                    kube.hpa(namespace, name).get("status", {}).get("conditions") for name in NAMES
                ),
                within=60,
                what="the HPA controller's status on every HPA",
            )
            report(
                "concurrent writer",
                writer_puts=meddler.writes,
                writer_conflicts=meddler.conflicts,
                controller_patches=patches,
                settle_s=settled,
            )
            assert meddler.writes >= 20
            assert meddler.conflicts >= 10
            # One patch per write of the other (at most), plus the transition: no storm.
            assert patches <= meddler.writes + len(NAMES)
    finally:
        other.close()
