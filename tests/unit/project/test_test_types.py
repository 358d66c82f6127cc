"""The tests tell mypy the truth (docs/development.md, "Where the test helpers live"): no
`type: ignore[arg-type]` in tests/. A manifest built as a dict goes to the kubernetes library's
typed API as its model (`k8s.V1Deployment.model_validate(manifest)`, checked field by field), or
to the project's own client, which takes dicts."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
IGNORED_ARGUMENT = "type: ignore[arg-type]"


def test_no_test_silences_a_wrong_argument_type() -> None:
    sources = sorted(TESTS.rglob("*.py"))
    assert len(sources) > 100
    silenced = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sources
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if IGNORED_ARGUMENT in line
    ]
    assert silenced == []
