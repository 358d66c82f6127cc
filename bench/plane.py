"""Where a benchmark runs, and the controller processes it runs there: a throwaway control
plane (tests/testenv) or the cluster the operator names, and `spa run` started, sampled and
stopped in it.

Why one module: bench/cache.py, bench/client.py and bench/memory.py each take `--kubeconfig`
to measure against a running cluster and otherwise start a control plane for the run alone;
bench/load.py, bench/original.py, bench/capacity.py, bench/nodes.py and bench/soak.py each
start one with the project's CRDs, its RBAC (config/rbac) and the controller's ServiceAccount,
and run `spa run` as that account. The start, the set-up and the stop in every exit path, and
the controller's command line, are the same in each; what differs (the plane's options, the
controller's flags) is an argument. bench/report.py says why this is a flat module.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tests.testenv.controlplane import ControlPlane

_T = TypeVar("_T")

__all__ = [
    "HPA_SYNC_SECONDS",
    "SA_NAME",
    "SA_NAMESPACE",
    "SPA_BIN",
    "ProcessSampler",
    "controller_plane",
    "on_a_cluster",
    "reconciled_count",
    "start_spa_run",
    "stop_process",
    "synced_at",
]

REPO = Path(__file__).resolve().parents[1]
# The controller's ServiceAccount, as config/rbac makes it.
SA_NAMESPACE = SA_NAME = "scheduled-pod-autoscaler"
SPA_BIN = Path(sys.executable).parent / "spa"
# A real cluster's HPA sync period (kube-controller-manager's default): what users get.
HPA_SYNC_SECONDS = 15


def on_a_cluster(
    kubeconfig: str | None,
    run: Callable[[str], _T],
    *,
    name: str,
    crds: bool = False,
    **plane: Any,
) -> _T:
    """`run(kubeconfig)` against `kubeconfig`, or, without one, against a control plane of
    its own (tests/testenv's `ControlPlane(**plane)`, with the project's CRDs if `crds`),
    stopped afterwards whatever happens."""
    if kubeconfig:
        return run(kubeconfig)
    from tests.integration.harness import install_crds
    from tests.testenv.controlplane import ControlPlane

    with (
        tempfile.TemporaryDirectory(prefix=f"spa-bench-{name}-") as workdir,
        ControlPlane(Path(workdir), **plane) as started,
    ):
        if crds:
            install_crds(started)
        return run(str(started.kubeconfig))


@contextlib.contextmanager
def controller_plane(
    workdir: Path,
    *,
    namespaces: Sequence[str] = (),
    start_timeout: float = 60,
    **plane: Any,
) -> Iterator[ControlPlane]:
    """A control plane in `workdir` (tests/testenv's `ControlPlane(workdir, **plane)`) with
    the project's CRDs, its RBAC (config/rbac: the controller's ServiceAccount SA_NAMESPACE/
    SA_NAME and its roles) and `namespaces`; stopped afterwards whatever happens."""
    from tests.integration.harness import install_crds
    from tests.testenv.controlplane import ControlPlane

    started = ControlPlane(workdir, **plane)
    started.start(timeout=start_timeout)
    try:
        install_crds(started)
        started.run_kubectl("apply", "--server-side", "-k", str(REPO / "config/rbac"), check=True)
        for namespace in namespaces:
            started.run_kubectl("create", "namespace", namespace, check=True)
        yield started
    finally:
        started.stop()


# `spa run` of another checkout (`--spa-src`): `python -c` puts the working directory, that
# checkout, first on sys.path.
_SPA_FROM_SOURCE = "import sys; from spa.cli import main; sys.exit(main())"


def start_spa_run(
    kubeconfig: Path,
    namespace: str,
    logfile: Path,
    *,
    spa_src: Path | None = None,
    python: Path | None = None,
    metrics_port: int = 0,
    extra: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    """`spa run --namespace namespace` as a process, its JSON log in `logfile`: this
    checkout's, or with `spa_src` another checkout's (a worktree of an older commit), run by
    `python` (that checkout's venv; this one's by default, whose pinned dependencies may
    differ)."""
    command = [str(SPA_BIN)]
    env = {**os.environ, "KUBECONFIG": ""}
    if spa_src is not None:
        command = [str(python or sys.executable), "-c", _SPA_FROM_SOURCE]
        env["PYTHONPATH"] = str(spa_src)
    with logfile.open("wb") as output:
        return subprocess.Popen(
            [
                *command,
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--namespace",
                namespace,
                "--metrics-addr",
                f"127.0.0.1:{metrics_port}",
                "--probe-addr",
                "127.0.0.1:0",
                "--log-format",
                "json",
                *extra,
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=spa_src,
        )


def stop_process(process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """SIGTERM, as a kubelet stops a pod; SIGKILL if it has not exited after `timeout`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def reconciled_count(port: int) -> int:
    """How many SPAs the controller serving metrics on `port` has reconciled successfully (a
    standby replica, which does not reconcile, has 0)."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return 0
    return sum(
        1
        for line in text.splitlines()
        if line.startswith("spa_last_successful_reconcile_timestamp_seconds{")
    )


def synced_at(logfile: Path) -> float:
    """Wall time of the controller's "caches synced" log line in `logfile` (0 if not yet)."""
    try:
        text = logfile.read_text(errors="replace")
    except OSError:
        return 0.0
    for line in text.splitlines():
        if "caches synced" not in line:
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        stamp = entry.get("time") or entry.get("ts") or entry.get("timestamp")
        if isinstance(stamp, (int, float)):
            return float(stamp)
        if isinstance(stamp, str):
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return 0.0


class ProcessSampler:
    """Samples /proc/<pid> of the controller: VmRSS, VmHWM, CPU seconds; keeps every CPU
    and RSS sample with its wall time (`history`, `rss_history`), so that the CPU or the
    peak RSS of a stretch known only afterwards (up to the last write the audit log shows)
    can be read back (`cpu_at`, `rss_peak`)."""

    INTERVAL = 0.2

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.rss_mib = 0.0
        self.hwm_mib = 0.0
        self.cpu = 0.0
        self.history: list[tuple[float, float]] = []  # (wall time, CPU seconds)
        self.rss_history: list[tuple[float, float]] = []  # (wall time, RSS MiB)
        self._stop = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def sample(self) -> None:
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                self.rss_mib = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                self.hwm_mib = int(line.split()[1]) / 1024
        fields = stat.rsplit(")", 1)[1].split()
        self.cpu = (int(fields[11]) + int(fields[12])) / self._tick
        now = time.time()
        self.history.append((now, self.cpu))
        self.rss_history.append((now, self.rss_mib))

    def cpu_before(self, instant: float) -> tuple[float, float]:
        """The last sample taken before `instant`: (its wall time, CPU seconds)."""
        earlier = [sample for sample in list(self.history) if sample[0] < instant]
        return earlier[-1] if earlier else (float("nan"), float("nan"))

    def cpu_at(self, instant: float) -> tuple[float, float]:
        """The first sample taken at or after `instant`: (its wall time, CPU seconds)."""
        for sampled, cpu in list(self.history):
            if sampled >= instant:
                return sampled, cpu
        return self.history[-1] if self.history else (float("nan"), float("nan"))

    def rss_peak(self, since: float, until: float) -> float:
        """The highest RSS sampled from `since` to `until` (MiB; NaN if none was)."""
        within = [rss for sampled, rss in list(self.rss_history) if since <= sampled <= until]
        return max(within) if within else float("nan")

    def _run(self) -> None:
        while not self._stop.wait(self.INTERVAL):
            self.sample()

    def stop(self) -> None:
        self.sample()
        self._stop.set()
