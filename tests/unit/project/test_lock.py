"""The lock files, all written by `make lock`: the image's (hack/image/*.txt; docs/install.md,
"Supply chain") and the development environment's (hack/dev-requirements.txt; docs/development.md,
"The locked environment"). Each is current with setup.cfg, every entry pinned to one version and
hashed; the Dockerfile installs only with --require-hashes, and the venv running these tests is
exactly the development lock. Offline: the locks are read, not resolved again."""

from __future__ import annotations

import configparser
import os
import re
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[3]
DEV_LOCK = "hack/dev-requirements.txt"
IMAGE_LOCKS = ("hack/image/requirements.txt", "hack/image/build-requirements.txt")
LOCKS = (*IMAGE_LOCKS, DEV_LOCK)


def _pins(path: str) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes), from a requirements file with hashes."""
    text = (ROOT / path).read_text()
    pins: dict[str, tuple[str, int]] = {}
    for entry in re.split(r"\n(?=\S)", text):
        if entry.startswith("#") or not entry.strip():
            continue
        head = entry.split()[0]
        name, _, version = head.partition("==")
        assert version, f"{path}: {head} is not pinned to one version"
        pins[canonicalize_name(name)] = (version, entry.count("--hash=sha256:"))
    return pins


def _requirements(section: str, key: str) -> list[Requirement]:
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    lines = setup[section][key].splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("path", LOCKS)
def test_every_entry_is_pinned_and_hashed(path: str) -> None:
    pins = _pins(path)
    assert pins
    assert [name for name, (_, hashes) in pins.items() if hashes == 0] == []


def test_the_lock_satisfies_setup_cfg() -> None:
    """A requirement changed in setup.cfg without `make lock` fails here, before any build."""
    pins = _pins("hack/image/requirements.txt")
    for requirement in _requirements("options", "install_requires"):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in the lock: run `make lock`"
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"the lock pins {name}=={version}, setup.cfg wants {requirement}: run `make lock`"
        )


def test_the_build_lock_has_the_build_backend_and_the_sbom_tool() -> None:
    pins = _pins("hack/image/build-requirements.txt")
    pyproject = (ROOT / "pyproject.toml").read_text()
    backend = re.search(r"requires = \[(.*?)\]", pyproject)
    assert backend is not None
    for quoted in re.findall(r'"([^"]+)"', backend.group(1)):
        requirement = Requirement(quoted)
        version, _ = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version)
    assert "cyclonedx-bom" in pins


def test_the_dockerfile_installs_only_by_hash() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = re.findall(r"pip install ([^\n&]*)", dockerfile)
    assert installs
    for arguments in installs:
        # A requirements file with hashes, or the wheel built in the same stage.
        assert ("--require-hashes" in arguments and "-r hack/image/" in arguments) or (
            "--no-deps /wheels/" in arguments
        ), arguments
    for path in IMAGE_LOCKS:
        assert path in dockerfile
        assert f"!{path}" in (ROOT / ".dockerignore").read_text()


def _dev_requirements() -> list[Requirement]:
    """What the development lock must satisfy: the package's requirements, every extra's, and
    hack/dev-requirements.in."""
    requirements = _requirements("options", "install_requires")
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    for extra in setup["options.extras_require"]:
        requirements += _requirements("options.extras_require", extra)
    lines = (ROOT / "hack/dev-requirements.in").read_text().splitlines()
    requirements += [Requirement(line) for line in lines if line.strip() and line[0] != "#"]
    return requirements


def test_the_dev_lock_satisfies_every_extra_of_setup_cfg() -> None:
    """An extra or a requirement added to setup.cfg without `make lock` fails here: the venv
    of `make venv` would lack it."""
    pins = _pins(DEV_LOCK)
    for requirement in _dev_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in {DEV_LOCK}: run `make lock`"
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{DEV_LOCK} pins {name}=={version}, setup.cfg wants {requirement}: run `make lock`"
        )


def test_make_lock_writes_the_dev_lock_with_the_command_it_names() -> None:
    """The lock's header is the command that wrote it; `make lock` must run that command, or
    the lock cannot be refreshed the way it was made."""
    header = (ROOT / DEV_LOCK).read_text().splitlines()[1].lstrip("# ").split()
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    recipe = re.search(r"^\t\$\(BIN\)/(uv pip compile [^\n]*-o \$\(DEV_LOCK\))$", makefile, re.M)
    assert recipe is not None, "`make lock` does not compile the development lock"
    command = recipe.group(1).replace("$(DEV_LOCK)", DEV_LOCK).split()
    assert [word for word in command if word != "--quiet"] == header


def _applicable_pins() -> dict[str, str]:
    """The development lock's entries whose environment markers hold on this interpreter."""
    pins: dict[str, str] = {}
    for entry in re.split(r"\n(?=\S)", (ROOT / DEV_LOCK).read_text()):
        if entry.startswith("#") or not entry.strip():
            continue
        head = entry.split(" \\\n", 1)[0]
        pin, _, marker = head.partition(" ; ")
        if marker and not Marker(marker).evaluate():
            continue
        name, _, version = pin.partition("==")
        pins[canonicalize_name(name)] = version.strip()
    return pins


@pytest.mark.skipif(
    os.environ.get("SPA_UNLOCKED") == "1", reason="`make test-latest` runs unlocked on purpose"
)
def test_the_venv_is_exactly_the_dev_lock() -> None:
    """What `make venv` promises: every distribution installed is the lock's version, nothing
    the lock leaves out is installed, and nothing it holds for this platform is missing. pip
    itself comes with the interpreter's venv module and the package is this checkout."""
    pins = _applicable_pins()
    # Only the venv's own site-packages: once something imports pkg_resources, setuptools'
    # vendored distributions are on sys.path too, and they are setuptools' business.
    site_packages = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    installed = {
        canonicalize_name(dist.metadata["Name"]): dist.version
        for dist in metadata.distributions(path=sorted(site_packages))
    }
    installed.pop("pip", None)
    assert installed.pop("scheduled-pod-autoscaler", None) is not None, (
        "the package is not installed"
    )
    differ = {
        name: (version, pins.get(name))
        for name, version in installed.items()
        if pins.get(name) != version
    }
    assert differ == {}, f"installed (version, lock's version): run `make venv` again: {differ}"
    missing = sorted(set(pins) - set(installed))
    assert missing == [], f"in the lock but not installed: {missing}"
