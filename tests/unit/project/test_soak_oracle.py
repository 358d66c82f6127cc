"""The soak's comparison (bench/soak.py) on hand-made histories: it must see each kind of
failure it reports, and nothing in a clean history."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.soak import (
    AUTO_BOUNDS,
    NAMESPACE,
    Oracle,
    Truth,
    Write,
    auto_report,
    compare,
    crashes,
    engine_lead,
    fleet,
    is_auto_autoscaler,
    leads_in_force,
)
from tests.builders import autoscaler, schedule

T0 = datetime(2026, 11, 23, 11, 0, tzinfo=UTC).timestamp()  # a Monday, 11:00 UTC
HPA = "app-000"


def manifests(
    *, start: str = "11:01", end: str = "11:03", **spa_fields: Any
) -> list[dict[str, Any]]:
    """One SPA (2/10, and `spa_fields`) and one Daily window `start`-`end` UTC setting 5/15."""
    return [
        autoscaler(name=HPA, namespace=NAMESPACE, minReplicas=2, metrics=None, **spa_fields),
        schedule(
            name=f"{HPA}-w0",
            namespace=NAMESPACE,
            target=HPA,
            type="Daily",
            startTime=start,
            endTime=end,
            minReplicas=5,
            maxReplicas=15,
        ),
    ]


def write(at: float, bounds: tuple[int, int], version: int, replica: str = "a") -> Write:
    return Write(HPA, replica, "patch", at, at + 0.05, version, bounds)


def check(writes: list[Write], lease: list[tuple[float, float, str]] | None = None) -> Any:
    oracle = Oracle(manifests(), at=int(T0), until=int(T0) + 300)
    if lease is None:
        lease = [(T0 + s, T0 + s + 0.01, "a") for s in range(0, 300, 2)]
    truth = Truth(writes, lease, Counter())
    return compare(oracle, truth, [], [], T0 + 30, T0 + 240, T0 + 270)


CREATE = Write(HPA, "a", "create", T0 + 1, T0 + 1.1, 1, (2, 10))


def test_the_oracle_follows_the_engine() -> None:
    oracle = Oracle(manifests(), at=int(T0), until=int(T0) + 300)
    assert oracle.steps[HPA] == [(T0, (2, 10)), (T0 + 60, (5, 15)), (T0 + 180, (2, 10))]


def test_a_clean_history_has_nothing_to_report() -> None:
    result = check([CREATE, write(T0 + 60.5, (5, 15), 2), write(T0 + 181, (2, 10), 3)])
    assert result["transitions"] == 2
    assert (result["missed"], result["duplicates"], result["wrong"]) == ([], [], [])
    assert result["not_leader"] == result["after_renew_deadline"] == []
    assert result["lag_all"]["max_s"] == 1.05


def test_a_missed_transition_a_duplicate_and_a_wrong_value_are_each_seen() -> None:
    result = check(
        [
            CREATE,
            write(T0 + 61, (5, 15), 2),
            write(T0 + 90, (5, 15), 3),  # changes nothing
            write(T0 + 120, (6, 15), 4),  # never the oracle's
            # the end at 11:03 never applied
        ]
    )
    assert [m["at"] for m in result["missed"]] == [T0 + 180]
    assert [d["received"] for d in result["duplicates"]] == [T0 + 90]
    assert [(w["bounds"], w["expected"]) for w in result["wrong"]] == [((6, 15), (5, 15))]


def test_a_write_of_the_old_values_just_after_a_boundary_is_a_race_not_a_wrong_value() -> None:
    # Received 1 s before the window starts, completed 0.5 s after it: decided before.
    late = Write(HPA, "a", "create", T0 + 59, T0 + 60.5, 1, (2, 10))
    result = check([late, write(T0 + 61, (5, 15), 2), write(T0 + 181, (2, 10), 3)])
    assert result["wrong"] == []
    # Received 3 s after it: wrong.
    later = Write(HPA, "a", "create", T0 + 63, T0 + 63.1, 1, (2, 10))
    result = check([later, write(T0 + 64, (5, 15), 2), write(T0 + 181, (2, 10), 3)])
    assert [w["received"] for w in result["wrong"]] == [T0 + 63]


def test_writes_by_the_replica_without_the_lease_or_after_its_deadline_are_seen() -> None:
    # b took the Lease at +100; a writes at +120, last renewed at +98.
    lease = [(T0 + s, T0 + s + 0.01, "a") for s in range(0, 100, 2)]
    lease += [(T0 + s, T0 + s + 0.01, "b") for s in range(100, 300, 2)]
    writes = [
        CREATE,
        write(T0 + 60.5, (5, 15), 2),
        write(T0 + 120, (2, 10), 3, replica="a"),
        write(T0 + 121, (5, 15), 4, replica="b"),
        write(T0 + 181, (2, 10), 5, replica="b"),
    ]
    result = check(writes, lease)
    assert [w["received"] for w in result["not_leader"]] == [T0 + 120]
    assert [w["seconds_after_renewal"] for w in result["after_renew_deadline"]] == [22.0]


def test_an_uncaught_exception_in_a_replica_log_is_a_crash_and_a_logged_one_is_not(
    tmp_path: Path,
) -> None:
    """The soak fails on a replica ended by an exception nobody caught (what uvloop's bug did
    on 2026-11-26), not on the tracebacks the controller logs and handles."""
    handled = (
        '{"level": "warning", "msg": "watch broke", "error": "Traceback (most recent call '
        'last):\\n  File \\"x.py\\"\\nOSError: reset"}'
    )
    (tmp_path / "replica-a.log").write_text(f"=== 11:00:00 starting spa-a\n{handled}\n")
    assert crashes(tmp_path) == []
    (tmp_path / "replica-b.log").write_text(
        "=== 11:00:00 starting spa-b\n"
        "Traceback (most recent call last):\n"
        '  File "spa/kube/client.py", line 834, in _send\n'
        "    response = await self._session.request(\n"
        "RuntimeError: File descriptor 12 is used by transport\n"
        "=== 11:00:05 starting spa-b\n"
    )
    assert crashes(tmp_path) == [
        {"replica": "b", "exception": "RuntimeError: File descriptor 12 is used by transport"}
    ]


def test_a_raise_written_ahead_of_its_boundary_within_the_bound_is_not_wrong() -> None:
    # The window's 5/15 written 10 s before 11:01 (a fleet's raise ahead of a shared
    # boundary), not again at 11:01; the end at 11:03 at its instant.
    early = write(T0 + 50, (5, 15), 2)
    result = check([CREATE, early, write(T0 + 181, (2, 10), 3)])
    assert (result["missed"], result["duplicates"], result["wrong"]) == ([], [], [])
    assert [w["before_boundary_s"] for w in result["raised_ahead"]] == [9.95]


def test_a_removal_before_its_boundary_or_a_raise_too_early_is_wrong() -> None:
    # The window's end (2/10) written 10 s before 11:03: capacity removed early.
    removed = write(T0 + 170, (2, 10), 3)
    result = check([CREATE, write(T0 + 60.5, (5, 15), 2), removed])
    assert [w["received"] for w in result["wrong"]] == [T0 + 170]
    assert result["raised_ahead"] == []
    # The raise written 40 s before 11:01: earlier than any fleet may start.
    too_early = write(T0 + 20, (5, 15), 2)
    result = check([CREATE, too_early, write(T0 + 181, (2, 10), 3)])
    assert [w["received"] for w in result["wrong"]] == [T0 + 20]


def test_a_mixed_boundary_written_ahead_is_what_it_adds_then_what_it_removes() -> None:
    # 2/10 until 11:01, then 5/8 (a higher min, a lower max): 5/10 may be written ahead of
    # 11:01, 5/8 only from 11:01.
    objects = manifests()
    objects[1]["spec"] |= {"minReplicas": 5, "maxReplicas": 8}
    oracle = Oracle(objects, at=int(T0), until=int(T0) + 300)
    assert oracle.raised_ahead(HPA, (5, 10), T0 + 48, T0 + 50.05) == pytest.approx(9.95)
    assert oracle.raised_ahead(HPA, (5, 8), T0 + 48, T0 + 50.05) is None
    assert oracle.raised_ahead(HPA, (5, 10), T0 + 20, T0 + 25) is None  # 35 s ahead: too early


# -- Auto lead times (docs/schedules.md, "Auto lead times") ----------------------------------


def auto_manifests(bounds: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One SPA (2/10) with leadTime: Auto (and `bounds`), one Daily window 11:03-11:05 UTC
    setting 5/15: B at T0 + 180."""
    bounded: dict[str, Any] = {} if bounds is None else {"leadTimeBounds": bounds}
    return manifests(start="11:03", end="11:05", leadTime="Auto", **bounded)


