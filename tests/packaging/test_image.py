"""The controller's image, built from the Dockerfile with buildah and run against the local
control plane the way a cluster runs it (`make test-image`).

The public base images cannot be pulled here, so the build uses their equivalents made from
Debian packages (hack/image/bases.sh); everything else is the Dockerfile as users build it.
`spa run` runs from the image with `buildah run --isolation chroot` (the host's network, so the
local API server is reachable): the ServiceAccount token, CA and namespace are mounted where
the kubelet mounts them and KUBERNETES_SERVICE_HOST/PORT are set, so the client takes the
in-cluster configuration path, and the leader election takes its namespace from the mount.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from spa import __version__
from tests.integration.harness import Kube
from tests.integration.processes import CONTROLLER_NAMESPACE, wait_for
from tests.packaging.common import (
    REPO,
    active_window,
    answers,
    http_get,
    require_tool,
    window_applied,
)
from tests.testenv.controlplane import free_port

pytestmark = [pytest.mark.packaging, pytest.mark.integration, pytest.mark.timeout(3600)]

IMAGE = "localhost/scheduled-pod-autoscaler:test"
# The goal of docs/install.md, "The image".
SIZE_LIMIT = 150_000_000
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# What a runtime image must not contain: compilers, build and packaging tools, shells.
FORBIDDEN_PROGRAMS = (
    "gcc", "cc", "c++", "g++", "cpp", "ld", "as", "make",
    "pip", "pip3", "apt", "apt-get", "dpkg", "sh", "bash", "dash",
)  # fmt: skip


def _buildah() -> list[str]:
    """buildah with the project's container storage (hack/image/env.sh)."""
    require_tool(
        "buildah", "apt-get install buildah mmdebstrap (hack/system/install.sh test-packaging)"
    )
    return subprocess.run(
        ["bash", "-c", 'source hack/image/env.sh && printf "%s\\n" "${SPA_BUILDAH[@]}"'],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()


def _run(*args: str, timeout: float = 120) -> str:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(args)}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def buildah() -> list[str]:
    return _buildah()


def build_args() -> list[str]:
    """The bases made from Debian packages, and pip's settings of this machine: its CA bundle
    (the host's trust store, which holds the CA of an intercepting proxy if there is one) and
    its index, passed as the Dockerfile's build-stage arguments."""
    bases = _run(str(REPO / "hack" / "image" / "bases.sh"), timeout=1200).split()
    assert len(bases) == 2, bases
    args = ["--build-arg", f"BUILD_IMAGE={bases[0]}", "--build-arg", f"RUNTIME_IMAGE={bases[1]}"]
    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    if bundle.is_file():
        args += ["-v", f"{bundle}:/run/build-ca.crt:ro"]
        args += ["--build-arg", "PIP_CERT=/run/build-ca.crt"]
    if os.environ.get("PIP_INDEX_URL"):
        args += ["--build-arg", f"PIP_INDEX_URL={os.environ['PIP_INDEX_URL']}"]
    return args


@pytest.fixture(scope="module")
def image(buildah: list[str]) -> str:
    # --layers reuses the apt and dependency layers while setup.cfg and the bases are unchanged.
    _run(
        *buildah,
        "bud",
        "--isolation",
        "chroot",
        "--layers",
        *build_args(),
        "--build-arg",
        f"VERSION={__version__}",
        "-t",
        IMAGE,
        str(REPO),
        timeout=2400,
    )
    return IMAGE


@pytest.fixture(scope="module")
def config(buildah: list[str], image: str) -> dict[str, Any]:
    inspected = json.loads(_run(*buildah, "inspect", "--type", "image", image))
    oci: dict[str, Any] = inspected["OCIv1"]["config"]
    return oci


@pytest.fixture
def container(buildah: list[str], image: str) -> Iterator[str]:
    name = _run(*buildah, "from", "--quiet", image).strip()
    yield name
    _run(*buildah, "rm", name)


