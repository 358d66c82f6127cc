"""A resource's scope is in its type (spa/kube/resources.py; docs/architecture.md, "The
client"): mypy, run here on requests written right and wrong, flags exactly the wrong ones, a
namespace given for a cluster-scoped object or none for a namespaced one, through the `Client`
Protocol, the real `KubeClient` and its blocking face alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

REPO = Path(__file__).resolve().parents[3]

# Each line marked `# wrong` must be an error, and no other line.
REQUESTS = """\
from spa.controller.resources import CLUSTER_CALENDARS, SCHEDULES
from spa.kube import HPA_V2, BlockingKubeClient, Client, KubeClient, Resource


async def requests(
    client: Client, real: KubeClient, blocking: BlockingKubeClient, found: Resource
) -> None:
    await client.get(SCHEDULES, "shop", "noon")
    await client.delete(CLUSTER_CALENDARS, None, "black-friday")
    await client.list(CLUSTER_CALENDARS)
    await client.list(SCHEDULES)
    await client.list(SCHEDULES, namespace="shop")
    await real.patch(HPA_V2, "shop", "web", {}, patch_type="merge", field_manager="m")
    blocking.delete(CLUSTER_CALENDARS, None, "black-friday")
    # A kind found by discovery: its scope is checked at run time.
    await client.get(found, "shop", "web")
    await client.get(found, None, "web")
    await client.delete(CLUSTER_CALENDARS, "shop", "black-friday")  # wrong
    await client.get(SCHEDULES, None, "noon")  # wrong
    await real.patch(HPA_V2, None, "web", {}, patch_type="merge", field_manager="m")  # wrong
    await real.list(CLUSTER_CALENDARS, namespace="shop")  # wrong
    blocking.get(CLUSTER_CALENDARS, "shop", "black-friday")  # wrong
    blocking.create(SCHEDULES, None, {})  # wrong


NODES: Resource[None] = Resource("", "v1", "nodes", "Node", False)
PODS: Resource[str] = Resource("", "v1", "pods", "Pod", True)
MIXED: Resource[str] = Resource("", "v1", "nodes", "Node", False)  # wrong
"""


def test_a_namespace_mixed_up_with_the_scope_is_a_type_error(
    tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "requests.py"
    source.write_text(REQUESTS)
    # Kept between runs where pytest keeps its cache: a cold run of mypy takes seconds.
    kept = getattr(pytestconfig, "cache", None)
    cache = kept.mkdir("mypy-scopes") if kept is not None else tmp_path
    monkeypatch.chdir(REPO)  # the repository's spa/ and its mypy configuration (setup.cfg)
    monkeypatch.setenv("MYPYPATH", str(REPO))
    out, err, _ = api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(cache), str(source)]
    )
    assert err == ""
    flagged = {int(line) for line in re.findall(r"^[^:\n]+:(\d+): error:", out, re.M)}
    wrong = {
        number
        for number, line in enumerate(REQUESTS.splitlines(), start=1)
        if line.endswith("# wrong")
    }
    assert flagged == wrong, out
