"""Store: keys, indexes kept right through adds, updates and deletes, with the objects kept
as they are or compact at rest (each codec)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from spa.runtime import (
    Behind,
    Codec,
    DeflateCodec,
    JsonCodec,
    Store,
    compare_resource_versions,
    drop_bookkeeping,
    object_key,
    split_key,
)

NewStore = Callable[..., Store]


@pytest.fixture(params=["dicts", "json", "deflate"])
def new_store(request: pytest.FixtureRequest) -> NewStore:
    """Makes a Store of each kind: every behaviour below holds whatever it keeps at rest."""
    codecs: dict[str, Callable[[], Codec | None]] = {
        "dicts": lambda: None,
        "json": JsonCodec,
        "deflate": DeflateCodec,
    }
    make_codec = codecs[request.param]
    return lambda **options: Store(codec=make_codec(), **options)


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


def test_upsert_get_list_delete(new_store: NewStore) -> None:
    store = new_store()
    store.upsert(obj("a"))
    store.upsert(obj("a", rv="2"))
    store.upsert(obj("b"))
    assert store.get("ns/a")["metadata"]["resourceVersion"] == "2"  # type: ignore[index]
    assert sorted(store.keys()) == ["ns/a", "ns/b"]
    assert len(store.list()) == 2
    assert "ns/a" in store
    assert store.delete("ns/a") == obj("a", rv="2")
    assert store.get("ns/a") is None
    assert store.delete("ns/a") is None
    assert len(store) == 1


def test_index_follows_updates_that_change_the_indexed_value(new_store: NewStore) -> None:
    store = new_store()
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
    # Only values that still file an object (uid-1's last one was deleted).
    assert sorted(store.index_values("owner")) == ["uid-2"]


def test_indexer_added_late_indexes_existing_objects(new_store: NewStore) -> None:
    store = new_store()
    store.upsert(obj("s1", owner="uid-1"))
    store.add_indexer("owner", by_owner)
    assert store.keys_by_index("owner", "uid-1") == ["ns/s1"]


def test_multi_valued_index_and_duplicates(new_store: NewStore) -> None:
    store = new_store()
    store.add_indexer("letters", lambda o: list(o["metadata"]["name"]))
    store.upsert(obj("abba"))
    assert store.keys_by_index("letters", "a") == ["ns/abba"]
    assert store.keys_by_index("letters", "b") == ["ns/abba"]
    store.upsert(obj("abba", rv="2"))
    assert store.keys_by_index("letters", "a") == ["ns/abba"]


def test_unknown_index_and_duplicate_indexer_are_errors(new_store: NewStore) -> None:
    store = new_store()
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


def test_a_written_object_is_kept_until_the_watch_catches_up_with_it(new_store: NewStore) -> None:
    store = new_store()
    store.upsert(obj("a", rv="10"))
    # Our write, based on 10, answered with 12: stored.
    assert store.put_written(obj("a", rv="12"), based_on=obj("a", rv="10"))
    # From before our write, not one of ours: keep ours, and the handlers are owed it.
    assert store.behind_own_write(obj("a", rv="11")) == Behind(
        theirs=True, before=obj("a", rv="10")
    )
    assert store.behind_own_write(obj("a", rv="12")) is None  # our own write, seen by the watch
    assert store.behind_own_write(obj("a", rv="11")) is None  # caught up: the watch decides


def test_another_clients_change_inside_our_answer_is_told_apart_from_our_writes(
    new_store: NewStore,
) -> None:
    def version(rv: str, **fields: Any) -> dict[str, Any]:
        changed = {**obj("a", rv=rv), **fields}
        changed["metadata"]["managedFields"] = [{"manager": "someone"}]
        return changed

    store = new_store(transform=drop_bookkeeping)
    store.upsert(obj("a", rv="10"))
    # Two writes of ours on their way (12, 15) while another client changed the object at 13
    # and 14: our answer 15 carries those changes, and is what the cache keeps.
    assert store.put_written(version("12", status="ours"), based_on=store.get("ns/a"))
    answer = version("15", status="ours again", spec="theirs, then more of theirs")
    assert store.put_written(answer, based_on=store.get("ns/a"))

    assert store.behind_own_write(version("12", status="ours")) == Behind(theirs=False)
    behind = store.behind_own_write(version("13", status="ours", spec="theirs"))
    # Theirs, from what the watch showed before it (our 12, as stored): the handlers' update.
    assert behind == Behind(theirs=True, before={**obj("a", rv="12"), "status": "ours"})
    store.saw_theirs({**obj("a", rv="13"), "status": "ours", "spec": "theirs"})
    behind = store.behind_own_write(version("14", spec="theirs, then more of theirs"))
    assert behind == Behind(
        theirs=True, before={**obj("a", rv="13"), "status": "ours", "spec": "theirs"}
    )
    # Never moved back behind our answer, which the watch then reaches.
    assert store.get("ns/a") == drop_bookkeeping(answer)
    assert store.behind_own_write(answer) is None
    assert store.behind_own_write(version("14")) is None  # caught up: the watch decides


def test_a_write_answer_older_than_the_cache_is_not_stored(new_store: NewStore) -> None:
    store = new_store()
    store.upsert(obj("a", rv="10"))
    store.upsert(obj("a", rv="14"))  # the watch delivered a newer version meanwhile
    assert not store.put_written(obj("a", rv="12"), based_on=obj("a", rv="10"))
    assert store.get("ns/a")["metadata"]["resourceVersion"] == "14"  # type: ignore[index]
    # The answer is newer than the cache even though the cache moved on from our base.
    assert store.put_written(obj("a", rv="16"), based_on=obj("a", rv="12"))
    assert store.get("ns/a")["metadata"]["resourceVersion"] == "16"  # type: ignore[index]


def test_opaque_versions_trust_only_a_cache_still_at_the_base_of_the_write(
    new_store: NewStore,
) -> None:
    store = new_store()
    store.upsert(obj("a", rv="x1"))
    assert store.put_written(obj("a", rv="x2"), based_on=obj("a", rv="x1"))
    assert not store.behind_own_write(obj("a", rv="x0"))  # cannot tell: the watch decides
    store.upsert(obj("a", rv="x3"))
    assert not store.put_written(obj("a", rv="x4"), based_on=obj("a", rv="x2"))
    # A create (no base) is stored when nothing is cached, and not over a cached object.
    assert store.put_written(obj("b", rv="x5"), based_on=None)
    assert not store.put_written(obj("b", rv="x6"), based_on=None)


def test_upsert_and_delete_end_the_protection_of_a_write(new_store: NewStore) -> None:
    store = new_store()
    store.upsert(obj("a", rv="10"))
    store.put_written(obj("a", rv="12"), based_on=obj("a", rv="10"))
    store.upsert(obj("a", rv="11"))  # a relist is the truth, even if older
    assert not store.behind_own_write(obj("a", rv="11"))
    store.put_written(obj("a", rv="13"), based_on=obj("a", rv="11"))
    store.delete("ns/a")
    assert not store.behind_own_write(obj("a", rv="11"))


def test_a_transform_keeps_only_what_is_read_of_watched_and_written_objects(
    new_store: NewStore,
) -> None:
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

    store = new_store(transform=drop_bookkeeping)
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


def test_object_key_is_one_string_for_every_holder() -> None:
    """Each store, index and queue holding a key holds the same string, not a copy each."""
    first = orjson.loads(b'{"metadata": {"namespace": "shop", "name": "web"}}')
    second = orjson.loads(b'{"metadata": {"namespace": "shop", "name": "web"}}')
    assert object_key(first) is object_key(second)


# -- compact at rest ---------------------------------------------------------------------------


def schedule_like(index: int) -> dict[str, Any]:
    """A Schedule of a fleet as the API server gives it: the same keys and most values in
    each, its own name, uid and version."""
    return {
        "apiVersion": "autoscaling.d-kuro.github.io/v1",
        "kind": "Schedule",
        "metadata": {
            "creationTimestamp": "2026-11-26T18:21:05Z",
            "generation": 1,
            "name": f"web-{index}-noon",
            "namespace": "shop",
            "ownerReferences": [
                {
                    "apiVersion": "autoscaling.d-kuro.github.io/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ScheduledPodAutoscaler",
                    "name": f"web-{index}",
                    "uid": f"{index:08x}-b0c5-4874-968a-2ad61d38a9b8",
                }
            ],
            "resourceVersion": str(1000 + index),
            "uid": f"{index:08x}-8d3d-4f99-b6e8-9e0e0c6f538f",
        },
        "spec": {
            "endTime": "13:00",
            "maxReplicas": 20,
            "minReplicas": 5,
            "scaleTargetRef": {"name": f"web-{index}"},
            "startTime": "12:00",
            "type": "Daily",
        },
        "status": {
            "condition": "Available",
            "lastTransitionTime": "2026-11-26T18:21:05Z",
            "nextTransitionTime": "2026-11-27T12:00:00Z",
            "observedGeneration": 1,
        },
    }


@pytest.mark.parametrize("codec", [JsonCodec, DeflateCodec])
def test_a_compact_store_gives_a_new_equal_object_at_each_read(codec: type[Codec]) -> None:
    """Nothing a reader does to what it read changes the cache: each read decodes anew."""
    store = Store(codec=codec())
    assert store.compact
    for index in range(3):
        store.upsert(schedule_like(index))
    read = store.get("shop/web-1-noon")
    assert read == schedule_like(1)
    assert read is not store.get("shop/web-1-noon")
    assert read is not None
    read["spec"]["minReplicas"] = 99
    assert store.get("shop/web-1-noon") == schedule_like(1)
    assert store.list() == [schedule_like(index) for index in range(3)]
    assert not Store().compact


def test_a_compact_store_holds_a_fleet_in_a_fraction_of_its_decoded_size() -> None:
    """What the codecs are for (docs/performance.md, "compact caches"): the bytes a store
    holds per object, deflated against a sibling, a tenth of the object's compact JSON."""
    stores = {
        "dicts": Store(),
        "json": Store(codec=JsonCodec()),
        "deflate": Store(codec=DeflateCodec()),
    }
    for store in stores.values():
        for index in range(200):
            store.upsert(schedule_like(index))

    def held(store: Store) -> int:
        """Bytes reachable from the store's objects (not its keys)."""
        seen: set[int] = set()
        total = 0
        stack: list[object] = [*store._objects.values()]
        while stack:
            item = stack.pop()
            if id(item) not in seen:
                seen.add(id(item))
                total += sys.getsizeof(item)
                stack.extend(gc.get_referents(item))
        return total

    json_size = len(orjson.dumps(schedule_like(7)))
    sizes = {kind: held(store) / 200 for kind, store in stores.items()}
    assert sizes["json"] < json_size + 64 < sizes["dicts"] / 2
    assert sizes["deflate"] < json_size / 3


