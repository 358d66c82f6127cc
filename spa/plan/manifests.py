"""Reading manifests the way they are kept in Git: files, directories, multi-document YAML, and
what `kubectl get -o yaml` prints.

Kept apart from planning so that every problem with the input itself (a missing file, broken
YAML) is reported with its file and document number while the readable rest still counts.
Files are read as kubectl reads them (`spa.plan.decoding`), `kind: List` documents are unpacked
as kubectl unpacks them, and an input is bounded in size before it is parsed at all.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from spa.api import API_VERSION, GROUP, SCHEDULE_KIND, SCHEDULED_POD_AUTOSCALER
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND
from spa.plan.decoding import Decoded, Failed, decode_stream

__all__ = [
    "MANIFEST_SUFFIXES",
    "MAX_INPUT_BYTES",
    "Document",
    "ReadError",
    "misaddressed",
    "read_blobs",
    "read_documents",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

MAX_INPUT_BYTES = 8 * 1024 * 1024
"""The largest file (or standard input) read: about 8,000 objects as `kubectl get -o yaml`
prints them, and at most a few hundred megabytes of memory once parsed."""


@dataclass(frozen=True, slots=True)
class Document:
    """One object: its file, its 1-based document number there, its position in the `items`
    of a List document (None for a document of its own), and its parsed body."""

    file: str
    index: int
    body: object
    item: int | None = None
    order: int = 0
    """The position of its file among the files read, for reporting in file order."""


@dataclass(frozen=True, slots=True)
class ReadError:
    """A file or document that could not be read at all."""

    file: str
    index: int | None
    message: str
    field: str | None = None
    order: int = 0
    kind: str | None = None
    """The object the problem is in, where the document could be read far enough to tell."""
    namespace: str | None = None
    name: str | None = None


def read_documents(paths: Sequence[str]) -> tuple[list[Document], list[ReadError]]:
    """Every object of every manifest under `paths` (`-` is standard input).

    A path that yields no ScheduledPodAutoscaler or Schedule at all is an error: planning
    nothing and saying nothing would look like success.
    """
    documents: list[Document] = []
    errors: list[ReadError] = []
    order = 0
    for name in paths:
        found_before, errors_before = len(documents), len(errors)
        for file in _expand(name, errors, order):
            _read_file(file, order, documents, errors)
            order += 1
        if len(errors) == errors_before and not any(
            _is_ours(document.body) for document in documents[found_before:]
        ):
            # The error names the path already: `empty.yaml: holds no ...`.
            errors.append(
                ReadError(
                    name,
                    None,
                    f"holds no {SCHEDULED_POD_AUTOSCALER} or {SCHEDULE_KIND} "
                    f"(apiVersion {GROUP}/...)",
                    order=order,
                )
            )
            order += 1
    return documents, errors


def _is_ours(body: object) -> bool:
    """An object of our API group, or meant to be: planned, or reported (an unknown kind of
    the group, or our kind under a misspelt group, is an error of its own, so the path is not
    also said to hold nothing)."""
    if isinstance(body, list):
        # Objects listed without a List around them: an error of the document that names
        # them (spa.plan.planner), so not also a path that holds nothing.
        return any(_is_ours(item) for item in body)
    if not isinstance(body, Mapping):
        return False
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api_version, str):
        return False
    if api_version.rpartition("/")[0] == GROUP:
        return True
    return isinstance(kind, str) and misaddressed(api_version, kind) is not None


_OUR_KINDS = (SCHEDULED_POD_AUTOSCALER, SCHEDULE_KIND, CALENDAR_KIND, CLUSTER_CALENDAR_KIND)
# How close (difflib's ratio, case folded) a group must be to ours to be taken for a misspelling
# of it: `autoscaling.d-kuro.github.com` is 0.95, while the real groups nearest to it,
# `autoscaling.k8s.io` (the VerticalPodAutoscaler's) and `autoscaling.x-k8s.io`, are about 0.7.
_CLOSE_TO_GROUP = 0.8
# Built-in groups (`autoscaling/v2`, the core `v1`): none has a kind of ours, so our kind there
# is a slip (kubectl refuses it: "no matches for kind"); other groups may have kinds of the
# same name (Velero's Schedule), which are theirs.
_BUILT_IN_GROUPS = ("autoscaling", "")


def misaddressed(api_version: str, kind: str) -> str | None:
    """Why an object outside our API group was most likely meant to be in it, as the message
    of its `apiVersion` (docs/plan.md), or None for another group's object.

    kubectl refuses each of these ("no matches for kind"), and `spa plan` passed them over as
    other groups' objects: the Schedule then silently missed from the plan."""
    group = api_version.rpartition("/")[0]
    if group == GROUP:
        return None
    shown = _brief(api_version)
    if api_version.casefold() in (GROUP, f"{GROUP}/"):
        return f"'{shown}' has no version; did you mean '{API_VERSION}'?"
    folded = group.casefold()
    if folded == GROUP:
        return (
            f"unknown API group '{_brief(group)}' (a group is lower case); "
            f"did you mean '{API_VERSION}'?"
        )
    if difflib.SequenceMatcher(None, folded, GROUP).ratio() >= _CLOSE_TO_GROUP:
        return f"unknown API group '{_brief(group)}'; did you mean '{API_VERSION}'?"
    if kind == SCHEDULED_POD_AUTOSCALER or (kind in _OUR_KINDS and group in _BUILT_IN_GROUPS):
        return f"'{shown}' has no kind {kind}; did you mean '{API_VERSION}'?"
    return None


