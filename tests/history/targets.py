"""The targets of issue 39 (docs/suggest.md, "How it is tested"), measured by the engine of
`spa plan` on a corpus's truth and on what `spa suggest` wrote:

- each true window's start has a suggested start within 15 minutes;
- the suggested floor holds at least 95 % of the minutes the true floor is raised, at its
  level;
- the replica-hours the suggested floor adds above the base are at most 10 % more than the
  true floor's;
- no suggested window opens on a one-off peak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spa.plan import Document, build_plan
from tests.history.corpus import floor_at, floors

__all__ = ["Measured", "measure", "occurrences"]

MINUTE = 60


def occurrences(
    manifests: Sequence[dict[str, Any]], *, namespace: str, name: str, start: int, until: int
) -> list[tuple[int, int]]:
    """The (start, end) of every window of the SPA's Schedules in `[start, until)`, as written
    (without their lead), holidays and excluded dates skipped."""
    documents = []
    for index, body in enumerate(manifests, start=1):
        if body.get("kind") == "Schedule":
            body = {**body, "spec": {k: v for k, v in body["spec"].items() if k != "leadTime"}}
        documents.append(Document(file="measured", index=index, body=body))
    plan = build_plan(documents, [], at=start, until=until)
    assert not plan.errors, plan.errors
    [found] = [a for a in plan.autoscalers if (a.namespace, a.name) == (namespace, name)]
    return sorted(
        (o.start, o.end)
        for schedule in found.schedules
        for o in schedule.timeline.window.occurrences(start, until)
        if start <= o.start < until
    )


@dataclass(frozen=True, slots=True)
class Measured:
    starts_missed: list[int]
    """True starts with no suggested start within the tolerance."""
    coverage: float
    """Share of the minutes the true floor is raised that the suggested floor holds."""
    true_hours: float
    suggested_hours: float
    """Replica-hours above the base."""
    on_one_offs: list[tuple[int, int]]
    """Suggested windows that overlap a one-off peak."""

    @property
    def added(self) -> float:
        """How much more the suggestion adds than the truth (0.1: 10 % more)."""
        return self.suggested_hours / self.true_hours - 1 if self.true_hours else 0.0


def measure(
    truth: Sequence[dict[str, Any]],
    suggested: Sequence[dict[str, Any]],
    *,
    namespace: str,
    name: str,
    base: int,
    start: int,
    until: int,
    one_offs: Sequence[tuple[int, int]] = (),
    tolerance: int = 900,
) -> Measured:
    true_steps = floors(truth, namespace=namespace, name=name, start=start, until=until)
    suggested_steps = floors(suggested, namespace=namespace, name=name, start=start, until=until)
    raised = held = 0
    true_hours = suggested_hours = 0.0
    for instant in range(start, until, MINUTE):
        true_floor = floor_at(true_steps, instant)
        suggested_floor = floor_at(suggested_steps, instant)
        true_hours += (true_floor - base) / 60
        suggested_hours += (suggested_floor - base) / 60
        if true_floor > base:
            raised += 1
            held += suggested_floor >= true_floor
    true_starts = [
        s for s, _ in occurrences(truth, namespace=namespace, name=name, start=start, until=until)
    ]
    # A suggested window may start up to the tolerance before the range.
    windows = occurrences(
        suggested, namespace=namespace, name=name, start=start - tolerance, until=until
    )
    missed = [s for s in true_starts if not any(abs(s - w) <= tolerance for w, _ in windows)]
    # A window "on" a one-off peak: one that overlaps it and would not be there without it (no
    # true window overlaps it either).
    true_windows = occurrences(truth, namespace=namespace, name=name, start=start, until=until)
    on_one_offs = [
        (a, b)
        for a, b in one_offs
        if any(w < b and a < e for w, e in windows)
        and not any(w < b and a < e for w, e in true_windows)
    ]
    return Measured(
        starts_missed=missed,
        coverage=held / raised if raised else 1.0,
        true_hours=true_hours,
        suggested_hours=suggested_hours,
        on_one_offs=on_one_offs,
    )
