"""Where the tests find Karpenter's build, and when a run without it must fail instead of
leaving the Karpenter tests out (tests/testenv/binaries.py; docs/development.md, "Karpenter").

The rule is easy to get subtly wrong in the quiet direction (a run that asked for the tests
silently running none), so each way of asking is a case here; the real plane is not needed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.testenv.binaries import (
    KARPENTER_ASKED_ENV,
    KARPENTER_BINARY,
    REPO_ROOT,
    MissingBinariesError,
    find_karpenter,
    karpenter_asked,
    karpenter_dir,
    karpenter_version,
)

TEST_FILE = REPO_ROOT / "tests" / "integration" / "test_testenv_karpenter.py"


def _asked(
    *args: str, markexpr: str = "", cwd: Path = REPO_ROOT, environ: Mapping[str, str] = {}
) -> bool:
    return karpenter_asked(
        test_file=TEST_FILE, args=args, invocation_dir=cwd, markexpr=markexpr, environ=environ
    )


def test_the_file_named_on_the_command_line_asks() -> None:
    assert _asked("tests/integration/test_testenv_karpenter.py")
    assert _asked("tests/integration/test_testenv_karpenter.py::test_a_pending_pod_gets_a_node")
    assert _asked("integration/test_testenv_karpenter.py", cwd=REPO_ROOT / "tests")
    assert _asked(str(TEST_FILE))


def test_the_marker_or_the_make_target_asks() -> None:
    assert _asked("tests", markexpr="karpenter")
    assert _asked("tests", markexpr="integration and karpenter")
    assert _asked("tests", environ={KARPENTER_ASKED_ENV: "1"})


def test_a_directory_or_another_file_does_not_ask() -> None:
    assert not _asked()
    assert not _asked("tests/integration")
    assert not _asked("tests/integration/test_testenv_pods.py")
    assert not _asked("tests", markexpr="integration")
    assert not _asked("tests", markexpr="integration and not karpenter")
    assert not _asked("tests", environ={KARPENTER_ASKED_ENV: "0"})


def test_the_build_directory_follows_the_cache_and_the_pinned_release(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SPA_TESTENV_KARPENTER_DIR", raising=False)
    monkeypatch.setenv("SPA_TESTENV_CACHE", str(tmp_path))
    assert karpenter_dir() == tmp_path / "karpenter" / karpenter_version()
    # The same directory the build script prints.
    script = REPO_ROOT / "hack" / "testenv" / "karpenter.sh"
    printed = subprocess.run(
        [script, "--print-dir"],
        env={**os.environ, "SPA_TESTENV_CACHE": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == f"{karpenter_dir()}\n"
    monkeypatch.setenv("SPA_TESTENV_KARPENTER_DIR", str(tmp_path / "own"))
    assert karpenter_dir() == tmp_path / "own"


def test_a_missing_or_half_build_names_the_make_target(tmp_path: Path) -> None:
    with pytest.raises(MissingBinariesError, match="make testenv-karpenter"):
        find_karpenter(tmp_path)
    binary = tmp_path / "bin" / KARPENTER_BINARY
    binary.parent.mkdir()
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    # The binary without its CRDs is not a build.
    with pytest.raises(MissingBinariesError, match=r"crds/\*\.yaml"):
        find_karpenter(tmp_path)
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "karpenter.sh_nodepools.yaml").write_text(
        "kind: CustomResourceDefinition\n"
    )
    found = find_karpenter(tmp_path)
    assert found.binary == binary
    assert [crd.name for crd in found.crds] == ["karpenter.sh_nodepools.yaml"]
