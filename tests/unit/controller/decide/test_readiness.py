"""The outcome of a window start from its timestamps (spa/controller/decide/readiness.py,
docs/api.md "status.windows"), and the bounded history it is kept in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spa.api.resources import MAX_WINDOWS, LeadInForce, WindowRecord
from spa.api.validation.leads import pod_needs
from spa.controller.decide.readiness import (
    RAISE_SKEW_SECONDS,
    MissedReason,
    Observation,
    Outcome,
    PodTimes,
    classify,
    is_late,
    longest_wait,
    record,
    waits_for_nodes,
    with_record,
)

B = 1_800_000_000
WINDOW = Observation(schedule="peak", boundary=B, end=B + 3600, min_replicas=8)
LEAD = LeadInForce(seconds=120, source="Default", explanation="default 2m until measured")


def test_ready_by_the_boundary_is_early() -> None:
    observed = replace(WINDOW, raised_at=B - 120, ready_at=B - 42)
    assert classify(observed, now=B) == (Outcome.Early, None)
    entry = record(observed, now=B, lead=LEAD)
    assert entry.ready_seconds == -42
    assert entry.ready_at == "2027-01-15T07:59:18Z"
    assert entry.boundary == "2027-01-15T08:00:00Z"
    assert entry.outcome == "Early"


def test_ready_after_the_boundary_is_late() -> None:
    observed = replace(WINDOW, raised_at=B - 120, ready_at=B + 75)
    assert classify(observed, now=B + 80) == (Outcome.Late, None)
    assert record(observed, now=B + 80, lead=LEAD).ready_seconds == 75


def test_pending_until_the_window_ends_then_missed_with_why() -> None:
    observed = replace(WINDOW, raised_at=B - 120, replicas_at=B - 110, pods_pending=True)
    assert classify(observed, now=B + 3599) == (Outcome.Pending, None)
    assert classify(observed, now=B + 3600) == (Outcome.Missed, MissedReason.PodsPending)
    entry = record(observed, now=B + 3600, lead=LEAD)
    assert (entry.outcome, entry.reason) == ("Missed", "PodsPending")
    assert entry.message is not None
    assert entry.message.startswith("the window's pods were created but not Ready")


SCALED = replace(WINDOW, raised_at=B - 120, replicas_at=B - 110)


@pytest.mark.parametrize(
    ("facts", "reason"),
    [
        ({"paused": True, "pods_pending": True}, MissedReason.Paused),
        ({"max_below_min": True, "quota_refused": True}, MissedReason.MaxReplicas),
        ({"overridden": True, "pods_pending": True}, MissedReason.Overridden),
        ({"replicas_at": None, "quota_refused": True}, MissedReason.NotScaled),
        ({"quota_refused": True, "create_failure": "x", "pods_pending": True}, MissedReason.Quota),
        ({"create_failure": "x", "pods_pending": True}, MissedReason.FailedCreate),
        ({"pods_pending": True}, MissedReason.PodsPending),
        ({"held_back": MissedReason.Paused, "pods_pending": True}, MissedReason.Paused),
        ({"held_back": MissedReason.Overridden, "max_below_min": True}, MissedReason.MaxReplicas),
        ({"replicas_at": None, "reports_replicas": False}, MissedReason.NotReady),
        ({}, MissedReason.NotReady),
    ],
)
def test_the_most_fundamental_reason_is_given(facts: dict[str, Any], reason: MissedReason) -> None:
    observed = replace(SCALED, **facts)
    assert classify(observed, now=WINDOW.end) == (Outcome.Missed, reason)


def test_ready_only_after_the_end_is_missed() -> None:
    observed = replace(SCALED, ready_at=WINDOW.end + 5)
    assert classify(observed, now=WINDOW.end + 5) == (Outcome.Missed, MissedReason.NotReady)


def test_a_quota_refusal_is_said_in_the_targets_own_words_within_the_bound() -> None:
    failure = (
        'pods "web-7d4b9c-x2x" is forbidden: exceeded quota: pods, requested: pods=1, '
        "used: pods=2, limited: pods=2"
    )
    entry = record(
        replace(SCALED, quota_refused=True, create_failure=failure), now=WINDOW.end, lead=LEAD
    )
    assert (entry.outcome, entry.reason) == ("Missed", "Quota")
    assert entry.message == f"a ResourceQuota refused the window's pods: {failure}"
    assert is_late(entry)
    long = record(replace(SCALED, create_failure="y" * 400), now=WINDOW.end, lead=LEAD)
    assert long.reason == "FailedCreate"
    assert long.message is not None
    assert len(long.message) == 256
    assert long.message.endswith("...")


def test_a_bound_held_below_the_window_is_kept_while_pending() -> None:
    """Seen while the window is open, an override (or a pause) is kept on the Pending entry:
    at the window's end the override may be over, and the bounds are the next window's."""
    held = record(replace(SCALED, overridden=True), now=B + 60, lead=LEAD)
    assert (held.outcome, held.reason) == ("Pending", "Overridden")
    later = replace(SCALED, held_back=MissedReason.Overridden, held_back_message=held.message)
    assert classify(later, now=B + 120) == (Outcome.Pending, MissedReason.Overridden)
    missed = record(replace(later, pods_pending=True), now=WINDOW.end, lead=LEAD)
    assert (missed.outcome, missed.reason, missed.message) == (
        "Missed",
        "Overridden",
        held.message,
    )
    assert not is_late(missed)
    # What the target shows is not kept: a Pending entry says nothing of it.
    assert record(replace(SCALED, pods_pending=True), now=B, lead=LEAD).reason is None
    # Ready all the same: the window is what it was.
    ready = record(replace(later, ready_at=B - 5), now=B, lead=LEAD)
    assert (ready.outcome, ready.reason) == ("Early", None)


def test_a_window_started_while_paused_is_missed_at_once_and_not_learned_from() -> None:
    entry = record(replace(WINDOW, started_paused=True), now=B - 120, lead=LEAD)
    assert (entry.outcome, entry.reason) == ("Missed", "Paused")
    assert entry.message is not None
    assert "paused when the window started" in entry.message
    assert entry.raised_at is None
    assert not is_late(entry)
    assert pod_needs([entry]) == []


def test_a_target_without_ready_replicas_is_said_at_once_and_not_learned_from() -> None:
    observed = replace(WINDOW, raised_at=B - 120, ready_at=B, reports_ready=False)
    assert classify(observed, now=B) == (Outcome.Missed, MissedReason.NoReadyReplicas)
    entry = record(observed, now=B, lead=LEAD)
    assert entry.ready_at is None
    assert not is_late(entry)
    assert pod_needs([entry]) == []


def test_late_and_missed_count_against_readiness_but_a_pause_does_not() -> None:
    late = record(replace(WINDOW, ready_at=B + 1), now=B + 1, lead=LEAD)
    paused = record(replace(WINDOW, paused=True), now=WINDOW.end, lead=LEAD)
    missed = record(WINDOW, now=WINDOW.end, lead=LEAD)
    early = record(replace(WINDOW, ready_at=B), now=B, lead=LEAD)
    capped = record(replace(WINDOW, max_below_min=True), now=WINDOW.end, lead=LEAD)
    assert [is_late(w) for w in (late, paused, missed, early, capped)] == [
        True,
        False,
        True,
        False,
        False,
    ]


def test_a_window_measured_again_replaces_its_entry() -> None:
    pending = record(WINDOW, now=B, lead=LEAD)
    ready = record(replace(WINDOW, ready_at=B + 10), now=B + 10, lead=LEAD)
    assert with_record(with_record([], pending), ready) == [ready]


@given(st.lists(st.integers(0, 40), max_size=30))
def test_the_history_is_bounded_newest_first(days: list[int]) -> None:
    windows: list[WindowRecord] = []
    for day in days:
        start = B + day * 86_400
        windows = with_record(
            windows, record(replace(WINDOW, boundary=start, end=start + 3600), now=B, lead=LEAD)
        )
    boundaries = [w.boundary or "" for w in windows]
    assert len(windows) == min(MAX_WINDOWS, len(set(days)))
    assert boundaries == sorted(set(boundaries), reverse=True)
    newest = sorted(set(days), reverse=True)[:MAX_WINDOWS]
    assert len(boundaries) == len(newest)


def test_docs_give_every_reason_in_the_order_it_is_given() -> None:
    """docs/api.md, "status.windows", lists the reasons in the order `classify` picks them."""
    text = (Path(__file__).resolve().parents[4] / "docs" / "api.md").read_text()
    table = text[text.index("| reason | when | late? |") :].split("\n\n")[0]
    rows = [line.split("`")[1] for line in table.splitlines()[2:]]
    assert rows == [why.value for why in MissedReason]
    late = {row.split("`")[1]: row.endswith("| yes |") for row in table.splitlines()[2:]}
    for why in MissedReason:
        entry = record(SCALED, now=WINDOW.end, lead=LEAD).model_copy(update={"reason": why})
        assert is_late(entry) == late[why.value], why


# -- the pods' wait for a node (podsWaitedSeconds) ---------------------------------------------

RAISE = B - 120


def test_the_longest_wait_of_the_windows_new_pods_from_creation_to_binding() -> None:
    pods = [
        PodTimes(created=B - 86400, scheduled=B - 86400 + 300),  # an old pod: not the window's
        PodTimes(created=RAISE + 1, scheduled=RAISE + 1),  # bound at once
        PodTimes(created=RAISE + 1, scheduled=RAISE + 47),  # waited for a node
        PodTimes(created=RAISE + 2, scheduled=RAISE + 30),
    ]
    assert longest_wait(pods, raised_at=RAISE, now=B, ready=True) == 46


def test_a_pod_created_a_little_before_the_raise_is_the_windows_and_earlier_ones_are_not() -> None:
    """The raise is the controller's clock, creationTimestamp the API server's."""
    skewed = [PodTimes(created=RAISE - RAISE_SKEW_SECONDS, scheduled=RAISE + 20)]
    assert longest_wait(skewed, raised_at=RAISE, now=B, ready=True) == 22
    older = [PodTimes(created=RAISE - RAISE_SKEW_SECONDS - 1, scheduled=RAISE + 20)]
    assert longest_wait(older, raised_at=RAISE, now=B, ready=True) is None
    assert longest_wait([], raised_at=RAISE, now=B, ready=True) is None


def test_a_pod_still_pending_counts_only_while_the_window_is_not_ready() -> None:
    pods = [
        PodTimes(created=RAISE + 1, scheduled=RAISE + 11),
        PodTimes(created=RAISE + 5, scheduled=None),
    ]
    # Ready: the pending one is more than the window needed (the HPA's), no wait of it.
    assert longest_wait(pods, raised_at=RAISE, now=B + 600, ready=True) == 10
    # Missed at its end: it has waited until then, at least.
    assert longest_wait(pods, raised_at=RAISE, now=B + 600, ready=False) == 600 + 115
    # A binding time before the creation (clocks of two API servers) is no negative wait.
    assert longest_wait([PodTimes(RAISE + 5, RAISE + 4)], raised_at=RAISE, now=B, ready=True) == 0


def test_the_wait_is_measured_only_where_the_nodes_were_not_measured_standing() -> None:
    base = WindowRecord(
        schedule="peak",
        boundary="2027-01-15T08:00:00Z",
        raised_at="2027-01-15T07:58:00Z",
        capacity_held_at="2027-01-15T07:55:00Z",
    )
    assert waits_for_nodes(base)
    stood = base.model_copy(update={"nodes_ready_at": "2027-01-15T07:57:00Z"})
    assert not waits_for_nodes(stood)
    assert not waits_for_nodes(base.model_copy(update={"capacity_held_at": None}))
    assert not waits_for_nodes(base.model_copy(update={"raised_at": None}))
    assert not waits_for_nodes(base.model_copy(update={"pods_waited_seconds": 30}))
