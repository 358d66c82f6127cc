"""The compatibility tests (`make test-compat`) use the control-plane fixtures of the
integration tests; each test starts a private control plane of the release under test."""

from tests.testenv.fixtures import control_plane_factory

__all__ = ["control_plane_factory"]
