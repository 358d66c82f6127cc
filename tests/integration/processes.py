"""`spa run` as a real process, as its own ServiceAccount with the RBAC of config/rbac.

Shared by the end-to-end, idle-write and reliability tests, which all need to start, read
and kill the controller the way Kubernetes would run it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from spa.kube import NotFound
from tests.integration.harness import REPO

CONTROLLER_NAMESPACE = "scheduled-pod-autoscaler"
LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
SPA = Path(sys.executable).parent / "spa"
WRITES = ("applied HPA", "created HPA")


@pytest.fixture(scope="module")
def controller_kubeconfig(cluster: Any, crds: None) -> Path:
    cluster.run_kubectl("apply", "--server-side", "-k", str(REPO / "config" / "rbac"), check=True)
    return Path(
        cluster.service_account_kubeconfig(
            CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
        )
    )


def leader_election_args(lease: str) -> list[str]:
    """`spa run` flags to campaign for ``lease`` in the controller's namespace."""
    return [
        "--enable-leader-election",
        "--leader-election-namespace",
        CONTROLLER_NAMESPACE,
        "--leader-election-id",
        lease,
    ]


@contextlib.contextmanager
def spa_run(
    kubeconfig: Path,
    namespace: str | None,
    *extra: str,
    log: Path,
    env: Mapping[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """`spa run` watching ``namespace``, or every namespace (as installed) when it is None; at
    log level debug, where each write has its line (`writes` counts them; INFO has one line
    per burst of writes), unless ``extra`` says another level."""
    scope = ["--namespace", namespace] if namespace is not None else []
    with log.open("ab") as output:
        process = subprocess.Popen(
            [
                str(SPA),
                "run",
                "--kubeconfig",
                str(kubeconfig),
                *scope,
                "--metrics-addr",
                "127.0.0.1:0",
                "--probe-addr",
                "127.0.0.1:0",
                "--log-level",
                "debug",
                *extra,
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KUBECONFIG": "", **(env or {})},
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def log_lines(log: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            lines.append(json.loads(line))
    return lines


def writes(log: Path) -> list[dict[str, Any]]:
    """The HPA writes a process logged, in order."""
    return [line for line in log_lines(log) if str(line.get("msg", "")).startswith(WRITES)]


def count_writes(log: Path) -> int:
    """Cheap count for polling while the process runs."""
    try:
        text = log.read_text()
    except FileNotFoundError:
        return 0
    return sum(text.count(f'"msg": "{prefix}') for prefix in WRITES)


def log_time(line: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(line["time"]).replace("Z", "+00:00")).timestamp()


def wait_for(check: Any, *, within: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + within
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (AssertionError, NotFound, KeyError) as error:
            last = error
        time.sleep(interval)
    raise AssertionError(f"{what} not reached within {within:.0f}s; last: {last!r}")


def skewed(offset: str) -> dict[str, str]:
    """The environment that moves a process's wall clock by `offset` (libfaketime's syntax,
    "+20s"), and only that: its monotonic clock stays the machine's."""
    if not LIBFAKETIME.exists():
        pytest.fail(f"{LIBFAKETIME} is missing: apt-get install -y libfaketime (see .ci/run)")
    return {
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME": offset,
        "DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_DONT_RESET": "1",
    }


def minute_boundary_in(seconds: float) -> tuple[int, float]:
    """A wall-clock offset of whole seconds, from 0 to 60, and the real instant (epoch seconds)
    about `seconds` from now (up to 1 s sooner) at which a process whose clock is moved by it
    (`skewed(f"+{offset}s")`) reads a whole minute.

    A test of what `spa run` does at a real minute boundary then waits as long as what it
    proves needs, not up to another minute for the machine's clock to reach one: the process
    still runs on a real clock, at the real rate, and meets a real boundary of its own.
    """
    target = time.time() + seconds
    offset = math.ceil(-target % 60)
    boundary = math.ceil(target / 60) * 60  # on the process's clock
    return offset, float(boundary - offset)
