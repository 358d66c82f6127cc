"""The test suite's own layout (docs/development.md, "Where the test helpers live"): no test module
imports another one; what tests share lives in support modules (tests/builders.py,
tests/integration/harness.py, tests/reliability/common.py, ...) and in the conftest.py files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
TEST_MODULES = sorted(TESTS.rglob("test_*.py"))


def is_test_module(dotted: str) -> bool:
    return dotted.startswith("tests.") and dotted.rsplit(".", 1)[-1].startswith("test_")


def imported_test_modules(source: str, package: str) -> list[str]:
    """The test modules `source` imports, in any form: `import tests.unit.test_x`, `from
    tests.unit.test_x import y`, `from tests.unit import test_x`, relative ones."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{module}" if module else base
            if is_test_module(module):
                found.append(module)
            named = [f"{module}.{alias.name}" for alias in node.names]
            found += [name for name in named if is_test_module(name)]
    return found


def test_no_test_module_imports_another() -> None:
    assert len(TEST_MODULES) > 50
    found = {
        str(path.relative_to(TESTS)): imported
        for path in TEST_MODULES
        if (
            imported := imported_test_modules(
                path.read_text(encoding="utf-8"),
                ".".join(path.relative_to(TESTS.parent).parent.parts),
            )
        )
    }
    assert found == {}, "move what they share into a support module (docs/development.md)"


@pytest.mark.parametrize(
    ("source", "imported"),
    [
        ("from tests.unit.test_x import y", ["tests.unit.test_x"]),
        ("import tests.reliability.test_x", ["tests.reliability.test_x"]),
        ("from tests.unit import test_x, spa_model", ["tests.unit.test_x"]),
        ("from .test_x import y", ["tests.unit.test_x"]),
        ("from . import test_x", ["tests.unit.test_x"]),
        ("from ..reliability.test_x import y", ["tests.reliability.test_x"]),
        ("def f():\n    from tests.unit.test_x import y", ["tests.unit.test_x"]),
        ("from tests.builders import schedule\nfrom tests.unit.spa_model import Server", []),
        ("from spa.schedule import test_like", []),
    ],
)
def test_the_check_finds_each_form_of_import(source: str, imported: list[str]) -> None:
    assert imported_test_modules(source, "tests.unit") == imported