def test_a_deflated_store_reads_every_object_after_the_first_one_is_gone() -> None:
    """The first object encoded is the dictionary of all the others: it must stay the
    codec's, whatever becomes of that object in the store."""
    store = Store(codec=DeflateCodec())
    for index in range(3):
        store.upsert(schedule_like(index))
    store.delete("shop/web-0-noon")
    store.upsert(schedule_like(3))
    assert store.list() == [schedule_like(index) for index in (1, 2, 3)]


def test_a_compact_store_computes_the_index_values_once_at_ingest() -> None:
    """The indexes are filed from the object as stored, not by decoding at each look-up."""
    calls: list[str] = []

    def by_target(o: dict[str, Any]) -> list[str]:
        calls.append(o["metadata"]["name"])
        return [o["spec"]["scaleTargetRef"]["name"]]

    store = Store(codec=DeflateCodec())
    store.add_indexer("target", by_target)
    store.upsert(schedule_like(1))
    store.upsert(schedule_like(2))
    assert store.by_index("target", "web-1") == [schedule_like(1)]
    assert store.keys_by_index("target", "web-2") == ["shop/web-2-noon"]
    assert calls == ["web-1-noon", "web-2-noon"]


@pytest.mark.parametrize("codec", [JsonCodec, DeflateCodec])
def test_an_object_the_codec_cannot_encode_leaves_the_store_as_it_was(
    codec: type[Codec],
) -> None:
    store = Store(codec=codec())
    store.add_indexer("target", lambda o: [o["spec"]["scaleTargetRef"]["name"]])
    store.upsert(schedule_like(1))
    broken = schedule_like(1)
    broken["spec"]["scaleTargetRef"]["name"] = "web-2"
    broken["spec"]["odd"] = {1, 2}  # not JSON
    with pytest.raises(TypeError):
        store.upsert(broken)
    assert store.get("shop/web-1-noon") == schedule_like(1)
    assert store.keys_by_index("target", "web-1") == ["shop/web-1-noon"]
    assert store.keys_by_index("target", "web-2") == []


