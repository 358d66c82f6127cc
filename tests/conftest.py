"""Project-wide pytest configuration: registers the shared fixture plugins."""

pytest_plugins = [
    "tests.testenv.fixtures",
    "tests.integration.harness",
    "tests.integration.processes",
]
