"""`spa plan` end to end through its installed console scripts (`spa` and `kubectl-spa`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa import __version__

SCRIPTS = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[3]

AUTOSCALER = """\
apiVersion: autoscaling.d-kuro.github.io/v1
kind: ScheduledPodAutoscaler
metadata:
  name: nginx
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
    minReplicas: 3
    maxReplicas: 10
"""

SCHEDULES = """\
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata:
  name: test-1
spec:
  scaleTargetRef: {name: nginx}
  type: Daily
  startTime: "06:00"
  endTime: "07:00"
  minReplicas: 5
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata:
  name: bad
  namespace: default
spec:
  scaleTargetRef: {name: nginx}
  type: Daily
  startTime: "06:00"
  endTime: "07:00"
  timeZone: Asia/Tokio
---
apiVersion: v1
kind: Service
metadata:
  name: ignored
"""


def spa(
    *arguments: str, script: str = "spa", stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPTS / script), *arguments],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
        timeout=60,
    )


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    (tmp_path / "autoscaler.yaml").write_text(AUTOSCALER)
    nested = tmp_path / "nested"
    nested.mkdir()
    (nested / "schedules.yaml").write_text(SCHEDULES)
    (nested / "README.md").write_text("not a manifest")
    return tmp_path


def plan_json(*arguments: str) -> tuple[int, dict[str, Any]]:
    result = spa("plan", *arguments, "-o", "json")
    return result.returncode, json.loads(result.stdout)


def test_json_contract(manifests: Path) -> None:
    code, plan = plan_json("-f", str(manifests), "--at", "2026-03-08T06:30:00Z", "--days", "1")
    assert code == 1
    assert plan == {
        "at": "2026-03-08T06:30:00Z",
        "until": "2026-03-09T06:30:00Z",
        "autoscalers": [
            {
                "namespace": "default",
                "name": "nginx",
                "minReplicas": 5,
                "maxReplicas": 10,
                "activeSchedules": ["test-1"],
                "transitions": [
                    {
                        "time": "2026-03-08T07:00:00Z",
                        "minReplicas": 3,
                        "maxReplicas": 10,
                        "activeSchedules": [],
                    },
                    {
                        "time": "2026-03-09T06:00:00Z",
                        "minReplicas": 5,
                        "maxReplicas": 10,
                        "activeSchedules": ["test-1"],
                    },
                ],
                "skipped": [],
                "incident": None,
            }
        ],
        "errors": [
            {
                "file": str(manifests / "nested" / "schedules.yaml"),
                "document": 2,
                "kind": "Schedule",
                "namespace": "default",
                "name": "bad",
                "field": "spec.timeZone",
                "message": "unknown time zone 'Asia/Tokio'; did you mean 'Asia/Tokyo'?",
            }
        ],
        "warnings": [],
    }


def test_transition_at_until_is_included_and_at_at_is_not(manifests: Path) -> None:
    _, plan = plan_json(
        "-f", str(manifests), "--at", "2026-03-08T07:00:00Z", "--until", "2026-03-09T06:00:00Z"
    )
    assert [t["time"] for t in plan["autoscalers"][0]["transitions"]] == ["2026-03-09T06:00:00Z"]


def test_offsets_in_at_are_converted_to_utc(manifests: Path) -> None:
    _, plan = plan_json("-f", str(manifests), "--at", "2026-03-08T15:30:00+09:00", "--days", "1")
    assert plan["at"] == "2026-03-08T06:30:00Z"


def test_valid_manifests_exit_zero_and_print_a_table(tmp_path: Path) -> None:
    (tmp_path / "all.yaml").write_text(AUTOSCALER + "---\n" + SCHEDULES.split("---")[0])
    result = spa("plan", "-f", str(tmp_path / "all.yaml"), "--at", "2026-03-08T06:30:00Z")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Plan from 2026-03-08T06:30:00Z until 2026-03-15T06:30:00Z (times in UTC)"
    assert lines[2].split() == [
        "NAMESPACE",
        "NAME",
        "MIN",
        "MAX",
        "ACTIVE",
        "SCHEDULES",
        "NEXT",
        "TRANSITION",
        "LOCAL",
    ]
    assert lines[3].split() == [
        "default",
        "nginx",
        "5",
        "10",
        "test-1",
        "2026-03-08T07:00:00Z",
        *["Sun", "2026-03-08", "07:00", "UTC"],
    ]
    assert lines[5] == "default/nginx (base: min 3, max 10):"
    assert lines[6].split()[:3] == ["SCHEDULE", "TYPE", "WINDOW"]
    assert lines[7].split() == [
        "test-1",
        "Daily",
        "daily",
        "06:00-07:00",
        "UTC",
        "5",
        "-",
        *["active", "until", "Sun", "2026-03-08", "07:00", "UTC"],
    ]
    last = "  2026-03-15T06:00:00Z   5     10    test-1             Sun 2026-03-15 06:00 UTC"
    assert last in lines
    assert "error" not in result.stdout


def test_table_reports_errors_with_file_document_and_field(manifests: Path) -> None:
    # As kubectl: the plan on standard output, the errors on standard error (they were printed
    # after the table, on standard output).
    result = spa("plan", "-f", str(manifests), "--at", "2026-03-08T06:30:00Z")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"error: {manifests / 'nested' / 'schedules.yaml'} (document 2) Schedule default/bad: "
        "spec.timeZone: unknown time zone 'Asia/Tokio'; did you mean 'Asia/Tokyo'?"
    ]
    assert result.stdout.startswith("Plan from 2026-03-08T06:30:00Z")
    assert "Asia/Tokio" not in result.stdout
    assert "error" not in result.stdout


@pytest.mark.parametrize("output", ["json", "html"])
def test_documents_carry_the_errors_and_standard_error_lists_them(
    manifests: Path, output: str
) -> None:
    result = spa("plan", "-f", str(manifests), "--at", "2026-03-08T06:30:00Z", "-o", output)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    assert line.endswith("did you mean 'Asia/Tokyo'?")
    if output == "json":
        [error] = json.loads(result.stdout)["errors"]
        assert error["message"] == "unknown time zone 'Asia/Tokio'; did you mean 'Asia/Tokyo'?"
    else:
        assert "unknown time zone &#x27;Asia/Tokio&#x27;" in result.stdout


def test_yaml_is_the_json_document(manifests: Path) -> None:
    at = ["-f", str(manifests), "--at", "2026-03-08T06:30:00Z", "--days", "2"]
    result = spa("plan", *at, "-o", "yaml")
    assert result.returncode == 1  # the Schedule with a bad zone, as with JSON
    _, document = plan_json(*at)
    assert document["autoscalers"][0]["transitions"]
    assert yaml.safe_load(result.stdout) == document
    # Keys in the order of the JSON, not sorted: `at` first.
    assert result.stdout.startswith("at: '2026-03-08T06:30:00Z'\nuntil: ")


def test_valid_manifests_print_nothing_on_standard_error(manifests: Path) -> None:
    result = spa("plan", "-f", str(manifests / "autoscaler.yaml"), "--at", "2026-03-08T06:30:00Z")
    assert (result.returncode, result.stderr) == (0, "")


def test_schedule_without_its_autoscaler_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCHEDULES.split("---")[0])
    code, plan = plan_json("-f", str(tmp_path / "s.yaml"), "--at", "2026-03-08T06:30:00Z")
    assert code == 1
    assert plan["autoscalers"] == []
    [error] = plan["errors"]
    assert error["field"] == "spec.scaleTargetRef.name"
    assert "ScheduledPodAutoscaler default/nginx" in error["message"]


def test_same_name_in_two_namespaces_are_two_autoscalers(tmp_path: Path) -> None:
    other = AUTOSCALER.replace("name: nginx\nspec", "name: nginx\n  namespace: other\nspec")
    (tmp_path / "a.yaml").write_text(
        AUTOSCALER + "---\n" + other + "---\n" + SCHEDULES.split("---")[0]
    )
    code, plan = plan_json("-f", str(tmp_path), "--at", "2026-03-08T06:30:00Z")
    assert code == 0
    states = {(a["namespace"], a["minReplicas"]) for a in plan["autoscalers"]}
    assert states == {("default", 5), ("other", 3)}


def test_broken_yaml_keeps_earlier_documents_and_other_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(AUTOSCALER + "---\nkind: [unclosed\n")
    (tmp_path / "b.yaml").write_text(SCHEDULES.split("---")[0])
    code, plan = plan_json("-f", str(tmp_path), "--at", "2026-03-08T06:30:00Z")
    assert code == 1
    assert plan["autoscalers"][0]["activeSchedules"] == ["test-1"]
    [error] = plan["errors"]
    assert (error["file"], error["document"]) == (str(tmp_path / "a.yaml"), 2)
    assert error["message"].startswith("invalid YAML")


def test_duplicates_and_wrong_versions_are_errors(tmp_path: Path) -> None:
    wrong = AUTOSCALER.replace("/v1", "/v2").replace("nginx", "other", 1)
    (tmp_path / "a.yaml").write_text(AUTOSCALER + "---\n" + AUTOSCALER + "---\n" + wrong)
    _, plan = plan_json("-f", str(tmp_path), "--at", "2026-03-08T06:30:00Z")
    assert [(e["document"], e["field"]) for e in plan["errors"]] == [
        (2, "metadata.name"),
        (3, "apiVersion"),
    ]


def test_missing_path_is_reported_and_the_rest_planned(manifests: Path) -> None:
    code, plan = plan_json(
        "-f", str(manifests / "nope.yaml"), "-f", str(manifests / "autoscaler.yaml")
    )
    assert code == 1
    assert plan["errors"][0]["message"] == "no such file or directory"
    assert plan["autoscalers"][0]["name"] == "nginx"


def test_standard_input_and_kubectl_plugin_name() -> None:
    result = spa(
        "plan",
        "-f",
        "-",
        "-o",
        "json",
        "--at",
        "2026-03-08T06:30:00Z",
        script="kubectl-spa",
        stdin=AUTOSCALER,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["autoscalers"][0]["minReplicas"] == 3


def test_version_of_both_scripts() -> None:
    for script in ("spa", "kubectl-spa"):
        result = spa("--version", script=script)
        assert (result.returncode, result.stdout) == (
            0,
            f"scheduled-pod-autoscaler {__version__}\n",
        )


def test_help_names_the_program_as_invoked() -> None:
    assert spa("--help").stdout.startswith("usage: spa ")
    assert spa("--help", script="kubectl-spa").stdout.startswith("usage: kubectl spa ")
    assert spa("status", "--help", script="kubectl-spa").stdout.startswith(
        "usage: kubectl spa status "
    )


@pytest.mark.parametrize(
    "arguments",
    [
        ["--at", "2026-03-08T06:30:00"],
        ["--at", "yesterday"],
        ["--days", "0"],
        ["--days", "2", "--until", "2026-03-09T00:00:00Z"],
        ["--at", "2026-03-08T06:30:00Z", "--until", "2026-03-08T06:00:00Z"],
        ["-n", "shop"],  # cluster flags need --from-cluster
        ["--from-cluster"],  # not with -f
        ["--at", "9999-01-01T00:00:00Z"],  # no instant left to plan
        ["--at", "2026-03-08T00:00:00Z", "--until", "2037-03-08T00:00:00Z"],  # > 3660 days
        ["--diff", "-", "-f", "-"],  # standard input on both sides
    ],
)
def test_bad_arguments_exit_two(manifests: Path, arguments: list[str]) -> None:
    """Each is said as argparse says its own errors, by `spa plan`'s parser: its usage and
    `spa plan: error:`, not the top-level `spa COMMAND ...` usage (which some of them got)."""
    result = spa("plan", "-f", str(manifests), *arguments)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("usage: spa plan "), result.stderr
    assert result.stderr.splitlines()[-1].startswith("spa plan: error: ")


def test_samples_plan_a_sensible_week() -> None:
    code, plan = plan_json("-f", str(REPO / "config" / "samples"), "--at", "2026-11-23T00:00:00Z")
    assert code == 0, plan["errors"]
    [autoscaler] = plan["autoscalers"]
    assert (autoscaler["minReplicas"], autoscaler["maxReplicas"]) == (3, 10)
    active = {name for t in autoscaler["transitions"] for name in t["activeSchedules"]}
    assert active == {"nginx-push-notification", "nginx-lunch", "nginx-nightly-import"}
    # Monday to Wednesday: push starts 02:50, push ends as the nightly import starts 04:00 (one
    # transition), import ends 06:30, lunch 10:30-13:00: five a day. Other days: four.
    assert len(autoscaler["transitions"]) == 3 * 5 + 4 * 4