def test_going_through_a_compact_store_decodes_one_object_at_a_time() -> None:
    """A scrape or a resync goes through the whole cache: it must not hold it all decoded at
    once, a peak the process would keep part of (docs/performance.md, "compact caches")."""
    decoded: list[str] = []

    class Counting(DeflateCodec):
        def decode(self, data: bytes) -> dict[str, Any]:
            obj = super().decode(data)
            decoded.append(obj["metadata"]["name"])
            return obj

    store = Store(codec=Counting())
    for index in range(3):
        store.upsert(schedule_like(index))
    objects = store.objects()
    store.upsert(schedule_like(3))  # after the iteration began: not in it
    assert next(objects) == schedule_like(0)
    assert decoded == ["web-0-noon"]
    store.delete("shop/web-1-noon")  # the iteration goes on over what it began with
    assert [*objects] == [schedule_like(1), schedule_like(2)]
    assert [*Store().objects()] == []


def test_an_index_value_with_many_keys_keeps_them_right_as_they_come_and_go() -> None:
    """A few keys under a value are kept in a tuple, more in a set (a calendar's Schedules):
    either way adding, re-adding and removing them leaves the right keys."""
    store = Store()
    store.add_indexer("owner", by_owner)
    names = [f"s{index:02}" for index in range(20)]
    for name in names:
        store.upsert(obj(name, owner="uid-1"))
        store.upsert(obj(name, owner="uid-1", rv="2"))  # filed again under the same value
    assert store.keys_by_index("owner", "uid-1") == [f"ns/{name}" for name in names]
    for name in names[:18]:
        store.delete(f"ns/{name}")
    assert store.keys_by_index("owner", "uid-1") == ["ns/s18", "ns/s19"]
    store.upsert(obj("s18", owner="uid-2", rv="3"))
    store.delete("ns/s19")
    assert store.keys_by_index("owner", "uid-1") == []
    assert store.keys_by_index("owner", "uid-2") == ["ns/s18"]
    assert store._indexes["owner"].keys() == {"uid-2"}  # an emptied value is dropped


