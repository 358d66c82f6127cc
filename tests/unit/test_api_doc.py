"""docs/api.md is what hack/generate_api_doc.py makes from the CRDs (so it cannot drift)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
