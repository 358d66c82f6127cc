"""TerminatingNamespaces (spa/runtime/terminating.py): which namespaces were said to be being
deleted, for as long as their line stands for all their objects (`quiet`)."""

from __future__ import annotations

import json

from spa.kube import NamespaceTerminating, error_from_status
from spa.runtime import FakeClock, TerminatingNamespaces
from tests.builders import namespace_terminating


def terminating_in(namespace: str) -> NamespaceTerminating:
    """The error the client raises when the API server refuses a create in `namespace`."""
    body = json.dumps(namespace_terminating(namespace=namespace)).encode()
    error = error_from_status(403, body)
    assert isinstance(error, NamespaceTerminating)
    return error


def test_a_namespace_is_said_for_quiet_seconds_after_a_refusal() -> None:
    """A writer that finds an object of the namespace gone asks `said` whether the namespace's
    line already stands for it (docs/operations.md, "Namespaces being deleted"): yes from the
    refusal on, for `quiet` seconds, and for that namespace only."""
    clock = FakeClock(start=1_767_225_600.0)
    terminating = TerminatingNamespaces(clock=clock, quiet=600)
    assert not terminating.said("shop")
    terminating.refused("shop", terminating_in("shop"))
    assert terminating.said("shop")
    assert not terminating.said("elsewhere")
    clock.advance(599)
    assert terminating.said("shop")
    clock.advance(1)
    assert not terminating.said("shop")
    # Said again (a finalizer holds the namespace): said for another `quiet` seconds.
    terminating.refused("shop", terminating_in("shop"))
    assert terminating.said("shop")
