"""Who may read an endpoint, asked of the API server: TokenReview, then SubjectAccessReview.

Why: the metrics list every SPA and Schedule by name; served in clear to anyone who can reach
the port, they tell the cluster's layout to any pod. With `--metrics-secure` the controller
does what kube-rbac-proxy and controller-runtime's secure metrics do: the caller presents a
bearer token (Prometheus sends its ServiceAccount's), the API server says whose it is
(TokenReview) and whether that user may `get` the non-resource URL `/metrics`
(SubjectAccessReview), so access is granted with ordinary RBAC (docs/operations.md,
"Secure metrics"). Answers are cached for a short while, as those proxies do, so a scrape
every few seconds costs two API requests per interval, not per scrape.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from spa.kube import SUBJECT_ACCESS_REVIEW, TOKEN_REVIEW, ApiError, ApiUnavailable, Resource
from spa.runtime.clock import Clock, SystemClock

__all__ = ["AccessReview", "Create"]

log = logging.getLogger(__name__)

Create = Callable[[Resource, Mapping[str, Any]], Awaitable[dict[str, Any]]]
"""POSTs a cluster-scoped object and returns the API server's answer (a review's status)."""

# How long an answer is reused. A revoked token or role binding takes effect within this.
_TTL = 10.0
# Distinct tokens remembered at once (Prometheus replicas, a few people with kubectl).
_MAX_ENTRIES = 256


class AccessReview:
    """`await review(token)` is the HTTP status an endpoint answers with: 200 (allowed), 401
    (no token, or one the API server does not accept) or 403 (a user without access)."""

    def __init__(
        self, create: Create, *, path: str, verb: str = "get", clock: Clock | None = None
    ) -> None:
        self._create = create
        self._path = path
        self._verb = verb
        self._clock = clock or SystemClock()
        self._answers: OrderedDict[str, tuple[float, int]] = OrderedDict()

    async def __call__(self, token: str | None) -> int:
        if not token:
            return 401
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock.monotonic()
        cached = self._answers.get(key)
        if cached is not None and now - cached[0] < _TTL:
            return cached[1]
        try:
            answer = await self._review(token)
        except (ApiError, ApiUnavailable) as error:
            # Not cached: the next scrape asks again.
            log.warning("could not review a token for %s: %s", self._path, error)
            return 503
        self._answers[key] = (now, answer)
        self._answers.move_to_end(key)
        while len(self._answers) > _MAX_ENTRIES:
            self._answers.popitem(last=False)
        return answer

    async def _review(self, token: str) -> int:
        review = await self._create(
            TOKEN_REVIEW,
            {
                "apiVersion": TOKEN_REVIEW.api_version,
                "kind": TOKEN_REVIEW.kind,
                "spec": {"token": token},
            },
        )
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return 401
        user = status.get("user") or {}
        access = await self._create(
            SUBJECT_ACCESS_REVIEW,
            {
                "apiVersion": SUBJECT_ACCESS_REVIEW.api_version,
                "kind": SUBJECT_ACCESS_REVIEW.kind,
                "spec": {
                    "user": user.get("username"),
                    "uid": user.get("uid"),
                    "groups": user.get("groups") or [],
                    "extra": user.get("extra") or {},
                    "nonResourceAttributes": {"path": self._path, "verb": self._verb},
                },
            },
        )
        return 200 if (access.get("status") or {}).get("allowed") else 403
