"""Run the test control plane by hand: `python -m tests.testenv up|down|status|serve --dir DIR`.

`--karpenter` also runs Karpenter's kwok provider on it (tests/testenv/karpenter.py; built by
`make testenv-karpenter`), its default pool's nodes registering `--node-delay` seconds late, to
try node capacity by hand (`make cluster KARPENTER=1`).
`sa-kubeconfig --service-account NAMESPACE/NAME` prints a kubeconfig for that ServiceAccount
(the controller's by default), to run it locally with only the RBAC of config/rbac.
`make cluster` uses `up`, which starts a detached `serve` process that owns the control plane
(so the components die with it) and returns once the API server is ready; `down` stops it.
The directory keeps its certificates and etcd data, so `up` after `down` brings back the
same cluster with the same admin kubeconfig (on new ports).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.testenv.binaries import find_binaries, find_karpenter
from tests.testenv.controlplane import DEFAULT_NODES, Cluster, ControlPlane
from tests.testenv.karpenter import DEFAULT_NODE_DELAY_SECONDS, Karpenter

PIDFILE = "serve.pid"
READY = "ready"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _running_pid(directory: Path) -> int | None:
    try:
        pid = int((directory / PIDFILE).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if _alive(pid) else None


def serve(directory: Path, nodes: int, *, node_delay: int | None = None) -> int:
    """Own a control plane in the foreground until SIGTERM/SIGINT; with Karpenter on it
    (nodes `node_delay` seconds late) unless `node_delay` is None."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    (directory / READY).unlink(missing_ok=True)
    plane = ControlPlane(directory, nodes=nodes)
    plane.start()
    karpenter: Karpenter | None = None
    try:
        if node_delay is not None:
            karpenter = Karpenter(plane, node_delay_seconds=node_delay).start()
            print(f"Karpenter ready in {karpenter.startup_seconds:.1f}s", flush=True)
        (directory / PIDFILE).write_text(str(os.getpid()))
        (directory / READY).write_text(
            f"{plane.server}\nstarted in {plane.startup_seconds['total']:.1f}s\n"
        )
        print(
            f"control plane ready in {plane.startup_seconds['total']:.1f}s at {plane.server}",
            flush=True,
        )
        stop.wait()
    finally:
        (directory / READY).unlink(missing_ok=True)
        if karpenter is not None:
            karpenter.stop()
        plane.stop()
        (directory / PIDFILE).unlink(missing_ok=True)
    return 0


def up(directory: Path, timeout: float, nodes: int, *, node_delay: int | None = None) -> int:
    find_binaries()  # fail here, with the `make testenv` hint, not in the detached child
    if node_delay is not None:
        find_karpenter()  # and with the `make testenv-karpenter` one
    directory.mkdir(parents=True, exist_ok=True)
    kubeconfig = directory / "kubeconfig"
    if _running_pid(directory) is not None and (directory / READY).exists():
        print(f"already running\nexport KUBECONFIG={kubeconfig}")
        return 0
    (directory / READY).unlink(missing_ok=True)
    log = (directory / "serve.log").open("ab")
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.testenv",
            "serve",
            "--dir",
            str(directory),
            "--nodes",
            str(nodes),
            *(["--karpenter", "--node-delay", str(node_delay)] if node_delay is not None else []),
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # survives the shell (and make) that started it
        cwd=Path(__file__).resolve().parents[2],
    )
    deadline = time.monotonic() + timeout
    while not (directory / READY).exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            tail = (directory / "serve.log").read_text(errors="replace").splitlines()[-30:]
            print("control plane failed to start:\n" + "\n".join(tail), file=sys.stderr)
            return 1
        time.sleep(0.2)
    print((directory / READY).read_text().strip())
    print(f"export KUBECONFIG={kubeconfig}")
    return 0


def down(directory: Path, timeout: float) -> int:
    pid = _running_pid(directory)
    if pid is None:
        print("not running")
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            # Its children die with it (parent-death signal), so the group kill suffices.
            os.killpg(pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    print("stopped")
    return 0


def status(directory: Path) -> int:
    pid = _running_pid(directory)
    if pid is None or not (directory / READY).exists():
        print("not running")
        return 1
    print(f"running (pid {pid}): {(directory / READY).read_text().splitlines()[0]}")
    print(f"export KUBECONFIG={directory / 'kubeconfig'}")
    return 0


def service_account_kubeconfig(directory: Path, account: str, hours: int) -> int:
    """Print a kubeconfig for NAMESPACE/NAME (TokenRequest; the account is made if missing)."""
    if _running_pid(directory) is None:
        print("not running", file=sys.stderr)
        return 1
    namespace, _, name = account.partition("/")
    if not name:
        print("--service-account wants NAMESPACE/NAME", file=sys.stderr)
        return 2
    cluster = Cluster(directory / "kubeconfig", directory)
    path = cluster.service_account_kubeconfig(
        namespace,
        name,
        path=directory / f"sa-{namespace}-{name}.kubeconfig",
        expiration_seconds=hours * 3600,
    )
    print(f"export KUBECONFIG={path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.testenv", description=__doc__)
    parser.add_argument("command", choices=["up", "down", "status", "serve", "sa-kubeconfig"])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/spa-cluster"))
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument(
        "--nodes",
        type=int,
        default=DEFAULT_NODES,
        help="fake nodes played by kwok (0: no scheduler, no kwok; pods stay Pending)",
    )
    parser.add_argument(
        "--karpenter", action="store_true", help="also run Karpenter (make testenv-karpenter)"
    )
    parser.add_argument(
        "--node-delay",
        type=int,
        default=DEFAULT_NODE_DELAY_SECONDS,
        help="seconds until a node Karpenter launches registers (with --karpenter)",
    )
    parser.add_argument(
        "--service-account", default="scheduled-pod-autoscaler/scheduled-pod-autoscaler"
    )
    parser.add_argument("--hours", type=int, default=24, help="token lifetime (sa-kubeconfig)")
    args = parser.parse_args(argv)
    directory: Path = args.dir.resolve()
    if args.command == "sa-kubeconfig":
        return service_account_kubeconfig(directory, args.service_account, args.hours)
    node_delay = args.node_delay if args.karpenter else None
    if args.command == "serve":
        return serve(directory, args.nodes, node_delay=node_delay)
    if args.command == "up":
        return up(directory, args.timeout, args.nodes, node_delay=node_delay)
    if args.command == "down":
        return down(directory, args.timeout)
    return status(directory)


if __name__ == "__main__":
    sys.exit(main())
