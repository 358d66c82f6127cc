"""`leadTime: Auto`, `capacity.leadTime: Auto` and their bounds as API (docs/schedules.md,
"Auto lead times"): what is valid, the field-addressed errors, and the leads in force learned
from status.windows."""

from __future__ import annotations

from typing import Any

import pytest

from spa.api import InvalidObject, parse_schedule, parse_scheduled_pod_autoscaler
from spa.api.resources import WindowRecord
from spa.api.validation.compile import (
    autoscaler_capacity_lead,
    autoscaler_lead,
    compile_schedule,
    errors_against_autoscaler,
)
from spa.api.validation.leads import NO_WAIT_SECONDS, autoscaler_leads, node_needs, pod_needs
from spa.schedule.learned_lead import Need
from tests.builders import autoscaler, schedule

DAILY: dict[str, Any] = {
    "type": "Daily",
    "startTime": "08:00",
    "endTime": "18:00",
    "minReplicas": 8,
}


def _errors(document: dict[str, Any]) -> dict[str | None, str]:
    with pytest.raises(InvalidObject) as raised:
        parse_scheduled_pod_autoscaler(document)
    return {error.field: error.message for error in raised.value.errors}


def _window(**fields: Any) -> dict[str, Any]:
    return {"schedule": "peak", "boundary": "2026-11-23T08:00:00Z", "outcome": "Early", **fields}


def test_auto_is_a_lead_time_of_both_kinds() -> None:
    spa = parse_scheduled_pod_autoscaler(
        autoscaler(
            leadTime="Auto",
            leadTimeBounds={"min": "30s", "max": "10m"},
            capacity={"leadTime": "Auto", "leadTimeBounds": {"max": "20m"}},
        )
    )
    assert spa.spec.lead_time == "Auto"
    compiled = compile_schedule(
        parse_schedule(schedule(**DAILY, leadTime="Auto", capacity={"leadTime": "Auto"})).spec
    )
    assert compiled.lead_auto
    assert compiled.capacity_lead_auto
    assert (compiled.lead, compiled.capacity_lead) == (120, 180)
    assert errors_against_autoscaler(compiled, spa, owner="web") == []


def test_auto_with_a_small_a_says_how_to_write_it() -> None:
    message = _errors(autoscaler(leadTime="auto"))["spec.leadTime"]
    assert message.startswith("must be Auto or a duration such as 90s")
    assert "write Auto, with a capital A" in message


def test_bounds_errors_name_their_field() -> None:
    errors = _errors(
        autoscaler(
            leadTime="Auto",
            leadTimeBounds={"min": "10m", "max": "1m"},
            capacity={"leadTime": "Auto", "leadTimeBounds": {"max": "25h"}},
        )
    )
    assert errors == {
        "spec.leadTimeBounds.max": "must be at least min (10m), got '1m'",
        "spec.capacity.leadTimeBounds.max": "must be at most 24h, got '25h'",
    }


def test_a_fixed_capacity_lead_is_not_checked_against_an_auto_pod_lead() -> None:
    spa = parse_scheduled_pod_autoscaler(autoscaler(leadTime="Auto", capacity={"leadTime": "1m"}))
    # The learned (here: default) pod lead raises it: never below the pod lead in force.
    assert autoscaler_capacity_lead(spa) == 120
    assert autoscaler_leads(spa).node_status() is not None


def test_the_default_before_any_window() -> None:
    spa = parse_scheduled_pod_autoscaler(autoscaler(leadTime="Auto", capacity={"leadTime": "Auto"}))
    assert (autoscaler_lead(spa), autoscaler_capacity_lead(spa)) == (120, 180)
    leads = autoscaler_leads(spa)
    assert leads.pod_status().explanation == "default 2m until measured"
    node = leads.node_status()
    assert node is not None
    assert node.explanation == "default 3m until measured"


