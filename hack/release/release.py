"""Builds what a release ships into one folder (`make release`), reproducibly, or builds it
twice and compares (`make release-check`; docs/development.md, "Releasing").

The folder, dist/release/VERSION/ (outside Git), holds:

- the Python distribution: the sdist and the wheel (`python -m build`, the lock's backend);
- the image as an OCI archive (`buildah bud` of the Dockerfile, pushed to an OCI layout and
  packed), its CycloneDX SBOM (the one the build writes into the image, /opt/spa/sbom.cdx.json,
  taken out of the image's layers) and its manifest digest;
- the chart package (`helm package`);
- the Krew archives and their manifest spa.yaml, with each archive's sha256
  (hack/krew/plugin.py);
- SHA256SUMS of every file.

Everything is built from the commit, not the working tree: `git archive HEAD` is unpacked into
a scratch directory (its files dated at the commit) and built there, with SOURCE_DATE_EPOCH
set to the commit's time. What the tools leave to chance is fixed here: the tar archives
(sdist, chart) are repacked with their members sorted, dated at the commit, owned by 0:0, and
no name or time in the gzip header; the OCI layout is packed the same way; the image is built
with `buildah bud --timestamp` (every file of the new layer and the image's dates at the
commit) and SOURCE_DATE_EPOCH as a build argument (pip then writes hash-checked bytecode,
without the install time, and the SBOM is written with --output-reproducible). So two builds
of one commit on one machine, with the same base images and tools, give the same checksums.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist" / "release"
NAME = "scheduled-pod-autoscaler"
IMAGE = f"localhost/{NAME}"
SBOM_PATH = "opt/spa/sbom.cdx.json"


def log(message: str) -> None:
    print(f"[release] {message}", file=sys.stderr, flush=True)


def run(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    """The standard output of a command that must succeed (its error output passes through)."""
    result = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, env=env, stdout=subprocess.PIPE, text=True
    )
    if result.returncode != 0:
        raise SystemExit(f"failed ({result.returncode}): {' '.join(map(str, args))}")
    return result.stdout


def sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


# --- deterministic archives -----------------------------------------------------------------


def _normalized(member: tarfile.TarInfo, epoch: int) -> tarfile.TarInfo:
    member.mtime = epoch
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    member.pax_headers = {}
    return member


def _write_tar(
    output: Path, members: Iterable[tuple[tarfile.TarInfo, bytes | None]], *, compress: bool
) -> None:
    """A tar of `members` in their order, gzipped with no name and time in the header."""
    with output.open("wb") as raw:
        zipped = gzip.GzipFile("", "wb", fileobj=raw, mtime=0) if compress else None
        with tarfile.open(fileobj=zipped or raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for member, data in members:
                tar.addfile(member, io.BytesIO(data) if data is not None else None)
        if zipped is not None:
            zipped.close()


def repack(archive: Path, epoch: int) -> None:
    """Rewrite a .tar.gz in place with sorted members dated `epoch` and owned by 0:0."""
    with tarfile.open(archive) as tar:
        members = []
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            extracted = tar.extractfile(member) if member.isfile() else None
            members.append((_normalized(member, epoch), extracted.read() if extracted else None))
    _write_tar(archive, members, compress=True)


def pack_directory(directory: Path, output: Path, epoch: int) -> None:
    """An uncompressed tar of `directory`'s contents (sorted, dated `epoch`, owned by 0:0)."""

    def members() -> Iterator[tuple[tarfile.TarInfo, bytes | None]]:
        for path in sorted(directory.rglob("*")):
            member = tarfile.TarInfo(path.relative_to(directory).as_posix())
            if path.is_dir():
                member.type, member.mode = tarfile.DIRTYPE, 0o755
                yield _normalized(member, epoch), None
            else:
                data = path.read_bytes()
                member.size, member.mode = len(data), 0o644
                yield _normalized(member, epoch), data

    _write_tar(output, members(), compress=False)


# --- the parts ------------------------------------------------------------------------------


def export(commit: str, destination: Path) -> None:
    """The files of `commit`, dated at its time (what `git archive` records)."""
    destination.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="tar")


def python_distribution(source: Path, out: Path, env: dict[str, str]) -> list[Path]:
    """The sdist and the wheel, built by the lock's backend (no build isolation: nothing
    unpinned from the index)."""
    scratch = source.parent / "python-dist"
    run(sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel",
        "--outdir", scratch, source, env=env)  # fmt: skip
    built = []
    for path in sorted(scratch.iterdir()):
        if path.name.endswith(".tar.gz"):
            repack(path, int(env["SOURCE_DATE_EPOCH"]))
        built.append(Path(shutil.copy2(path, out / path.name)))
    return built


def chart(source: Path, out: Path, epoch: int) -> Path:
    helm = run(ROOT / "hack" / "helm" / "build.sh", "--print-path").strip()
    scratch = source.parent / "chart"
    run(helm, "package", source / "charts" / NAME, "--destination", scratch)
    (package,) = scratch.iterdir()
    repack(package, epoch)
    return Path(shutil.copy2(package, out / package.name))


def krew(source: Path, out: Path, env: dict[str, str]) -> None:
    """The archives and manifest of hack/krew/plugin.py, run from the exported commit."""
    run(sys.executable, source / "hack" / "krew" / "plugin.py", "--out", out,
        "--manifest", out / "spa.yaml", cwd=source, env=env)  # fmt: skip


def _buildah() -> list[str]:
    """buildah with the project's container storage (hack/image/env.sh)."""
    script = 'source hack/image/env.sh && printf "%s\\n" "${SPA_BUILDAH[@]}"'
    return run("bash", "-c", script).splitlines()


