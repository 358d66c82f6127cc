"""The Debian packages of the make targets (hack/system/packages): one table that the helper
installing them reads, that the Makefile's targets and .ci/run call it with, and that the
README's prerequisites list, so a newcomer's `make test` needs nothing CI does not install.
The helper's own logic (skip when present, stop without root with the exact command) runs
here on a copy of it with a table of made-up packages and a stand-in `id`."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "hack/system/install.sh"


def _table() -> list[tuple[str, str, str]]:
    rows = []
    for line in (ROOT / "hack/system/packages").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            package, target, probe = line.split()
            rows.append((package, target, probe))
    return rows


def _recipe(target: str) -> str:
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.M)
    assert found is not None, f"the Makefile has no target {target}"
    return found.group(1)


# The target whose recipe installs the packages of a table's target: the target itself, or a
# prerequisite of it.
INSTALLED_BY = {
    "test": "test",
    "test-reliability": "test-reliability",
    "test-packaging": "packaging-deps",
}


def test_every_target_of_the_table_installs_its_packages_first() -> None:
    targets = {target for _, target, _ in _table()}
    assert targets == set(INSTALLED_BY)
    for target, installer in INSTALLED_BY.items():
        assert f"hack/system/install.sh {target}\n" in _recipe(installer), installer
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^PACKAGING_TOOLS :=.* packaging-deps", makefile, re.M)
    assert re.search(r"^test-packaging: \$\(PACKAGING_TOOLS\)", makefile, re.M)


def test_the_helper_lists_the_table() -> None:
    listed = subprocess.run(
        [SCRIPT, "--list"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert listed == [package for package, _, _ in _table()]
    for_test = subprocess.run(
        [SCRIPT, "--list", "test"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert for_test == [package for package, target, _ in _table() if target == "test"]


def test_ci_installs_every_package_through_the_helper() -> None:
    ci = (ROOT / ".ci/run").read_text()
    assert "hack/system/install.sh --all" in ci
    assert "apt-get install" not in ci.replace("# ", "")


def test_the_readme_lists_every_package_with_its_target() -> None:
    readme = (ROOT / "README.md").read_text()
    prerequisites = readme[readme.index("Prerequisites") : readme.index("```sh")]
    prerequisites = " ".join(prerequisites.split())
    for package, target, _ in _table():
        found = re.search(
            rf"`[^`]*\b{re.escape(package)}\b[^`]*` (?:\([^)]*\) )?for `make {target}`",
            prerequisites,
        )
        assert found, f"README's prerequisites do not name {package} for make {target}"


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A copy of the helper beside a table of two made-up packages, one present (its probe is
    `sh`) and one missing, and a bin directory that comes first on PATH."""
    (tmp_path / "install.sh").write_bytes(SCRIPT.read_bytes())
    (tmp_path / "install.sh").chmod(0o755)
    (tmp_path / "packages").write_text(
        "# package target probe\n"
        "present-pkg  test  sh\n"
        "missing-pkg  test-reliability  /nonexistent/spa-probe\n"
    )
    (tmp_path / "bin").mkdir()
    return tmp_path


def _stand_in(sandbox: Path, name: str, script: str) -> None:
    path = sandbox / "bin" / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def _run(sandbox: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{sandbox / 'bin'}:/usr/bin:/bin"}
    return subprocess.run(
        [str(sandbox / "install.sh"), *args], capture_output=True, text=True, env=env
    )


def test_present_packages_need_neither_root_nor_apt(sandbox: Path) -> None:
    _stand_in(sandbox, "id", "echo 1000")
    _stand_in(sandbox, "apt-get", "echo apt-get was called >&2; exit 7")
    done = _run(sandbox, "test")
    assert (done.returncode, done.stderr) == (0, "")


def test_without_root_it_stops_with_the_exact_command(sandbox: Path) -> None:
    _stand_in(sandbox, "id", "echo 1000")
    _stand_in(sandbox, "apt-get", "echo apt-get was called >&2; exit 7")
    done = _run(sandbox, "--all")
    assert done.returncode == 1
    assert "sudo apt-get install -y missing-pkg\n" in done.stderr
    assert "apt-get was called" not in done.stderr


def test_as_root_it_installs_only_what_is_missing(sandbox: Path) -> None:
    _stand_in(sandbox, "id", "echo 0")
    _stand_in(sandbox, "apt-get", 'echo "apt-get $*" >> "$(dirname "$0")/calls"')
    done = _run(sandbox, "test-reliability")
    assert done.returncode == 0, done.stderr
    calls = (sandbox / "bin/calls").read_text().splitlines()
    assert calls == ["apt-get update -q", "apt-get install -y -q missing-pkg"]
