"""The previous release both switch tests run (tests/upgrade/previous.py), built or taken from
its cache once per session."""

from __future__ import annotations

import pytest

from tests.upgrade.previous import PREVIOUS_VERSION, Previous, build


@pytest.fixture(scope="session")
def previous() -> Previous:
    built = build()
    assert built.version() == PREVIOUS_VERSION
    return built