def test_the_indexes_of_a_fleet_hold_each_value_once_and_few_keys_compactly() -> None:
    """An SPA's 4 Schedules each decode their own copy of its uid: the index and each
    Schedule's record of what it is filed under share one (docs/performance.md, "compact
    caches"), and the 4 keys under it take a tuple, not a set."""
    store = Store(codec=DeflateCodec())
    store.add_indexer("owner", lambda o: [o["metadata"]["ownerReferences"][0]["uid"]])
    for spa in range(100):
        for hour in range(4):
            schedule = orjson.loads(orjson.dumps(schedule_like(spa)))
            schedule["metadata"]["name"] = f"web-{spa}-{hour}"
            store.upsert(schedule)
    seen: set[int] = set()
    total = 0
    stack: list[object] = [store._indexes, store._filed]
    while stack:
        item = stack.pop()
        if id(item) not in seen and not isinstance(item, str | type):
            seen.add(id(item))
            total += sys.getsizeof(item)
            stack.extend(gc.get_referents(item))
    strings = {id(value) for values in store._filed.values() for value in values}
    assert len(strings) == 1 + 100  # the index's name, and one uid string per SPA
    assert total / 100 < 520  # containers per SPA: 4 records and a tuple of 4 keys (606 with a set)


def test_labels_are_read_by_key_without_decoding_and_follow_each_update() -> None:
    """What a reader needs of every object (a scrape) is kept at ingest, next to the index
    values, and read back with no decode; unlike an index, nothing maps it back to keys."""
    decodes: list[bytes] = []

    class Counting(DeflateCodec):
        def decode(self, data: bytes) -> dict[str, Any]:
            decodes.append(data)
            return super().decode(data)

    store = Store(codec=Counting())
    store.add_indexer("target", lambda o: [o["spec"]["scaleTargetRef"]["name"]])
    store.add_label("condition", lambda o: [o["status"]["condition"]])
    store.upsert(schedule_like(1))
    degraded = schedule_like(1)
    degraded["status"]["condition"] = "Degraded"
    store.upsert(degraded)
    assert store.labels("shop/web-1-noon", "condition") == ["Degraded"]
    assert store.labels("shop/web-1-noon", "target") == ["web-1"]  # an index's values too
    assert store.labels("shop/missing", "condition") == []
    assert decodes == []
    with pytest.raises(KeyError):
        store.keys_by_index("condition", "Degraded")
    with pytest.raises(ValueError, match="already exists"):
        store.add_label("target", by_owner)
    store.delete("shop/web-1-noon")
    assert store.labels("shop/web-1-noon", "condition") == []
    store.upsert(schedule_like(2))
    store.add_label("name", lambda o: [o["metadata"]["name"]])  # added late: labels what is there
    assert store.labels("shop/web-2-noon", "name") == ["web-2-noon"]
