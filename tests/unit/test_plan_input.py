"""`spa plan` on real-world and hostile input: what it reads, what it refuses, and how it says so.

The first part holds one regression test per bug reported against `spa plan`'s input handling
(each failed before the reader and the messages were rewritten); the second is the fuzz corpus:
the seeds of tests/unit/plan_corpus.py and thousands of generated files, none of which may
crash, take over 5 seconds, use more than bounded memory, or produce an error message that is
not a short line in our own words.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from spa.plan import Plan, build_plan, read_documents, render_table
from spa.plan.decoding import MAX_DEPTH
from spa.plan.render import describe_error
from spa.schedule import instant_of
from tests.unit.plan_corpus import SEEDS, TARGET_AUTOSCALER, files, manifests

SCRIPTS = Path(sys.executable).parent
AT = "2026-03-08T06:30:00Z"
AT_INSTANT = instant_of(__import__("datetime").datetime.fromisoformat(AT))
WEEK = 7 * 86400


def plan_of(tmp_path: Path, *texts: str) -> Plan:
    """The plan of the given files, read and planned in this process."""
    paths = []
    for number, text in enumerate(texts):
        path = tmp_path / f"f{number}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    documents, errors = read_documents(paths)
    return build_plan(documents, errors, at=AT_INSTANT, until=AT_INSTANT + WEEK)


def messages(plan: Plan) -> list[str]:
    return [
        f"{error.field}: {error.message}" if error.field else error.message for error in plan.errors
    ]


def spa_plan(
    *arguments: str, stdin: str | None = None, timeout: float = 10, memory: int = 1 << 30
) -> subprocess.CompletedProcess[str]:
    """`spa plan` as a user runs it, with at most `memory` bytes of address space.

    The timeout is generous because the machine running the tests may be busy; how long the
    work itself takes is measured in-process by the fuzz tests (`check_any_input`).
    """

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [str(SCRIPTS / "spa"), "plan", *arguments],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
        timeout=timeout,
        preexec_fn=limit,
    )


SCHEDULE = """\
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata:
  name: noon
spec:
  scaleTargetRef: {name: web}
  type: Daily
