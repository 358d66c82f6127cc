"""The packaging tests (`make test-packaging`) use the integration tests' fixtures: the local
control plane, a fresh namespace per test, the CRDs and an admin client."""

from tests.integration.conftest import *  # noqa: F403
from tests.integration.conftest import __all__  # noqa: F401
