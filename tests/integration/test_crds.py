"""The CRDs of config/crd on a real API server: they apply, the samples are accepted, kubectl
prints the columns of docs/api.md, and the API server itself enforces the CEL rules.

tests/unit/api/test_crds.py checks the schemas offline; this is the same contract as kubectl and
the apiserver's structural-schema and CEL machinery see it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from spa.plan import build_plan, read_documents
from tests.builders import schedule
from tests.integration.harness import CRD_NAMES, REPO
from tests.testenv.fixtures import RunKubectl
from tests.unit.plan_corpus import TARGET_AUTOSCALER

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
    weekly_without_days = schedule(
        name="no-days",
        namespace=namespace,
        target="nginx",
        type="Weekly",
        startTime="10:00",
        endTime="11:00",
    )
    result = run_kubectl(
        "apply", "--server-side", "-f", "-", input=yaml.safe_dump(weekly_without_days)
    )
    assert result.returncode != 0
    assert "startDayOfWeek is required for a Weekly schedule" in result.stderr


# -- The calendar fields (docs/schedules.md, "Calendars"): each rule of the schema and CEL -------

DAILY = "  type: Daily\n  startTime: '10:00'\n  endTime: '11:00'\n"
SPAN = "  type: WeeklySpan\n  startDayOfWeek: Friday\n  startTime: '18:00'\n"
ONESHOT = "  type: OneShot\n  startTime: '2026-12-24T08:00'\n  endTime: '2026-12-24T20:00'\n"


def cron(schedule: str = "'0 9 * * MON-FRI'", duration: str = "8h") -> str:
    return f"  type: Cron\n  schedule: {schedule}\n  duration: {duration}\n"


# (spec lines, the API server's message, the field spa plan names)
_CALENDAR_RULES = [
    (SPAN + "  endDayOfWeek: Monday\n  endTime: '08:00'\n", None, None),  # valid: the control
    ("  type: Cron\n  duration: 1h\n", "schedule is required for a Cron", "spec.schedule"),
    (DAILY + "  duration: 1h\n", "only used by a Cron schedule", "spec.duration"),
    (cron() + "  startTime: '10:00'\n", "are not used by a Cron schedule", "spec.startTime"),
    (cron("'0 0 9 * * *'"), "must have 5 fields", "spec.schedule"),
    (cron("'@reboot'"), "must have 5 fields", "spec.schedule"),
    (cron(duration="30s"), "from 1m to 744h", "spec.duration"),
    (cron(duration="745h"), "from 1m to 744h", "spec.duration"),
    (cron(duration="1d"), "spec.duration", "spec.duration"),
    (
        SPAN + "  endTime: '08:00'\n",
        "endDayOfWeek is required for a Weekly schedule and a WeeklySpan",
        "spec.endDayOfWeek",
    ),
    (ONESHOT + "  endDate: 2026-12-31\n", "not used by a OneShot", "spec.endDate"),
    (
        DAILY + "  startDate: 2026-12-01\n  endDate: 2026-11-30\n",
        "endDate must not be before startDate",
        "spec.endDate",
    ),
    (DAILY + "  startDate: 2026-02-30\n", "spec.startDate", "spec.startDate"),
    (DAILY + "  endDate: '2026-1-5'\n", "spec.endDate", "spec.endDate"),
    (DAILY + "  excludeDates: [2026-12-25, 2026-13-01]\n", "spec.excludeDates[1]", None),
    (DAILY + "  excludeDates: [2026-12-25, 2026-12-25]\n", "Duplicate value", None),
    (DAILY + "  holidays: {country: de}\n", "spec.holidays.country", "spec.holidays.country"),
    (
        DAILY + "  holidays: {country: DE, mode: Sometimes}\n",
        "spec.holidays.mode",
        "spec.holidays.mode",
    ),
]


def _calendar_schedule(name: str, spec: str) -> str:
    return (
        "apiVersion: autoscaling.d-kuro.github.io/v1\nkind: Schedule\n"
        f"metadata:\n  name: {name}\nspec:\n  scaleTargetRef: {{name: web}}\n{spec}"
    )


@pytest.mark.usefixtures("crds")
def test_apiserver_and_spa_plan_enforce_the_calendar_rules(
    run_kubectl: RunKubectl, namespace: str, tmp_path: Path
) -> None:
    (tmp_path / "target.yaml").write_text(TARGET_AUTOSCALER)
    target, _ = read_documents([str(tmp_path / "target.yaml")])
    wrong = []
    for number, (spec, message, field) in enumerate(_CALENDAR_RULES):
        path = tmp_path / f"c{number:02d}.yaml"
        path.write_text(_calendar_schedule(f"c{number:02d}", spec))
        server = run_kubectl("apply", "--dry-run=server", "-n", namespace, "-f", str(path))
        documents, errors = read_documents([str(path)])
        plan = build_plan([*documents, *target], errors, at=1_770_000_000, until=1_770_086_400)
        fields = [error.field for error in plan.errors]
        if message is None:
            if server.returncode != 0 or plan.errors:
                wrong.append(f"{spec!r}: server {server.stderr.strip()!r}, plan {plan.errors}")
        elif server.returncode == 0 or message not in server.stderr:
            wrong.append(f"{spec!r}: expected {message!r}, server said {server.stderr!r}")
        elif field is not None and field not in fields:
            wrong.append(f"{spec!r}: spa plan named {fields}, not {field}")
        elif field is None and not any(f and f.startswith("spec.excludeDates") for f in fields):
            wrong.append(f"{spec!r}: spa plan named {fields}, not spec.excludeDates")
    assert not wrong, "\n".join(wrong)


@pytest.mark.usefixtures("crds")
def test_unquoted_dates_and_every_new_field_are_accepted(
    run_kubectl: RunKubectl, namespace: str
) -> None:
    """YAML reads `2026-12-25` as a date; kubectl sends it as the string the schema wants."""
    text = _calendar_schedule(
        "calendar",
        cron() + "  timeZone: Europe/Berlin\n  startDate: 2026-11-01\n  endDate: 2027-03-31\n"
        "  excludeDates: [2026-12-24, 2026-12-31]\n"
        "  holidays: {country: DE, subdivision: BY, mode: Skip}\n",
    )
    run_kubectl("apply", "--server-side", "-n", namespace, "-f", "-", input=text, check=True)
    stored = yaml.safe_load(
        run_kubectl("get", "schedule", "calendar", "-n", namespace, "-o", "yaml", check=True).stdout
    )
    assert stored["spec"]["excludeDates"] == ["2026-12-24", "2026-12-31"]
    assert stored["spec"]["startDate"] == "2026-11-01"
    assert stored["spec"]["holidays"] == {"country": "DE", "subdivision": "BY", "mode": "Skip"}
