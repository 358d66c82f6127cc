"""`kubectl spa ...` run as a user runs it, through the real kubectl, which finds the plugin
`kubectl-spa` next to this Python on PATH. Shared by the integration tests of the plugin
(test_kubectl_spa.py, test_incident.py), so none imports another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["BIN", "kubectl_spa", "status_json"]

BIN = Path(sys.executable).parent


def kubectl_spa(
    *arguments: str, kubeconfig: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`kubectl spa ...` as a user runs it: kubectl execs `kubectl-spa` from PATH."""
    return subprocess.run(
        [str(BIN / "kubectl"), "spa", *arguments],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        | ({"KUBECONFIG": str(kubeconfig)} if kubeconfig else {}),
    )


def status_json(kubeconfig: Path, *arguments: str) -> dict[str, Any]:
    result = kubectl_spa("status", *arguments, "-o", "json", kubeconfig=kubeconfig)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document
