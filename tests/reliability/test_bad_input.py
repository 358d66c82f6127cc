"""Fault 8: bad input. A corpus of invalid Schedules and SPAs, hand-written and generated with
hypothesis, is created next to a valid SPA while the controller runs.

What must hold for each document: the API server rejects it with a message naming the
problem, or it is accepted and its status becomes Degraded with a message. The controller
stays up, and the valid SPA in the same namespace keeps being served (its window starts on
time), although every bad Schedule targets it.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spa.api import InvalidObject, compile_schedule, parse_schedule
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import ApiError
from tests.builders import autoscaler, schedule
from tests.integration.harness import (
    Kube,
    eventually,
    running_controller,
    utc,
)
from tests.reliability.common import MONDAY_11, bounds_of, report, sample, ticking

pytestmark = [pytest.mark.integration, pytest.mark.reliability]

TARGET = "web"

# Each: (what it is, spec fields); every one targets the valid SPA unless it says otherwise.
HAND_WRITTEN_SCHEDULES: list[tuple[str, dict[str, Any]]] = [
    (
        "unknown zone",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "timeZone": "Asia/Tokio"},
    ),
    (
        "zone in wrong case",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "timeZone": "asia/tokyo"},
    ),
    (
        "zone path traversal",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "timeZone": "../../etc/passwd"},
    ),
    (
        "zone with unicode",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "timeZone": "Europe/Zürich"},
    ),
    ("hour 24", {"type": "Daily", "startTime": "24:00", "endTime": "11:00"}),
    ("one-digit minute", {"type": "Daily", "startTime": "9:5", "endTime": "11:00"}),
    ("seconds", {"type": "Daily", "startTime": "09:00:00", "endTime": "11:00"}),
    ("empty time", {"type": "Daily", "startTime": "", "endTime": "11:00"}),
    (
        "date-time on Daily",
        {"type": "Daily", "startTime": "2026-11-16T10:00", "endTime": "2026-11-16T11:00"},
    ),
    ("HH:mm on OneShot", {"type": "OneShot", "startTime": "10:00", "endTime": "11:00"}),
    ("Weekly without weekdays", {"type": "Weekly", "startTime": "10:00", "endTime": "11:00"}),
    (
        "Weekly with one weekday",
        {"type": "Weekly", "startTime": "10:00", "endTime": "11:00", "startDayOfWeek": "Monday"},
    ),
    (
        "weekday in German",
        {
            "type": "Weekly",
            "startTime": "10:00",
            "endTime": "11:00",
            "startDayOfWeek": "Montag",
            "endDayOfWeek": "Freitag",
        },
    ),
    (
        "OneShot ending before it starts",
        {"type": "OneShot", "startTime": "2026-11-20T10:00", "endTime": "2026-11-19T10:00"},
    ),
    (
        "OneShot of zero length",
        {"type": "OneShot", "startTime": "2026-11-20T10:00", "endTime": "2026-11-20T10:00"},
    ),
    (
        "February 30",
        {"type": "OneShot", "startTime": "2026-02-30T10:00", "endTime": "2026-03-01T10:00"},
    ),
    (
        "offset in date-time",
        {"type": "OneShot", "startTime": "2026-11-20T10:00+09:00", "endTime": "2026-11-21T10:00"},
    ),
    (
        # 0 is scale to zero, valid for a Schedule (docs/schedules.md, "Scale to zero").
        "negative minReplicas",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "minReplicas": -1},
    ),
    (
        "negative maxReplicas",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "maxReplicas": -3},
    ),
    (
        "maxReplicas above int32",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "maxReplicas": 2**31},
    ),
    (
        "maxReplicas a string",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "maxReplicas": "ten"},
    ),
    ("unknown type", {"type": "Monthly", "startTime": "10:00", "endTime": "11:00"}),
    ("empty type", {"type": "", "startTime": "10:00", "endTime": "11:00"}),
    ("no type", {"startTime": "10:00", "endTime": "11:00"}),
    (
        "unicode description on a bad zone",
        {
            "type": "Daily",
            "startTime": "10:00",
            "endTime": "11:00",
            "timeZone": "Mars/Olympus",
            "description": "日本語 🚀 \u202e",
        },
    ),
]

# Valid but extreme, each its own condition: (what, spec fields, expected condition).
VALID_EXTREMES: list[tuple[str, dict[str, Any], str]] = [
    # Without fieldValidation=Strict (kubectl sends it, this client does not) the API server
    # prunes unknown fields: what is left is valid.
    (
        "unknown field, pruned",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "replicas": 3},
        "Available",
    ),
    (
        "empty zone means UTC",
        {"type": "Daily", "startTime": "10:00", "endTime": "11:00", "timeZone": ""},
        "Available",
    ),
    (
        "huge values in a past OneShot",
        {
            "type": "OneShot",
            "startTime": "2020-01-01T00:00",
            "endTime": "2020-01-02T00:00",
            "minReplicas": 2**31 - 1,
            "maxReplicas": 2**31 - 1,
        },
        "Completed",
    ),
    (
        "SPA that does not exist",
        {
            "type": "Daily",
            "startTime": "10:00",
            "endTime": "11:00",
            "scaleTargetRef": {"name": "ghost"},
        },
        "Degraded",
    ),
]

# The HPA API does not check the target's name: the HPA is created and the HPA controller
# reports the missing target; for this controller the SPA is fine.
ODD_BUT_VALID_AUTOSCALERS: list[tuple[str, dict[str, Any]]] = [
    (
        "unicode target name",
        {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "wëb-ünïcode"}},
    ),
]

HAND_WRITTEN_AUTOSCALERS: list[tuple[str, dict[str, Any]]] = [
    ("min above max", {"minReplicas": 5, "maxReplicas": 3}),
    ("maxReplicas 0", {"maxReplicas": 0}),
    ("maxReplicas above int32", {"maxReplicas": 2**31}),
    ("no scaleTargetRef", {"scaleTargetRef": None}),
    ("empty target kind", {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "", "name": "x"}}),
    ("metric without its source", {"metrics": [{"type": "Resource"}]}),
    (
        "utilization without a value",
        {
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
            ]
        },
    ),
]

TIME_TEXT = st.one_of(
    st.from_regex(r"\A([01]?[0-9]|2[0-3]):[0-5][0-9]\Z"),
    st.from_regex(
        r"\A20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]\Z"
    ),
    st.text(max_size=20),
)
GENERATED_SPEC = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Daily", "Weekly", "OneShot", "daily", ""]),
        "startTime": TIME_TEXT,
        "endTime": TIME_TEXT,
    },
    optional={
        "timeZone": st.one_of(
            st.sampled_from(["UTC", "Asia/Tokyo", "America/New_York", "Asia/Tokio", "EST5EDT"]),
            st.text(max_size=30),
        ),
        "startDayOfWeek": st.sampled_from(["Monday", "Sunday", "monday", "Funday", ""]),
        "endDayOfWeek": st.sampled_from(["Friday", "Saturday", "Sun", ""]),
        "minReplicas": st.integers(min_value=-2, max_value=2**32),
        "maxReplicas": st.integers(min_value=-2, max_value=2**32),
        "suspend": st.booleans(),
        "description": st.text(max_size=50),
    },
)


def schedule_is_valid(document: dict[str, Any]) -> bool:
    try:
        compile_schedule(parse_schedule(document).spec)
    except InvalidObject:
        return False
    return True


@dataclass
class Corpus:
    kube: Kube
    namespace: str
    accepted: dict[str, str] = field(default_factory=dict)  # name -> kind
    rejected: dict[str, str] = field(default_factory=dict)  # name -> the API server's message
    what: dict[str, str] = field(default_factory=dict)  # name -> what it is
    _names: Any = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def name(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}-{next(self._names)}"

    def submit(self, document: dict[str, Any], what: str = "generated") -> None:
        name = document["metadata"]["name"]
        self.what[name] = what
        try:
            self.kube.create(document)
        except ApiError as error:
            rejection: ApiError | None = error
        else:
            rejection = None
        if rejection is None:
            self.accepted[name] = document["kind"]
            return
        assert rejection.status in (400, 422), (rejection.status, rejection.message)
        assert rejection.message, f"{name}: rejected without a message"
        self.rejected[name] = rejection.message


def bad_schedule(corpus: Corpus, spec: dict[str, Any]) -> dict[str, Any]:
    return schedule(name=corpus.name("bad"), namespace=corpus.namespace, target=TARGET, **spec)


def bad_autoscaler(corpus: Corpus, change: dict[str, Any]) -> dict[str, Any]:
    """The valid SPA with `change` to its HPA spec (None removes a field)."""
    return autoscaler(name=corpus.name("badspa"), namespace=corpus.namespace, **change)


def generate(corpus: Corpus, examples: int) -> int:
    """Submit `examples` generated Schedules that the controller's validation refuses."""
    sent = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
    )
    @given(GENERATED_SPEC)
    def submit(spec: dict[str, Any]) -> None:
        nonlocal sent
        document = bad_schedule(corpus, spec)
        assume(not schedule_is_valid(document))
        corpus.submit(document)
        sent += 1

    submit()
    return sent