"""

# -- Regressions ----------------------------------------------------------------------------------


def test_unquoted_times_and_dates_are_strings_as_kubectl_reads_them(tmp_path: Path) -> None:
    # PyYAML read 12:00 as the base-60 integer 720; kubectl applies it as "12:00".
    plan = plan_of(
        tmp_path, TARGET_AUTOSCALER + "---\n" + SCHEDULE + "  startTime: 12:00\n  endTime: 13:00\n"
    )
    assert plan.errors == []
    [autoscaler] = plan.autoscalers
    assert autoscaler.transitions[0][1].active == ("noon",)


def test_thirty_thousand_nested_brackets_are_an_error_not_a_crash(tmp_path: Path) -> None:
    # The C loader recursed and the process died of a segmentation fault.
    (tmp_path / "deep.yaml").write_text(SEEDS["30k nested brackets"])
    result = spa_plan("-f", str(tmp_path / "deep.yaml"), "--at", AT)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    [line] = [line for line in result.stdout.splitlines() if "nested deeper" in line]
    assert "spec.minReplicas" + "[0]" * 6 + f"...({MAX_DEPTH - 8} levels more)" in line
    assert f"nested deeper than {MAX_DEPTH} levels" in line
    assert len(line) < 250


def test_a_five_thousand_digit_number_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    # int() refuses more than 4,300 digits: an uncaught ValueError. kubectl reads it as text.
    (tmp_path / "big.yaml").write_text(SEEDS["5000-digit integer"])
    result = spa_plan("-f", str(tmp_path / "big.yaml"), "--at", AT)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    [line] = [line for line in result.stdout.splitlines() if "spec.minReplicas" in line]
    assert "spec.minReplicas: must be an integer, got '111" in line
    assert len(line) < 250


@pytest.mark.parametrize(
    "arguments",
    [
        ["--at", "9999-12-30T00:00:00Z"],
        ["--until", "9999-12-31T00:00:00Z"],
        ["--at", "9998-12-30T00:00:00Z"],
        ["--at", "0001-01-01T00:00:00+01:00"],
        ["--at", "2026-01-01T00:00:00Z", "--until", "9000-01-01T00:00:00Z"],
    ],
)
def test_instants_near_the_ends_of_the_calendar_are_argument_errors(
    tmp_path: Path, arguments: list[str]
) -> None:
    # OverflowError tracebacks, the --until one after 20 seconds of planning 8,000 years.
    (tmp_path / "a.yaml").write_text(TARGET_AUTOSCALER)
    result = spa_plan("-f", str(tmp_path / "a.yaml"), *arguments)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()[-1:]
    assert "error:" in line


def test_an_alias_bomb_is_refused_quickly_in_little_memory(tmp_path: Path) -> None:
    # 1 KB of nested merges: minutes and gigabytes in PyYAML's merge flattening.
    (tmp_path / "bomb.yaml").write_text(TARGET_AUTOSCALER + "---\n" + SEEDS["merge bomb"])
    result = spa_plan("-f", str(tmp_path / "bomb.yaml"), "--at", AT, memory=512 << 20)
    assert result.returncode == 1, result.stderr
    assert "kubectl refuses a document made mostly of alias expansions" in result.stdout


def test_messages_are_ours_short_and_never_echo_a_large_input(tmp_path: Path) -> None:
    plan = plan_of(
        tmp_path,
        SEEDS["70 KB value"],
        TARGET_AUTOSCALER
        + "---\n"
        + SCHEDULE.replace("noon", "other")
        + "  startTime: 1200\n  endTime: []\n",
    )
    found = messages(plan)
    assert "spec.timeZone: must be at most 64 characters, got 70,000" in found
    assert "spec.startTime: must be a string, got 1200 (quote it to keep it text)" in found
    assert "spec.endTime: must be a string, got a list" in found
    for error in plan.errors:
        line = describe_error(error)
        assert "Input should" not in line
        assert len(line) < 250


def test_a_document_that_is_not_an_object_is_reported_in_our_words(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, TARGET_AUTOSCALER + "---\n" + SCHEDULE + "spec: [1]\n")
    assert "spec: must be an object, got a list" in messages(plan)


def test_a_bad_end_time_is_reported_against_end_time(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, TARGET_AUTOSCALER + "---\n" + SEEDS["end beyond the calendar"])
    assert messages(plan) == [
        "spec.endTime: '9999-12-31T23:59' in Pacific/Honolulu falls outside the years 1 to "
        "9999 in UTC"
    ]


KUBECTL_GET_YAML = """\
apiVersion: v1
items:
- apiVersion: autoscaling.d-kuro.github.io/v1
  kind: ScheduledPodAutoscaler
  metadata:
    creationTimestamp: "2026-03-01T10:00:00Z"
    generation: 1
    name: web
    namespace: default
    resourceVersion: "612"
    uid: 6f1c2a52-4d0e-4b8e-9d51-0a3c1f2b7e11
  spec:
    horizontalPodAutoscalerSpec:
      maxReplicas: 10
      minReplicas: 3
      scaleTargetRef:
        apiVersion: apps/v1
        kind: Deployment
        name: web
  status:
    condition: Available
    lastTransitionTime: "2026-03-01T10:00:01Z"
    maxReplicas: 10
    minReplicas: 3
- apiVersion: autoscaling.d-kuro.github.io/v1
  kind: Schedule
  metadata:
    name: noon
    namespace: default
  spec:
    endTime: "13:00"
    scaleTargetRef:
      name: web
    startTime: "12:00"
    type: Daily
  status:
    condition: Available
kind: List
metadata:
  resourceVersion: ""
