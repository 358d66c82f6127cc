"""The previous release, as a user had it: the source of a pinned commit (0.1.0 was never
tagged; docs/install.md, "Version skew") installed into a virtual environment of its own the
way its image was built (its Dockerfile: the build backend and the runtime lock of that
commit, every file by hash, then the package without dependencies), with its manifests beside
it. Built once per commit into ~/.cache/scheduled-pod-autoscaler/upgrade/<commit> (a minute or
two; the cache is reused afterwards), so `make test-upgrade` stays short.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# 0.1.0: main just before the 0.2.0 version bump (b749cef's parent, the merge base of the
# release branch), the last commit whose spa/__init__.py says 0.1.0.
PREVIOUS_COMMIT = "3da49def8bb71e93be28b6391cae9a0683291a8e"
PREVIOUS_VERSION = "0.1.0"


def cache_dir(commit: str = PREVIOUS_COMMIT) -> Path:
    """SPA_UPGRADE_CACHE if set, else the project's XDG cache directory, per commit."""
    explicit = os.environ.get("SPA_UPGRADE_CACHE")
    if explicit:
        return Path(explicit) / commit
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "scheduled-pod-autoscaler" / "upgrade" / commit


def clean_env() -> dict[str, str]:
    """This environment without what would make the previous release import this checkout's
    package (PYTHONPATH) or use a kubeconfig of the user's."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBECONFIG")}


class Previous:
    """A built previous release: `source` (its tree, manifests and docs) and `spa` (its CLI)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.source = root / "src"
        self.venv = root / "venv"
        self.spa = self.venv / "bin" / "spa"

    def version(self) -> str:
        done = subprocess.run(
            [str(self.venv / "bin" / "python"), "-c", "import spa; print(spa.__version__)"],
            capture_output=True,
            text=True,
            check=True,
            cwd=self.root,
            env=clean_env(),
        )
        return done.stdout.strip()


def build(commit: str = PREVIOUS_COMMIT) -> Previous:
    """The previous release from the cache, built there first when missing; a build that did
    not finish (no `done` file) is removed and made again. The venv is built in place: its
    scripts name their interpreter by its path."""
    root = cache_dir(commit)
    if not (root / "done").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        _build_into(root, commit)
        (root / "done").write_text(commit + "\n")
    return Previous(root)


def _build_into(root: Path, commit: str) -> None:
    source = root / "src"
    source.mkdir()
    archive = root / "source.tar"
    with archive.open("wb") as output:
        subprocess.run(
            ["git", "archive", commit], cwd=REPO, stdout=output, check=True, env=clean_env()
        )
    with tarfile.open(archive) as tar:
        tar.extractall(source, filter="data")
    archive.unlink()
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean_env())
    pip = [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
    hashed = [*pip, "--require-hashes", "--no-deps", "-r"]
    image = source / "hack" / "image"
    # Only the build backend of the build lock (its SBOM tool is the image's business).
    lines = (image / "build-requirements.txt").read_text().splitlines()
    backend, keep = [], False
    for line in lines:
        if line and not line.startswith((" ", "#")):
            keep = line.startswith(("setuptools==", "wheel=="))
        if keep:
            backend.append(line)
    (root / "backend.txt").write_text("\n".join(backend) + "\n")
    env = clean_env()
    subprocess.run([*hashed, str(root / "backend.txt")], check=True, env=env)
    subprocess.run([*hashed, str(image / "requirements.txt")], check=True, env=env)
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", str(source)], check=True, env=env)


if __name__ == "__main__":
    built = build()
    print(built.root, built.version())
