"""The image's lock files (hack/image/*.txt, written by `make lock`; docs/install.md, "Supply
chain"): current with setup.cfg, every entry pinned to one version and hashed, and what the
Dockerfile installs with --require-hashes. Offline: the lock is read, not resolved again."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ("hack/image/requirements.txt", "hack/image/build-requirements.txt")


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
    for path in LOCKS:
        assert path in dockerfile
        assert f"!{path}" in (ROOT / ".dockerignore").read_text()
