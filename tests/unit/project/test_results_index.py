"""Every raw benchmark result is in docs/results/ and in the index of docs/performance.md.

docs/performance.md, "Raw results", holds two tables: the current results and the history
(docs/results/history/, each row naming the file that superseded it). A reader follows a
figure to its file and the command that made it only while the tables, the folder and the
docs' links agree, so each test here fails on one way they drift apart: a result left out of
docs/results/, a file no row names, a row naming a file that is not there, a history file in
the current table, or a link or path to a raw result that does not resolve.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
RESULTS = DOCS / "results"
MARKDOWN = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
# What the benchmarks write: their raw JSON and bench/load.py's SVG plot.
RAW = {".json", ".svg"}

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_RESULT_LINK = re.compile(r"\]\(results/([^)\s]+)\)")
# A raw result's path as the docs write it in prose or a command: from docs/ or from the root.
_RESULT_PATH = re.compile(r"(?<![\w./-])((?:docs/)?results/[\w./-]*\w\.(?:json|svg))")
_DOCS_RAW_PATH = re.compile(r"(?<![\w./-])(docs/[\w./-]*\w\.(?:json|svg))")


def _index_tables() -> tuple[list[list[str]], list[list[str]]]:
    """The rows (cells) of the "Raw results" section's two tables: current, then history."""
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    start = text.index("\n## Raw results\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    tables: list[list[list[str]]] = []
    table: list[list[str]] = []
    for line in [*section.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            table.append(cells)
        elif table:
            tables.append(table[2:])  # less the header and its |---| line
            table = []
    assert len(tables) == 2, f"performance.md, Raw results: {len(tables)} tables, not 2"
    return tables[0], tables[1]


def _files(row: list[str]) -> list[str]:
    """The files a row links to (its second column), relative to docs/results."""
    files = _RESULT_LINK.findall(row[1])
    assert files, f"performance.md, Raw results: a row links to no file: {row}"
    return list(files)


def _on_disk() -> set[str]:
    return {
        path.relative_to(RESULTS).as_posix()
        for path in RESULTS.rglob("*")
        if path.is_file() and path.suffix in RAW
    }


def test_every_raw_result_is_under_docs_results() -> None:
    # Until issue 36, docs/ held 23 of them beside the Markdown, named after issues and dates.
    strays = sorted(
        path.relative_to(ROOT).as_posix()
        for path in DOCS.rglob("*")
        if path.suffix in RAW and RESULTS not in path.parents
    )
    assert not strays, f"raw results outside docs/results/: {strays}"
    assert _on_disk(), "docs/results/ holds no raw result"


def test_the_index_and_docs_results_name_the_same_files_once() -> None:
    current, history = _index_tables()
    indexed = [name for row in current + history for name in _files(row)]
    twice = sorted({name for name in indexed if indexed.count(name) > 1})
    assert not twice, f"performance.md, Raw results: indexed twice: {twice}"
    not_indexed = sorted(_on_disk() - set(indexed))
    assert not not_indexed, f"in docs/results/, not in performance.md's Raw results: {not_indexed}"
    missing = sorted(set(indexed) - _on_disk())
    assert not missing, f"performance.md, Raw results names files not in docs/results/: {missing}"


def test_history_is_the_history_table_and_names_what_superseded_each() -> None:
    current, history = _index_tables()
    current_files = {name for row in current for name in _files(row)}
    misplaced = sorted(name for name in current_files if name.startswith("history/"))
    assert not misplaced, f"history files in the current table: {misplaced}"
    for row in history:
        for name in _files(row):
            assert name.startswith("history/"), f"{name}: in the history table, not in history/"
        superseding = [name.strip("` ") for name in row[-1].split(",")]
        unknown = [name for name in superseding if name not in current_files]
        assert not unknown, f"{row[1]}: superseded by {unknown}, not a current result"


def _result_references() -> Iterator[tuple[str, Path]]:
    """(where, the file it names) for every link to a raw result and every path of one."""
    for doc in MARKDOWN:
        text = doc.read_text(encoding="utf-8")
        where = doc.relative_to(ROOT).as_posix()
        for match in _LINK.finditer(text):
            target = match.group(1).split("#")[0]
            if Path(target).suffix in RAW and "://" not in target:
                yield f"{where}: link {target}", doc.parent / target
        for match in _RESULT_PATH.finditer(text):
            path = match.group(1)
            yield f"{where}: {path}", (ROOT if path.startswith("docs/") else DOCS) / path
    # What writes or reads them: the Makefile (`make bench FULL=1`), bench/ and hack/.
    scripts = [path for path in (ROOT / "hack").rglob("*") if path.suffix in {".py", ".sh", ".mk"}]
    for source in [ROOT / "Makefile", *sorted((ROOT / "bench").glob("*.py")), *sorted(scripts)]:
        text = source.read_text(encoding="utf-8")
        for match in _DOCS_RAW_PATH.finditer(text):
            where = source.relative_to(ROOT).as_posix()
            yield f"{where}: {match.group(1)}", ROOT / match.group(1)


def test_every_link_or_path_to_a_raw_result_resolves_into_docs_results() -> None:
    references = list(_result_references())
    assert any("load-full.json" in where for where, _ in references), "no reference found"
    broken = [where for where, path in references if not path.is_file()]
    assert not broken, "\n".join(broken)
    outside = [where for where, path in references if RESULTS not in path.resolve().parents]
    assert not outside, "\n".join(outside)
