"""The CRDs of config/crd on a real API server: they apply, the samples are accepted, kubectl
prints the columns of docs/api.md, and the API server itself enforces the CEL rules.

tests/unit/test_crds.py checks the schemas offline; this is the same contract as kubectl and
the apiserver's structural-schema and CEL machinery see it.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.integration.harness import CRD_NAMES, REPO
from tests.testenv.fixtures import RunKubectl

pytestmark = pytest.mark.integration


@pytest.fixture
def crds(run_kubectl: RunKubectl) -> None:
    # Server-side and forced: other tests may have applied the same CRDs as another manager.
    run_kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-k",
        str(REPO / "config" / "crd"),
        check=True,
    )
    run_kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=30s",
        *(f"crd/{c}" for c in CRD_NAMES),
        check=True,
    )


def _samples_in(namespace: str) -> str:
    docs: list[dict[str, Any]] = []
    for path in sorted((REPO / "config" / "samples").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc:
                doc["metadata"]["namespace"] = namespace
                docs.append(doc)
    return yaml.safe_dump_all(docs)


def _header(run_kubectl: RunKubectl, *args: str) -> list[str]:
    out = run_kubectl("get", *args, check=True).stdout
    return out.splitlines()[0].split()


@pytest.mark.usefixtures("crds")
def test_samples_apply_and_kubectl_prints_the_spec_columns(
    run_kubectl: RunKubectl, namespace: str
) -> None:
    run_kubectl("apply", "--server-side", "-f", "-", input=_samples_in(namespace), check=True)

    assert _header(run_kubectl, "spa", "-n", namespace) == [
        "NAME",
        "MINPODS",
        "MAXPODS",
        "STATUS",
        "AGE",
    ]
    wide = _header(run_kubectl, "spa", "-n", namespace, "-o", "wide")
    # -o wide adds the effective min/max, the active schedules and the next transition.
    assert wide[:5] == ["NAME", "MINPODS", "MAXPODS", "STATUS", "AGE"]
    assert len(wide) == 9

    schedule_columns = ["REFERENCE", "TYPE", "STARTTIME", "ENDTIME"]
    schedule_columns += ["STARTDAYOFWEEK", "ENDDAYOFWEEK", "TIMEZONE"]
    # `spasched` is the short name no other well-known project uses (docs/api.md).
    assert _header(run_kubectl, "spasched", "-n", namespace) == [
        "NAME",
        *schedule_columns,
        "STATUS",
        "AGE",
    ]
    assert _header(run_kubectl, "schedule", "-n", namespace, "-o", "wide") == [
        "NAME",
        *schedule_columns,
        "MINPODS",
        "MAXPODS",
        "STATUS",
        "AGE",
    ]
    rows = run_kubectl(
        "get", "spasched", "nginx-push-notification", "-n", namespace, "--no-headers", check=True
    ).stdout.split()
    assert rows[:8] == [
        "nginx-push-notification",
        "nginx",
        "Weekly",
        "11:50",
        "13:00",
        "Monday",
        "Wednesday",
        "Asia/Tokyo",
    ]


@pytest.mark.usefixtures("crds")
def test_apiserver_enforces_the_cel_rules(run_kubectl: RunKubectl, namespace: str) -> None:
    weekly_without_days = {
        "apiVersion": "autoscaling.d-kuro.github.io/v1",
        "kind": "Schedule",
        "metadata": {"name": "no-days", "namespace": namespace},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "autoscaling.d-kuro.github.io/v1",
                "kind": "ScheduledPodAutoscaler",
                "name": "nginx",
            },
            "type": "Weekly",
            "startTime": "10:00",
            "endTime": "11:00",
        },
    }
    result = run_kubectl(
        "apply", "--server-side", "-f", "-", input=yaml.safe_dump(weekly_without_days)
    )
    assert result.returncode != 0
    assert "startDayOfWeek is required for a Weekly schedule" in result.stderr
