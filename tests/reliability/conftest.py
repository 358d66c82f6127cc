"""The fault tests use the integration tests' fixtures (tests/integration/conftest.py)."""

from tests.integration.conftest import *  # noqa: F403
from tests.integration.conftest import __all__  # noqa: F401
