"""Memory beside the original Go controller: `spa run` and the original
(github.com/d-kuro/scheduled-pod-autoscaler) on the same API server, the same fleet, one after
the other (issue 24's yardstick).

Why on Kubernetes 1.23: the original is built on client-go 0.20 and writes its HPAs as
`autoscaling/v2beta2`, which API servers after 1.25 no longer serve; 1.23 is the newest
release of hack/testenv/releases that serves it (`make testenv` builds others with
`hack/testenv/build.sh v1.23.17`). `spa run` discovers and uses `autoscaling/v2` there.

For each size N: a fresh control plane (etcd and kube-apiserver only, as bench/load.py: no
kube-controller-manager, so no HPA controller writes beside the controllers), the project's
CRDs (the original reads the same group, version and kinds), N SPAs with 4 Schedules each
(bench/load.py's fleet, `load_fleet` of bench/fleet.py), then each controller in turn,
`--rounds` times (original, spa, original, spa, ...): the HPAs deleted, the process started,
its RSS sampled every 0.2 s; once it has written all N HPAs it settles `--settle` seconds,
then the steady RSS (VmRSS, median of `--sample` seconds of samples) and the peak (VmHWM)
are read, and it is stopped.

    hack/go-original/build.sh SRC            # the original, from a checkout of its repository
    python bench/original.py --sizes 100,1000 --out docs/results/original-100-1000.json
    python bench/original.py --spa-src ../before  # also `spa run` of another checkout
    python bench/original.py --smoke         # 3 SPAs, one round each: both must write them

A Markdown summary goes to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fleet import create_all, load_fleet  # noqa: E402
from bench.measured import NOTHING_MEASURED, positive_int, positive_ints, seconds  # noqa: E402
from bench.plane import (  # noqa: E402
    SA_NAME,
    SA_NAMESPACE,
    ProcessSampler,
    controller_plane,
    start_spa_run,
    stop_process,
)
from bench.report import loadavg, log, machine, write_json  # noqa: E402
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import HPA_V2BETA2, BlockingKubeClient, connect_blocking  # noqa: E402
from tests.testenv.binaries import find_binaries  # noqa: E402
from tests.testenv.controlplane import ControlPlane  # noqa: E402

NAMESPACE = "bench"  # as bench/load.py's
RELEASE = "v1.23.17"
TESTENV_CACHE = Path(
    os.environ.get("SPA_TESTENV_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "scheduled-pod-autoscaler/testenv"
)


def original_binary() -> Path:
    """Where hack/go-original/build.sh keeps the original's binary."""
    out = subprocess.run(
        [str(REPO / "hack/go-original/build.sh"), "--print-path"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def hpa_count(admin: BlockingKubeClient) -> int:
    return len(admin.list(HPA_V2BETA2, namespace=NAMESPACE).items)


def delete_hpas(admin: BlockingKubeClient, timeout: float = 60) -> None:
    """Every HPA of the namespace gone, so each controller starts from the same state."""
    for item in admin.list(HPA_V2BETA2, namespace=NAMESPACE).items:
        admin.delete(HPA_V2BETA2, NAMESPACE, item["metadata"]["name"])
    deadline = time.monotonic() + timeout
    while hpa_count(admin) and time.monotonic() < deadline:
        time.sleep(0.2)


def start(
    which: str,
    plane: ControlPlane,
    sa_kubeconfig: Path,
    original: Path,
    logfile: Path,
    spa_src: Path | None,
) -> subprocess.Popen[bytes]:
    if which != "original":
        # "spa-src": another checkout (e.g. a worktree of the commit before a change) in this
        # venv.
        source = spa_src if which == "spa-src" else None
        return start_spa_run(sa_kubeconfig, NAMESPACE, logfile, spa_src=source)
    # Its own flags (main.go): the two listen addresses, on free ports; no leader election.
    command = [str(original), "--metrics-addr", "127.0.0.1:0", "--probe-addr", "127.0.0.1:0"]
    env = {**os.environ, "KUBECONFIG": str(plane.kubeconfig)}
    with logfile.open("wb") as output:
        return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)


def measure_one(
    which: str,
    n: int,
    *,
    plane: ControlPlane,
    admin: BlockingKubeClient,
    sa_kubeconfig: Path,
    original: Path,
    workdir: Path,
    round_index: int,
    settle: float,
    sample: float,
    spa_src: Path | None,
) -> dict[str, Any]:
    delete_hpas(admin)
    logfile = workdir / f"{which}-{n}-{round_index}.log"
    began = time.monotonic()
    process = start(which, plane, sa_kubeconfig, original, logfile, spa_src)
    sampler = ProcessSampler(process.pid)
    try:
        deadline = began + 120 + n * 0.2
        while hpa_count(admin) < n:
            if process.poll() is not None:
                raise RuntimeError(f"{which} exited with {process.returncode}; its log: {logfile}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{which} wrote {hpa_count(admin)} of {n} HPAs; log {logfile}")
            time.sleep(0.2)
        all_written = time.monotonic() - began
        time.sleep(settle)
        rss: list[float] = []
        until = time.monotonic() + sample
        while time.monotonic() < until:
            sampler.sample()
            rss.append(sampler.rss_mib)
            time.sleep(ProcessSampler.INTERVAL)
        result = {
            "controller": which,
            "n": n,
            "round": round_index,
            "all_hpas_seconds": round(all_written, 2),
            "rss_mib": round(statistics.median(rss), 1),
            "peak_rss_mib": round(sampler.hwm_mib, 1),
            "cpu_seconds": round(sampler.cpu, 2),
            "loadavg": loadavg(),
        }
    finally:
        sampler.stop()
        stop_process(process)
    log(
        f"N={n} {which} round {round_index}: all {n} HPAs in {result['all_hpas_seconds']} s, "
        f"RSS {result['rss_mib']} MiB, peak {result['peak_rss_mib']} MiB"
    )
    return result


def run_size(
    n: int, *, rounds: int, original: Path, settle: float, sample: float, spa_src: Path | None
) -> list[dict[str, Any]]:
    workdir = Path(tempfile.mkdtemp(prefix=f"spa-original-{n}-"))
    try:
        with controller_plane(
            workdir / "plane",
            namespaces=[NAMESPACE],
            binaries=find_binaries(TESTENV_CACHE / RELEASE / "bin"),
            controller_manager=False,
            nodes=0,
        ) as plane:
            sa_kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
            admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=32)
            try:
                now = datetime.now(UTC)
                later = (now + timedelta(hours=6)).replace(second=0, microsecond=0)
                _, objects = load_fleet(n, NAMESPACE, later, now)
                for resource, obj in objects:
                    if resource is SCHEDULES:
                        # The whole reference, as the original's manifests have it: the
                        # original writes a Schedule back with "" for a kind or apiVersion left
                        # out, which the CRDs refuse, and then never attaches it
                        # (docs/install.md, "Going back to the original controller").
                        obj["spec"]["scaleTargetRef"].update(
                            apiVersion=SCHEDULED_POD_AUTOSCALERS.api_version,
                            kind=SCHEDULED_POD_AUTOSCALERS.kind,
                        )
                took = create_all(admin, NAMESPACE, objects)
                log(f"N={n}: {len(objects)} objects created in {took:.1f} s")
                return [
                    measure_one(
                        which,
                        n,
                        plane=plane,
                        admin=admin,
                        sa_kubeconfig=sa_kubeconfig,
                        original=original,
                        workdir=workdir,
                        round_index=round_index,
                        settle=settle,
                        sample=sample,
                        spa_src=spa_src,
                    )
                    for round_index in range(rounds)
                    for which in controllers(spa_src)
                ]
            finally:
                admin.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def controllers(spa_src: Path | None) -> tuple[str, ...]:
    """The order of one round."""
    return ("original", "spa", "spa-src") if spa_src is not None else ("original", "spa")


