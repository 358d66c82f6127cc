"""docs/api.md is what hack/generate_api_doc.py makes from the CRDs (so it cannot drift)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spa.api.crd import schedule_crd, scheduled_pod_autoscaler_crd

ROOT = Path(__file__).resolve().parents[3]


def test_api_reference_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "generate_api_doc.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_api_reference_lists_every_status_field_the_controller_writes() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    for field in (
        "activeSchedules",
        "nextTransitionTime",
        "observedGeneration",
        "conditions[].reason",
    ):
        assert f"`status.{field}`" in text


def _arrays(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if node.get("type") == "array":
        yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _arrays(child, f"{path}.{name}" if path else name)


def test_api_reference_lists_the_constraints_of_arrays() -> None:
    # The generator once dropped them: `spec.excludeDates` showed no bound while the API
    # server refuses a 367th date and a repeated one.
    text = (ROOT / "docs" / "api.md").read_text()
    rows = {line.split("|")[1].strip().strip("`"): line for line in text.splitlines()
            if line.startswith("| `")}  # fmt: skip
    checked = 0
    for crd in (scheduled_pod_autoscaler_crd(), schedule_crd()):
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        for part in ("spec", "status"):
            for path, node in _arrays(schema["properties"][part], part):
                row = rows.get(path, "")
                if "maxItems" in node:
                    assert f"≤ {node['maxItems']} items" in row, (path, row)
                    checked += 1
                if node.get("x-kubernetes-list-type") == "set":
                    assert "items unique" in row, (path, row)
                    checked += 1
    assert checked
