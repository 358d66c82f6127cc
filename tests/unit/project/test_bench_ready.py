"""bench/ready.py's reading of status.windows entries, on entries written by hand: what each
window reports relative to B, the drift of the leads and margins, and the smoke's verdict.
The benchmark itself runs in tests/bench (its --smoke) and by `make bench-ready`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bench import ready

B = datetime(2026, 11, 27, 12, 0, tzinfo=UTC).timestamp()


def _at(offset: float) -> str:
    return datetime.fromtimestamp(B + offset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(outcome: str, ready_at: int, pod_lead: int, capacity_lead: int) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "readySeconds": ready_at,
        "raisedAt": _at(-pod_lead),
        "readyAt": _at(ready_at),
        "capacityHeldAt": _at(-capacity_lead),
        "nodesReadyAt": _at(-capacity_lead + 62),
        "lead": {"seconds": pod_lead, "source": "Learned", "explanation": f"pods {pod_lead}"},
        "capacityLead": {"seconds": capacity_lead, "source": "Learned", "explanation": "nodes"},
    }


def _row(window: int, delay: int, entry: dict[str, Any]) -> dict[str, Any]:
    row = {"n": 1, "window": window, "node_delay": delay, "spas": 1, "not_measured": 0}
    return row | ready.measure_window({"app-000": entry}, B, {"app-000": B + 1.0})


def test_a_window_is_reported_relative_to_its_boundary() -> None:
    figures = ready.measure_window({"app-000": _entry("Late", 12, 40, 140)}, B, {})
    assert figures["outcomes"] == {"Late": 1}
    assert figures["ready"]["max"] == 12
    assert figures["held"]["max"] == -140
    assert figures["nodes_ready"]["max"] == -78
    assert figures["node_need"]["max"] == 62
    assert figures["pod_need"]["max"] == 52
    assert figures["pod_lead"]["seconds"]["max"] == 40
    assert figures["pod_lead"]["explanation"] == "pods 40"
    assert figures["capacity_lead"]["sources"] == ["Learned"]


def test_drift_counts_the_late_windows_and_the_growth_after_the_first_early_one() -> None:
    rows = [
        _row(1, 60, _entry("Late", 5, 120, 180)),
        _row(2, 60, _entry("Early", -15, 40, 120)),
        _row(3, 60, _entry("Early", -12, 40, 125)),
    ]
    (phase,) = ready.drift(rows)
    assert phase["late_before_early"] == 1
    assert phase["capacity_leads"] == [120, 125]
    assert phase["lead_growth"] == 5
    assert phase["margin_growth"] == -3  # the margin shrank: no drift up


def test_the_smoke_fails_unless_window_2_is_early_on_learned_leads() -> None:
    early = _row(2, 10, _entry("Early", -15, 20, 50))
    assert ready.smoke_failures([_row(1, 10, _entry("Early", -3, 30, 60)), early], 0) == []
    late = _row(2, 10, _entry("Late", 4, 20, 50))
    assert ready.smoke_failures([late], 0) == ["window 2: {'Late': 1}, not every SPA Early"]
    assert ready.smoke_failures([], 1) == ["no window 2", "1 placeholder Deployments left"]
