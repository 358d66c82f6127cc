"""The Python distribution as PyPI would receive it (`make test-packaging`): `python -m build`
makes the sdist and the wheel in an isolated environment, `twine check` accepts their metadata
(the long description renders), and the wheel, installed into a virtualenv of its own with its
declared dependencies only, runs `spa --version` and `spa plan` on the samples."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from spa import __version__
from tests.packaging.common import REPO

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(900)]

DIST = "scheduled_pod_autoscaler"


def _run(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> str:
    result = subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )
    assert result.returncode == 0, f"{' '.join(map(str, args))}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, REPO)
    return out


def test_sdist_and_wheel_pass_twine_check_with_absolute_links(dist: Path) -> None:
    wheel = dist / f"{DIST}-{__version__}-py3-none-any.whl"
    sdist = dist / f"{DIST}-{__version__}.tar.gz"
    assert sorted(p.name for p in dist.iterdir()) == sorted([wheel.name, sdist.name])
    output = _run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    assert output.count("PASSED") == 2, output
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"{DIST}-{__version__}.dist-info/METADATA").decode()
    assert f"{DIST}-{__version__}.dist-info/licenses/LICENSE" in names
    assert not [name for name in names if name.startswith("tests/")]
    assert "Project-URL: Changelog, https://" in metadata
    # README's relative links point at the release's tag on PyPI.
    assert "](docs/" not in metadata
    assert f"/blob/v{__version__}/docs/install.md)" in metadata
    with tarfile.open(sdist) as archive:
        assert f"{DIST}-{__version__}/LICENSE" in archive.getnames()


def test_the_wheel_alone_runs_spa_plan(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    # Its declared dependencies and nothing else (pip's shared cache makes this quick).
    _run(venv / "bin" / "pip", "install", "--quiet", next(dist.glob("*.whl")))
    version = _run(venv / "bin" / "spa", "--version")
    assert version.strip() == f"scheduled-pod-autoscaler {__version__}"
    # Run outside the repository, so nothing is imported from the checkout; the same plan as
    # the checkout's, with the samples read and nothing refused.
    args = ("plan", "-f", REPO / "config" / "samples", "-o", "json", "--at", "2026-03-08T06:30:00Z")
    plan = json.loads(_run(venv / "bin" / "spa", *args, cwd=tmp_path))
    assert plan == json.loads(_run(sys.executable, "-m", "spa.cli", *args, cwd=REPO))
    assert plan["errors"] == []
    assert plan["autoscalers"]
    assert all(autoscaler["transitions"] for autoscaler in plan["autoscalers"])