@pytest.fixture
def rootfs(buildah: list[str], container: str) -> Iterator[Path]:
    yield Path(_run(*buildah, "mount", container).strip())
    _run(*buildah, "umount", container)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of every file that is not a directory, symlinks not followed."""
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory, name)
            stat = path.lstat()
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_the_image_is_under_150_mb(rootfs: Path) -> None:
    seen: set[int] = set()
    size = 0
    for directory, _, names in os.walk(rootfs):
        for name in names:
            stat = Path(directory, name).lstat()
            if stat.st_ino not in seen:
                seen.add(stat.st_ino)
                size += stat.st_size
    venv = sum(p.lstat().st_size for p in (rootfs / "opt" / "spa").rglob("*"))
    print(f"image {size / 1e6:.1f} MB, of which the virtualenv {venv / 1e6:.1f} MB")
    assert size < SIZE_LIMIT, f"{size / 1e6:.1f} MB"


def test_runs_as_the_deployments_non_root_user_with_labels_and_the_spa_entrypoint(
    config: dict[str, Any],
) -> None:
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["/opt/spa/bin/spa"]
    assert config["Cmd"] == ["run"]
    assert set(config["ExposedPorts"]) == {"8080/tcp", "9090/tcp"}
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == __version__
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    assert labels["org.opencontainers.image.title"] == "scheduled-pod-autoscaler"
    assert labels["org.opencontainers.image.source"].startswith("https://")


def test_no_compiler_shell_package_manager_or_pip(rootfs: Path) -> None:
    directories = ["usr/bin", "usr/sbin", "usr/local/bin", "bin", "sbin", "opt/spa/bin"]
    present = [
        f"{directory}/{program}"
        for directory in directories
        for program in FORBIDDEN_PROGRAMS
        if os.path.lexists(rootfs / directory / program)
    ]
    assert present == []
    assert not list((rootfs / "usr").glob("include/**/*.h")), "C headers"
    site = rootfs / "opt" / "spa" / "lib" / "python3.11" / "site-packages"
    assert (site / "spa").is_dir()
    leftovers = sorted(p.name for p in site.iterdir() if p.name.startswith(("pip", "setuptools")))
    assert leftovers == []
    # The generated API classes the image leaves out (never imported); the configuration
    # loaders and the lazily loaded model packages stay.
    assert (site / "kubernetes" / "aio" / "config").is_dir()
    assert not (site / "kubernetes" / "client" / "api").exists()
    assert not (site / "kubernetes" / "aio" / "client" / "api").exists()
    models = site / "kubernetes" / "client" / "models"
    assert sorted(p.name for p in models.rglob("*") if p.is_file()) == [
        "__init__.cpython-311.pyc",
        "__init__.py",
    ]
    # Bytecode compiled at build time: the root filesystem is read-only when it runs.
    assert list((site / "spa" / "cli" / "__pycache__").glob("__init__.cpython-311.pyc"))


def test_the_sbom_lists_what_the_image_holds_as_locked(rootfs: Path) -> None:
    """The CycloneDX SBOM made at build time names every locked distribution at its locked
    version, and the package itself; nothing the image removed (pip, setuptools)."""
    sbom = json.loads((rootfs / "opt" / "spa" / "sbom.cdx.json").read_text())
    assert sbom["bomFormat"] == "CycloneDX"
    components = {c["name"].lower().replace("_", "-"): c["version"] for c in sbom["components"]}
    locked = {}
    for line in (REPO / "hack" / "image" / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith(" "):
            name, version = line.split()[0].split("==")
            locked[name.lower().replace("_", "-")] = version
    assert {name: components.get(name) for name in locked} == locked
    assert components["scheduled-pod-autoscaler"] == __version__
    assert "pip" not in components
    assert "setuptools" not in components


def test_spa_version_inside(buildah: list[str], container: str) -> None:
    for program in ("spa", "kubectl-spa"):
        output = _run(
            *buildah, "run", "--isolation", "chroot", container, "--", program, "--version"
        )
        assert output.strip() == f"scheduled-pod-autoscaler {__version__}"
    uid = _run(*buildah, "run", "--isolation", "chroot", container, "--", "python3", "-c",
               "import os; print(os.getuid(), os.getgid())")  # fmt: skip
    assert uid.split() == ["65532", "65532"]


def test_spa_run_from_the_image_with_the_in_cluster_configuration(
    buildah: list[str],
    container: str,
    rootfs: Path,
    cluster: Any,
    controller_kubeconfig: Path,
    kube: Kube,
    namespace: str,
    tmp_path: Path,
) -> None:
    # What the kubelet mounts for the pod's ServiceAccount (config/rbac's, as the Deployment).
    mounted = tmp_path / "serviceaccount"
    mounted.mkdir()
    server, ca = cluster.server_and_ca()
    token = cluster.service_account_token(
        CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
    )
    (mounted / "token").write_text(token)
    (mounted / "ca.crt").write_bytes(Path(ca).read_bytes())
    (mounted / "namespace").write_text(CONTROLLER_NAMESPACE)
    for path in [mounted, *mounted.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # readable by uid 65532
    address = urlsplit(server)
    metrics, probes = free_port(), free_port()
    lease = f"spa-image-{namespace[-6:]}"
    before = _files(rootfs)
    log = tmp_path / "spa-run.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                *buildah, "run", "--isolation", "chroot",
                "-v", f"{mounted}:{SERVICE_ACCOUNT_DIR}:ro",
                "--env", f"KUBERNETES_SERVICE_HOST={address.hostname}",
                "--env", f"KUBERNETES_SERVICE_PORT={address.port}",
                container, "--",
                # The Deployment's arguments, on loopback ports; no --leader-election-namespace:
                # it must come from the mounted namespace file.
                "spa", "run", "--enable-leader-election", f"--leader-election-id={lease}",
                f"--namespace={namespace}",
                f"--metrics-addr=127.0.0.1:{metrics}", f"--probe-addr=127.0.0.1:{probes}",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_for(answers(f"http://127.0.0.1:{probes}/readyz"), within=60, what="/readyz 200")
        active_window(kube, namespace)
        window_applied(kube, namespace)
        # The gauge is set once the HPA write is answered, which may be after the test saw
        # the HPA change.
        gauge = "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler_min_replicas"
        text = wait_for(
            lambda: (
                (answer := http_get(f"http://127.0.0.1:{metrics}/metrics"))[0] == 200
                and f'{gauge}{{name="web",namespace="{namespace}"}} 6.0' in answer[1]
                and answer[1]
            ),
            within=30,
            what="the window's minReplicas in /metrics",
        )
        assert f'spa_build_info{{python_version="3.11.2",version="{__version__}"}} 1.0' in text
        assert f'spa_leader{{lease="{CONTROLLER_NAMESPACE}/{lease}"}} 1.0' in text
        assert http_get(f"http://127.0.0.1:{probes}/healthz")[0] == 200
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any("acquired lease" in str(line.get("msg")) for line in lines), log.read_text()
    # Nothing was written into the image's filesystem (the Deployment mounts it read-only);
    # buildah itself adds the files it bind-mounts (hosts, resolv.conf).
    changed = {
        path
        for path, stat in _files(rootfs).items()
        if before.get(path) != stat
        and not path.startswith(("run", "var/run", "etc/hosts", "etc/resolv.conf", "etc/hostname"))
    }
    assert changed == set()
