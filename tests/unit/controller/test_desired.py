"""The generated HPA and the "write only when it differs" rule, without an API server."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from spa.api import parse_scheduled_pod_autoscaler
from spa.controller.desired import (
    FIELD_MANAGER,
    MANAGED_BY_LABEL,
    HpaComparison,
    compare_hpa,
    controller_owner_uid,
    desired_hpa,
    foreign_controller,
    hpa_in_sync,
    hpa_patch,
    orphaned_hpa,
    spec_hash,
    with_condition,
)
from spa.controller.shards import SHARD_LABEL
from spa.schedule import State
from tests.builders import autoscaler

AUTOSCALER = autoscaler(
    name="nginx",
    metadata={"uid": "uid-1", "generation": 2},
    metrics=None,
    behavior={"scaleDown": {"stabilizationWindowSeconds": 60}},
)


PUSH_ACTIVE = State(5, 20, ("push",))


def desired(state: State = PUSH_ACTIVE, autoscaler: dict[str, Any] = AUTOSCALER) -> dict[str, Any]:
    return desired_hpa(
        autoscaler, parse_scheduled_pod_autoscaler(autoscaler), state, api_version="autoscaling/v2"
    )


def server_copy(hpa: dict[str, Any]) -> dict[str, Any]:
    """What the API server returns: our object plus defaults and bookkeeping."""
    stored = copy.deepcopy(hpa)
    stored["metadata"].update(uid="hpa-uid", resourceVersion="42")
    stored["spec"]["metrics"] = [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    stored["spec"]["behavior"]["scaleDown"].update(
        selectPolicy="Max", policies=[{"type": "Percent", "value": 100, "periodSeconds": 15}]
    )
    stored["spec"]["behavior"]["scaleUp"] = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max"}
    stored["status"] = {"currentReplicas": 0, "desiredReplicas": 0}
    return stored


def test_hpa_is_the_base_spec_with_effective_bounds_owned_and_labelled() -> None:
    hpa = desired()
    assert hpa["spec"] == {
        **AUTOSCALER["spec"]["horizontalPodAutoscalerSpec"],
        "minReplicas": 5,
        "maxReplicas": 20,
    }
    assert hpa["metadata"]["name"] == "nginx"
    assert hpa["metadata"]["namespace"] == "shop"
    assert hpa["metadata"]["labels"] == {MANAGED_BY_LABEL: FIELD_MANAGER}
    assert hpa["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "autoscaling.d-kuro.github.io/v1",
            "kind": "ScheduledPodAutoscaler",
            "name": "nginx",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert controller_owner_uid(hpa) == "uid-1"


def test_server_defaults_do_not_make_a_difference() -> None:
    assert hpa_in_sync(server_copy(desired()), desired())


def test_manual_edit_of_bounds_is_a_difference() -> None:
    edited = server_copy(desired())
    edited["spec"]["minReplicas"] = 1
    assert not hpa_in_sync(edited, desired())


def test_new_effective_values_are_a_difference() -> None:
    assert not hpa_in_sync(server_copy(desired()), desired(State(3, 10, ())))


def test_field_removed_from_the_autoscaler_is_a_difference() -> None:
    """Without the hash, a removed `behavior` would look in sync (the HPA still has more)."""
    trimmed = copy.deepcopy(AUTOSCALER)
    del trimmed["spec"]["horizontalPodAutoscalerSpec"]["behavior"]
    assert not hpa_in_sync(server_copy(desired()), desired(autoscaler=trimmed))


def test_removed_label_is_a_difference() -> None:
    stored = server_copy(desired())
    stored["metadata"]["labels"] = {}
    assert not hpa_in_sync(stored, desired())


def in_shard(shard: str) -> dict[str, Any]:
    labelled = copy.deepcopy(AUTOSCALER)
    labelled["metadata"]["labels"] = {SHARD_LABEL: shard, "team": "shop"}
    return labelled


def test_the_hpa_carries_its_autoscalers_shard_label_and_no_other_of_its_labels() -> None:
    """A label shard selects its HPAs by it (docs/runtime.md, "Shards")."""
    assert desired(autoscaler=in_shard("a"))["metadata"]["labels"] == {
        MANAGED_BY_LABEL: FIELD_MANAGER,
        SHARD_LABEL: "a",
    }


def test_an_hpa_of_another_shard_or_of_none_is_a_difference() -> None:
    """An HPA written before the label, or before its SPA moved shard, is labelled by a write;
    a shard label its SPA lost is removed by one."""
    unlabelled = server_copy(desired())
    assert not hpa_in_sync(unlabelled, desired(autoscaler=in_shard("a")))
    assert (
        compare_hpa(
            unlabelled, desired(autoscaler=in_shard("a")), stored_spec=spec_hash(unlabelled["spec"])
        )
        is HpaComparison.DIFFERS
    )
    in_a = server_copy(desired(autoscaler=in_shard("a")))
    assert hpa_in_sync(in_a, desired(autoscaler=in_shard("a")))
    assert not hpa_in_sync(in_a, desired(autoscaler=in_shard("b")))
    assert not hpa_in_sync(in_a, desired())


def test_the_patch_moves_the_shard_label_with_the_autoscaler() -> None:
    in_a = server_copy(desired(autoscaler=in_shard("a")))
    in_a["metadata"]["labels"]["team"] = "shop"
    for wanted, labels in (
        (desired(autoscaler=in_shard("b")), {SHARD_LABEL: "b"}),
        (desired(), {}),
    ):
        patched = merge_patch(in_a, hpa_patch(in_a, wanted))
        assert patched["metadata"]["labels"] == {
            MANAGED_BY_LABEL: FIELD_MANAGER,
            "team": "shop",
            **labels,
        }
        assert hpa_in_sync(patched, wanted)
    # Without a shard label on either side the patch does not name one.
    unlabelled = server_copy(desired())
    assert SHARD_LABEL not in hpa_patch(unlabelled, desired())["metadata"]["labels"]


def test_list_lengths_matter() -> None:
    with_metrics = copy.deepcopy(AUTOSCALER)
    with_metrics["spec"]["horizontalPodAutoscalerSpec"]["metrics"] = [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        },
        {
            "type": "Resource",
            "resource": {
                "name": "memory",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        },
    ]
    stored = server_copy(desired(autoscaler=with_metrics))
    stored["spec"]["metrics"] = stored["spec"]["metrics"][:1]
    assert not hpa_in_sync(stored, desired(autoscaler=with_metrics))


def test_foreign_controller_is_not_ours() -> None:
    foreign = {
        "metadata": {
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "uid": "x", "controller": True}
            ]
        }
    }
    assert controller_owner_uid(foreign) is None
    assert controller_owner_uid({"metadata": {}}) is None


def test_condition_transition_time_kept_while_status_unchanged() -> None:
    first = with_condition(
        None, type_="Ready", status="True", reason="Applied", message="a", generation=1, now="T1"
    )
    second = with_condition(
        first, type_="Ready", status="True", reason="Applied", message="b", generation=2, now="T2"
    )
    third = with_condition(
        second,
        type_="Ready",
        status="False",
        reason="HPAConflict",
        message="c",
        generation=2,
        now="T3",
    )
    assert [c["lastTransitionTime"] for c in (first[0], second[0], third[0])] == ["T1", "T1", "T3"]
    assert second[0]["observedGeneration"] == 2


def test_other_conditions_are_kept() -> None:
    others = [
        {
            "type": "Stalled",
            "status": "False",
            "reason": "X",
            "message": "",
            "lastTransitionTime": "T0",
        }
    ]
    result = with_condition(
        others,
        type_="Ready",
        status="True",
        reason="Applied",
        message="",
        generation=None,
        now="T1",
    )
    assert [c["type"] for c in result] == ["Ready", "Stalled"]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386, written out here as the reference the API server implements."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def test_patch_makes_the_spec_exactly_the_desired_one() -> None:
    trimmed = copy.deepcopy(AUTOSCALER)
    del trimmed["spec"]["horizontalPodAutoscalerSpec"]["behavior"]
    current = server_copy(desired())
    current["spec"]["minReplicas"] = 1  # a manual edit
    current["metadata"]["labels"]["team"] = "shop"
    current["metadata"]["ownerReferences"].append(
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "cm"}
    )
    wanted = desired(State(4, 9, ()), autoscaler=trimmed)
    patched = merge_patch(current, hpa_patch(current, wanted))
    assert patched["spec"] == wanted["spec"]
    assert patched["metadata"]["labels"] == {MANAGED_BY_LABEL: FIELD_MANAGER, "team": "shop"}
    assert [o["uid"] for o in patched["metadata"]["ownerReferences"]] == ["cm", "uid-1"]
    assert patched["status"] == current["status"]
    assert hpa_in_sync(patched, wanted)


def test_patch_replaces_nested_maps_field_by_field() -> None:
    current = server_copy(desired())
    patch = hpa_patch(current, desired())
    # Server defaults inside behavior are cleared; the server sets them again after the write.
    assert patch["spec"]["behavior"]["scaleDown"]["selectPolicy"] is None
    assert patch["spec"]["behavior"]["scaleUp"] is None
    assert patch["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60


# -- convergence (docs/architecture.md, "Convergence") ------------------------------------------


def canonical(hpa: dict[str, Any]) -> dict[str, Any]:
    """What the API server stores for a spec with a quantity it spells its own way."""
    stored = server_copy(hpa)
    stored["spec"]["metrics"] = [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "requests"},
                "target": {"type": "AverageValue", "averageValue": "1k"},
            },
        }
    ]
    return stored


def with_pods_metric() -> dict[str, Any]:
    autoscaler = copy.deepcopy(AUTOSCALER)
    autoscaler["spec"]["horizontalPodAutoscalerSpec"]["metrics"] = [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "requests"},
                "target": {"type": "AverageValue", "averageValue": 1000},
            },
        }
    ]
    return desired(autoscaler=autoscaler)


def test_a_literal_match_is_in_sync_without_asking() -> None:
    assert compare_hpa(server_copy(desired()), desired(), stored_spec=None) is HpaComparison.IN_SYNC


def test_a_server_spelling_is_unknown_until_the_server_says_what_it_stores() -> None:
    wanted = with_pods_metric()
    stored = canonical(wanted)
    assert not hpa_in_sync(stored, wanted)  # what made the first version loop
    assert compare_hpa(stored, wanted, stored_spec=None) is HpaComparison.ASK_SERVER
    assert (
        compare_hpa(stored, wanted, stored_spec=spec_hash(stored["spec"])) is HpaComparison.IN_SYNC
    )


def test_with_the_stored_spec_known_any_edit_differs_even_of_a_defaulted_field() -> None:
    stored = server_copy(desired())
    known = spec_hash(stored["spec"])
    edited = copy.deepcopy(stored)
    edited["spec"]["behavior"]["scaleDown"]["policies"][0]["value"] = 50
    assert compare_hpa(edited, desired(), stored_spec=known) is HpaComparison.DIFFERS
    edited = copy.deepcopy(stored)
    edited["spec"]["minReplicas"] = 1
    assert compare_hpa(edited, desired(), stored_spec=known) is HpaComparison.DIFFERS


def test_missing_metadata_differs_whatever_the_spec() -> None:
    stored = server_copy(desired())
    known = spec_hash(stored["spec"])
    for field in ("labels", "annotations", "ownerReferences"):
        edited = copy.deepcopy(stored)
        edited["metadata"][field] = {} if field != "ownerReferences" else []
        assert compare_hpa(edited, desired(), stored_spec=known) is HpaComparison.DIFFERS, field


def test_controller_references_of_other_kinds_are_foreign() -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "cm",
        "uid": "u",
        "controller": True,
    }
    assert foreign_controller({"metadata": {"ownerReferences": [configmap]}}) == "ConfigMap cm"
    not_controller = {**configmap, "controller": False}
    assert foreign_controller({"metadata": {"ownerReferences": [not_controller]}}) is None
    assert foreign_controller(desired()) is None  # our own controller reference
    assert foreign_controller({"metadata": {}}) is None


def test_an_hpa_is_orphaned_when_labelled_ours_with_no_controller() -> None:
    hpa = server_copy(desired())
    assert not orphaned_hpa(hpa)
    hpa["metadata"]["ownerReferences"] = []
    assert orphaned_hpa(hpa)
    hpa["metadata"]["labels"] = {}
    assert not orphaned_hpa(hpa)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@example({"\x7f": None})  # orjson writes DEL raw, `json` escapes it
@given(st.dictionaries(st.text(), _JSON_VALUES, max_size=6))
def test_the_spec_hash_is_that_of_the_canonical_json_every_hpa_carries(
    spec: dict[str, Any],
) -> None:
    """The hash written into every HPA's annotation so far: a different one would make the
    controller rewrite each HPA once after an upgrade. orjson serves it where it writes the
    same bytes (text, integers, booleans, null: what an HPA spec holds); non-ASCII text and
    integers beyond 64 bits go through `json`."""
    reference = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    assert spec_hash(spec) == hashlib.sha256(reference.encode()).hexdigest()[:16]
