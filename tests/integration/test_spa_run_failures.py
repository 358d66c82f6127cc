"""`spa run` that cannot work says so in one log line and exits with the status of
docs/operations.md, "Exit codes": no configuration, no API server, credentials refused, no
RBAC, no CRDs. Each case is the real process against the real control plane (or a port where
none listens)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from spa.controller.exitcodes import (
    EXIT_CONFIG,
    EXIT_FORBIDDEN,
    EXIT_NO_CRDS,
    EXIT_UNAUTHORIZED,
    EXIT_UNREACHABLE,
)
from tests.integration.processes import SPA
from tests.testenv.kubeconfig import write_kubeconfig

pytestmark = pytest.mark.integration


def spa_run(kubeconfig: Path, *extra: str) -> tuple[int, list[str], float]:
    started = time.monotonic()
    result = subprocess.run(
        [
            str(SPA),
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--metrics-addr",
            "127.0.0.1:0",
            "--probe-addr",
            "127.0.0.1:0",
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "KUBECONFIG": ""},
    )
    took = time.monotonic() - started
    return result.returncode, (result.stdout + result.stderr).splitlines(), took


def only_line(lines: list[str]) -> dict[str, Any]:
    """The process printed exactly one line, a JSON object at level error."""
    assert len(lines) == 1, lines
    entry: dict[str, Any] = json.loads(lines[0])
    assert entry["level"] == "error"
    assert entry["logger"] == "spa.controller.main"
    return entry


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_api_server(cluster: Any, tmp_path: Path) -> None:
    _, ca = cluster.server_and_ca()
    server = f"https://127.0.0.1:{closed_port()}"
    kubeconfig = write_kubeconfig(tmp_path / "k", server=server, ca_cert=ca, user="u", token="any")
    code, lines, took = spa_run(kubeconfig)
    assert code == EXIT_UNREACHABLE
    entry = only_line(lines)
    assert entry["exit_status"] == EXIT_UNREACHABLE
    assert entry["msg"] == (
        f"cannot start: cannot reach the API server at {server}: [Errno 111] Connection refused"
    )
    assert took < 15, took


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no kubeconfig at"),
        ("clusters: [\n", "the kubeconfig cannot be read (ParserError"),
        ("apiVersion: v1\nkind: Config\n", "no usable cluster configuration"),
    ],
)
def test_bad_kubeconfig(tmp_path: Path, content: str | None, expected: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    if content is not None:
        kubeconfig.write_text(content)
    code, lines, _ = spa_run(kubeconfig)
    assert code == EXIT_CONFIG
    entry = only_line(lines)
    assert expected in entry["msg"]
    assert entry["exit_status"] == EXIT_CONFIG


def test_credentials_refused(cluster: Any, tmp_path: Path) -> None:
    server, ca = cluster.server_and_ca()
    kubeconfig = write_kubeconfig(
        tmp_path / "k", server=server, ca_cert=ca, user="u", token="not-a-token"
    )
    code, lines, _ = spa_run(kubeconfig)
    assert code == EXIT_UNAUTHORIZED
    assert "401 Unauthorized" in only_line(lines)["msg"]


def test_no_rbac(cluster: Any, crds: None, namespace: str) -> None:
    # A ServiceAccount nobody bound a role to.
    kubeconfig = cluster.service_account_kubeconfig(namespace, "nobody")
    code, lines, _ = spa_run(kubeconfig, "--namespace", namespace)
    assert code == EXIT_FORBIDDEN
    message = only_line(lines)["msg"]
    assert message.startswith(
        "cannot start: not allowed to list "
        f"scheduledpodautoscalers.autoscaling.d-kuro.github.io/v1 in namespace {namespace}: "
    )
    assert f"system:serviceaccount:{namespace}:nobody" in message
    assert message.endswith("(the RBAC of config/rbac grants it)")


def test_no_crds(control_plane_factory: Any) -> None:
    # A control plane of its own: the shared one has the CRDs, which other tests need.
    bare = control_plane_factory()
    code, lines, _ = spa_run(bare.kubeconfig)
    assert code == EXIT_NO_CRDS
    assert "install the CRDs" in only_line(lines)["msg"]