def condition_of(kube: Kube, kind: str, namespace: str, name: str) -> tuple[str, str]:
    resource = SCHEDULES if kind == "Schedule" else SCHEDULED_POD_AUTOSCALERS
    status = kube.status(resource, namespace, name)
    message = status.get("message") or next(
        (c.get("message", "") for c in status.get("conditions") or () if c["type"] == "Ready"),
        "",
    )
    return str(status.get("condition") or ""), str(message)


async def test_bad_input_is_rejected_or_degraded_and_the_valid_spa_is_still_served(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    kube.create(autoscaler(name=TARGET, namespace=namespace))
    kube.create(
        schedule(
            name="noon",
            namespace=namespace,
            target=TARGET,
            type="Daily",
            startTime="12:00",
            endTime="13:00",
            minReplicas=5,
            maxReplicas=20,
        )
    )
    corpus = Corpus(kube, namespace)
    async with (
        running_controller(cluster.kubeconfig, [namespace], start=utc(MONDAY_11)) as running,
        ticking(running.clock) as clock,
    ):
        await eventually(
            lambda: bounds_of(kube, namespace).get(TARGET) == (3, 10), what="valid SPA served"
        )
        began = time.monotonic()
        for _what, spec in HAND_WRITTEN_SCHEDULES:
            document = bad_schedule(corpus, spec)
            assert not schedule_is_valid(document), _what
            corpus.submit(document, _what)
        extremes: dict[str, str] = {}
        for _what, spec, expected in VALID_EXTREMES:
            document = bad_schedule(corpus, spec)
            corpus.submit(document, _what)
            extremes[document["metadata"]["name"]] = expected
        bad_spas = []
        for _what, change in HAND_WRITTEN_AUTOSCALERS:
            document = bad_autoscaler(corpus, change)
            corpus.submit(document, _what)
            bad_spas.append(document["metadata"]["name"])
        for _what, change in ODD_BUT_VALID_AUTOSCALERS:
            document = bad_autoscaler(corpus, change)
            corpus.submit(document, _what)
            extremes[document["metadata"]["name"]] = "Available"
        generated = await asyncio.to_thread(generate, corpus, 60)
        submitted = time.monotonic() - began

        # The valid SPA keeps being served: its window starts on time.
        clock.set(utc("2026-11-16T12:00:00"))
        await eventually(
            lambda: bounds_of(kube, namespace).get(TARGET) == (5, 20),
            within=30,
            what="the valid SPA's window applied among the bad input",
        )
        # The status follows the HPA (HPAs first, docs/architecture.md): wait for it too.
        await eventually(
            lambda: (
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, TARGET)["activeSchedules"]
                == ["noon"]
            ),
            within=30,
            what="the valid SPA's status",
        )

        def judged() -> bool:
            for name, kind in corpus.accepted.items():
                condition, message = condition_of(kube, kind, namespace, name)
                expected = extremes.get(name, "Degraded")
                assert condition == expected, (name, corpus.what[name], condition, message)
                if expected == "Degraded":
                    assert message, f"{name} is Degraded without a message"
            return True

        await eventually(judged, within=60, what="every accepted bad document judged")
        assert not running.task.done(), "the controller stopped"
        errors = sample("spa_reconcile_total", controller="scheduledpodautoscaler", result="error")
        report(
            "bad input",
            hand_written=len(HAND_WRITTEN_SCHEDULES) + len(HAND_WRITTEN_AUTOSCALERS),
            generated=generated,
            rejected_by_api=len(corpus.rejected),
            accepted_and_degraded=len(corpus.accepted) - len(extremes),
            submit_s=submitted,
            reconcile_errors_total=errors,
        )
        # Spot-check that rejections say what is wrong, in the API server's words.
        for name, message in corpus.rejected.items():
            assert "spec" in message or "metadata" in message, (name, message)
