"""Reading manifests the way they are kept in Git: files, directories, multi-document YAML.

Kept apart from planning so that every problem with the input itself (a missing file, broken
YAML) is reported with its file and document number while the readable rest still counts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["Document", "ReadError", "read_documents"]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

# libyaml's loader is several times faster than the pure-Python one, which matters for a
# repository of thousands of manifests; it is absent only from unusual builds of PyYAML.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class Document:
    """One YAML document: its file, its 1-based position there, and its parsed body."""

    file: str
    index: int
    body: object


@dataclass(frozen=True, slots=True)
class ReadError:
    """A file or document that could not be read at all."""

    file: str
    index: int | None
    message: str


def read_documents(paths: Sequence[str]) -> tuple[list[Document], list[ReadError]]:
    """Every document of every manifest under `paths` (`-` is standard input)."""
    documents: list[Document] = []
    errors: list[ReadError] = []
    for name in paths:
        for file in _expand(name, errors):
            _read_file(file, documents, errors)
    return documents, errors


def _expand(name: str, errors: list[ReadError]) -> Iterator[str]:
    if name == "-":
        yield name
        return
    path = Path(name)
    if path.is_dir():
        found = sorted(
            str(child)
            for child in path.rglob("*")
            if child.is_file() and child.suffix in MANIFEST_SUFFIXES
        )
        if not found:
            errors.append(ReadError(name, None, "the directory holds no .yaml, .yml or .json file"))
        yield from found
    elif path.is_file():
        yield name
    else:
        errors.append(ReadError(name, None, "no such file or directory"))


def _read_file(file: str, documents: list[Document], errors: list[ReadError]) -> None:
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        errors.append(ReadError(file, None, f"cannot read the file: {error}"))
        return
    index = 0
    stream = yaml.load_all(text, Loader=_Loader)
    while True:
        try:
            body = next(stream)
        except StopIteration:
            return
        except yaml.YAMLError as error:
            # The parser cannot resynchronise after a syntax error, so the documents after it
            # in this file are lost; the other files are still read.
            errors.append(ReadError(file, index + 1, f"invalid YAML: {_describe(error)}"))
            return
        index += 1
        if body is not None:
            documents.append(Document(file, index, body))


def _describe(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        return f"{error.problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(error)
