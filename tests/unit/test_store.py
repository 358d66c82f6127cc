"""Store: keys, indexes kept right through adds, updates and deletes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from spa.runtime import (
    Store,
    compare_resource_versions,
    drop_bookkeeping,
    object_key,
    share_strings,
    split_key,
)


def obj(
    name: str, namespace: str | None = "ns", owner: str | None = None, rv: str = "1"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "resourceVersion": rv}
    if namespace is not None:
        metadata["namespace"] = namespace
    if owner is not None:
        metadata["ownerReferences"] = [{"uid": owner, "controller": True}]
    return {"metadata": metadata}


def by_owner(o: dict[str, Any]) -> list[str]:
    return [ref["uid"] for ref in o["metadata"].get("ownerReferences", [])]


def test_keys_are_namespace_slash_name_and_round_trip() -> None:
    assert object_key(obj("a")) == "ns/a"
    assert object_key(obj("node-1", namespace=None)) == "node-1"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("node-1") == (None, "node-1")


def test_upsert_get_list_delete() -> None:
    store = Store()
    assert store.upsert(obj("a")) is None
    replaced = store.upsert(obj("a", rv="2"))
    assert replaced is not None
    assert replaced["metadata"]["resourceVersion"] == "1"
    store.upsert(obj("b"))
    assert store.get("ns/a")["metadata"]["resourceVersion"] == "2"  # type: ignore[index]
    assert sorted(store.keys()) == ["ns/a", "ns/b"]
    assert len(store.list()) == 2
    assert "ns/a" in store
    assert store.delete("ns/a") is not None
    assert store.get("ns/a") is None
    assert store.delete("ns/a") is None
    assert len(store) == 1


def test_index_follows_updates_that_change_the_indexed_value() -> None:
    store = Store()
    store.add_indexer("owner", by_owner)
    store.upsert(obj("s1", owner="uid-1"))
    store.upsert(obj("s2", owner="uid-1"))
    store.upsert(obj("s3", owner="uid-2"))
    assert [object_key(o) for o in store.by_index("owner", "uid-1")] == ["ns/s1", "ns/s2"]

    # Re-parenting s2 must remove it from uid-1, not only add it to uid-2.
    store.upsert(obj("s2", owner="uid-2", rv="2"))
    assert store.keys_by_index("owner", "uid-1") == ["ns/s1"]
    assert store.keys_by_index("owner", "uid-2") == ["ns/s2", "ns/s3"]

    store.delete("ns/s1")
    assert store.by_index("owner", "uid-1") == []
    store.upsert(obj("s3", owner=None, rv="2"))
    assert store.keys_by_index("owner", "uid-2") == ["ns/s2"]


def test_indexer_added_late_indexes_existing_objects() -> None:
    store = Store()
    store.upsert(obj("s1", owner="uid-1"))
    store.add_indexer("owner", by_owner)
    assert store.keys_by_index("owner", "uid-1") == ["ns/s1"]


def test_multi_valued_index_and_duplicates() -> None:
    store = Store()
    store.add_indexer("letters", lambda o: list(o["metadata"]["name"]))
    store.upsert(obj("abba"))
    assert store.keys_by_index("letters", "a") == ["ns/abba"]
    assert store.keys_by_index("letters", "b") == ["ns/abba"]
    store.upsert(obj("abba", rv="2"))
    assert store.keys_by_index("letters", "a") == ["ns/abba"]


def test_unknown_index_and_duplicate_indexer_are_errors() -> None:
    store = Store()
    with pytest.raises(KeyError):
        store.by_index("nope", "x")
    store.add_indexer("owner", by_owner)
    with pytest.raises(ValueError, match="already exists"):
        store.add_indexer("owner", by_owner)


@pytest.mark.parametrize(
    ("a", "b", "order"),
    [
        ("9", "10", -1),
        ("10", "9", 1),
        ("123", "123", 0),
        ("124", "123", 1),
        ("1", "", None),
        ("1", None, None),
        ("01", "2", None),  # leading zero: not the integer form, left opaque
        ("0", "1", None),
        ("a1", "2", None),
        ("١٢", "3", None),  # digits, but not ASCII
    ],
)
def test_resource_versions_compare_as_integers_or_not_at_all(
    a: str | None, b: str | None, order: int | None
) -> None:
    assert compare_resource_versions(a, b) == order


def test_a_written_object_is_kept_until_the_watch_catches_up_with_it() -> None:
    store = Store()
    store.upsert(obj("a", rv="10"))
    # Our write, based on 10, answered with 12: stored.
    assert store.put_written(obj("a", rv="12"), based_on=obj("a", rv="10"))
    assert store.behind_own_write(obj("a", rv="11"))  # from before our write: keep ours
    assert not store.behind_own_write(obj("a", rv="12"))  # our own write, seen by the watch
    assert not store.behind_own_write(obj("a", rv="11"))  # caught up: the watch decides again


def test_a_write_answer_older_than_the_cache_is_not_stored() -> None:
    store = Store()
    store.upsert(obj("a", rv="10"))
    store.upsert(obj("a", rv="14"))  # the watch delivered a newer version meanwhile
    assert not store.put_written(obj("a", rv="12"), based_on=obj("a", rv="10"))
    assert store.get("ns/a")["metadata"]["resourceVersion"] == "14"  # type: ignore[index]
    # The answer is newer than the cache even though the cache moved on from our base.
    assert store.put_written(obj("a", rv="16"), based_on=obj("a", rv="12"))
    assert store.get("ns/a")["metadata"]["resourceVersion"] == "16"  # type: ignore[index]


def test_opaque_versions_trust_only_a_cache_still_at_the_base_of_the_write() -> None:
    store = Store()
    store.upsert(obj("a", rv="x1"))
    assert store.put_written(obj("a", rv="x2"), based_on=obj("a", rv="x1"))
    assert not store.behind_own_write(obj("a", rv="x0"))  # cannot tell: the watch decides
    store.upsert(obj("a", rv="x3"))
    assert not store.put_written(obj("a", rv="x4"), based_on=obj("a", rv="x2"))
    # A create (no base) is stored when nothing is cached, and not over a cached object.
    assert store.put_written(obj("b", rv="x5"), based_on=None)
    assert not store.put_written(obj("b", rv="x6"), based_on=None)


def test_upsert_and_delete_end_the_protection_of_a_write() -> None:
    store = Store()
    store.upsert(obj("a", rv="10"))
    store.put_written(obj("a", rv="12"), based_on=obj("a", rv="10"))
    store.upsert(obj("a", rv="11"))  # a relist is the truth, even if older
    assert not store.behind_own_write(obj("a", rv="11"))
    store.put_written(obj("a", rv="13"), based_on=obj("a", rv="11"))
    store.delete("ns/a")
    assert not store.behind_own_write(obj("a", rv="11"))


def test_a_transform_keeps_only_what_is_read_of_watched_and_written_objects() -> None:
    def applied(version: str) -> dict[str, Any]:
        return {
            "metadata": {
                "namespace": "ns",
                "name": "a",
                "resourceVersion": version,
                "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": '{"spec": {}}',
                    "autoscaling.d-kuro.github.io/spec-hash": "abc",
                },
            },
            "spec": {"x": 1},
        }

    store = Store(transform=drop_bookkeeping)
    watched = applied("1")
    store.upsert(watched)
    kept = store.get("ns/a")
    assert kept is not None
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["annotations"] == {"autoscaling.d-kuro.github.io/spec-hash": "abc"}
    assert kept["spec"] == {"x": 1}
    assert "managedFields" in watched["metadata"]  # the caller's object is left alone
    assert store.put_written(applied("2"), based_on=watched)
    written = store.get("ns/a")
    assert written is not None
    assert "managedFields" not in written["metadata"]
    assert written["metadata"]["resourceVersion"] == "2"
    plain = {"metadata": {"namespace": "ns", "name": "b"}}
    assert drop_bookkeeping(plain) is plain


def test_share_strings_shares_the_repeated_values_and_leaves_the_object_alone() -> None:
    """Two objects decoded apart hold one copy of their namespace, kind, names and condition
    fields, the rest is theirs; the objects handed in are not changed."""
    decoded = [
        orjson.loads(
            orjson.dumps(
                {
                    "kind": "Schedule",
                    "metadata": {"namespace": "shop", "name": "web", "uid": f"uid-{n}"},
                    "spec": {"scaleTargetRef": {"name": "web"}, "startTime": "12:00"},
                    "status": {"condition": "Available", "activeSchedules": ["noon"]},
                }
            )
        )
        for n in (1, 2)
    ]
    first, second = (share_strings(obj) for obj in decoded)
    assert first == decoded[0]
    assert second == decoded[1]
    assert first["metadata"]["namespace"] is second["metadata"]["namespace"]
    assert first["kind"] is second["kind"]
    assert first["metadata"]["name"] is second["spec"]["scaleTargetRef"]["name"]
    assert first["status"]["condition"] is second["status"]["condition"]
    assert first["status"]["activeSchedules"][0] is second["status"]["activeSchedules"][0]
    assert first["spec"]["startTime"] is not second["spec"]["startTime"]  # not a shared field
    assert decoded[0]["metadata"]["namespace"] is not decoded[1]["metadata"]["namespace"]


def test_object_key_is_one_string_for_every_holder() -> None:
    """Each store, index and queue holding a key holds the same string, not a copy each."""
    first = orjson.loads(b'{"metadata": {"namespace": "shop", "name": "web"}}')
    second = orjson.loads(b'{"metadata": {"namespace": "shop", "name": "web"}}')
    assert object_key(first) is object_key(second)
