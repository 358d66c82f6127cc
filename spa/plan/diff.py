"""`spa plan --diff`: how a change to the manifests changes what the controller will do.

A reviewer of a pull request that edits Schedules reads YAML, but what matters is behaviour:
which scaling steps move, appear or vanish this week, and to which values. A text diff cannot
show that (a changed `timeZone` moves every step; a reformatted file moves none), and two
`spa plan` outputs side by side bury the few changed steps among the unchanged ones. So both
sides are planned over the same range with the same engine (`build_plan`), and their
transitions are compared by instant, per ScheduledPodAutoscaler: a transition is added,
removed, or changed (same instant, other values or Schedules); the values in force at the
start of the range are compared too. The comparison is of behaviour, not of text: an edit that
moves no transition in the range (a suspended Schedule, a window after the range) leaves its
autoscaler unchanged.

The table and the JSON are rendered here, the page in `spa.plan.html`. docs/plan.md,
"`--diff`", is the contract.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spa.plan.planner import AutoscalerPlan, Plan, PlanError
from spa.plan.render import (
    as_yaml,
    columns,
    describe_error,
    encode,
    error_fields,
    join_lines,
    local_times,
    max_text,
    state_fields,
    transition_zones,
)
from spa.schedule import State, format_instant

__all__ = [
    "AutoscalerDiff",
    "Change",
    "PlanDiff",
    "Side",
    "SideError",
    "TransitionChange",
    "diff_plans",
    "render_diff_errors",
    "render_diff_json",
    "render_diff_table",
    "render_diff_yaml",
]

# How many unchanged autoscalers the table names on its one summary line; the JSON names all.
_UNCHANGED_NAMED = 20


class Change(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


class Side(enum.StrEnum):
    OLD = "old"
    NEW = "new"


# The first column of a table row: `+` and `-` as in a unified diff, so that the table pasted in
# a ```diff block of a pull-request comment is coloured; `!` for a changed row, as in a context
# diff.
_MARKS = {Change.ADDED: "+", Change.REMOVED: "-", Change.CHANGED: "!"}


@dataclass(frozen=True, slots=True)
class TransitionChange:
    """One instant whose transition differs: `old` and `new` are the values that hold from it
    on, None on the side where there is no transition then."""

    time: int
    change: Change
    old: State | None
    new: State | None


@dataclass(frozen=True, slots=True)
class AutoscalerDiff:
    """An autoscaler whose behaviour differs in the range; `old` or `new` is None for one that
    is only on one side (added or removed)."""

    namespace: str
    name: str
    change: Change
    old: AutoscalerPlan | None
    new: AutoscalerPlan | None
    start: TransitionChange | None
    """The values in force at the start of the range, when they differ (at `at`)."""
    transitions: list[TransitionChange]
    """The transitions that differ, by time."""

    @property
    def title(self) -> str:
        return f"{self.namespace}/{self.name}"

    def count(self, change: Change) -> int:
        return sum(1 for entry in self.transitions if entry.change is change)


@dataclass(frozen=True, slots=True)
class SideError:
    """An error of one side's manifests."""

    side: Side
    error: PlanError


@dataclass(slots=True)
class PlanDiff:
    at: int
    until: int
    old_label: str
    """What the old side is, as given (`git:main`, `old/`)."""
    new_label: str
    old: Plan
    new: Plan
    autoscalers: list[AutoscalerDiff] = field(default_factory=list)
    """The autoscalers that differ, by namespace, then name."""
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    """(namespace, name) of the autoscalers on both sides with the same behaviour, sorted."""
    errors: list[SideError] = field(default_factory=list)
    """The old side's errors, then the new side's, each in file order."""

    @property
    def differs(self) -> bool:
        return bool(self.autoscalers)