def published(seconds: int, source: str = "Default") -> dict[str, Any]:
    """An SPA's status as the controller writes it on the soak's plane: its lead in force,
    and the window's start recorded Missed (its target is never read)."""
    lead = {"seconds": seconds, "source": source, "explanation": f"default {seconds}s"}
    entry = {
        "schedule": f"{HPA}-w0",
        "boundary": "2026-11-23T11:03:00Z",
        "minReplicas": 5,
        "lead": lead,
        "raisedAt": "2026-11-23T11:02:15Z",
        "outcome": "Missed",
        "reason": "NotReadable",
    }
    return {"leadTime": lead, "windows": [entry]}


def check_auto(writes: list[Write], statuses: dict[str, dict[str, Any]]) -> Any:
    objects = auto_manifests({"max": "45s"})
    oracle = Oracle(
        objects, at=int(T0), until=int(T0) + 400, leads=leads_in_force(objects, statuses)
    )
    lease = [(T0 + s, T0 + s + 0.01, "a") for s in range(0, 400, 2)]
    return compare(
        oracle,
        Truth(writes, lease, Counter()),
        [],
        [],
        T0 + 180,
        T0 + 330,
        T0 + 360,
        frozenset({HPA}),
    )


def test_an_auto_lead_is_planned_at_its_default_or_at_the_lead_the_controller_published() -> None:
    objects = auto_manifests()
    assert engine_lead(objects[0]) == (120, "Default")
    # Nothing published: the engine's default, 2m (what `spa plan -f` says).
    oracle = Oracle(objects, at=int(T0), until=int(T0) + 400, leads=leads_in_force(objects, {}))
    assert oracle.steps[HPA] == [(T0, (2, 10)), (T0 + 60, (5, 15)), (T0 + 300, (2, 10))]
    # Published 45 s for the window: its raise at B - 45 s; the end does not move.
    leads = leads_in_force(objects, {HPA: published(45)})
    assert leads == {HPA: 45, f"{HPA}-w0": 45}
    oracle = Oracle(objects, at=int(T0), until=int(T0) + 400, leads=leads)
    assert oracle.steps[HPA] == [(T0, (2, 10)), (T0 + 135, (5, 15)), (T0 + 300, (2, 10))]
    assert oracle.leads == {HPA: 45}