def image_build_args() -> list[str]:
    """The base images (hack/image/bases.sh: made from Debian packages, since no registry is
    reachable here; the public ones where BUILD_IMAGE and RUNTIME_IMAGE are set), and pip's
    settings of this machine, as `make test-image` passes them (tests/packaging/test_image.py)."""
    build, runtime = os.environ.get("BUILD_IMAGE"), os.environ.get("RUNTIME_IMAGE")
    if not (build and runtime):
        build, runtime = run(ROOT / "hack" / "image" / "bases.sh").split()
    args = ["--build-arg", f"BUILD_IMAGE={build}", "--build-arg", f"RUNTIME_IMAGE={runtime}"]
    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    if bundle.is_file():
        args += ["-v", f"{bundle}:/run/build-ca.crt:ro"]
        args += ["--build-arg", "PIP_CERT=/run/build-ca.crt"]
    if os.environ.get("PIP_INDEX_URL"):
        args += ["--build-arg", f"PIP_INDEX_URL={os.environ['PIP_INDEX_URL']}"]
    return args


def image(source: Path, out: Path, *, version: str, commit: str, epoch: int) -> None:
    """The image as an OCI archive, its SBOM and its manifest digest."""
    buildah = _buildah()
    tag = f"{IMAGE}:{version}"
    # No --layers: a cached layer would carry another build's bytes.
    run(*buildah, "bud", "--isolation", "chroot", "--timestamp", str(epoch),
        *image_build_args(), "--build-arg", f"SOURCE_DATE_EPOCH={epoch}",
        "--build-arg", f"VERSION={version}", "--build-arg", f"REVISION={commit}",
        "-t", tag, source)  # fmt: skip
    layout = source.parent / "oci"
    run(*buildah, "push", "--format", "oci", tag, f"oci:{layout}:{version}")
    pack_directory(layout, out / f"{NAME}-{version}.oci.tar", epoch)
    index = json.loads((layout / "index.json").read_text())
    (manifest,) = index["manifests"]
    (out / f"{NAME}-{version}.image-digest").write_text(f"{manifest['digest']}\n")
    sbom = sbom_of(layout, manifest["digest"])
    (out / f"{NAME}-{version}.sbom.cdx.json").write_bytes(sbom)


def _blob(layout: Path, digest: str) -> Path:
    algorithm, value = digest.split(":", 1)
    return layout / "blobs" / algorithm / value


def sbom_of(layout: Path, manifest_digest: str) -> bytes:
    """/opt/spa/sbom.cdx.json as the image holds it: from the last layer that has it."""
    manifest = json.loads(_blob(layout, manifest_digest).read_text())
    for layer in reversed(manifest["layers"]):
        with tarfile.open(_blob(layout, layer["digest"])) as tar:
            for member in tar:
                if member.name.lstrip("./") == SBOM_PATH and member.isfile():
                    extracted = tar.extractfile(member)
                    assert extracted is not None
                    return extracted.read()
    raise SystemExit(f"the image has no /{SBOM_PATH}")


def checksums(out: Path) -> str:
    lines = [
        f"{sha256(path)}  {path.name}"
        for path in sorted(out.iterdir())
        if path.is_file() and path.name != "SHA256SUMS"
    ]
    text = "\n".join(lines) + "\n"
    (out / "SHA256SUMS").write_text(text)
    return text


def _version(source: Path) -> str:
    namespace: dict[str, object] = {}
    exec((source / "spa" / "__init__.py").read_text(), namespace)  # no import: no dependencies
    return str(namespace["__version__"])


def release(out: Path | None, *, commit: str, with_image: bool) -> Path:
    """Every part of the release of `commit` into `out` (default dist/release/VERSION)."""
    epoch = int(run("git", "log", "-1", "--format=%ct", commit).strip())
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory(prefix="spa-release-") as scratch:
        source = Path(scratch) / "src"
        export(commit, source)
        version = _version(source)
        out = out or DIST / version
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        log(f"{version} from {commit} (SOURCE_DATE_EPOCH={epoch}) into {out}")
        log("the Python distribution")
        python_distribution(source, out, env)
        log("the chart")
        chart(source, out, epoch)
        log("the Krew archives")
        krew(source, out, env)
        if with_image:
            log("the image (slow: minutes)")
            image(source, out, version=version, commit=commit, epoch=epoch)
    sums = checksums(out)
    log(f"SHA256SUMS:\n{sums}")
    return out


def compare(first: Path, second: Path) -> list[str]:
    """The files whose checksums differ between two release folders."""

    def sums(folder: Path) -> dict[str, str]:
        return {
            name: digest
            for digest, name in (
                line.split("  ", 1) for line in (folder / "SHA256SUMS").read_text().splitlines()
            )
        }

    a, b = sums(first), sums(second)
    return sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default="HEAD", help="what to release (default HEAD)")
    parser.add_argument("--out", type=Path, help="the folder (default dist/release/VERSION)")
    parser.add_argument("--no-image", action="store_true", help="leave the image out")
    parser.add_argument(
        "--check", action="store_true", help="build twice, the second into OUT.check; compare"
    )
    args = parser.parse_args()
    commit = run("git", "rev-parse", "--verify", f"{args.commit}^{{commit}}").strip()
    if run("git", "status", "--porcelain", "--untracked-files=no").strip():
        log(f"the working tree has changes: they are not released (building {commit})")
    first = release(args.out, commit=commit, with_image=not args.no_image)
    if not args.check:
        return 0
    second = release(
        first.with_name(f"{first.name}.check"), commit=commit, with_image=not args.no_image
    )
    differing = compare(first, second)
    if differing:
        log(f"NOT reproducible: {', '.join(differing)} differ between {first} and {second}")
        return 1
    log(f"reproducible: {first} and {second} have the same SHA256SUMS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
