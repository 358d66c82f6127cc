"""The API server's audit log: a policy for counting requests, and a reader.

The audit log is the API server's own record of every request it served, so it counts what
actually reached the server, independently of any client-side counter. Turn it on with
`ControlPlane(workdir, audit_policy=audit_policy(...))` and read it with
`AuditLog(plane.audit_log)`.

Only the Metadata level is used (who, verb, resource, name, response code, timestamps; no
bodies), and only the ResponseComplete stage (plus ResponseStarted for watches, which complete
only when they end), so that each request is one line.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "READ_VERBS",
    "WRITE_VERBS",
    "AuditEvent",
    "AuditLog",
    "audit_policy",
    "count_by_verb_and_resource",
    "service_account_user",
]
# Resources that answer a question put as a create and store nothing (the controller asks
# what it may do at its start: docs/install.md, "Placeholder pods").
QUESTIONS = frozenset(
    {"selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews", "tokenreviews"}
)

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
READ_VERBS = frozenset({"get", "list", "watch"})

# Requests that are not anybody's work: the API server talking to itself, the controller
# manager's controllers (they run as kube-system ServiceAccounts), and health checks.
_NOISE_USERS = ["system:apiserver", "system:kube-controller-manager"]
_NOISE_GROUPS = ["system:serviceaccounts:kube-system"]
_NOISE_PATHS = ["/healthz*", "/readyz*", "/livez*", "/metrics"]


def service_account_user(namespace: str, name: str) -> str:
    """The user name a ServiceAccount's token authenticates as."""
    return f"system:serviceaccount:{namespace}:{name}"


def audit_policy(users: Sequence[str] | None = None) -> dict[str, Any]:
    """An audit.k8s.io/v1 Policy at Metadata level.

    With `users`, only their requests are logged (cheapest: the log holds exactly what is to be
    counted). Without, every request is logged except the control plane's own.
    """
    rules: list[dict[str, Any]] = []
    if users is not None:
        rules.append({"level": "Metadata", "users": list(users)})
        rules.append({"level": "None"})
    else:
        rules += [
            {"level": "None", "users": _NOISE_USERS},
            {"level": "None", "userGroups": _NOISE_GROUPS},
            {"level": "None", "nonResourceURLs": _NOISE_PATHS},
            {"level": "Metadata"},
        ]
    return {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        "omitStages": ["RequestReceived"],
        "rules": rules,
    }


def _timestamp(text: str) -> float:
    # RFC 3339 with microseconds, e.g. 2026-11-21T16:02:03.123456Z
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One request as the API server saw it."""

    audit_id: str
    user: str
    verb: str
    resource: str  # "horizontalpodautoscalers", "schedules/status", or the path if none
    namespace: str | None
    name: str | None
    code: int | None
    received: float  # requestReceivedTimestamp, seconds since the epoch
    completed: float  # stageTimestamp of the line read (ResponseStarted for watches)
    user_agent: str
    dry_run: bool = False  # `?dryRun=All`: the server answered, but stored nothing

    @property
    def is_write(self) -> bool:
        """A request that changed what the server stores: not a dry run, and not a question
        asked with a create (an access review stores nothing)."""
        return self.verb in WRITE_VERBS and not self.dry_run and self.resource not in QUESTIONS

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> AuditEvent:
        ref = entry.get("objectRef") or {}
        resource = ref.get("resource") or entry.get("requestURI", "").split("?")[0]
        if ref.get("subresource"):
            resource = f"{resource}/{ref['subresource']}"
        return cls(
            audit_id=str(entry.get("auditID")),
            user=str((entry.get("user") or {}).get("username", "")),
            verb=str(entry.get("verb", "")),
            resource=str(resource),
            namespace=ref.get("namespace"),
            name=ref.get("name"),
            code=(entry.get("responseStatus") or {}).get("code"),
            received=_timestamp(entry["requestReceivedTimestamp"]),
            completed=_timestamp(entry["stageTimestamp"]),
            user_agent=str(entry.get("userAgent", "")),
            dry_run="dryRun=" in str(entry.get("requestURI", "")),
        )


class AuditLog:
    """Reads a JSON audit log file; each request once (its first line of ResponseStarted or
    ResponseComplete)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def events(self) -> list[AuditEvent]:
        seen: set[str] = set()
        events: list[AuditEvent] = []
        for entry in self._entries():
            if entry.get("stage") not in ("ResponseStarted", "ResponseComplete"):
                continue
            audit_id = str(entry.get("auditID"))
            if audit_id in seen:
                continue
            seen.add(audit_id)
            events.append(AuditEvent.from_json(entry))
        return events

    def _entries(self) -> Iterator[dict[str, Any]]:
        if not self.path.exists():
            return
        with self.path.open(encoding="utf-8") as lines:
            for line in lines:
                line = line.strip()
                if not line:
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line being written right now

    def select(
        self,
        *,
        user: str | None = None,
        verbs: Iterable[str] | None = None,
        resource: str | None = None,
        namespace: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[AuditEvent]:
        """Events matching every given filter; [since, until) on the time the request was
        received."""
        wanted_verbs = set(verbs) if verbs is not None else None
        return [
            event
            for event in self.events()
            if (user is None or event.user == user)
            and (wanted_verbs is None or event.verb in wanted_verbs)
            and (resource is None or event.resource == resource)
            and (namespace is None or event.namespace == namespace)
            and (since is None or event.received >= since)
            and (until is None or event.received < until)
        ]

    def writes(self, **filters: Any) -> list[AuditEvent]:
        """Write requests (create, update, patch, delete) matching the filters; dry runs are
        not writes."""
        return [event for event in self.select(verbs=WRITE_VERBS, **filters) if event.is_write]

    def dry_runs(self, **filters: Any) -> list[AuditEvent]:
        """Dry-run write requests matching the filters."""
        return [event for event in self.select(verbs=WRITE_VERBS, **filters) if event.dry_run]


def count_by_verb_and_resource(events: Iterable[AuditEvent]) -> Counter[tuple[str, str]]:
    """How many requests of each (verb, resource)."""
    return Counter((event.verb, event.resource) for event in events)
