"""The test suite's own layout (docs/development.md, "Where the test helpers live"): no test module
imports another one; what tests share lives in support modules (tests/builders.py,
tests/integration/harness.py, tests/reliability/common.py, ...) and in the conftest.py files."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]
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


# tests/unit mirrors spa/ (docs/development.md, "Where the test helpers live"): the tests of
# spa/<package>/ are in tests/unit/<package>/ (spa/controller/decide/ in
# tests/unit/controller/decide/); those that hold several packages to one answer in
# tests/unit/agreement/; those of the repository around spa/ (docs, lock, release, packaging
# files, bench/, tests/testenv/, this layout) in tests/unit/project/.
UNIT = TESTS / "unit"
SPA = TESTS.parent / "spa"
BESIDE_SPA = {"agreement", "project"}
# The console scripts of setup.cfg, run from the venv's bin/ (`Path(sys.executable).parent`).
CONSOLE_SCRIPTS = {"spa": "spa.cli", "kubectl-spa": "spa.cli", "kubectl_complete-spa": "spa.cli"}
NAMED_IN_PROSE = re.compile(r"\bspa[./]([a-z_]+(?:[./][a-z_]+)*)")


def spa_packages() -> set[str]:
    """The packages of spa/, as paths below it: api, api/validation, controller/decide, ..."""
    return {str(init.parent.relative_to(SPA)) for init in SPA.rglob("__init__.py")} - {"."}


def support_module(dotted: str) -> Path | None:
    """The file of a tests support module (tests.builders, tests.unit.spa_model, ...)."""
    if not dotted.startswith("tests.") or is_test_module(dotted):
        return None
    base = TESTS.parent.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(source: str) -> set[str]:
    """Every module `source` imports by its absolute name, with the names it imports from one."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def reached(source: str, seen: frozenset[Path] = frozenset()) -> set[str]:
    """The spa modules a test module reaches: those it imports, those the tests support modules
    it imports reach, those its docstring names (`spa.api.adoption`, spa/kube/_kubernetes.py),
    and spa.cli when it runs one of the installed console scripts."""
    tree = ast.parse(source)
    modules = imported_modules(source)
    found = {name for name in modules if name == "spa" or name.startswith("spa.")}
    for name in modules:
        path = support_module(name)
        if path is not None and path not in seen:
            found |= reached(path.read_text(encoding="utf-8"), seen | {path})
    docstring = ast.get_docstring(tree) or ""
    found |= {"spa." + match.replace("/", ".") for match in NAMED_IN_PROSE.findall(docstring)}
    if "Path(sys.executable).parent" in source:
        literals = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        found |= {CONSOLE_SCRIPTS[name] for name in literals & CONSOLE_SCRIPTS.keys()}
    return found


def covers(package: str, modules: set[str]) -> bool:
    dotted = "spa." + package.replace("/", ".")
    return any(module == dotted or module.startswith(dotted + ".") for module in modules)


def misplaced(path: Path) -> str | None:
    """Why the unit test module at `path` is not where tests/unit's layout puts it, or None."""
    package = str(path.parent.relative_to(UNIT))
    if package == ".":
        return "directly in tests/unit: move it into the package of what it tests"
    if package == "project":
        return None
    modules = reached(path.read_text(encoding="utf-8"))
    if package == "agreement":
        packages = {module.split(".")[1] for module in modules if module.count(".") >= 1}
        return None if len(packages) >= 2 else f"reaches one spa package only: {sorted(packages)}"
    if package not in spa_packages():
        return f"tests/unit/{package} mirrors no package of spa/ and is not one of {BESIDE_SPA}"
    if not covers(package, modules):
        return f"reaches nothing of spa/{package}/"
    return None


def test_every_unit_test_lives_in_the_package_of_what_it_tests() -> None:
    unit_tests = [path for path in TEST_MODULES if path.is_relative_to(UNIT)]
    assert len(unit_tests) > 50
    found = {str(path.relative_to(UNIT)): why for path in unit_tests if (why := misplaced(path))}
    assert found == {}, "docs/development.md, 'Where the test helpers live': the layout"


@pytest.mark.parametrize(
    ("source", "package", "tests_it"),
    [
        ("from spa.controller.decide import decide", "controller/decide", True),
        ("from spa.controller import decide", "controller/decide", True),
        ("import spa.plan.render", "plan", True),
        ("from spa.plan import build_plan", "controller", False),
        ("from spa.controller.decide import decide", "api", False),
        ("from spa.planner import x", "plan", False),
        ('"""The fence (spa/runtime/fence.py)."""', "runtime", True),
        ('"""What spa.kube loads."""', "kube", True),
        ("x = 'spa.api'", "api", False),
        ("from tests.unit.spa_model import Server", "controller/decide", True),
        ("from tests.unit.spa_model import Server", "plan", False),
        ("from tests.builders import schedule", "api", True),
        ("from tests.builders import schedule", "plan", False),
        ('SPA = Path(sys.executable).parent / "spa"', "cli", True),
        ('SPA = Path(sys.executable).parent / "other"', "cli", False),
        ('manager = "spa"', "cli", False),
    ],
)
def test_the_layout_check_finds_what_a_module_tests(
    source: str, package: str, tests_it: bool
) -> None:
    assert covers(package, reached(source)) is tests_it
