"""Lead times as written (a duration, or Auto) and the leads in force of an SPA.

`leadTime: Auto` and `capacity.leadTime: Auto` are learned from the SPA's own status.windows
(docs/schedules.md, "Auto lead times"): what is in the API server, so every replica, a
restarted controller and `spa plan --from-cluster` find the same value. The rule on numbers is
spa.schedule.learned_lead; here, which recorded windows count and what each one needed:

- pods: a window Ready at all (Early or Late) needed `readyAt - raisedAt` (without the wait
  for nodes when a capacity lead ordered them: that wait is the node lead's to learn);
- nodes: the time from ordering capacity to the nodes standing (`nodesReadyAt -
  capacityHeldAt`) when measured; else, when the pods waited for nodes (`podsWaitedSeconds`
  over NO_WAIT_SECONDS), the capacity's head start plus the wait; when they did not wait, at
  most the head start (censored);
- a Missed or Pending window is not learned from (more lead does not fix a quota, the
  HPA's max or a pause; the window says why instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from spa.api.resources import (
    AUTO_LEAD_TIME,
    LeadInForce,
    LeadTimeBounds,
    ScheduledPodAutoscaler,
    WindowRecord,
)
from spa.api.validation.messages import FieldError, described
from spa.schedule import MAX_LEAD_SECONDS, go_duration_seconds
from spa.schedule.learned_lead import (
    DEFAULT_MAX_LEAD_SECONDS,
    DEFAULT_NODE_LEAD_SECONDS,
    DEFAULT_POD_LEAD_SECONDS,
    LeadSource,
    LearnedLead,
    Need,
    fixed_lead,
    learned_lead,
    spoken_seconds,
)

__all__ = [
    "NO_WAIT_SECONDS",
    "AutoBounds",
    "LeadsInForce",
    "auto_bounds",
    "autoscaler_leads",
    "bounds_errors",
    "in_force",
    "is_auto",
    "learned_node_lead",
    "learned_pod_lead",
    "node_needs",
    "pod_needs",
]


NO_WAIT_SECONDS = 5
"""A window whose pods waited at most this long for a node did not wait for nodes: that is
kube-scheduler's own time to bind them (seconds for a burst of a fleet's pods), which a pod
scheduled at once shows too (docs/api.md, "status.windows"). Counted as a wait, it would make
every window in which nothing changed ask for its head start plus a margin, and the capacity
lead would creep up."""


def _node_wait(window: WindowRecord) -> int | None:
    """How long the window's pods waited for nodes (0: not at all; None: not measured)."""
    waited = window.pods_waited_seconds
    if waited is None:
        return None
    return waited if waited > NO_WAIT_SECONDS else 0


def is_auto(text: object) -> bool:
    return text == AUTO_LEAD_TIME


@dataclass(frozen=True, slots=True)
class AutoBounds:
    floor: int = 0
    ceiling: int = DEFAULT_MAX_LEAD_SECONDS


