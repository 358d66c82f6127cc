"""What the cluster should look like for one ScheduledPodAutoscaler, as plain JSON dicts.

Pure functions, kept apart from the reconciler so that the rules of docs/architecture.md (the
generated HPA, when it needs a write, the status fields and when they change) can be tested
without an API server, and so that "write only on change" is one comparison in one place.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import orjson

from spa.api import API_VERSION, SCHEDULED_POD_AUTOSCALER, ScheduledPodAutoscaler, wire
from spa.api.membership import (  # part of the rule shared with `spa plan`
    controller_owner_uid,
    foreign_controller,
)
from spa.controller.shards import SHARD_LABEL
from spa.schedule import State

__all__ = [
    "FIELD_MANAGER",
    "MANAGED_BY_LABEL",
    "MANAGED_BY_SELECTOR",
    "SPEC_HASH_ANNOTATION",
    "HpaComparison",
    "compare_hpa",
    "controller_owner_uid",
    "desired_hpa",
    "foreign_controller",
    "hpa_in_sync",
    "hpa_patch",
    "orphaned_hpa",
    "owner_reference",
    "spec_hash",
    "with_condition",
]

FIELD_MANAGER = "scheduled-pod-autoscaler"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_SELECTOR = f"{MANAGED_BY_LABEL}={FIELD_MANAGER}"
# The hash of the spec last applied. The API server fills in defaults (metrics, behavior
# policies), so the HPA's spec never equals ours field for field; comparing what we set plus
# this hash tells a real difference (a manual edit, a changed SPA) from server defaults.
SPEC_HASH_ANNOTATION = "autoscaling.d-kuro.github.io/spec-hash"


def owner_reference(autoscaler: wire.ScheduledPodAutoscaler) -> wire.OwnerReference:
    """A controller ownerReference to the SPA: garbage collection deletes the dependent with
    it, and foreground deletion waits for the dependent."""
    metadata = autoscaler["metadata"]
    return {
        "apiVersion": API_VERSION,
        "kind": SCHEDULED_POD_AUTOSCALER,
        "name": metadata["name"],
        "uid": metadata["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def orphaned_hpa(obj: wire.HorizontalPodAutoscaler) -> bool:
    """An HPA with our label and no controller at all: ours before its SPA was deleted with
    `propagationPolicy=Orphan`; the SPA of the same name adopts it (docs/architecture.md)."""
    metadata = obj.get("metadata") or {}
    return (metadata.get("labels") or {}).get(MANAGED_BY_LABEL) == FIELD_MANAGER and not any(
        isinstance(reference, Mapping) and reference.get("controller")
        for reference in metadata.get("ownerReferences") or ()
    )


def desired_hpa(
    autoscaler_object: wire.ScheduledPodAutoscaler,
    autoscaler: ScheduledPodAutoscaler,
    state: State,
    *,
    api_version: str,
) -> wire.NewHorizontalPodAutoscaler:
    """The whole HPA as the controller applies it: the base spec with the effective bounds,
    labelled with its SPA's shard where the SPA has one, so that a shard lists and watches
    only its own HPAs (docs/runtime.md, "Shards")."""
    spec = wire.typed(
        wire.HorizontalPodAutoscalerSpec, autoscaler.spec.horizontal_pod_autoscaler_spec.to_wire()
    )
    spec["minReplicas"] = state.min_replicas
    spec["maxReplicas"] = state.max_replicas
    metadata = autoscaler_object["metadata"]
    labels = {MANAGED_BY_LABEL: FIELD_MANAGER}
    shard = (metadata.get("labels") or {}).get(SHARD_LABEL)
    if shard is not None:
        labels[SHARD_LABEL] = shard
    return {
        "apiVersion": api_version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": metadata["name"],
            "namespace": metadata["namespace"],
            "labels": labels,
            "annotations": {SPEC_HASH_ANNOTATION: spec_hash(spec)},
            "ownerReferences": [owner_reference(autoscaler_object)],
        },
        "spec": spec,
    }


def spec_hash(spec: Mapping[str, Any]) -> str:
    """The first 16 hex digits of the SHA-256 of the spec's canonical JSON: keys sorted, no
    spaces, non-ASCII and DEL escaped (the bytes of `json.dumps(sort_keys=True,
    separators=(",", ":"))`, which every HPA written so far carries in its annotation).
    orjson writes the same bytes for what an HPA spec holds (text, integers, booleans, null)
    about 10 times faster, and is taken where its bytes are printable ASCII; anything else
    (non-ASCII text, DEL, a number orjson cannot hold) is encoded by `json` as before
    (docs/performance.md, "2026-11-26: the boundary")."""
    try:
        canonical = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        canonical = b"\x80"  # not ASCII: encoded below
    # `json` escapes DEL (0x7f), an ASCII byte orjson writes as it is: only printable ASCII
    # is the same bytes both ways.
    if not canonical.isascii() or b"\x7f" in canonical:
        canonical = json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()[:16]


def hpa_in_sync(
    current: wire.HorizontalPodAutoscaler, desired: wire.NewHorizontalPodAutoscaler
) -> bool:
    """Whether `current` visibly is what applying `desired` would make it, value by value.

    Every field we set must have our value (this catches manual edits of min/maxReplicas),
    the last applied spec must be this one (this catches fields removed from the SPA), and
    our label and owner must be in place. A False is not final: the API server rewrites some
    values it stores (see :func:`compare_hpa`).
    """
    return _ours(current, desired) and _contains(current.get("spec"), desired["spec"])


class HpaComparison(enum.Enum):
    """What :func:`compare_hpa` concludes."""

    IN_SYNC = "in sync"
    DIFFERS = "differs"
    # Our metadata is in place but values differ literally, and nothing tells whether that is
    # the API server's rewriting of our own last write or somebody's edit: ask the server.
    ASK_SERVER = "ask the server"


def compare_hpa(
    current: wire.HorizontalPodAutoscaler,
    desired: wire.NewHorizontalPodAutoscaler,
    *,
    stored_spec: str | None,
) -> HpaComparison:
    """Whether `current` is what the API server makes of `desired` (docs/architecture.md,
    "Convergence").

    The server does not store every value as sent: quantities become canonical (`1000` ->
    `"1k"`), empty lists and selectors are defaulted or dropped, fields of disabled features
    vanish. So besides the literal comparison, `stored_spec` is the :func:`spec_hash` of the
    spec the server stored (or, dry-run, would store) for this same desired spec, as its answer
    said; a live spec with that hash is in sync however the server spelled it. No list of
    normalisations is kept here, so none can go stale.
    """
    if not _ours(current, desired):
        return HpaComparison.DIFFERS
    spec: wire.HorizontalPodAutoscalerSpec = current.get("spec") or {}
    if stored_spec is not None:
        # Exact: this also sees an edit of a field the server defaulted.
        return HpaComparison.IN_SYNC if spec_hash(spec) == stored_spec else HpaComparison.DIFFERS
    if _contains(spec, desired["spec"]):
        return HpaComparison.IN_SYNC
    return HpaComparison.ASK_SERVER


def _ours(current: wire.HorizontalPodAutoscaler, desired: wire.NewHorizontalPodAutoscaler) -> bool:
    """Our labels (the shard's as the SPA's, or none), the hash of this desired spec and our
    controller reference are in place."""
    metadata = current.get("metadata") or {}
    labels = metadata.get("labels") or {}
    wanted = desired["metadata"]
    return (
        (metadata.get("annotations") or {}).get(SPEC_HASH_ANNOTATION)
        == wanted["annotations"][SPEC_HASH_ANNOTATION]
        and labels.get(MANAGED_BY_LABEL) == FIELD_MANAGER
        and labels.get(SHARD_LABEL) == wanted["labels"].get(SHARD_LABEL)
        and controller_owner_uid(current) == wanted["ownerReferences"][0]["uid"]
    )


def hpa_patch(
    current: wire.HorizontalPodAutoscaler, desired: wire.NewHorizontalPodAutoscaler
) -> dict[str, Any]:
    """A JSON merge patch (RFC 7386) that turns `current` into `desired`.

    Keys of the current spec that the desired spec lacks are set to null, so a field removed
    from the ScheduledPodAutoscaler is removed from the HPA too (the API server then applies
    its defaults again); labels and annotations of others are kept, and so are ownerReferences
    that do not make an object our HPA's controller. A shard label the SPA no longer has is
    removed.
    """
    metadata = current.get("metadata") or {}
    others = [
        reference
        for reference in metadata.get("ownerReferences") or ()
        if not reference.get("controller")
    ]
    wanted = desired["metadata"]
    labels: dict[str, str | None] = dict(wanted["labels"])
    if SHARD_LABEL in (metadata.get("labels") or {}):
        labels.setdefault(SHARD_LABEL, None)
    return {
        "metadata": {
            "labels": labels,
            "annotations": wanted["annotations"],
            "ownerReferences": [*others, *wanted["ownerReferences"]],
        },
        "spec": _replacement(current.get("spec") or {}, desired["spec"]),
    }


def _replacement(current: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for key, value in desired.items():
        existing = current.get(key)
        if isinstance(value, Mapping) and isinstance(existing, Mapping):
            patch[key] = _replacement(existing, value)
        else:
            patch[key] = value
    for key in current.keys() - desired.keys():
        patch[key] = None
    return patch


def _contains(actual: Any, wanted: Any) -> bool:
    """`wanted` is found in `actual`, which may have more (server-defaulted) fields."""
    if isinstance(wanted, Mapping):
        return isinstance(actual, Mapping) and all(
            _contains(actual.get(key), value) for key, value in wanted.items()
        )
    if isinstance(wanted, Sequence) and not isinstance(wanted, str):
        return (
            isinstance(actual, Sequence)
            and not isinstance(actual, str)
            and len(actual) == len(wanted)
            and all(_contains(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def with_condition(
    conditions: Sequence[wire.Condition] | None,
    *,
    type_: str,
    status: Literal["True", "False", "Unknown"],
    reason: str,
    message: str,
    generation: int | None,
    now: str,
) -> list[wire.Condition]:
    """`conditions` with one condition set, its lastTransitionTime kept unless its status
    changes (the metav1.Condition convention)."""
    result: list[wire.Condition] = []
    previous = None
    for condition in conditions or ():
        if condition.get("type") == type_:
            previous = condition
        else:
            result.append(condition.copy())
    transition = now
    if previous is not None and previous.get("status") == status:
        transition = str(previous.get("lastTransitionTime") or now)
    entry: wire.Condition = {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": transition,
    }
    if generation is not None:
        entry["observedGeneration"] = generation
    result.append(entry)
    return sorted(result, key=lambda condition: str(condition.get("type")))
