"""Every entry point of bench/ in its smoke mode: the real thing at the smallest scale.

Each benchmark runs as `python bench/NAME.py --smoke`, a subprocess, as `make bench`, `make
soak` and `make bench-capacity` run them: its own control plane (tests/testenv) where it needs
one, real wall-clock boundaries, `spa run` as processes. In smoke mode each checks its own
invariants (the soak: no transition missed, no write duplicated, wrong, by a non-leader or
after the renew deadline, every kind of fault injected; the load benchmark: every HPA moved at
each of its three boundaries, capacity written before statuses and Events, no write at a
restart in sync, no request between boundaries or during a capacity probe; the shards
benchmark: every HPA raised once by one process and by the shards, no write as the shards start
on a fleet in sync, a killed shard's Lease taken by its standby within leader election's bound
and its SPAs raised by B + that failover; the capacity
benchmark: every Deployment got its pods, a lead raised its target before the boundary; the
nodes benchmark: with a node lead every pod and every new node Ready before the boundary, no
CapacityBuffer left; the ready benchmark: the second window Early on learned Auto leads; the
client benchmark: every HTTP stack measured; the suggest benchmark:
every autoscaler's windows as its truth, from a real Prometheus) and exits 1 when one
fails. Here: exit status 0, and the figures in its output. The nodes and ready benchmarks run
Karpenter's kwok provider: where it is not built their smokes are skipped, saying so, and not
started.

The smokes selected run at once, started by the first test (`smokes`), each test then waiting
for its own: most of each is waiting for a real minute boundary, and overlapping those waits
keeps the whole about as long as the soak's smoke alone (docs/development.md, "Test
durations"). bench/steppedclock.py has no smoke of its own: the soak's replicas run through it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.testenv.binaries import karpenter_built

REPO = Path(__file__).resolve().parents[2]

# Seconds from the start of all smokes: each waits up to a minute for a real minute boundary.
TIMEOUTS = {
    "engine": 120,
    "decide": 60,
    "imports": 60,
    "client": 240,
    # kube-controller-manager writes the HPAs' statuses it waits for; with every smoke
    # starting at once on 2 cores it took more than 2 minutes once (CI).
    "cache": 360,
    "memory": 240,
    "load": 400,
    "shards": 480,
    "capacity": 360,
    "soak": 360,
    "nodes": 420,
    "ready": 540,
    "suggest": 180,
}
# Entry points that need more than the plane, and why they are skipped where it is missing:
# bench/nodes.py and bench/ready.py run Karpenter's kwok provider, a build of minutes that
# `make test-bench-smoke` does not make (tests/testenv/binaries.py; `make test-karpenter`
# builds it).
KARPENTER_MISSING = (
    "Karpenter's kwok provider is not built (`make testenv-karpenter`, docs/development.md, "
    '"Karpenter"): bench/nodes.py and bench/ready.py need it'
)
KARPENTER = frozenset({"nodes", "ready"})


def runnable(name: str) -> bool:
    """Whether this machine has what the smoke of `name` needs."""
    return name not in KARPENTER or karpenter_built()


@dataclass
class Smoke:
    name: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    began: float

    def finish(self) -> tuple[int, float]:
        """Wait for it (interrupted at its deadline: its control plane and `spa run` processes
        are stopped by its own cleanup); its exit status and seconds taken."""
        left = self.began + TIMEOUTS[self.name] - time.monotonic()
        try:
            self.process.wait(timeout=max(1.0, left))
        except subprocess.TimeoutExpired:
            self.stop()
        return self.process.returncode, time.monotonic() - self.began

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def smokes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Smoke]]:
    """The smoke of every entry point selected in this module, all started at once."""
    names = [
        str(item.callspec.params["name"])
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.module is request.module
        and hasattr(item, "callspec")
        and runnable(str(item.callspec.params["name"]))
    ]
    directory = tmp_path_factory.mktemp("bench-smoke")
    env = {key: value for key, value in os.environ.items() if key != "KUBECONFIG"}
    started: dict[str, Smoke] = {}
    try:
        for name in names:
            stdout, stderr = directory / f"{name}.out", directory / f"{name}.err"
            with stdout.open("wb") as out, stderr.open("wb") as err:
                process = subprocess.Popen(
                    [sys.executable, str(REPO / "bench" / f"{name}.py"), "--smoke"],
                    cwd=REPO,
                    env=env,
                    stdout=out,
                    stderr=err,
                )
            started[name] = Smoke(name, process, stdout, stderr, time.monotonic())
        yield started
    finally:
        for smoke in started.values():
            smoke.stop()


def rows(output: str) -> dict[str, list[str]]:
    """The rows of the Markdown tables of `output` by their first cell: the other cells."""
    table: dict[str, list[str]] = {}
    for line in output.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            table[cells[0]] = cells[1:]
    return table


def engine(output: str) -> None:
    table = rows(output)
    assert table["active checks/s, instants within one week (warm cache)"][0] != "0"
    assert table["next-transition computations/s (an SPA with 5 schedules)"][0] != "0"
    plans = [label for label in table if label.startswith("plan of 10 SPAs x 5 Schedules")]
    assert len(plans) == 2, table


def client(output: str) -> None:
    table = rows(output)
    for stack in ("urllib3", "kubernetes.aio", "aiohttp", "spa.kube"):
        cpu, rate, _watch = table[stack]
        assert float(cpu) > 0, table[stack]
        assert float(rate) > 0, table[stack]
    for stack in ("urllib3", "aiohttp", "spa.kube"):
        assert float(table[stack][2]) > 0, table[stack]


def load(output: str) -> None:
    row = rows(output)["3 (12)"]  # N SPAs (Schedules)
    assert row[2].endswith("(0)"), row  # a restart in sync: no writes
    assert row[-1].startswith("0 in "), row  # no request between boundaries
    assert "lag by the audit log" in output
    assert "* capacity probe (3 HPA patches, 4 at a time" in output, output
    transitions = [line for line in output.splitlines() if " x the probes around it " in line]
    assert len(transitions) == 3, output  # A/B/A, three transitions
    assert all("capacity first: yes" in line for line in transitions), transitions


def shards(output: str) -> None:
    # | run | SPAs per process | first | p50 | p99 | last (watch) | ... (bench/shards.py)
    table = rows(output)
    for run in ("one process", "2 shards", "2 shards, s0 killed"):
        assert run in table, output
        assert table[run][4] != "-", table[run]  # a last raise, watched
    failover = next(line for line in output.splitlines() if line.startswith("* failover: "))
    assert "acquired the Lease" in failover, failover
    assert "within B + the failover: yes" in failover, failover
    assert "shards started on the fleet in sync" in output, output


def capacity(output: str) -> None:
    # Every row's first cell is N = 1, so not `rows`: by mode.
    modes = {
        cells[2]: cells
        for line in output.splitlines()
        if line.startswith("| 1 | 0 s |")
        for cells in [[cell.strip() for cell in line.strip().strip("|").split("|")]]
    }
    assert set(modes) == {"hpa", "immediate", "lead"}, output
    assert all(cells[-1] == "0" for cells in modes.values()), modes  # not ready
    assert modes["lead"][6].startswith("-"), modes["lead"]  # wanted before B


def nodes(output: str) -> None:
    # By mode: | N | mode | pods | created p50 | ready p50 | ready p99 | ready max | new nodes |
    # nodes ready p50 | nodes ready max | buffers | buffer created p50 | buffer gone p50 |
    # not ready | left |
    modes = {
        cells[1]: cells
        for line in output.splitlines()
        if line.startswith("| 1 | ")
        for cells in [[cell.strip() for cell in line.strip().strip("|").split("|")]]
    }
    assert set(modes) == {"hpa", "pod-lead", "node-lead"}, output
    assert all(cells[-2] == "0" and cells[-1] == "0" for cells in modes.values()), modes
    lead = modes["node-lead"]
    assert lead[6].startswith("-"), lead  # every pod Ready before B
    assert lead[9].startswith("-"), lead  # every new node Ready before B
    assert int(lead[7]) >= int(lead[2]), lead  # a new node for each pod
    assert lead[10] == "1", lead  # a CapacityBuffer for the SPA
    assert lead[11].startswith("-"), lead  # created before B
    assert modes["pod-lead"][10] == modes["hpa"][10] == "0", modes  # none without a node lead
    assert modes["hpa"][6].startswith("+"), modes["hpa"]  # without a lead: after B


def ready(output: str) -> None:
    # By window: | N | window | node delay | outcomes | Ready vs B p50 | Ready vs B max |
    # pods Ready (watched) max | pod lead in force | capacity lead in force | held |
    # nodes stood | new nodes |
    windows = {
        cells[1]: cells
        for line in output.splitlines()
        if line.startswith("| 1 | ")
        for cells in [[cell.strip() for cell in line.strip().strip("|").split("|")]]
    }
    assert set(windows) == {"1", "2"}, output
    second = windows["2"]
    assert second[3] == "1 Early", second
    assert second[5].startswith("-"), second  # Ready before B, as the SPA's status says
    assert second[6].startswith("-"), second  # and as the bench's own watch of the pods saw
    assert "learned" in second[7], second  # the pod lead learned
    assert "learned" in second[8], second  # and the capacity lead
    assert int(second[11]) >= 2, second  # the window's pods had new nodes


def soak(output: str) -> None:
    table = rows(output)
    for figure in (
        "missed",
        "duplicated writes",
        "wrong values",
        "writes by a replica not holding the Lease",
        "writes received > 10 s after the writer's last renewal",
    ):
        assert table[figure] == ["0"], (figure, output)
    assert int(table["HPA transitions due"][0]) > 0, output
    assert table["HPAs wrong at the end"][0].startswith("0 of "), output
    # Its Auto SPAs apart (their leads bounded to 10 s, bench/soak.py's SMOKE).
    spas, due = table["SPAs with leadTime: Auto / their transitions due"][0].split(" / ")
    assert int(spas) > 0, output
    assert int(due) > 0, output
    assert table["Auto: missed / duplicated / wrong"] == ["0 / 0 / 0"], output
    assert table["Auto: lead in force at the end (status.leadTime)"][0].startswith(
        "10 s Default: "
    ), output
    assert any(label.startswith("lag all (n=") for label in table), output
    faults = next(line for line in output.splitlines() if line.startswith("faults: "))
    for kind in ("cut", "apiserver-restart", "expire-410", "kill-replica", "kill-leader"):
        assert f"{kind} 1" in faults, faults
    assert "clock-step 1" in faults, faults


def imports(output: str) -> None:
    table = {
        line.split("MiB")[1].strip(): float(line.split()[0])
        for line in output.splitlines()
        if line.startswith("  ") and "MiB" in line
    }
    # spa run's own packages and its HTTP client are among what it imports.
    assert table.get("spa", 0) > 0, output
    assert table.get("aiohttp", 0) > 0, output


def decide(output: str) -> None:
    table = rows(output)
    for way in ("per decision", "per version"):
        assert float(table[way][0]) > 0, table


def cache(output: str) -> None:
    table = rows(output)
    kept = {way: float(table[way][0]) for way in ("raw", "bookkeeping", "read")}
    assert kept["read"] < kept["bookkeeping"] < kept["raw"], table


def memory(output: str) -> None:
    table = rows(output)
    for structure in ("schedules cache (objects)", "scheduledpodautoscalers cache (objects)"):
        assert float(table[structure][0]) > 0, table
    assert "RSS per SPA" in output


def suggest(output: str) -> None:
    # | autoscalers | weeks | wall | CPU | peak RSS | windows | checked |
    row = rows(output)["5"]
    assert row[0] == "2", row
    assert float(row[1]) > 0, row
    assert row[-1] == "0 problem(s)", row
    assert int(row[-2]) == 20, row  # five autoscalers like shop/web, four windows each


FIGURES: dict[str, Callable[[str], None]] = {
    "engine": engine,
    "decide": decide,
    "imports": imports,
    "client": client,
    "cache": cache,
    "memory": memory,
    "load": load,
    "shards": shards,
    "capacity": capacity,
    "nodes": nodes,
    "ready": ready,
    "soak": soak,
    "suggest": suggest,
}
CLUSTER = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize(
    "name",
    [
        "engine",  # no control plane
        "decide",  # no control plane
        "imports",  # no control plane
        "suggest",  # no control plane: a real Prometheus (Debian's prometheus package)
        pytest.param("client", marks=CLUSTER),
        pytest.param("cache", marks=CLUSTER),
        pytest.param("memory", marks=CLUSTER),
        pytest.param("load", marks=[*CLUSTER, pytest.mark.e2e]),
        pytest.param("shards", marks=[*CLUSTER, pytest.mark.e2e]),
        pytest.param("capacity", marks=[*CLUSTER, pytest.mark.e2e]),
        pytest.param("soak", marks=[*CLUSTER, pytest.mark.e2e]),
        *(
            pytest.param(
                name,
                marks=[
                    *CLUSTER,
                    pytest.mark.e2e,
                    pytest.mark.skipif(not karpenter_built(), reason=KARPENTER_MISSING),
                ],
            )
            for name in ("nodes", "ready")
        ),
    ],
)
@pytest.mark.timeout(max(TIMEOUTS.values()) + 90)
def test_bench_smoke(name: str, smokes: dict[str, Smoke]) -> None:
    smoke = smokes[name]
    code, took = smoke.finish()
    output = smoke.stdout.read_text(errors="replace")
    assert code == 0, (
        f"bench/{name}.py --smoke exited {code} after {took:.0f} s\n"
        f"stdout:\n{output[-6000:]}\nstderr:\n{smoke.stderr.read_text(errors='replace')[-6000:]}"
    )
    assert "smoke: ok" in output, output
    FIGURES[name](output)