NAMES = {"original": "original (Go)", "spa": "spa run", "spa-src": "spa run (--spa-src)"}


def markdown(results: list[dict[str, Any]]) -> str:
    if not results:
        return NOTHING_MEASURED
    lines = [
        "| N SPAs (Schedules) | controller | RSS, steady (MiB) | peak RSS (MiB) "
        "| all HPAs written | rounds |",
        "|---|---|---|---|---|---|",
    ]
    for n in sorted({r["n"] for r in results}):
        for which in NAMES:
            rows = [r for r in results if r["n"] == n and r["controller"] == which]
            if not rows:
                continue
            rss = [r["rss_mib"] for r in rows]
            peak = [r["peak_rss_mib"] for r in rows]
            seconds = [r["all_hpas_seconds"] for r in rows]
            lines.append(
                f"| {n} ({4 * n}) | {NAMES[which]} | {min(rss):.1f}-{max(rss):.1f} "
                f"| {min(peak):.1f}-{max(peak):.1f} "
                f"| {min(seconds):.1f}-{max(seconds):.1f} s | {len(rows)} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=positive_ints, default=[100], help="comma-separated SPA counts"
    )
    parser.add_argument(
        "--rounds", type=positive_int, default=3, help="original, spa: this many times"
    )
    parser.add_argument("--settle", type=seconds, default=20.0, help="seconds after the last HPA")
    parser.add_argument("--sample", type=seconds, default=10.0, help="seconds of RSS samples")
    parser.add_argument("--original", type=Path, default=None, help="the original's binary")
    parser.add_argument("--out", type=Path, default=None, help="write the raw results (JSON)")
    parser.add_argument(
        "--spa-src",
        type=Path,
        default=None,
        help="also measure `spa run` from this source tree (e.g. a worktree of an older commit)",
    )
    parser.add_argument("--smoke", action="store_true", help="3 SPAs, one round, short waits")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.rounds, args.settle, args.sample = [3], 1, 1.0, 1.0
    original = args.original or original_binary()
    if not os.access(original, os.X_OK):
        log(f"no original controller at {original}: build it with hack/go-original/build.sh SRC")
        return 2
    results = []
    for n in args.sizes:
        results += run_size(
            n,
            rounds=args.rounds,
            original=original,
            settle=args.settle,
            sample=args.sample,
            spa_src=args.spa_src,
        )
    report = {"machine": machine(), "release": RELEASE, "results": results}
    write_json(args.out, report)
    print(json.dumps(report["machine"]))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
