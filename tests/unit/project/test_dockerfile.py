"""What can be checked of the Dockerfile without building it.

tests/packaging/test_image.py builds and runs the image (`make test-image`); these checks are
quick and catch what would break the build or the Deployment: a COPY of a file that is missing
or excluded from the build context, base images whose Python is not the one the package
supports or not the same in both stages, an entrypoint that is not the package's console
script, and a user that does not match the Deployment's runAsUser.
"""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa import __version__

ROOT = Path(__file__).resolve().parents[3]


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    logical: list[str] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    assert pending == "", "the Dockerfile ends inside a continued line"
    pairs = []
    for entry in logical:
        keyword, _, arguments = entry.partition(" ")
        pairs.append((keyword.upper(), arguments.strip()))
    return pairs


def _arg_defaults() -> dict[str, str]:
    defaults = {}
    for keyword, arguments in _instructions():
        if keyword == "ARG" and "=" in arguments:
            name, _, value = arguments.partition("=")
            defaults[name] = value
    return defaults


def _images() -> list[str]:
    defaults = _arg_defaults()
    images = []
    for keyword, arguments in _instructions():
        if keyword == "FROM":
            image = arguments.split()[0]
            images.append(re.sub(r"\$\{(\w+)\}", lambda m: defaults[m[1]], image))
    return images


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    return instructions[last_from:]


def _ignored(path: str) -> bool:
    """Whether .dockerignore keeps `path` out of the build context (last match wins)."""
    ignored = False
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line.lstrip("!").rstrip("/").removeprefix("**/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if any(fnmatch.fnmatch(p, pattern) for p in prefixes) or fnmatch.fnmatch(
            parts[-1], pattern
        ):
            ignored = not negated
    return ignored


def _deployment_pod() -> dict[str, Any]:
    for document in yaml.safe_load_all((ROOT / "config/install/install.yaml").read_text()):
        if document and document["kind"] == "Deployment":
            pod: dict[str, Any] = document["spec"]["template"]["spec"]
            return pod
    raise AssertionError("no Deployment in config/install/install.yaml")


def test_both_stages_have_debian_12s_python_the_package_supports() -> None:
    # The virtualenv built in the first stage links to /usr/bin/python3.11 of the second: both
    # must be Debian 12 (bookworm), whose Python is 3.11, the package's minimum.
    build, runtime = _images()
    assert build == "docker.io/library/debian:bookworm-slim"
    assert runtime == "gcr.io/distroless/python3-debian12:nonroot"
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    assert setup["options"]["python_requires"] == ">=3.11"
    run = " ".join(arguments for keyword, arguments in _instructions() if keyword == "RUN")
    assert "rm -rf /opt/spa/lib/python3.11/site-packages/kubernetes/client/api" in run


REMOVED_FROM_THE_IMAGE = (
    "kubernetes.client.api",
    "kubernetes.aio.client.api",
    # Their __init__ stays (it is imported, and loads its classes lazily): none of their
    # classes.
    "kubernetes.client.models.",
    "kubernetes.aio.client.models.",
)


def test_no_spa_module_imports_the_api_classes_the_image_leaves_out() -> None:
    # The image deletes the kubernetes package's generated API classes (77 MB); a module of
    # spa that imported them, even through the package's lazy attributes, would fail there
    # only. A fresh interpreter imports every module of spa and lists what it loaded.
    script = (
        "import importlib, pkgutil, sys, spa\n"
        "for module in pkgutil.walk_packages(spa.__path__, 'spa.'):\n"
        "    if not module.name.endswith('.__main__'):  # that one runs the command\n"
        "        importlib.import_module(module.name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout.split()
    packages = tuple(package.rstrip(".") + "." for package in REMOVED_FROM_THE_IMAGE)
    assert "spa.kube.config" in loaded
    assert "kubernetes.aio.config" in loaded
    assert [m for m in loaded if m in REMOVED_FROM_THE_IMAGE or m.startswith(packages)] == []
    run = " ".join(arguments for keyword, arguments in _instructions() if keyword == "RUN")
    for module in REMOVED_FROM_THE_IMAGE:
        assert "site-packages/" + module.rstrip(".").replace(".", "/") in run


def test_the_image_version_label_is_thepackages() -> None:
    assert _arg_defaults()["VERSION"] == __version__


def test_copied_files_exist_and_are_in_the_build_context() -> None:
    sources = []
    for keyword, arguments in _instructions():
        if keyword in {"COPY", "ADD"} and not arguments.startswith("--from="):
            words = shlex.split(arguments)
            sources += [w for w in words[:-1] if not w.startswith("--")]
    assert sources, "the Dockerfile copies nothing from the build context"
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not _ignored(source), f"{source} is excluded by .dockerignore"
    # The package's modules must survive .dockerignore too, and the bulky trees must not.
    assert not _ignored("spa/api/crd.py")
    for bulky in (".venv/bin/python", ".git/HEAD", "hack/testenv/build.sh", "tests/unit"):
        assert _ignored(bulky), bulky


def test_the_entrypoint_is_thepackages_console_script() -> None:
    final = dict(_final_stage())
    entrypoint = json.loads(final["ENTRYPOINT"])
    # An absolute path: the runtime image has no shell to search PATH with.
    assert entrypoint == ["/opt/spa/bin/spa"]
    assert json.loads(final["CMD"]) == ["run"]
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    scripts = {
        line.split("=")[0].strip()
        for line in setup["options.entry_points"]["console_scripts"].splitlines()
        if line.strip()
    }
    assert Path(entrypoint[0]).name in scripts


def test_the_runtime_user_is_numeric_non_root_and_the_deployments() -> None:
    users = [arguments for keyword, arguments in _final_stage() if keyword == "USER"]
    assert len(users) == 1
    uid, _, gid = users[0].partition(":")
    assert uid.isdigit(), "a numeric uid lets the kubelet verify runAsNonRoot"
    assert int(uid) != 0
    assert gid.isdigit()
    assert int(gid) != 0
    context = _deployment_pod()["securityContext"]
    assert context["runAsUser"] == int(uid)
    assert context["runAsGroup"] == int(gid)


@pytest.mark.parametrize("port", [8080, 9090])
def test_exposed_ports_are_the_deployments(port: int) -> None:
    exposed = {
        int(p)
        for keyword, arguments in _final_stage()
        if keyword == "EXPOSE"
        for p in arguments.split()
    }
    container_ports = {p["containerPort"] for p in _deployment_pod()["containers"][0]["ports"]}
    assert port in exposed
    assert port in container_ports


def test_the_runtime_stage_carries_no_build_tree() -> None:
    copies = [arguments for keyword, arguments in _final_stage() if keyword in {"COPY", "ADD"}]
    assert copies == ["--from=build /opt/spa /opt/spa"]