def _seconds(text: str | None) -> int | None:
    if text is None:
        return None
    total = go_duration_seconds(text)
    return None if total is None else int(-(-total // 1))


def bounds_errors(bounds: object, field: str) -> list[FieldError]:
    """What is wrong with a leadTimeBounds at `field` (spec.leadTimeBounds or
    spec.capacity.leadTimeBounds): each bound above 24h, max below min."""
    if not isinstance(bounds, LeadTimeBounds):
        return []
    errors = []
    read: dict[str, int] = {}
    for name, text in (("min", bounds.min), ("max", bounds.max)):
        seconds = _seconds(text)
        if text is None:
            continue
        if seconds is None or seconds > MAX_LEAD_SECONDS:
            errors.append(
                FieldError(f"{field}.{name}", f"must be at most 24h, got {described(text)}")
            )
        else:
            read[name] = seconds
    if "min" in read and "max" in read and read["max"] < read["min"]:
        errors.append(
            FieldError(
                f"{field}.max",
                f"must be at least min ({bounds.min}), got {described(bounds.max or '')}",
            )
        )
    return errors


def auto_bounds(bounds: LeadTimeBounds | None) -> AutoBounds:
    """The bounds of an Auto lead (a valid leadTimeBounds, else the defaults)."""
    if bounds is None or bounds_errors(bounds, "bounds"):
        return AutoBounds()
    floor = _seconds(bounds.min) or 0
    ceiling = _seconds(bounds.max)
    return AutoBounds(floor, DEFAULT_MAX_LEAD_SECONDS if ceiling is None else ceiling)


def _instant(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _measured(window: WindowRecord) -> bool:
    return window.outcome in ("Early", "Late")


def pod_needs(windows: Sequence[WindowRecord]) -> list[Need]:
    """What each measured window needed of the pod lead, newest first."""
    needs = []
    for window in windows:
        ready, raised = _instant(window.ready_at), _instant(window.raised_at)
        if not _measured(window) or ready is None or raised is None:
            continue
        waited = (_node_wait(window) or 0) if window.capacity_lead is not None else 0
        needs.append(Need(max(0.0, ready - raised - waited)))
    return needs


def node_needs(windows: Sequence[WindowRecord]) -> list[Need]:
    """What each measured window needed of the nodes' head start over the pods, newest
    first (the capacity lead is the pod lead plus this)."""
    needs = []
    for window in windows:
        if not _measured(window):
            continue
        held, raised = _instant(window.capacity_held_at), _instant(window.raised_at)
        nodes = _instant(window.nodes_ready_at)
        waited = _node_wait(window)
        if held is not None and nodes is not None:
            needs.append(Need(max(0.0, nodes - held)))
        elif held is not None and raised is not None and waited is not None:
            head_start = max(0.0, raised - held)
            needs.append(Need(head_start + waited, censored=waited == 0))
        elif held is None and waited is not None:
            needs.append(Need(waited, censored=waited == 0))
    return needs


@dataclass(frozen=True, slots=True)
class LeadsInForce:
    """An SPA's own leads in force (those of its Schedules that set none themselves)."""

    pods: LearnedLead
    nodes: LearnedLead | None
    """None: it orders no node capacity."""
    nodes_explanation: str | None = None

    def pod_status(self) -> LeadInForce:
        return in_force(self.pods)

    def node_status(self) -> LeadInForce | None:
        if self.nodes is None:
            return None
        return in_force(self.nodes, self.nodes_explanation)


def in_force(lead: LearnedLead, explanation: str | None = None) -> LeadInForce:
    """The status form of a lead."""
    return LeadInForce(
        seconds=lead.seconds,
        source=lead.source.value,
        explanation=explanation or lead.explanation(),
    )


def _fixed(text: str | None) -> int:
    return min(_seconds(text) or 0, MAX_LEAD_SECONDS)


def _windows(autoscaler: ScheduledPodAutoscaler) -> list[WindowRecord]:
    return (autoscaler.status.windows or []) if autoscaler.status is not None else []


def learned_pod_lead(autoscaler: ScheduledPodAutoscaler) -> LearnedLead:
    """The pod lead Auto learns for this SPA (its leadTime: Auto, or a Schedule's)."""
    bounds = auto_bounds(autoscaler.spec.lead_time_bounds)
    return learned_lead(
        pod_needs(_windows(autoscaler)),
        default=DEFAULT_POD_LEAD_SECONDS,
        floor=bounds.floor,
        ceiling=bounds.ceiling,
    )


def learned_node_lead(
    autoscaler: ScheduledPodAutoscaler, pods: LearnedLead
) -> tuple[LearnedLead, str]:
    """The capacity lead Auto learns for this SPA over the pod lead `pods` in force, and its
    explanation: the pod lead plus the nodes' learned head start."""
    capacity = autoscaler.spec.capacity
    bounds = auto_bounds(None if capacity is None else capacity.lead_time_bounds)
    head_start = learned_lead(
        node_needs(_windows(autoscaler)),
        default=max(0, DEFAULT_NODE_LEAD_SECONDS - pods.seconds),
        floor=max(0, bounds.floor - pods.seconds),
        ceiling=max(0, bounds.ceiling - pods.seconds),
    )
    nodes = LearnedLead(
        seconds=pods.seconds + head_start.seconds,
        source=head_start.source,
        windows=head_start.windows,
        need=head_start.need,
        margin=head_start.margin,
        bound=head_start.bound,
    )
    if head_start.source is LeadSource.Default:
        return nodes, f"default {spoken_seconds(nodes.seconds)} until measured"
    return nodes, f"leadTime {spoken_seconds(pods.seconds)} + nodes {head_start.explanation()}"


def autoscaler_leads(autoscaler: ScheduledPodAutoscaler) -> LeadsInForce:
    """The SPA's leads in force now: fixed, or Auto learned from its status.windows.

    The capacity lead is never below the pod lead in force (nodes ordered after the pods
    cannot help them): a learned pod lead longer than a fixed capacity lead raises it."""
    spec = autoscaler.spec
    if is_auto(spec.lead_time):
        pods = learned_pod_lead(autoscaler)
    else:
        pods = fixed_lead(_fixed(spec.lead_time))
    if spec.capacity is None:
        return LeadsInForce(pods=pods, nodes=None)
    if not is_auto(spec.capacity.lead_time):
        seconds = _fixed(spec.capacity.lead_time)
        if seconds >= pods.seconds:
            return LeadsInForce(pods=pods, nodes=fixed_lead(seconds))
        raised = LearnedLead(seconds=pods.seconds, source=pods.source)
        return LeadsInForce(
            pods=pods,
            nodes=raised,
            nodes_explanation=f"leadTime {spoken_seconds(pods.seconds)}: never below it",
        )
    nodes, explanation = learned_node_lead(autoscaler, pods)
    return LeadsInForce(pods=pods, nodes=nodes, nodes_explanation=explanation)
