"""Two `spa run` replicas with leader election on ten SPAs: the Lease's timing, a history of its
holders sampled from the API server, and what the replicas' logs and the Lease say
(tests/reliability/test_leader_failover.py, tests/reliability/test_leader_clock.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from spa.kube import HPA_V2, LEASE, ApiError, ApiUnavailable, BlockingKubeClient, NotFound
from spa.runtime.leaderelection import parse_micro_time
from tests.integration.harness import Kube
from tests.integration.processes import CONTROLLER_NAMESPACE, log_lines

NAMES = [f"web-{i}" for i in range(10)]
LEASE_DURATION = 15.0
RETRY_PERIOD = 2.0


class LeaseHistory:
    """Samples the Lease every 100 ms from a thread."""

    def __init__(self, client: BlockingKubeClient, name: str) -> None:
        self.client = client
        self.name = name
        self.samples: list[tuple[float, str, int, str]] = []  # wall time, holder, transitions, rv
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            try:
                lease = self.client.get(LEASE, CONTROLLER_NAMESPACE, self.name)
            except NotFound:
                continue
            except (ApiError, ApiUnavailable) as err:
                # A slow or failed read on a loaded machine must not end the sampling.
                self.errors.append(f"{time.time():.3f} {err}")
                continue
            spec = lease.get("spec") or {}
            self.samples.append(
                (
                    time.time(),
                    str(spec.get("holderIdentity") or ""),
                    int(spec.get("leaseTransitions") or 0),
                    str(lease["metadata"]["resourceVersion"]),
                )
            )

    def holders(self) -> list[str]:
        """Distinct holders in the order they held the Lease."""
        order: list[str] = []
        for _, holder, _, _ in self.samples:
            if holder and (not order or order[-1] != holder):
                order.append(holder)
        return order

    def current(self) -> str:
        return self.samples[-1][1] if self.samples else ""

    def first_seen(self, holder: str) -> float | None:
        return next((t for t, h, _, _ in self.samples if h == holder), None)

    def __enter__(self) -> LeaseHistory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def identity_of(log: Path) -> str:
    """The Lease identity a process campaigned with (from its log; "" if not yet)."""
    for line in log_lines(log):
        message = str(line.get("msg", ""))
        if message.startswith("campaigning for lease"):
            return message.rsplit(" as ", 1)[1]
    return ""


def drift(kube: Kube, namespace: str) -> None:
    """Someone edits every HPA, so the leader has something to write."""
    for name in NAMES:
        kube.merge(HPA_V2, namespace, name, {"spec": {"minReplicas": 1}})


def lease_acquired_at(kube: Kube, lease: str) -> float:
    spec = kube.get(LEASE, CONTROLLER_NAMESPACE, lease)["spec"]
    return parse_micro_time(spec["acquireTime"])
