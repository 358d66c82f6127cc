"""A namespace being deleted, on the real control plane: the API server refuses every create in
it (403, Status cause NamespaceTerminating), and the controller, which still watches its SPAs,
leaves them alone with one log line for the namespace, no traceback, and the writes not made
counted (docs/operations.md, "Namespaces being deleted").

kube-controller-manager's namespace controller is what empties a namespace being deleted and
then removes it. It is stopped for this test, so the namespace stays Terminating with all it
holds, as it does while the namespace controller works through thousands of objects or a
finalizer holds one, and started again at the end, which finishes the deletion while the
controller still watches: the namespace is gone, and creates there are answered with a 404.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.controller.capacity import DEPLOYMENTS
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import (
    CONFIGMAP,
    HPA_V2,
    KubeClient,
    NamespaceDeleted,
    NamespaceGone,
    NamespaceTerminating,
    NotFound,
    Resource,
)
from tests.builders import deployment, namespace_gone, namespace_terminating
from tests.integration.harness import Kube, create_noon_fleet, eventually, running_controller, utc
from tests.testenv.controlplane import ControlPlane

pytestmark = pytest.mark.integration

NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)
NAMES = ["web-0", "web-1", "web-2"]


def not_made(resource: str) -> float:
    sample = REGISTRY.get_sample_value(
        "spa_namespace_terminating_writes_total", {"resource": resource}
    )
    return sample or 0.0


@pytest.fixture
def doomed(control_plane: ControlPlane, kube: Kube) -> Iterator[str]:
    """A namespace of its own, deleted by the test; the namespace controller (and the rest of
    kube-controller-manager) running again afterwards, whatever happened."""
    name = f"t-doomed-{secrets.token_hex(3)}"
    kube.client.create(
        NAMESPACES, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    try:
        yield name
    finally:
        if not control_plane.controller_manager.running:
            control_plane.start_controller_manager()
        with contextlib.suppress(NotFound):
            kube.client.delete(NAMESPACES, None, name)


async def test_a_namespace_being_deleted_is_said_once_without_a_traceback(
    control_plane: ControlPlane,
    kube: Kube,
    kube_client: KubeClient,
    doomed: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    create_noon_fleet(kube, doomed, NAMES)
    for name in NAMES:  # the targets, at 0 (no pods): immediate scale-up leaves them be
        kube.client.create(DEPLOYMENTS, doomed, deployment(name=name, namespace=doomed, replicas=0))
    async with running_controller(
        control_plane.kubeconfig, [doomed], start=utc("2026-11-16T11:00:00")
    ) as running:
        await eventually(lambda: all(kube.hpa(doomed, name) for name in NAMES), what="HPAs")
        control_plane.stop_controller_manager()
        kube.client.delete(NAMESPACES, None, doomed)

        # The real answers are those the unit tests' fakes give (tests/builders.py).
        async def probed() -> NamespaceDeleted:
            return await probe(kube_client, doomed)

        refused: NamespaceDeleted = await eventually(probed, what="creates refused")
        assert type(refused) is NamespaceTerminating
        assert _answer(refused) == _answer_of(
            namespace_terminating(resource="configmaps", group="", name="probe", namespace=doomed)
        )

        hpas, events = not_made("horizontalpodautoscalers"), not_made("events")
        caplog.clear()
        with caplog.at_level(logging.INFO):
            # Two HPAs go before their SPAs, as the namespace controller deletes them: the
            # controller would make them again. The third SPA's window starts: its HPA is
            # patched (allowed), and its ScheduleStarted Event cannot be created.
            for name in NAMES[:2]:
                kube.client.delete(HPA_V2, doomed, name)
            running.clock.set(utc("2026-11-16T12:00:00"))

            def counted() -> bool:
                return (
                    not_made("horizontalpodautoscalers") - hpas >= 2
                    and not_made("events") - events >= 1
                )

            await eventually(counted, what="refused writes counted")
            await eventually(lambda: kube.bounds(doomed, NAMES[2]) == (5, 20), what="patched")
            # Nothing was made again, and no refusal was reported on the SPAs.
            for name in NAMES[:2]:
                with pytest.raises(NotFound):
                    kube.hpa(doomed, name)
            for name in NAMES:
                status = kube.status(SCHEDULED_POD_AUTOSCALERS, doomed, name)
                assert "forbidden" not in json.dumps(status), status
            # The namespace controller empties the namespace, the controller watching it.
            control_plane.start_controller_manager()

            def gone() -> bool:
                with contextlib.suppress(NotFound):
                    kube.client.get(NAMESPACES, None, doomed)
                    return False
                return True

            await eventually(gone, within=60, what="the namespace gone")
            after: NamespaceDeleted = await eventually(probed, what="creates answered 404")
            assert type(after) is NamespaceGone
            assert _answer(after) == _answer_of(namespace_gone(namespace=doomed))
        records = list(caplog.records)

    assert not [r for r in records if r.exc_info], [r.getMessage() for r in records]
    about = [r.getMessage() for r in records if _about(r, doomed)]
    assert len(about) == 1, about
    assert about[0].startswith(f"namespace {doomed} is being deleted: ")
    assert not [r.getMessage() for r in records if r.levelno >= logging.WARNING]


async def probe(client: KubeClient, namespace: str) -> NamespaceDeleted:
    """The answer to a create in `namespace` (a ConfigMap `probe`), which must be refused."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}}
    try:
        await client.create(CONFIGMAP, namespace, body)
    except NamespaceDeleted as error:
        return error
    raise AssertionError(f"a create in namespace {namespace} was accepted")


def _answer(error: NamespaceDeleted) -> tuple[Any, ...]:
    return (error.status, error.reason, error.message, error.details)


def _answer_of(status: dict[str, Any]) -> tuple[Any, ...]:
    return (status["code"], status["reason"], status["message"], status["details"])


def _about(record: logging.LogRecord, namespace: str) -> bool:
    context: Any = getattr(record, "spa_context", None) or {}
    return namespace in record.getMessage() or context.get("namespace") == namespace
