"""The RBAC review table of docs/install.md against what each install option renders: the chart
with the real helm (hack/helm), and the kustomize manifests with the real `kubectl kustomize`,
for the default install, the placeholder option, the namespaced install and both, and a sharded
install (the chart's `shards` or `shardCount`, config/components/shards). A rule that
is rendered and not in the table fails, and so does a rule of the table that an option renders
without the table saying that option grants it (or that it does not render where it should)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.packaging.common import REPO, helm_binary

pytestmark = [pytest.mark.packaging]

CHART = REPO / "charts" / "scheduled-pod-autoscaler"
RELEASE = NAMESPACE = "scheduled-pod-autoscaler"
EVERY, PLACEHOLDERS, NAMESPACED = "every install", "placeholder option", "namespaced install"
SHARDED = "sharded install"

# (kind, name, apiGroup, resource, verb)
Rule = tuple[str, str, str, str, str]


def _table() -> dict[Rule, str]:
    """The rules of docs/install.md's "RBAC review" table, each with the option granting it."""
    text = (REPO / "docs" / "install.md").read_text()
    section = text[text.index("## RBAC review") :]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| role | apiGroup | resources | verbs |"), rows[0]
    rules: dict[Rule, str] = {}
    kind = name = ""
    for row in rows[1:]:
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert len(cells) == 6, row
        role, group, resources, verbs, _, option = cells
        if role:
            kind = role.split()[0]
            name = re.findall(r"`([^`]*)`", role)[0]
        assert option in (EVERY, PLACEHOLDERS, NAMESPACED, SHARDED), row
        [group_name] = re.findall(r"`([^`]*)`", group)
        group_name = "" if group_name == '""' else group_name
        for resource in re.findall(r"`([^`]*)`", resources):
            for verb in verbs.split(", "):
                rule = (kind, name, group_name, resource, verb)
                assert rule not in rules, f"twice in the table: {rule}"
                rules[rule] = option
    return rules


def _rendered(documents: Iterator[Any]) -> set[Rule]:
    return {
        (document["kind"], document["metadata"]["name"], group, resource, verb)
        for document in documents
        if document and document["kind"] in ("Role", "ClusterRole")
        for rule in document.get("rules") or ()
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def _kustomize(directory: Path) -> set[Rule]:
    kubectl = REPO / ".venv" / "bin" / "kubectl"
    result = subprocess.run(
        [str(kubectl), "kustomize", str(directory)], check=True, capture_output=True, text=True
    )
    return _rendered(yaml.safe_load_all(result.stdout))


def _with_components(tmp_path: Path, base: str, components: tuple[str, ...]) -> Path:
    """A kustomization of `base` with `components` (of config/components), as a user writes
    one."""
    directory = tmp_path / base.replace("/", "-")
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(REPO / "config" / base, directory)],
                "components": [
                    os.path.relpath(REPO / "config" / "components" / name, directory)
                    for name in components
                ],
            }
        )
    )
    return directory


def _helm(*values: str) -> set[Rule]:
    arguments = [helm_binary(), "template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    for value in values:
        arguments += ["--set", value]
    result = subprocess.run(arguments, check=True, capture_output=True, text=True, timeout=120)
    return _rendered(yaml.safe_load_all(result.stdout))


OPTIONS = {
    "default": {EVERY},
    "placeholders": {EVERY, PLACEHOLDERS},
    "namespaced": {EVERY, NAMESPACED},
    "namespaced-placeholders": {EVERY, NAMESPACED, PLACEHOLDERS},
    "sharded": {EVERY, SHARDED},
    "hashed": {EVERY, SHARDED},
}
HELM_VALUES = {
    "default": (),
    "placeholders": ("capacity.placeholders.enabled=true",),
    "namespaced": ("watchNamespaces={shop}",),
    "namespaced-placeholders": ("watchNamespaces={shop}", "capacity.placeholders.enabled=true"),
    "sharded": ("shards[0].name=a", "shards[1].name=b"),
    "hashed": ("shardCount=2",),
}
# option -> (base, components): by label or by namespace hash, shards take the same component.
KUSTOMIZE: dict[str, tuple[str, tuple[str, ...]]] = {
    "default": ("install", ()),
    "placeholders": ("install", ("placeholders",)),
    "namespaced": ("overlays/namespaced", ()),
    "namespaced-placeholders": ("overlays/namespaced", ("placeholders",)),
    "sharded": ("install", ("shards",)),
    "hashed": ("install", ("shards",)),
}


def _expected(option: str) -> set[Rule]:
    return {rule for rule, granted in _table().items() if granted in OPTIONS[option]}


def _assert_as_the_table_says(rendered: set[Rule], option: str) -> None:
    table = _table()
    unknown = sorted(rendered - table.keys())
    assert not unknown, f"rules not in docs/install.md's RBAC review table: {unknown}"
    expected = _expected(option)
    assert sorted(rendered - expected) == [], "rendered, but the table names another option"
    assert sorted(expected - rendered) == [], "in the table for this option, not rendered"


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_the_chart_renders_exactly_the_rules_the_table_gives_its_option(option: str) -> None:
    _assert_as_the_table_says(_helm(*HELM_VALUES[option]), option)


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_the_manifests_render_exactly_the_rules_the_table_gives_their_option(
    option: str, tmp_path: Path
) -> None:
    base, components = KUSTOMIZE[option]
    directory = (
        _with_components(tmp_path, base, components) if components else REPO / "config" / base
    )
    _assert_as_the_table_says(_kustomize(directory), option)


def test_the_default_install_writes_deployments_in_one_namespace_and_reads_no_template() -> None:
    """The promise of docs/install.md, "Placeholder pods", in the table itself."""
    default = {rule for rule, option in _table().items() if option == EVERY}
    apps = {rule for rule in default if rule[2] == "apps" and "/" not in rule[3]}
    assert {rule[:2] for rule in apps} == {("Role", "scheduled-pod-autoscaler-capacity")}
    assert {rule[3] for rule in apps} == {"deployments"}
