"""The version is written once, in spa/__init__.py; the files that repeat it (the chart, the
Dockerfile's default, CHANGELOG.md, the Krew manifest) must follow it, or a release would ship
two versions."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from spa import __version__

REPO = Path(__file__).resolve().parents[3]


def test_the_chart_is_versioned_with_the_package() -> None:
    chart = yaml.safe_load(
        (REPO / "charts" / "scheduled-pod-autoscaler" / "Chart.yaml").read_text()
    )
    assert (chart["version"], chart["appVersion"]) == (__version__, __version__)


def test_the_dockerfile_labels_the_image_with_the_package_version_by_default() -> None:
    defaults = re.findall(r"^ARG VERSION=(\S+)$", (REPO / "Dockerfile").read_text(), re.M)
    assert defaults == [__version__]


def test_the_changelog_has_a_section_for_the_version_with_its_link() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"\n## [{__version__}]" in changelog
    assert re.search(rf"^\[{re.escape(__version__)}\]: https://\S+$", changelog, re.M)
    # Newest first: Unreleased, then this version before any older one.
    sections = re.findall(r"^## \[([^\]]+)\]", changelog, re.M)
    assert sections[:2] == ["Unreleased", __version__]


def test_every_manifest_names_the_image_of_this_version() -> None:
    image = f"ghcr.io/scheduled-pod-autoscaler/scheduled-pod-autoscaler:{__version__}"
    for path in ("config/install/manager/deployment.yaml", "config/install/install.yaml",
                 "config/legacy/install.yaml"):  # fmt: skip
        assert f"image: {image}" in (REPO / path).read_text(), path


def test_the_krew_manifest_is_current_with_the_version() -> None:
    # Everything but the archives' digests, which are the release's (docs/install.md,
    # "kubectl spa with Krew"): the version, the release URLs, the platforms, the texts.
    result = subprocess.run(
        [sys.executable, str(REPO / "hack" / "krew" / "plugin.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    plugin = yaml.safe_load((REPO / "plugins" / "spa.yaml").read_text())
    assert plugin["spec"]["version"] == f"v{__version__}"
    assert {p["uri"].split("/releases/download/")[1] for p in plugin["spec"]["platforms"]} == {
        f"v{__version__}/kubectl-spa_{__version__}_{system}_{arch}.tar.gz"
        for system in ("linux", "darwin")
        for arch in ("amd64", "arm64")
    }
