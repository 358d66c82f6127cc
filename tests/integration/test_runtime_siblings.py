"""SiblingLeases on the real API server, as the controller's ServiceAccount with the project's
RBAC only: with config/rbac and config/components/shards a shard reads what the other shards'
Leases carry (docs/install.md, "Shards"), and not its own Lease or one of another group; with
config/rbac alone (one controller's install) the list is refused, nothing is handed on, and the
shard says so once."""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa.controller.fleet import WRITE_RAISES_ANNOTATION, WRITE_SECONDS_ANNOTATION
from spa.controller.shards import Shard, lease_prefix
from spa.kube import LEASE, KubeClient, NotFound, connect
from spa.runtime import SiblingLeases, SystemClock
from tests.integration.processes import CONTROLLER_NAMESPACE

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# The shards' grant (docs/install.md, "Shards"), applied as a user applies it.
SHARDS_RBAC = REPO / "config" / "components" / "shards" / "shards.yaml"
LEADER_ELECTION = f"{CONTROLLER_NAMESPACE}-leader-election"
SIBLINGS_LOG = "spa.runtime.siblings"


def lease(name: str, annotations: Mapping[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "annotations": dict(annotations)},
        "spec": {"holderIdentity": f"{name}-0", "leaseDurationSeconds": 15},
    }


class Group:
    """The Leases of one install's shards, with a name of this test's own (the controller's
    namespace is shared by every test of the run): shard a's (this process's), shard b's, and
    the Lease of the same id without a shard (a single controller's), each with annotations."""

    def __init__(self) -> None:
        self.base = f"spa-siblings-{secrets.token_hex(3)}-leader"
        self.own = Shard.by_label("a").lease_name(self.base)
        self.sibling = Shard.by_label("b").lease_name(self.base)
        self.unrelated = self.base
        self.annotations = {
            self.own: {WRITE_SECONDS_ANNOTATION: "0.004000", WRITE_RAISES_ANNOTATION: "500"},
            self.sibling: {WRITE_SECONDS_ANNOTATION: "0.012000", WRITE_RAISES_ANNOTATION: "5000"},
            self.unrelated: {WRITE_SECONDS_ANNOTATION: "0.020000"},
        }

    def reader(
        self, client: KubeClient, reads: list[Mapping[str, Mapping[str, str]]]
    ) -> SiblingLeases:
        """Shard a's reader, as the manager wires it (spa/controller/manager.py)."""
        return SiblingLeases(
            client,
            namespace=CONTROLLER_NAMESPACE,
            prefix=lease_prefix(self.base),
            own=self.own,
            period=15.0,
            clock=SystemClock(),
            on_read=reads.append,
        )


@pytest.fixture
async def group(kube_client: KubeClient, controller_kubeconfig: Path) -> AsyncIterator[Group]:
    """The group's three Leases, created as admin in the controller's namespace (config/rbac
    makes it, through `controller_kubeconfig`), deleted afterwards."""
    made = Group()
    for name, carried in made.annotations.items():
        await kube_client.create(LEASE, CONTROLLER_NAMESPACE, lease(name, carried))
    yield made
    for name in made.annotations:
        with contextlib.suppress(NotFound):
            await kube_client.delete(LEASE, CONTROLLER_NAMESPACE, name)


def can_list_leases(cluster: Any, account: str) -> bool:
    user = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:{account}"
    answer = cluster.run_kubectl(
        "auth", "can-i", "list", "leases.coordination.k8s.io",
        "-n", CONTROLLER_NAMESPACE, "--as", user,
    )  # fmt: skip
    return str(answer.stdout).strip() == "yes"


async def test_with_the_shards_component_a_shard_reads_only_its_siblings_leases(
    cluster: Any, controller_kubeconfig: Path, group: Group
) -> None:
    cluster.run_kubectl("apply", "--server-side", "-f", str(SHARDS_RBAC), check=True)
    reads: list[Mapping[str, Mapping[str, str]]] = []
    try:
        assert can_list_leases(cluster, CONTROLLER_NAMESPACE)
        client = await connect(kubeconfig=str(controller_kubeconfig))
        try:
            await group.reader(client, reads).read()
        finally:
            await client.close()
    finally:
        # The shared account is config/rbac's for the other tests.
        cluster.run_kubectl("delete", "-f", str(SHARDS_RBAC), check=True)
    # Shard b's annotations, as its Lease has them; not shard a's own, not the unsharded one.
    assert reads == [{group.sibling: group.annotations[group.sibling]}]


async def test_without_it_the_list_is_forbidden_said_once_and_nothing_is_read(
    cluster: Any,
    controller_kubeconfig: Path,
    group: Group,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """config/rbac alone: an account of its own with its leader-election Role only (another
    module may give the shared account the component)."""
    account = f"spa-noshards-{secrets.token_hex(3)}"
    kubeconfig = cluster.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, account, path=tmp_path / "noshards.kubeconfig"
    )
    rendered = cluster.run_kubectl("kustomize", str(REPO / "config" / "rbac"), check=True)
    binding = next(
        d
        for d in yaml.safe_load_all(rendered.stdout)
        if d and d["kind"] == "RoleBinding" and d["metadata"]["name"] == LEADER_ELECTION
    )
    binding["metadata"]["name"] = f"{LEADER_ELECTION}-{account}"
    binding["subjects"][0]["name"] = account
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(binding), check=True)
    try:
        assert not can_list_leases(cluster, account)
        caplog.set_level(logging.DEBUG, logger=SIBLINGS_LOG)
        reads: list[Mapping[str, Mapping[str, str]]] = []
        client = await connect(kubeconfig=str(kubeconfig))
        try:
            reader = group.reader(client, reads)
            await reader.read()
            await reader.read()
        finally:
            await client.close()
    finally:
        cluster.run_kubectl(
            "delete", "rolebinding", binding["metadata"]["name"], "-n", CONTROLLER_NAMESPACE
        )
    assert reads == []
    said = [r for r in caplog.records if r.name == SIBLINGS_LOG]
    assert [r.levelno for r in said] == [logging.WARNING, logging.DEBUG]
    assert (
        said[0]
        .getMessage()
        .startswith(
            f"cannot list the Leases in {CONTROLLER_NAMESPACE}, so the other Leases "
            f"{lease_prefix(group.base)}* are not read: "
        )
    )