def diff_plans(old: Plan, new: Plan, *, old_label: str, new_label: str) -> PlanDiff:
    """What differs between two plans of the same range."""
    if (old.at, old.until) != (new.at, new.until):
        raise ValueError("plans of different ranges cannot be compared")
    result = PlanDiff(
        at=new.at,
        until=new.until,
        old_label=old_label,
        new_label=new_label,
        old=old,
        new=new,
        errors=[
            *(SideError(Side.OLD, error) for error in old.errors),
            *(SideError(Side.NEW, error) for error in new.errors),
        ],
    )
    before = {(a.namespace, a.name): a for a in old.autoscalers}
    after = {(a.namespace, a.name): a for a in new.autoscalers}
    for key in sorted(before.keys() | after.keys()):
        found = _diff_autoscaler(before.get(key), after.get(key), at=new.at)
        if found is None:
            result.unchanged.append(key)
        else:
            result.autoscalers.append(found)
    return result


def _diff_autoscaler(
    old: AutoscalerPlan | None, new: AutoscalerPlan | None, *, at: int
) -> AutoscalerDiff | None:
    either = new or old
    assert either is not None  # a key comes from one side at least
    if old is None or new is None:
        change = Change.ADDED if old is None else Change.REMOVED

        def one_sided(instant: int, state: State) -> TransitionChange:
            if change is Change.ADDED:
                return TransitionChange(instant, change, None, state)
            return TransitionChange(instant, change, state, None)

        return AutoscalerDiff(
            namespace=either.namespace,
            name=either.name,
            change=change,
            old=old,
            new=new,
            start=one_sided(at, either.state),
            transitions=[one_sided(instant, state) for instant, state in either.transitions],
        )
    start = None
    if old.state != new.state:
        start = TransitionChange(at, Change.CHANGED, old.state, new.state)
    was, now = dict(old.transitions), dict(new.transitions)
    transitions = []
    for instant in sorted(was.keys() | now.keys()):
        before, after = was.get(instant), now.get(instant)
        if before == after:
            continue
        if before is None:
            transitions.append(TransitionChange(instant, Change.ADDED, None, after))
        elif after is None:
            transitions.append(TransitionChange(instant, Change.REMOVED, before, None))
        else:
            transitions.append(TransitionChange(instant, Change.CHANGED, before, after))
    if start is None and not transitions:
        return None
    return AutoscalerDiff(
        namespace=new.namespace,
        name=new.name,
        change=Change.CHANGED,
        old=old,
        new=new,
        start=start,
        transitions=transitions,
    )


def render_diff_table(diff: PlanDiff) -> str:
    """Per autoscaler that differs, its differing transitions, one row each marked `+`, `-` or
    `!`; then one line for the unchanged ones (the errors are for standard error)."""
    lines = [
        f"Plan diff from {format_instant(diff.at)} until {format_instant(diff.until)} "
        "(times in UTC)",
        f"--- old: {diff.old_label}",
        f"+++ new: {diff.new_label}",
    ]
    for autoscaler in diff.autoscalers:
        lines += ["", f"{autoscaler.title}: {_summary(autoscaler)}"]
        old_zones = transition_zones(autoscaler.old) if autoscaler.old else {}
        new_zones = transition_zones(autoscaler.new) if autoscaler.new else {}
        rows = [[" ", "FROM", "MIN", "MAX", "ACTIVE SCHEDULES", "LOCAL"]]
        entries = [autoscaler.start] if autoscaler.start else []
        for entry in [*entries, *autoscaler.transitions]:
            if entry is autoscaler.start:
                local = "(start of the range)"
            else:
                zones = (new_zones if entry.new is not None else old_zones).get(entry.time, [])
                local = local_times(entry.time, zones)
            rows.append(
                [
                    _MARKS[entry.change],
                    format_instant(entry.time),
                    _compared(entry, lambda state: str(state.min_replicas)),
                    _compared(entry, max_text),
                    _compared(entry, lambda state: ",".join(state.active) or "-"),
                    local,
                ]
            )
        lines.extend(columns(rows))
    lines.append("")
    lines.append(_unchanged_line(diff))
    return "\n".join(lines)


