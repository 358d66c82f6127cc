"""What the compatibility tests share: installing the release's manifests the way
docs/install.md tells a user of that release, and small kubectl and client helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from spa.kube import BlockingKubeClient, NotFound, Resource
from tests.testenv import ControlPlane

REPO = Path(__file__).resolve().parents[2]
CRD_NAMES = (
    "scheduledpodautoscalers.autoscaling.d-kuro.github.io",
    "schedules.autoscaling.d-kuro.github.io",
)


def install_command(manifests: str, minor: int) -> tuple[str, ...]:
    """What docs/install.md tells a user of this release to run."""
    if manifests == "legacy":
        return ("apply", "-f", str(REPO / "config/legacy/install.yaml"))
    if minor < 23:
        # Before 1.23 the CRD schema has no x-kubernetes-validations: kubectl's schema check
        # and server-side apply refuse the CEL rules; a plain apply lets the server drop them.
        return ("apply", "--validate=false", "-f", str(REPO / "config/install/install.yaml"))
    return ("apply", "--server-side", "-f", str(REPO / "config/install/install.yaml"))


def kubectl(plane: ControlPlane, *args: str, input: str | None = None) -> str:
    result = plane.run_kubectl(*args, input=input)
    assert result.returncode == 0, f"kubectl {' '.join(args)}:\n{result.stderr}"
    return result.stdout


def manifest(objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def get_or_none(client: BlockingKubeClient, resource: Resource, namespace: str, name: str) -> Any:
    try:
        return client.get(resource, namespace, name)
    except NotFound:
        return None
