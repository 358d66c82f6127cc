"""AccessReview's decisions and cache, with a recorded stand-in for the API server's reviews
(the real ones are exercised in tests/integration/test_secure_metrics.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spa.kube import SUBJECT_ACCESS_REVIEW, TOKEN_REVIEW, ApiUnavailable, Resource
from spa.runtime import AccessReview, FakeClock

USERS = {
    "prometheus-token": {
        "username": "system:serviceaccount:monitoring:prometheus",
        "groups": ["g"],
    },
    "nobody-token": {"username": "system:serviceaccount:default:nobody", "groups": []},
}
ALLOWED = {"system:serviceaccount:monitoring:prometheus"}


class Reviews:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.down = False

    async def __call__(self, resource: Resource, body: Mapping[str, Any]) -> dict[str, Any]:
        self.calls.append((resource.kind, dict(body)))
        if self.down:
            raise ApiUnavailable("connection refused")
        spec = body["spec"]
        if resource == TOKEN_REVIEW:
            user = USERS.get(spec["token"])
            return {"status": {"authenticated": user is not None, "user": user or {}}}
        assert resource == SUBJECT_ACCESS_REVIEW
        return {"status": {"allowed": spec["user"] in ALLOWED}}


async def test_no_token_is_401_without_asking() -> None:
    reviews = Reviews()
    review = AccessReview(reviews, path="/metrics", clock=FakeClock())
    assert await review(None) == 401
    assert await review("") == 401
    assert reviews.calls == []


async def test_an_unknown_token_is_401_and_a_user_without_access_403() -> None:
    reviews = Reviews()
    review = AccessReview(reviews, path="/metrics", clock=FakeClock())
    assert await review("forged") == 401
    assert [kind for kind, _ in reviews.calls] == ["TokenReview"]
    assert await review("nobody-token") == 403
    assert await review("prometheus-token") == 200
    access = reviews.calls[-1][1]["spec"]
    assert access["user"] == "system:serviceaccount:monitoring:prometheus"
    assert access["groups"] == ["g"]
    assert access["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}


async def test_answers_are_reused_for_ten_seconds_and_errors_never() -> None:
    clock = FakeClock()
    reviews = Reviews()
    review = AccessReview(reviews, path="/metrics", clock=clock)
    assert await review("prometheus-token") == 200
    clock.advance(9)
    assert await review("prometheus-token") == 200
    assert len(reviews.calls) == 2
    clock.advance(2)
    reviews.down = True
    assert await review("prometheus-token") == 503
    reviews.down = False
    assert await review("prometheus-token") == 200
    assert len(reviews.calls) == 1 + 2 + 2
