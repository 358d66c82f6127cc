"""What the packaging tests share: the tools they drive (each built or installed by its make
target; a missing one fails the test with the command that provides it), a window that is
active now, and the controller's HTTP endpoints."""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.builders import autoscaler, schedule
from tests.integration.harness import REPO, Kube
from tests.integration.processes import wait_for

__all__ = [
    "REPO",
    "active_window",
    "helm_binary",
    "http_get",
    "require_tool",
    "window_applied",
]

# The bounds of active_window(); the SPA's base is 3/10.
WINDOW_BOUNDS = (6, 12)


def require_tool(name: str, provided_by: str) -> str:
    """The path of `name` on PATH, or fail saying which command provides it."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: {provided_by}", pytrace=False)
    return found


def helm_binary() -> str:
    """The pinned helm of hack/helm (`make helm` builds it)."""
    path = subprocess.run(
        [str(REPO / "hack" / "helm" / "build.sh"), "--print-path"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run `make helm`", pytrace=False)
    return path


def active_window(kube: Kube, namespace: str, name: str = "web") -> None:
    """An SPA (base 3/10) and a OneShot Schedule, active from an hour ago to an hour ahead,
    that raises it to WINDOW_BOUNDS."""
    now = datetime.now(UTC)
    kube.create(autoscaler(name=name, namespace=namespace))
    kube.create(
        schedule(
            name=f"{name}-now",
            namespace=namespace,
            target=name,
            type="OneShot",
            timeZone="UTC",
            startTime=f"{now - timedelta(hours=1):%Y-%m-%dT%H:%M}",
            endTime=f"{now + timedelta(hours=1):%Y-%m-%dT%H:%M}",
            minReplicas=WINDOW_BOUNDS[0],
            maxReplicas=WINDOW_BOUNDS[1],
        )
    )


def window_applied(kube: Kube, namespace: str, name: str = "web", within: float = 60) -> None:
    """Wait until the SPA's HPA has the window's bounds."""
    wait_for(
        lambda: kube.bounds(namespace, name) == WINDOW_BOUNDS,
        within=within,
        what=f"the window applied to HPA {namespace}/{name}",
    )


def http_get(url: str, timeout: float = 5) -> tuple[int, str]:
    """(status, body) of a GET; (0, error) when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError as error:
        return 0, str(error)


def answers(url: str, status: int = 200) -> Any:
    """A check for wait_for: the body once `url` answers with `status`."""
    return lambda: (result := http_get(url))[0] == status and result[1]
