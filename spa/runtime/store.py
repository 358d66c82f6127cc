"""The informer's local cache of objects, with secondary indexes.

Reconcilers read from here instead of the API server (no request per reconcile), and find
related objects through indexes (e.g. Schedules by owner UID) instead of scanning. Owned by the
event loop: the informer writes it, and so do reconcilers with the answers to their own writes
(:meth:`Store.put_written`, a mutation cache like client-go's), so that the next reconcile does
not act on the state from before the write. Everything runs on one thread, so no locks.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard

import orjson

__all__ = [
    "Behind",
    "Codec",
    "DeflateCodec",
    "IndexFunc",
    "JsonCodec",
    "Store",
    "Transform",
    "compare_resource_versions",
    "drop_bookkeeping",
    "object_key",
    "object_resource_version",
    "split_key",
]

IndexFunc = Callable[[dict[str, Any]], list[str]]
"""Maps an object to the index values it is filed under (none, one or several)."""

Transform = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns an object into what the cache keeps of it (must not modify its argument)."""

# client-side `kubectl apply` keeps a whole copy of the object in this annotation.
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def drop_bookkeeping(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without what no controller reads and that can be most of its size:
    `metadata.managedFields` (server-side apply's record of field owners) and the
    last-applied-configuration annotation of client-side apply (what client-go's
    `TransformStripManagedFields` does, and a little more)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return obj
    annotations = metadata.get("annotations")
    if "managedFields" not in metadata and not (
        isinstance(annotations, dict) and _LAST_APPLIED in annotations
    ):
        return obj
    kept = {key: value for key, value in metadata.items() if key != "managedFields"}
    if isinstance(annotations, dict) and _LAST_APPLIED in annotations:
        kept["annotations"] = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
    return {**obj, "metadata": kept}


@dataclass(frozen=True, slots=True)
class Behind:
    """What :meth:`Store.behind_own_write` found of a watched object older than the answer to
    our own write of it, which the store keeps: either one of our earlier writes, or another
    client's change made while our write was on its way (``theirs``), which that answer
    carries but which no handler has heard of."""

    theirs: bool
    # For theirs: the object as the watch last showed it before this change (or as our write
    # before it left it), the `old` of the update the handlers are owed.
    before: dict[str, Any] | None = None


@dataclass(slots=True)
class _OwnWrites:
    """Our writes of one object that the watch has not reached yet."""

    # (resourceVersion, the answer as stored), oldest first.
    writes: list[tuple[str, Any]]
    # The object as the watch last showed it (or our write the watch reached), as stored.
    seen: Any


class Codec(Protocol):
    """How a compact :class:`Store` keeps its objects at rest: ``encode`` once as an object
    is stored (after the transform; its index values are taken from the object itself, at
    that moment, never by decoding), ``decode`` at each read, which gets a new dict each time.

    Decoded JSON is large for what it holds: a CPython dict of up to 5 keys is 232 bytes
    whatever it holds, and a cached Schedule, about 1,900 bytes, is seven of them; its JSON
    is 730 bytes, deflated against the first Schedule of its cache about 245
    (docs/performance.md, "compact caches")."""

    def encode(self, obj: dict[str, Any]) -> bytes:
        """`obj` (decoded JSON) at rest."""
        ...

    def decode(self, data: bytes) -> dict[str, Any]:
        """What :meth:`encode` was given, as a new dict."""
        ...


class JsonCodec:
    """Each object as its compact JSON (orjson, which also decoded it from the API server:
    the round trip gives back the same values)."""

    def encode(self, obj: dict[str, Any]) -> bytes:
        return orjson.dumps(obj)

    def decode(self, data: bytes) -> dict[str, Any]:
        decoded: dict[str, Any] = orjson.loads(data)
        return decoded


# Raw deflate (no zlib header nor checksum: 6 bytes an object) with the largest window, so a
# match can reach anywhere in the preset dictionary (at most 32 KiB of it is usable).
_WBITS = -15
_DICTIONARY_MAX = 1 << 15


class DeflateCodec:
    """Each object as its JSON deflated (zlib, level 1) with a preset dictionary: the JSON of
    the first object this codec encodes. The objects of one cache are alike (same kind, same
    keys, mostly the same values across a fleet), so each deflates to little more than what
    differs from that first one: about 210 bytes for a Schedule of 730 (docs/performance.md,
    "compact caches"). The dictionary is fixed once taken (every object at rest depends on
    it); one codec per store. Costs a few µs more per read than :class:`JsonCodec`."""

    def __init__(self, level: int = 1) -> None:
        self._level = level
        self._dictionary: bytes | None = None

    def encode(self, obj: dict[str, Any]) -> bytes:
        data = orjson.dumps(obj)
        if self._dictionary is None:
            self._dictionary = data[-_DICTIONARY_MAX:]
        compressor = zlib.compressobj(self._level, zlib.DEFLATED, _WBITS, zdict=self._dictionary)
        return compressor.compress(data) + compressor.flush()

    def decode(self, data: bytes) -> dict[str, Any]:
        assert self._dictionary is not None, "decode before any encode"
        decompressor = zlib.decompressobj(_WBITS, zdict=self._dictionary)
        decoded: dict[str, Any] = orjson.loads(decompressor.decompress(data))
        return decoded


# Aliases, because inside Store the name ``list`` is the method, not the builtin.
_Objects = list[dict[str, Any]]
_Keys = list[str]
_FiledKeys = tuple[str, ...] | set[str]
# Up to this many keys under one index value, a tuple holds them (adding and removing one
# copies it, cheap at this size); beyond, a set.
_FEW_KEYS = 8


def object_key(obj: dict[str, Any]) -> str:
    """``namespace/name`` (or just ``name`` for a cluster-scoped object), as in client-go.
    Interned: a key is held by each store, index, work queue and per-key memory that files
    the object, one string for all of them (docs/performance.md, "2026-11-26: memory per SPA
    (issue 24)")."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = metadata.get("name") or ""
    return sys.intern(f"{namespace}/{name}" if namespace else str(name))


def split_key(key: str) -> tuple[str | None, str]:
    """Inverse of :func:`object_key`: ``(namespace or None, name)``."""
    namespace, sep, name = key.partition("/")
    return (namespace, name) if sep else (None, key)


def compare_resource_versions(a: str | None, b: str | None) -> int | None:
    """-1, 0 or 1 as ``a`` is older than, the same as or newer than ``b``; ``None`` when they
    cannot be compared.

    resourceVersions of one resource type compare as increasing integers on every
    kube-apiserver from 1.35 (KEP-5504, a conformance requirement) and in practice on every
    etcd-backed one before; anything that is not a decimal integer without leading zeros is
    left opaque, as the API conventions had it.
    """
    if not (_is_integer_version(a) and _is_integer_version(b)):
        return None
    # Same length: digit strings compare as numbers; otherwise the longer is larger.
    if len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    return (a > b) - (a < b)


def _is_integer_version(value: str | None) -> TypeGuard[str]:
    return value is not None and value.isascii() and value.isdigit() and value[:1] != "0"


def object_resource_version(obj: Mapping[str, Any] | None) -> str | None:
    """``metadata.resourceVersion`` (``None`` for no object or no version)."""
    version = ((obj or {}).get("metadata") or {}).get("resourceVersion")
    return str(version) if version else None


class Store:
    """``key -> object`` plus named indexes ``index name -> value -> keys`` and labels
    (values kept per key, read back without the object)."""

    def __init__(self, *, transform: Transform | None = None, codec: Codec | None = None) -> None:
        # Applied to everything stored (the watch's objects and the answers to our writes), so
        # the cache holds only what is read: memory per object is what limits a fleet's size.
        self._transform = transform
        # Compact at rest: each object kept as the codec's bytes (its index values computed
        # before), decoded at each read (docs/performance.md, "compact caches"). None: the
        # objects themselves, each read giving the same dict.
        self._codec = codec
        self._objects: dict[str, Any] = {}
        self._indexers: dict[str, IndexFunc] = {}
        # The keys filed under a value: a tuple while they are few (an SPA's 4 Schedules: 72
        # bytes, a set of them 216), a set beyond _FEW_KEYS (a calendar's Schedules).
        self._indexes: dict[str, dict[str, _FiledKeys]] = {}
        # What each object is filed under, so an update can un-file the old ones even though
        # the old object has already been replaced, and its labels' values: one flat tuple per
        # object, index or label name then value, for each value (no entry when there is
        # none). A dict of lists per object was about 450 bytes a Schedule
        # (docs/performance.md, "2026-11-26: memory per SPA").
        self._filed: dict[str, tuple[str, ...]] = {}
        # Our own writes of each object, while the watch has not caught up with them.
        self._written: dict[str, _OwnWrites] = {}

    def add_indexer(self, name: str, index_func: IndexFunc) -> None:
        """Register an index; objects already stored are indexed at once."""
        self._add(name, index_func, indexed=True)

    def add_label(self, name: str, label_func: IndexFunc) -> None:
        """Register a label: values taken from each object as it is stored and read back by
        key (:meth:`labels`) without decoding it, as a scrape reads a field of every object
        (an index without the map from values to keys). Kept with the index values, interned:
        a few pointers per object where the values repeat across a fleet."""
        self._add(name, label_func, indexed=False)

    def labels(self, key: str, name: str) -> _Keys:
        """The values of the label (or index) `name` of the object stored under `key`."""
        filed = self._filed.get(key, ())
        return [filed[at + 1] for at in range(0, len(filed), 2) if filed[at] == name]

    def _add(self, name: str, index_func: IndexFunc, *, indexed: bool) -> None:
        if name in self._indexers:
            raise ValueError(f"indexer {name!r} already exists")
        self._indexers[name] = index_func
        if indexed:
            self._indexes[name] = {}
        for key, stored in self._objects.items():
            filed = self._file(name, key, self._load(stored))
            if filed:
                self._filed[key] = self._filed.get(key, ()) + tuple(filed)

    @property
    def compact(self) -> bool:
        """Whether objects are kept encoded (a `codec`): each read then decodes, a few µs."""
        return self._codec is not None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored object for ``namespace/name``, or ``None``. Do not mutate it (in a
        compact store it is a new dict at each read, but not in the others)."""
        stored = self._objects.get(key)
        return None if stored is None else self._load(stored)

    def list(self) -> _Objects:
        """All stored objects. A compact store decodes each, and the list holds them all at
        once: the whole cache decoded, as large as an uncompacted store. Prefer
        :meth:`objects` to go through them, :meth:`keys` where the keys are enough."""
        if self._codec is None:
            return [*self._objects.values()]
        return [*map(self._codec.decode, self._objects.values())]

    def objects(self) -> Iterator[dict[str, Any]]:
        """Each stored object in turn, as stored when the iteration began. A compact store
        decodes one at a time, so going through the cache (a resync) holds one
        decoded object, not all of them: the memory freed at such a peak is not all given
        back to the system (docs/performance.md, "compact caches")."""
        if self._codec is None:
            return iter([*self._objects.values()])
        return map(self._codec.decode, [*self._objects.values()])

    def keys(self) -> _Keys:
        """All stored keys."""
        return [*self._objects]

    def by_index(self, index_name: str, value: str) -> _Objects:
        """Objects filed under ``value`` in index ``index_name`` (sorted by key)."""
        return [self._load(self._objects[key]) for key in self.keys_by_index(index_name, value)]

    def index_values(self, index_name: str) -> Iterator[str]:
        """The values under which `index_name` files at least one object."""
        return (value for value, keys in [*self._indexes[index_name].items()] if keys)

    def keys_by_index(self, index_name: str, value: str) -> _Keys:
        """Keys filed under ``value`` in index ``index_name`` (sorted)."""
        try:
            index = self._indexes[index_name]
        except KeyError:
            raise KeyError(f"no indexer named {index_name!r}") from None
        return sorted(index.get(value, ()))

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def __iter__(self) -> Iterator[str]:
        return iter([*self._objects])

    # -- writes (the informer's; put_written is the reconcilers') ------------------------------

    def upsert(self, obj: dict[str, Any], *, transformed: bool = False) -> None:
        """Store ``obj`` under its key. ``transformed``: the caller already applied the
        store's transform (an informer does, at ingest). Returns nothing: what it replaces,
        the caller has read already if it needs it (a compact store would decode it)."""
        key = object_key(obj)
        self._written.pop(key, None)
        self._put(key, obj, transformed=transformed)

    def delete(self, key: str) -> dict[str, Any] | None:
        """Remove ``key``; return the object removed, if any."""
        self._written.pop(key, None)
        self._unfile_all(key)
        stored = self._objects.pop(key, None)
        return None if stored is None else self._load(stored)

    def behind_own_write(self, obj: dict[str, Any]) -> Behind | None:
        """Whether ``obj``, seen by the watch, is older than our own write of it stored with
        :meth:`put_written`, so storing it would move the cache back in time (``None``: it
        is not, or that cannot be told).

        A watch that resumes after a break, or just lags behind our writes, shows versions
        from before our write; storing them would make the next reconcile write again. Such a
        version is one of our earlier writes, or another client's change (``theirs``) made
        while our write was on its way: our stored answer carries it, and the caller owes the
        handlers an update from :attr:`Behind.before` to it (then :meth:`saw_theirs`), or no
        reconcile would act on it until the object's next event. Once the watch shows our
        latest write or anything newer, the object is the watch's again.
        """
        key = object_key(obj)
        pending = self._written.get(key)
        if pending is None:
            return None
        version = object_resource_version(obj)
        order = compare_resource_versions(version, pending.writes[-1][0])
        if order is None or order >= 0:
            del self._written[key]
            return None
        # The watch is ordered: what it shows now is past every write of ours before it.
        while compare_resource_versions(pending.writes[0][0], version) == -1:
            del pending.writes[0]
        if pending.writes[0][0] == version:
            pending.seen = pending.writes.pop(0)[1]
            return Behind(theirs=False)
        before = None if pending.seen is None else self._load(pending.seen)
        return Behind(theirs=True, before=before)

    def saw_theirs(self, obj: dict[str, Any]) -> None:
        """Record that the handlers were told of ``obj`` (transformed), another client's
        change older than our write (:meth:`behind_own_write`), without storing it: the next
        such change is delivered as an update from this one."""
        pending = self._written.get(object_key(obj))
        if pending is not None:
            pending.seen = obj if self._codec is None else self._codec.encode(obj)

    def put_written(self, written: dict[str, Any], *, based_on: Mapping[str, Any] | None) -> bool:
        """Store the API server's answer to our own write of an object, unless the cache
        already holds something newer; return whether it was stored.

        ``based_on`` is the object the write was computed from (``None`` for a create). Where
        resourceVersions cannot be compared, the answer is stored only while the cache still
        holds ``based_on``'s version, the only case in which it is surely not older. The
        answer may carry another client's change made while our write was on its way; the
        watch's event of that change is then older than our write, and
        :meth:`behind_own_write` tells the informer so.
        """
        key = object_key(written)
        cached = self._objects.get(key)
        cached_version = object_resource_version(None if cached is None else self._load(cached))
        written_version = object_resource_version(written)
        order = compare_resource_versions(written_version, cached_version)
        if order is None:  # not comparable, or nothing cached
            if cached_version != object_resource_version(based_on):
                return False
        elif order <= 0:
            return False
        stored = self._put(key, written)
        if written_version is not None:
            pending = self._written.get(key)
            if pending is None:
                self._written[key] = _OwnWrites(writes=[(written_version, stored)], seen=cached)
            else:
                pending.writes.append((written_version, stored))
        return True

    def _put(self, key: str, obj: dict[str, Any], *, transformed: bool = False) -> Any:
        """Store `obj` under `key`; return it as stored."""
        if self._transform is not None and not transformed:
            obj = self._transform(obj)
        # Encoded first: an object the codec cannot encode leaves the store as it was.
        stored = obj if self._codec is None else self._codec.encode(obj)
        self._unfile_all(key)
        self._objects[key] = stored
        filed: _Keys = []
        for name in self._indexers:
            filed += self._file(name, key, obj)
        if filed:
            self._filed[key] = tuple(filed)
        return stored

    def _load(self, stored: Any) -> dict[str, Any]:
        """An object as read: the stored one, or a compact store's decoded anew."""
        if self._codec is None:
            loaded: dict[str, Any] = stored
            return loaded
        return self._codec.decode(stored)

    def _file(self, name: str, key: str, obj: dict[str, Any]) -> _Keys:
        """File `key` in the index `name`; what `_filed` records of it (name, value, ...).
        Each value is interned: the index and the record of every object filed under it
        hold one string (each Schedule of an SPA decodes its own copy of the SPA's uid)."""
        index = self._indexes.get(name)
        filed: _Keys = []
        for value in dict.fromkeys(self._indexers[name](obj)):
            value = sys.intern(value)
            filed += (name, value)
            if index is None:  # a label
                continue
            keys = index.get(value)
            if keys is None:
                index[value] = (key,)
            elif isinstance(keys, set):
                keys.add(key)
            elif key not in keys:
                index[value] = (*keys, key) if len(keys) < _FEW_KEYS else {*keys, key}
        return filed

    def _unfile_all(self, key: str) -> None:
        filed = self._filed.pop(key, ())
        for position in range(0, len(filed), 2):
            index = self._indexes.get(filed[position])
            if index is None:  # a label
                continue
            value = filed[position + 1]
            keys = index.get(value)
            if isinstance(keys, set):
                keys.discard(key)
            elif keys is not None and key in keys:
                keys = tuple(other for other in keys if other != key)
                index[value] = keys
            if keys is not None and not keys:
                del index[value]
