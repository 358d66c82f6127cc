"""Which update events a handler is given (controller-runtime's `predicate` package, for the
one case this runtime needs so far).

Why: an object that another controller keeps writing the status of wakes every handler at
each of those writes, and a reconciler that reads only its spec and metadata does nothing with
them but a full pass. kube-controller-manager writes an HPA's status at each sync that changes
it (up to every 15 s per HPA). A handler registered with
``update_filter=changed_beyond_status`` (:meth:`spa.runtime.Informer.add_handler`) is not
called for those; the store is still updated, so a reconcile that runs for another reason
reads the latest status.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["UpdateFilter", "changed_beyond_status"]

UpdateFilter = Callable[[dict[str, Any], dict[str, Any]], bool]
"""(old, new) -> whether a handler is given this update."""

# What changes with every write, whoever makes it, or is only the API server's bookkeeping.
_VOLATILE_METADATA = frozenset({"resourceVersion", "managedFields"})


def changed_beyond_status(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether anything but `status`, `metadata.resourceVersion` and `metadata.managedFields`
    differs: spec, labels, annotations, ownerReferences, finalizers, deletionTimestamp,
    generation, and any other top-level field."""
    for key in old.keys() | new.keys():
        if key == "status":
            continue
        if key == "metadata":
            if _metadata(old.get(key)) != _metadata(new.get(key)):
                return True
        elif old.get(key) != new.get(key):
            return True
    return False


def _metadata(metadata: Any) -> Any:
    if not isinstance(metadata, dict):
        return metadata
    return {key: value for key, value in metadata.items() if key not in _VOLATILE_METADATA}