def test_a_window_entry_says_its_own_lead_and_the_spa_status_the_others() -> None:
    status = published(45)
    status["leadTime"] = {"seconds": 30, "source": "Learned"}
    assert leads_in_force(auto_manifests(), {HPA: status}) == {HPA: 30, f"{HPA}-w0": 45}


def test_a_raise_at_the_lead_in_force_is_on_time_and_earlier_than_it_is_wrong() -> None:
    statuses = {HPA: published(45)}  # 2m clamped to leadTimeBounds.max 45s
    create = Write(HPA, "a", "create", T0 + 1, T0 + 1.1, 1, (2, 10))
    # The raise at B - 45 s, the end at the window's end: nothing to report, and the raise is
    # counted as due although it comes before the first boundary (T0 + 180).
    result = check_auto(
        [create, write(T0 + 135.5, (5, 15), 2), write(T0 + 301, (2, 10), 3)], statuses
    )
    assert (result["missed"], result["duplicates"], result["wrong"]) == ([], [], [])
    assert (result["transitions"], result["transitions_auto"]) == (2, 2)
    assert (result["lag_auto"]["count"], result["lag_auto"]["max_s"]) == (2, 1.05)
    # The raise at the default lead (B - 2m) where the controller said 45 s was in force: 75 s
    # early, more than any raise ahead of a shared boundary may be. Wrong.
    early = write(T0 + 60.5, (5, 15), 2)
    result = check_auto([create, early, write(T0 + 301, (2, 10), 3)], statuses)
    assert [(w["received"], w["expected"]) for w in result["wrong"]] == [(T0 + 60.5, (2, 10))]
    # 10 s before the lead's start: a raise ahead of a shared boundary, counted apart.
    ahead = write(T0 + 125, (5, 15), 2)
    result = check_auto([create, ahead, write(T0 + 301, (2, 10), 3)], statuses)
    assert result["wrong"] == []
    assert [w["before_boundary_s"] for w in result["raised_ahead"]] == [9.95]
    # The raise missing (the controller kept the old bounds): missed at B - 45 s.
    result = check_auto([create, write(T0 + 301, (2, 10), 3)], statuses)
    assert [m["at"] for m in result["missed"]] == [T0 + 135]