def test_learned_from_status_windows_and_bounded() -> None:
    windows = [
        _window(raisedAt="2026-11-23T07:58:00Z", readyAt="2026-11-23T07:58:38Z"),
        _window(raisedAt="2026-11-22T07:58:00Z", readyAt="2026-11-22T07:58:30Z"),
        # Missed windows are not learned from: more lead does not fix a quota.
        _window(raisedAt="2026-11-21T07:58:00Z", outcome="Missed", reason="Quota"),
    ]
    spa = parse_scheduled_pod_autoscaler(autoscaler(leadTime="Auto", status={"windows": windows}))
    assert autoscaler_lead(spa) == 38 + 15
    assert autoscaler_leads(spa).pod_status().explanation == "learned: p90 of 2 windows 38 s + 15 s"
    bounded = parse_scheduled_pod_autoscaler(
        autoscaler(leadTime="Auto", leadTimeBounds={"min": "2m"}, status={"windows": windows})
    )
    assert autoscaler_lead(bounded) == 120


def test_node_needs_from_capacity_timestamps() -> None:
    records = [
        WindowRecord.model_validate(w)
        for w in (
            # Measured directly: the placeholders stood 100 s after the capacity was ordered.
            _window(
                capacityLead={"seconds": 180, "source": "Learned"},
                capacityHeldAt="2026-11-23T07:57:00Z",
                nodesReadyAt="2026-11-23T07:58:40Z",
            ),
            # The pods waited 20 s on top of a 60 s head start.
            _window(
                capacityLead={"seconds": 180, "source": "Learned"},
                capacityHeldAt="2026-11-22T07:57:00Z",
                raisedAt="2026-11-22T07:58:00Z",
                readyAt="2026-11-22T07:58:50Z",
                podsWaitedSeconds=20,
            ),
            # No wait: 60 s were enough, and how much less would have done is unknown.
            _window(
                capacityLead={"seconds": 180, "source": "Learned"},
                capacityHeldAt="2026-11-21T07:57:00Z",
                raisedAt="2026-11-21T07:58:00Z",
                podsWaitedSeconds=0,
            ),
        )
    ]
    assert node_needs(records) == [Need(100), Need(80), Need(60, censored=True)]
    # The pod lead does not count the wait for nodes when a capacity lead ordered them.
    assert pod_needs(records) == [Need(30)]


def test_a_wait_as_short_as_the_schedulers_own_is_no_wait_for_nodes() -> None:
    """A pod bound at once still shows a second or two from its creation to its binding
    (kube-scheduler's own time, seconds in a burst). Counted as a wait for nodes, every window
    in which nothing changed would ask for the head start plus a margin, and the capacity lead
    would creep up: up to NO_WAIT_SECONDS it says the head start was enough, at most."""
    held = {
        "capacityLead": {"seconds": 180, "source": "Learned"},
        "capacityHeldAt": "2026-11-22T07:57:00Z",
        "raisedAt": "2026-11-22T07:58:00Z",
        "readyAt": "2026-11-22T07:58:30Z",
    }
    short = WindowRecord.model_validate(_window(**held, podsWaitedSeconds=NO_WAIT_SECONDS))
    assert node_needs([short]) == [Need(60, censored=True)]
    # Nor is it taken off the pods' own time to Ready: binding them is part of it.
    assert pod_needs([short]) == [Need(30)]
    longer = WindowRecord.model_validate(_window(**held, podsWaitedSeconds=NO_WAIT_SECONDS + 1))
    assert node_needs([longer]) == [Need(60 + NO_WAIT_SECONDS + 1)]
    assert pod_needs([longer]) == [Need(30 - NO_WAIT_SECONDS - 1)]
    # Window after window with nothing changed, the capacity lead stays where it is.
    spa = parse_scheduled_pod_autoscaler(
        autoscaler(
            leadTime="1m",
            capacity={"leadTime": "Auto"},
            status={"windows": [_window(**held, podsWaitedSeconds=1)] * 5},
        )
    )
    assert autoscaler_capacity_lead(spa) == 60 + 60
