"""Shards: several `spa run` processes, each the only writer of a disjoint part of the fleet,
each with a Lease of its own (docs/runtime.md, "Shards").

A shard is chosen one of two ways:

- **by label** (`--shard-name a`, optionally `--shard-selector ...`): the API server sends the
  shard only the SPAs and Schedules its selector matches (server-side, on the list and the
  watch), by default `autoscaling.d-kuro.github.io/shard=a`. What it may *write* is decided by
  that label alone: an SPA or Schedule is shard `a`'s only if its shard label says `a`. A label
  has one value, so two shards never own one object, whatever their selectors: a selector
  that overlaps another shard's (a mistake) only costs the events it receives, and each
  object it was not labelled for is dropped before the cache, logged once and counted.
- **by namespace hash** (`--shards 4 --shard 1`), where objects cannot be labelled: a shard owns
  the namespaces whose FNV-1a hash (64 bits, of the name's UTF-8 bytes) modulo the shard count
  is its index. Python's `hash()` is salted per process; FNV-1a is the same everywhere and in
  every language, so a user can compute it too. No selector can say this, so it is filtered at
  the informers (`Informer(keep=)`): each shard receives every event, and drops the others'.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from spa.api.resources import GROUP

__all__ = [
    "SHARD_LABEL",
    "Shard",
    "ShardError",
    "ShardFilter",
    "check_selector",
    "lease_prefix",
    "namespace_shard",
    "shard_of",
]

log = logging.getLogger(__name__)

SHARD_LABEL = f"{GROUP}/shard"

# A shard's name is a label value (compared with SHARD_LABEL's) and part of its Lease's name
# (a DNS subdomain): lowercase letters, digits and '-', at most 63.
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


class ShardError(ValueError):
    """The shard flags do not describe one shard; the message names the flag."""


def lease_prefix(base: str) -> str:
    """How the names of the Leases of every shard of the install named `base` begin."""
    return f"{base}-shard-"


def namespace_shard(namespace: str, count: int) -> int:
    """The index of the shard that owns `namespace` among `count`: FNV-1a (64-bit) of its
    UTF-8 bytes, modulo `count`."""
    value = _FNV_OFFSET
    for byte in namespace.encode():
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return value % count


# A label selector as the API server reads it (labels.Parse): requirements separated by commas,
# each `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (v, ...)` or
# `key notin (v, ...)`. Checked here so that a typo is one line naming the flag at the start,
# not an informer that fails forever.
_KEY = r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_REQUIREMENT = re.compile(
    rf"\s*(!\s*{_KEY}|{_KEY}|{_KEY}\s*(==|=|!=)\s*{_VALUE}"
    rf"|{_KEY}\s+(in|notin)\s*\(\s*{_VALUE}(\s*,\s*{_VALUE})*\s*\))\s*"
)


def check_selector(selector: str) -> None:
    """Nothing if `selector` is a label selector; :class:`ShardError` naming the part that is
    not."""
    if not selector.strip():
        raise ShardError("--shard-selector is empty: a shard selects part of the fleet")
    depth, start = 0, 0
    parts: list[str] = []
    for position, char in enumerate(selector):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(selector[start:position])
            start = position + 1
    parts.append(selector[start:])
    for part in parts:
        if not _REQUIREMENT.fullmatch(part):
            raise ShardError(
                f"--shard-selector: {part.strip()!r} is not a label requirement "
                "(key, !key, key=value, key!=value, key in (a,b), key notin (a,b))"
            )


@dataclass(frozen=True, slots=True)
class Shard:
    """One shard: its name (its Lease's and its metrics'), and how it selects its objects."""

    name: str
    mode: Literal["label", "namespace-hash"]
    # Label mode: what the API server sends (list and watch of SPAs and Schedules).
    selector: str | None = None
    # Namespace-hash mode: this shard's index among `count`.
    count: int = 0
    index: int = 0

    @classmethod
    def by_label(cls, name: str, selector: str | None = None) -> Shard:
        if not _NAME.fullmatch(name):
            raise ShardError(
                f"--shard-name {name!r}: lowercase letters, digits and '-', at most 63, "
                "starting and ending with a letter or digit (it is a label value)"
            )
        if selector is not None:
            check_selector(selector)
        return cls(name, "label", selector=selector or f"{SHARD_LABEL}={name}")

    @classmethod
    def by_namespace(cls, count: int, index: int) -> Shard:
        if count < 1:
            raise ShardError(f"--shards {count}: at least 1")
        if not 0 <= index < count:
            raise ShardError(f"--shard {index}: from 0 to {count - 1} (--shards {count})")
        return cls(f"{index}-of-{count}", "namespace-hash", count=count, index=index)

    def lease_name(self, base: str) -> str:
        """The Lease of this shard's replicas: the base name with the shard's (two shards
        never share one, and the replicas of one always do)."""
        return f"{lease_prefix(base)}{self.name}"

    def owns(self, obj: dict[str, Any]) -> bool:
        """Whether this shard is the one that writes for `obj` (an SPA or a Schedule; in
        namespace-hash mode, any namespaced object)."""
        metadata = obj.get("metadata") or {}
        if self.mode == "namespace-hash":
            return namespace_shard(str(metadata.get("namespace") or ""), self.count) == self.index
        return bool((metadata.get("labels") or {}).get(SHARD_LABEL) == self.name)

    def describe(self) -> str:
        if self.mode == "namespace-hash":
            return (
                f"shard {self.name}: the namespaces whose FNV-1a hash modulo {self.count} "
                f"is {self.index}"
            )
        return (
            f"shard {self.name}: the objects labelled {SHARD_LABEL}={self.name}, "
            f"selected by {self.selector}"
        )


@dataclass
class ShardFilter:
    """The informers' `keep` for one kind: what this shard owns. In label mode an object the
    selector sent but the shard label does not give to this shard (overlapping selectors, or
    no label) is refused: logged once per object, and counted in `refused(kind)`."""

    shard: Shard
    kind: str
    refused: Callable[[str], None] = lambda kind: None
    _said: set[str] = field(default_factory=set)

    def __call__(self, obj: dict[str, Any]) -> bool:
        if self.shard.owns(obj):
            return True
        if self.shard.mode == "label":
            metadata = obj.get("metadata") or {}
            key = f"{metadata.get('namespace')}/{metadata.get('name')}"
            if key not in self._said:
                self._said.add(key)
                self.refused(self.kind)
                owner = (metadata.get("labels") or {}).get(SHARD_LABEL)
                log.warning(
                    "%s %s is selected by --shard-selector %s but %s: left alone",
                    self.kind,
                    key,
                    self.shard.selector,
                    f"labelled for shard {owner}" if owner else f"has no {SHARD_LABEL} label",
                    extra={"shard": self.shard.name},
                )
        return False


def shard_of(
    *,
    name: str | None,
    selector: str | None,
    count: int | None,
    index: int | None,
) -> Shard | None:
    """The shard `spa run`'s flags describe (None: not sharded); :class:`ShardError` naming
    the flag when they describe none."""
    if count is None and index is None:
        if name is None:
            if selector is not None:
                raise ShardError("--shard-selector needs --shard-name (its Lease and label)")
            return None
        return Shard.by_label(name, selector)
    if name is not None or selector is not None:
        raise ShardError(
            "--shards/--shard (by namespace hash) and --shard-name/--shard-selector (by label) "
            "are two ways to shard: give one"
        )
    if count is None or index is None:
        raise ShardError("--shards N and --shard K go together")
    return Shard.by_namespace(count, index)