def test_a_lead_published_not_as_the_engine_derives_it_or_changing_is_reported() -> None:
    objects = auto_manifests({"max": "45s"})
    result: dict[str, Any] = {"missed": [], "duplicates": [], "wrong": []}
    clean = auto_report(objects, {HPA: published(45)}, [[T0, HPA, 45, "Default"]], result)
    assert clean["auto_spas"] == clean["auto_published"] == 1
    assert clean["auto_leads_in_force"] == [("45 s Default", 1)]
    assert clean["auto_windows"] == [("Missed NotReadable", 1)]
    assert clean["auto_lead_mismatches"] == clean["auto_lead_changes"] == []
    # 2m published where the bounds allow 45 s at most; another value sampled in the run.
    report = auto_report(objects, {HPA: published(120)}, [[T0, HPA, 45, "Default"]], result)
    assert [(m["what"], m["published"], m["engine"]) for m in report["auto_lead_mismatches"]] == [
        ("status.leadTime", (120, "Default"), (45, "Default")),
        ("status.windows app-000-w0 2026-11-23T11:03:00Z", (120, "Default"), (45, "Default")),
    ]
    assert report["auto_lead_changes"] == [
        {"spa": HPA, "leads": [(120, "Default"), (45, "Default")]}
    ]


def test_the_fleet_makes_a_share_auto_and_keeps_the_windows_of_a_run_without_it() -> None:
    first = datetime(2026, 11, 23, 11, 0, tzinfo=UTC)
    without = fleet(random.Random(7), 40, first, 8, shared=0.25)
    objects = fleet(random.Random(7), 40, first, 8, shared=0.25, auto=0.25)
    autos = [obj for obj in objects if is_auto_autoscaler(obj)]
    assert len(autos) == 10
    assert {str(obj["spec"].get("leadTimeBounds")) for obj in autos} == {
        str(bounds) for bounds in AUTO_BOUNDS
    }
    assert [obj for obj in objects if obj["kind"] == "Schedule"] == [
        obj for obj in without if obj["kind"] == "Schedule"
    ]
    assert sorted({engine_lead(obj)[0] for obj in autos}) == [45, 120, 150]
