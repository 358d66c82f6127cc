"""The informer's local cache of objects, with secondary indexes.

Reconcilers read from here instead of the API server (no request per reconcile), and find
related objects through indexes (e.g. Schedules by owner UID) instead of scanning. Owned by the
event loop: only the informer writes it, and everything runs on one thread, so no locks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["IndexFunc", "Store", "object_key", "split_key"]

IndexFunc = Callable[[dict[str, Any]], list[str]]
"""Maps an object to the index values it is filed under (none, one or several)."""

# Aliases, because inside Store the name ``list`` is the method, not the builtin.
_Objects = list[dict[str, Any]]
_Keys = list[str]


def object_key(obj: dict[str, Any]) -> str:
    """``namespace/name`` (or just ``name`` for a cluster-scoped object), as in client-go."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = metadata.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)


def split_key(key: str) -> tuple[str | None, str]:
    """Inverse of :func:`object_key`: ``(namespace or None, name)``."""
    namespace, sep, name = key.partition("/")
    return (namespace, name) if sep else (None, key)


class Store:
    """``key -> object`` plus named indexes ``index name -> value -> set of keys``."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indexes: dict[str, dict[str, set[str]]] = {}
        # Values each object is filed under, per index, so an update can un-file the old ones
        # even though the old object has already been replaced.
        self._filed: dict[str, dict[str, _Keys]] = {}

    def add_indexer(self, name: str, index_func: IndexFunc) -> None:
        """Register an index; objects already stored are indexed at once."""
        if name in self._indexers:
            raise ValueError(f"indexer {name!r} already exists")
        self._indexers[name] = index_func
        self._indexes[name] = {}
        for key, obj in self._objects.items():
            self._file(name, key, obj)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored object for ``namespace/name``, or ``None``. Do not mutate it."""
        return self._objects.get(key)

    def list(self) -> _Objects:
        """All stored objects."""
        return [*self._objects.values()]

    def keys(self) -> _Keys:
        """All stored keys."""
        return [*self._objects]

    def by_index(self, index_name: str, value: str) -> _Objects:
        """Objects filed under ``value`` in index ``index_name`` (sorted by key)."""
        return [self._objects[key] for key in self.keys_by_index(index_name, value)]

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

    # -- writes (the informer's) ---------------------------------------------------------------

    def upsert(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Store ``obj`` under its key; return the object it replaced, if any."""
        key = object_key(obj)
        old = self._objects.get(key)
        self._unfile_all(key)
        self._objects[key] = obj
        for name in self._indexers:
            self._file(name, key, obj)
        return old

    def delete(self, key: str) -> dict[str, Any] | None:
        """Remove ``key``; return the object removed, if any."""
        self._unfile_all(key)
        return self._objects.pop(key, None)

    def _file(self, name: str, key: str, obj: dict[str, Any]) -> None:
        values = [*dict.fromkeys(self._indexers[name](obj))]
        index = self._indexes[name]
        for value in values:
            index.setdefault(value, set()).add(key)
        self._filed.setdefault(key, {})[name] = values

    def _unfile_all(self, key: str) -> None:
        for name, values in self._filed.pop(key, {}).items():
            index = self._indexes[name]
            for value in values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
