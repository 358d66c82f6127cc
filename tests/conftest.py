"""Project-wide pytest configuration.

Nothing is registered here on purpose: the control-plane fixtures live in
tests/integration/conftest.py and tests/reliability/conftest.py, so that `pytest tests/unit`
loads neither the local control plane's code nor its dependencies (`cryptography`).
"""
