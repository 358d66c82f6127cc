"""What both upgrade tests do to a controller on the real plane (docs/install.md,
"Version skew" and "Upgrading from the original Go controller"): read a release's manifests,
run its Deployment's arguments on this machine, and wait on what the API server and the logs
say."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def deployment_args(install: Path, namespace: str) -> list[str]:
    """The controller's arguments as the release's Deployment gives them, with the pod's
    namespace filled in and the ports on the loopback (two replicas on one machine)."""
    (deployment,) = (doc for doc in documents(install) if doc["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = [arg.replace("$(POD_NAMESPACE)", namespace) for arg in container.get("args") or []]
    ports = {"--metrics-addr": "127.0.0.1:0", "--probe-addr": "127.0.0.1:0"}
    return [
        f"{arg.split('=')[0]}={ports[arg.split('=')[0]]}" if arg.split("=")[0] in ports else arg
        for arg in args
    ]


def wait(check: Callable[[], bool], *, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:.0f} s: {what}")
        time.sleep(0.5)


def sleep_until(instant: float) -> None:
    time.sleep(max(0.0, instant - time.time()))


def identity(log: Path) -> str:
    """The Lease identity the process last started campaigns as (its log says it)."""
    text = log.read_text(errors="replace")
    for line in text[text.rfind("\n=== ") :].splitlines():  # ManagedProcess marks each start
        if "campaigning for lease" in line:
            try:
                return str(json.loads(line)["msg"]).rsplit(" as ", 1)[1]
            except (ValueError, KeyError, IndexError):
                continue
    return ""


def errors_in(log: Path) -> list[str]:
    """Error lines of a JSON log, and any traceback printed outside one."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("Traceback"):
            found.append(line)
        elif line.startswith("{"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if str(entry.get("level", "")).lower() in ("error", "critical"):
                found.append(line[:300])
    return found