"""


def test_a_list_from_kubectl_get_is_unpacked(tmp_path: Path) -> None:
    # `kubectl get spa,schedules -o yaml | spa plan -f -` printed "No ScheduledPodAutoscaler
    # found." and exited 0.
    result = spa_plan("-f", "-", "--at", AT, "-o", "json", stdin=KUBECTL_GET_YAML)
    assert result.returncode == 0, result.stdout
    plan = json.loads(result.stdout)
    assert [autoscaler["name"] for autoscaler in plan["autoscalers"]] == ["web"]
    assert plan["autoscalers"][0]["transitions"][0]["activeSchedules"] == ["noon"]
    as_json = json.dumps(_yaml(KUBECTL_GET_YAML))
    result = spa_plan("-f", "-", "--at", AT, "-o", "json", stdin=as_json)
    assert json.loads(result.stdout) == plan


def test_items_of_a_typed_list_take_its_kind(tmp_path: Path) -> None:
    # What `kubectl get --raw .../schedules` prints: items without apiVersion and kind.
    schedule = _yaml(SCHEDULE + "  startTime: '12:00'\n  endTime: 1300\n")
    del schedule["apiVersion"], schedule["kind"]
    listing = {
        "apiVersion": "autoscaling.d-kuro.github.io/v1",
        "kind": "ScheduleList",
        "items": [schedule],
    }
    plan = plan_of(tmp_path, TARGET_AUTOSCALER, json.dumps(listing))
    [error] = plan.errors
    assert (error.kind, error.name, error.document) == ("Schedule", "noon", 1)
    assert error.field == "items[0].spec.endTime"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "  minReplicas: '5'",
            "spec.minReplicas: must be an integer, got '5' (write it without quotes)",
        ),
        (
            "  suspend: 'yes'",
            "spec.suspend: must be true or false, got 'yes' (write true or false without quotes)",
        ),
        ("  minReplicas: 1.5", "spec.minReplicas: must be an integer, got 1.5"),
        (
            "  description: yes",
            "spec.description: must be a string, got true (YAML reads unquoted yes, no, on, "
            "off, y, n, true and false as booleans: quote it)",
        ),
    ],
)
def test_types_are_as_strict_as_the_api_server(tmp_path: Path, spec: str, message: str) -> None:
    text = SCHEDULE + "  startTime: '12:00'\n  endTime: '13:00'\n" + spec + "\n"
    assert messages(plan_of(tmp_path, TARGET_AUTOSCALER + "---\n" + text)) == [message]


def test_numbers_arrive_as_kubectl_sends_them(tmp_path: Path) -> None:
    # kubectl sends 1e3 and 1.0e1 as the integers 1000 and 10; `suspend: yes` as true.
    text = SCHEDULE + "  startTime: '12:00'\n  endTime: '13:00'\n  minReplicas: 1.0e1\n"
    text += "  maxReplicas: 1e3\n  suspend: yes\n"
    plan = plan_of(tmp_path, TARGET_AUTOSCALER + "---\n" + text)
    assert plan.errors == []
    assert plan.autoscalers[0].transitions == []  # suspended


def test_an_invalid_autoscaler_is_reported_and_its_schedules_still_checked(tmp_path: Path) -> None:
    autoscaler = TARGET_AUTOSCALER.replace("minReplicas: 3", "minReplicas: 0")
    good = SCHEDULE + "  startTime: '12:00'\n  endTime: '13:00'\n"
    bad = good.replace("noon", "bad").replace("endTime: '13:00'", "endTime: '25:00'")
    plan = plan_of(tmp_path, autoscaler + "---\n" + good + "---\n" + bad)
    assert [(error.document, error.field) for error in plan.errors] == [
        (1, "spec.horizontalPodAutoscalerSpec.minReplicas"),
        (2, "spec.scaleTargetRef.name"),
        (3, "spec.endTime"),
    ]
    assert "ScheduledPodAutoscaler default/web is invalid" in plan.errors[1].message
    assert "No valid ScheduledPodAutoscaler found." in render_table(plan)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("  endtime: '13:00'", "spec.endtime: unknown field; did you mean 'endTime'?"),
        ("  minReplica: 5", "spec.minReplica: unknown field; did you mean 'minReplicas'?"),
        (
            "  timeZone: Europe/Londn",
            "spec.timeZone: unknown time zone 'Europe/Londn'; did you mean 'Europe/London'?",
        ),
        (
            "  timeZone: europe/london",
            "spec.timeZone: unknown time zone 'europe/london'; did you mean 'Europe/London'?",
        ),
        (
            "  type: weekly",
            "spec.type: must be one of Weekly, Daily, OneShot, WeeklySpan, Cron, got 'weekly'; "
            "did you mean 'Weekly'?",
        ),
    ],
)
def test_did_you_mean(tmp_path: Path, spec: str, message: str) -> None:
    text = SCHEDULE.replace("  type: Daily\n", "") + "  startTime: '12:00'\n"
    text += "" if "endtime" in spec else "  endTime: '13:00'\n"
    text += "" if "type:" in spec else "  type: Daily\n"
    assert message in messages(plan_of(tmp_path, TARGET_AUTOSCALER + "---\n" + text + spec + "\n"))


def test_errors_are_in_file_order(tmp_path: Path) -> None:
    # A Schedule whose SPA is missing, then one with a bad field, then a broken document, in a
    # file after one with a bad SPA: every error in the order it is written.
    first = TARGET_AUTOSCALER.replace("maxReplicas: 10", "maxReplicas: 10\n    bogus: 1")
    orphan = (
        SCHEDULE.replace("name: web", "name: gone") + "  startTime: '1:00'\n  endTime: '2:00'\n"
    )
    broken = (
        SCHEDULE.replace("noon", "late") + "  endTime: '25:00'\n  startTime: x\n  maxReplicas: 0\n"
    )
    plan = plan_of(tmp_path, first, orphan + "---\n" + broken + "---\nkind: [\n")
    assert [(Path(error.file).name, error.document, error.field) for error in plan.errors] == [
        ("f0.yaml", 1, "spec.horizontalPodAutoscalerSpec.bogus"),
        ("f1.yaml", 1, "spec.scaleTargetRef.name"),
        ("f1.yaml", 2, "spec.endTime"),
        ("f1.yaml", 2, "spec.startTime"),
        ("f1.yaml", 2, "spec.maxReplicas"),
        ("f1.yaml", 3, "kind[0]"),  # a YAML error names where it was reading
    ]


def test_an_input_without_our_kinds_is_an_error(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
    assert [error.message for error in plan.errors] == [
        f"{tmp_path / 'f0.yaml'} holds no ScheduledPodAutoscaler or Schedule "
        "(apiVersion autoscaling.d-kuro.github.io/...)"
    ]
    result = spa_plan("-f", "-", stdin="# nothing\n")
    assert result.returncode == 1
    assert "standard input holds no ScheduledPodAutoscaler or Schedule" in result.stdout


def test_status_is_not_checked_but_its_unknown_fields_are(tmp_path: Path) -> None:
    schedule = SCHEDULE + "  startTime: '12:00'\n  endTime: '13:00'\n"
    plan = plan_of(
        tmp_path, TARGET_AUTOSCALER + "---\n" + schedule + "status: {condition: Weird}\n"
    )
    assert plan.errors == []
    plan = plan_of(tmp_path, TARGET_AUTOSCALER + "---\n" + schedule + "status: {conditon: x}\n")
    assert messages(plan) == ["status.conditon: unknown field; did you mean 'condition'?"]


def test_metadata_is_checked_as_the_api_server_checks_it(tmp_path: Path) -> None:
    schedule = SCHEDULE.replace("name: noon", "name: Noon\n  label: {a: b}")
    plan = plan_of(
        tmp_path,
        TARGET_AUTOSCALER + "---\n" + schedule + "  startTime: '1:00'\n  endTime: '2:00'\n",
    )
    assert [error.field for error in plan.errors] == ["metadata.name", "metadata.label"]
    assert plan.errors[1].message == "unknown field; did you mean 'labels'?"


def test_an_input_larger_than_the_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    from spa.plan.manifests import MAX_INPUT_BYTES

    plan = plan_of(tmp_path, TARGET_AUTOSCALER + "#" * MAX_INPUT_BYTES)
    assert plan.errors[0].message.startswith("larger than 8 MiB")


def _yaml(text: str) -> dict[str, Any]:
    from spa.plan.decoding import Decoded, decode_stream

    [result] = decode_stream(text)
    assert isinstance(result, Decoded)
    assert isinstance(result.value, dict)
    return result.value


# -- The fuzz corpus ------------------------------------------------------------------------------

# What a plan of any input may use: the parsed input costs a few dozen times its size at most,
# plus a fixed amount for the engine and the models.
_MEMORY_BASE = 32 << 20
_MEMORY_PER_BYTE = 64


@pytest.fixture(autouse=True, scope="module")
def _holidays_imported() -> None:
    """The `holidays` library is imported when a Schedule first uses it (tenths of a second on
    a quiet machine, many seconds under tracemalloc on a loaded one): a one-time cost of the
    process, not of an input, so it is paid before anything is timed."""
    import holidays  # noqa: F401


def check_any_input(tmp_path: Path, text: str, *, timed_apart: bool = False) -> None:
    """Planning `text` raises nothing, takes under 5 s and bounded memory, and every error is
    one short line in our words.

    Memory is traced with tracemalloc, which slows Python down severalfold; with `timed_apart`
    the time is taken from a second, untraced run (for the large seeds). Time is this process's
    CPU time: the work the input costs, not how busy the machine is.
    """
    tracemalloc.start()
    started = time.process_time()
    try:
        plan = plan_of(tmp_path, text)
        rendered = render_table(plan)
        elapsed = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if timed_apart:
        started = time.process_time()
        render_table(plan_of(tmp_path, text))
        elapsed = time.process_time() - started
    assert elapsed < 5, elapsed
    assert peak < _MEMORY_BASE + _MEMORY_PER_BYTE * len(text.encode()), peak
    assert len(plan.errors) < 200
    for error in plan.errors:
        line = describe_error(error)
        assert "\n" not in line
        assert len(line) < 400, line
        assert "Input should" not in line
    assert rendered


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seeds(tmp_path: Path, name: str) -> None:
    check_any_input(tmp_path, SEEDS[name], timed_apart=True)


@settings(
    max_examples=700,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=files())
def test_generated_files(tmp_path: Path, text: str) -> None:
    check_any_input(tmp_path, text)


@settings(
    max_examples=700,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=manifests(max_mutations=5))
def test_generated_manifests(tmp_path: Path, text: str) -> None:
    check_any_input(tmp_path, TARGET_AUTOSCALER + "---\n" + text.replace("__NAME__", "m"))