def _brief(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:40]}..."


def _expand(name: str, errors: list[ReadError], order: int) -> Iterator[str]:
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
            message = "the directory holds no .yaml, .yml or .json file"
            errors.append(ReadError(name, None, message, order=order))
        yield from found
    elif path.exists():
        # A file, or what a shell passes for `<(command)` and `/dev/stdin`: a pipe or a device,
        # which is not a regular file (and whose size is only known once read).
        yield name
    else:
        errors.append(ReadError(name, None, "no such file or directory", order=order))


def _read_file(file: str, order: int, documents: list[Document], errors: list[ReadError]) -> None:
    try:
        if file == "-":
            data = _read_bounded(sys.stdin.buffer)
        else:
            with Path(file).open("rb") as stream:
                data = _read_bounded(stream)
    except OSError as error:
        errors.append(ReadError(file, None, f"cannot read the file: {error.strerror}", order=order))
        return
    _decode_file(file, data, order=order, documents=documents, errors=errors)


def read_blobs(blobs: Sequence[tuple[str, bytes | None]]) -> tuple[list[Document], list[ReadError]]:
    """Every object of files whose bytes were read elsewhere (`spa plan --diff git:REV` reads
    them from Git), each named as given; None stands for one larger than MAX_INPUT_BYTES, whose
    bytes are never read. Decoded and reported exactly as the files of `read_documents`."""
    documents: list[Document] = []
    errors: list[ReadError] = []
    for order, (file, data) in enumerate(blobs):
        _decode_file(file, data, order=order, documents=documents, errors=errors)
    return documents, errors


def _decode_file(
    file: str,
    data: bytes | None,
    *,
    order: int,
    documents: list[Document],
    errors: list[ReadError],
) -> None:
    """The objects of one file's bytes (None: too large to be read)."""
    if data is None:
        errors.append(
            ReadError(
                file,
                None,
                f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB, the most spa plan reads "
                "from one file; split it",
                order=order,
            )
        )
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        errors.append(
            ReadError(
                file, None, f"not UTF-8 text (byte {error.start + 1} cannot be read)", order=order
            )
        )
        return
    for result in decode_stream(text):
        if isinstance(result, Decoded):
            _unpack(file, order, result, documents, errors)
        else:
            errors.append(_read_error(file, order, result))


def _read_error(file: str, order: int, failed: Failed) -> ReadError:
    """A document that could not be read, with the object it belongs to where the rest of it
    was read (a number out of range in one item of a List names that item)."""
    body: object = failed.value
    path = failed.path or ""
    if isinstance(body, Mapping) and isinstance(body.get("items"), list):
        position = re.match(r"items\[([0-9]+)\]", path)
        items = body["items"]
        if position is not None and int(position[1]) < len(items):
            body = items[int(position[1])]
    if not isinstance(body, Mapping):
        return ReadError(file, failed.index, failed.message, failed.path, order)
    kind, metadata = body.get("kind"), body.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    api_version = body.get("apiVersion")
    ours = isinstance(api_version, str) and api_version.rpartition("/")[0] == GROUP
    if ours and kind != CLUSTER_CALENDAR_KIND and not namespace:
        namespace = "default"  # as the planner names the objects it reads (docs/plan.md)
    return ReadError(
        file,
        failed.index,
        failed.message,
        failed.path,
        order,
        kind=_brief(kind) if isinstance(kind, str) and kind else None,
        namespace=_brief(namespace) if isinstance(namespace, str) and namespace else None,
        name=_brief(name) if isinstance(name, str) and name else None,
    )


def _read_bounded(stream: BinaryIO) -> bytes | None:
    data = stream.read(MAX_INPUT_BYTES + 1)
    return None if len(data) > MAX_INPUT_BYTES else data


def _unpack(
    file: str, order: int, result: Decoded, documents: list[Document], errors: list[ReadError]
) -> None:
    """The objects of a document: itself, or the items of a List.

    Like kubectl (apimachinery's unstructured decoding), any object with an `items` field is a
    List, and an item with neither kind nor apiVersion takes the List's apiVersion and its kind
    without the `List` suffix (so the items of a `ScheduleList` are Schedules).
    """
    body = result.value
    if not isinstance(body, Mapping) or "items" not in body:
        documents.append(Document(file, result.index, body, order=order))
        return
    items = body["items"]
    if not isinstance(items, list):
        errors.append(
            ReadError(
                file,
                result.index,
                "must be a list of objects (kubectl reads any document with items as a List)",
                "items",
                order,
            )
        )
        return
    kind, api_version = body.get("kind"), body.get("apiVersion")
    for position, item in enumerate(items):
        if isinstance(item, Mapping) and "items" in item:
            errors.append(
                ReadError(
                    file,
                    result.index,
                    "a List inside a List, which kubectl does not unpack",
                    f"items[{position}]",
                    order,
                )
            )
            continue
        if (
            isinstance(item, Mapping)
            and "kind" not in item
            and "apiVersion" not in item
            and isinstance(kind, str)
        ):
            item = {**item, "kind": kind.removesuffix("List"), "apiVersion": api_version}
        documents.append(Document(file, result.index, item, item=position, order=order))
