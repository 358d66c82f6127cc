"""spa.kube imports the kubernetes package's config loader without the rest of the package
(spa/kube/_kubernetes.py), and whoever wants the rest still gets all of it. Each case runs in a
fresh interpreter: the test process itself has imported `kubernetes` long before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]


def run(code: str) -> Any:
    """`code` in a fresh interpreter of this venv; what it prints, as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_the_controller_loads_no_client_beside_the_config_loader() -> None:
    loaded = run(
        "import json, sys\nimport spa.controller.main\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    assert "kubernetes.aio.config.kube_config" in loaded
    assert "kubernetes.aio.client.rest" in loaded
    for heavy in (
        "kubernetes.client",
        "kubernetes.dynamic",
        "kubernetes.aio.dynamic",
        "jsonschema",
    ):
        assert heavy not in loaded, heavy


def test_the_whole_package_is_there_for_whoever_asks() -> None:
    found = run(
        "import json\n"
        "import spa.kube\n"
        "import kubernetes\n"
        "from kubernetes import client, watch\n"
        "from kubernetes.aio.client import CoreV1Api\n"
        "try:\n"
        "    kubernetes.not_a_name\n"
        "    missing = 'found'\n"
        "except AttributeError as error:\n"
        "    missing = str(error)\n"
        "print(json.dumps([kubernetes.__version__, client.CoreV1Api.__name__,\n"
        "                  watch.Watch.__name__, CoreV1Api.__module__, missing]))\n"
    )
    version, api, watch, aio_module, missing = found
    assert version.startswith("37.")
    assert (api, watch) == ("CoreV1Api", "Watch")
    assert aio_module == "kubernetes.aio.client.api.core_v1_api"
    assert "not_a_name" in missing


def test_nothing_is_deferred_once_kubernetes_is_imported() -> None:
    found = run(
        "import json\n"
        "import kubernetes\n"
        "import spa.kube._kubernetes as deferring\n"
        "print(json.dumps([deferring.defer_package_inits(), '__getattr__' in vars(kubernetes)]))\n"
    )
    assert found == [False, False]
