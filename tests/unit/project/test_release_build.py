"""hack/release/release.py's archives (docs/development.md, "Releasing"): the same contents give
the same bytes whatever the order, times and owners the tools left in them; `make
release-check` proves the whole folder by building it twice."""

from __future__ import annotations

import importlib.util
import io
import os
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
EPOCH = 1_795_807_509


@pytest.fixture(scope="module")
def release() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "release", ROOT / "hack" / "release" / "release.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tar_gz(path: Path, files: list[tuple[str, bytes]], *, mtime: int, uid: int) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files:
            member = tarfile.TarInfo(name)
            member.size, member.mtime, member.uid, member.uname = len(data), mtime, uid, "me"
            tar.addfile(member, io.BytesIO(data))
    return path


def test_repack_gives_the_same_bytes_for_the_same_contents(
    release: ModuleType, tmp_path: Path
) -> None:
    files = [("pkg/b.py", b"b = 2\n"), ("pkg/a.py", b"a = 1\n"), ("pkg/PKG-INFO", b"x")]
    first = _tar_gz(tmp_path / "first.tar.gz", files, mtime=1_700_000_000, uid=1000)
    second = _tar_gz(tmp_path / "second.tar.gz", files[::-1], mtime=1_800_000_000, uid=0)
    assert first.read_bytes() != second.read_bytes()
    release.repack(first, EPOCH)
    release.repack(second, EPOCH)
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == ["pkg/PKG-INFO", "pkg/a.py", "pkg/b.py"]
        assert {(m.mtime, m.uid, m.gid, m.uname) for m in members} == {(EPOCH, 0, 0, "")}
        extracted = tar.extractfile("pkg/a.py")
        assert extracted is not None
        assert extracted.read() == b"a = 1\n"


def test_a_directory_packs_to_the_same_bytes_whenever_it_was_written(
    release: ModuleType, tmp_path: Path
) -> None:
    archives = []
    for name, mtime in (("one", 1_700_000_000), ("two", 1_800_000_000)):
        layout = tmp_path / name
        (layout / "blobs" / "sha256").mkdir(parents=True)
        for relative, text in (("index.json", "{}"), ("blobs/sha256/ab", "blob")):
            (layout / relative).write_text(text)
        for path in layout.rglob("*"):
            os.utime(path, (mtime, mtime))
        archive = tmp_path / f"{name}.tar"
        release.pack_directory(layout, archive, EPOCH)
        archives.append(archive.read_bytes())
    assert archives[0] == archives[1]
    with tarfile.open(fileobj=io.BytesIO(archives[0])) as tar:
        assert tar.getnames() == ["blobs", "blobs/sha256", "blobs/sha256/ab", "index.json"]