def _summary(autoscaler: AutoscalerDiff) -> str:
    steps = len(autoscaler.transitions)
    if autoscaler.change is Change.ADDED:
        return f"added, {steps} transition(s) in the range"
    if autoscaler.change is Change.REMOVED:
        return f"removed, {steps} transition(s) in the range"
    counts = ", ".join(
        f"{autoscaler.count(change)} {change.value}"
        for change in Change
        if autoscaler.count(change)
    )
    parts = ["values at the start changed"] if autoscaler.start is not None else []
    if counts:
        parts.append(f"transitions {counts}")
    return "changed: " + "; ".join(parts)


def _unchanged_line(diff: PlanDiff) -> str:
    if not diff.unchanged:
        return (
            "No ScheduledPodAutoscaler unchanged."
            if diff.differs
            else ("No ScheduledPodAutoscaler on either side.")
        )
    names = [f"{namespace}/{name}" for namespace, name in diff.unchanged]
    shown = ", ".join(names[:_UNCHANGED_NAMED])
    if len(names) > _UNCHANGED_NAMED:
        shown += f" and {len(names) - _UNCHANGED_NAMED} more"
    return f"Unchanged: {len(names)} ScheduledPodAutoscaler(s) ({shown})"


def _compared(entry: TransitionChange, text: Callable[[State], str]) -> str:
    """A cell: the one side's value, or `old -> new` where a changed transition differs."""
    if entry.old is None or entry.new is None:
        state = entry.new if entry.new is not None else entry.old
        assert state is not None
        return text(state)
    before, after = text(entry.old), text(entry.new)
    return after if before == after else f"{before} -> {after}"


def render_diff_errors(diff: PlanDiff) -> str:
    """Both sides' errors for standard error, one `error: ` line each, saying whose."""
    return "\n".join(
        f"error: {found.side.value} ({_label(diff, found.side)}): {describe_error(found.error)}"
        for found in diff.errors
    )


def _label(diff: PlanDiff, side: Side) -> str:
    return diff.old_label if side is Side.OLD else diff.new_label


def render_diff_json(diff: PlanDiff) -> str:
    """The JSON document of docs/plan.md, "`--diff`", one autoscaler, transition or error per
    line as `render_json` lays out the plan."""
    autoscalers = []
    for autoscaler in diff.autoscalers:
        head = encode(
            {
                "namespace": autoscaler.namespace,
                "name": autoscaler.name,
                "change": autoscaler.change.value,
                "start": None if autoscaler.start is None else _states(autoscaler.start),
            }
        )
        transitions = [
            encode(
                {"time": format_instant(entry.time), "change": entry.change.value, **_states(entry)}
            )
            for entry in autoscaler.transitions
        ]
        autoscalers.append(f'{head[:-1]}, "transitions": {join_lines(transitions, depth=3)}}}')
    unchanged = [encode({"namespace": ns, "name": name}) for ns, name in diff.unchanged]
    errors = [
        encode({"side": found.side.value, **error_fields(found.error)}) for found in diff.errors
    ]
    return "\n".join(
        [
            "{",
            f'  "at": {encode(format_instant(diff.at))},',
            f'  "until": {encode(format_instant(diff.until))},',
            f'  "old": {encode(diff.old_label)},',
            f'  "new": {encode(diff.new_label)},',
            f'  "autoscalers": {join_lines(autoscalers, depth=2)},',
            f'  "unchanged": {join_lines(unchanged, depth=2)},',
            f'  "errors": {join_lines(errors, depth=2)}',
            "}",
        ]
    )


def render_diff_yaml(diff: PlanDiff) -> str:
    """The JSON document of `render_diff_json` as YAML (`-o yaml`, as for the plan)."""
    return as_yaml(render_diff_json(diff))


def _states(entry: TransitionChange) -> dict[str, Any]:
    return {
        "old": None if entry.old is None else state_fields(entry.old),
        "new": None if entry.new is None else state_fields(entry.new),
    }
