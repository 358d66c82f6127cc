"""The manifests of `spa plan --diff git:REV`: the `-f` paths as they were at a Git revision.

A pull-request job compares the branch's manifests with those of the target branch, and the
target's are in the same clone already; asking Git for them avoids a second checkout and any
mistake in pairing paths. Git itself is run (`git rev-parse`, `git ls-tree`, `git cat-file`):
it is on every CI runner that has a clone, and it alone knows the repository's exact rules
(packs, worktrees, `safe.directory`), which no library would reproduce as faithfully.

The files found are decoded exactly as `-f` decodes files (`spa.plan.manifests.read_blobs`),
named `REV:path` as Git names them, so an error says which side and which version it is from.
A path is allowed to be missing on either side, which is how a pull request adds or removes a
directory (`read_working_tree` reads the other side). docs/plan.md, "`--diff`", states the
rules.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from spa.plan.manifests import (
    MANIFEST_SUFFIXES,
    MAX_INPUT_BYTES,
    Document,
    ReadError,
    read_blobs,
    read_documents,
)

__all__ = [
    "GIT_PREFIX",
    "RevisionError",
    "RevisionManifests",
    "read_revision",
    "read_working_tree",
]

GIT_PREFIX = "git:"
"""How `--diff` names a revision rather than a path: `git:main`, `git:origin/main`, `git:HEAD~1`."""

_SYMLINK_MODE = "120000"
_GIT_TIMEOUT = 120


class RevisionError(Exception):
    """The revision cannot be read at all: no Git, no repository, no such revision."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class RevisionManifests:
    """What `read_revision` found at `revision`."""

    revision: str
    documents: list[Document]
    errors: list[ReadError]
    """The paths' errors first (the plan's sort is stable), then the files' own."""
    absent: frozenset[str]
    """The paths, as given, that held no manifest file at the revision."""


def read_revision(
    revision: str, paths: Sequence[str], *, cwd: Path | None = None
) -> RevisionManifests:
    """Every object of the manifests under `paths` (as `-f` names them, relative to `cwd`) at
    `revision` of the Git repository that holds `cwd`.

    A path that did not exist at the revision holds nothing there (a pull request that adds a
    directory adds every ScheduledPodAutoscaler in it); a path outside the repository, or
    standard input, is an error of that path. A directory yields its `.yaml`, `.yml` and
    `.json` files, at any depth, as for `-f`; symbolic links are not followed (Git stores
    their target's name, not its content).
    """
    directory = (cwd or Path.cwd()).resolve()
    try:
        top = Path(_git(["rev-parse", "--show-toplevel"], directory).strip()).resolve()
    except _GitFailed as failed:
        raise RevisionError(
            f"{directory} is not in a Git repository, so there is no revision to read "
            f"(git: {failed.reason})"
        ) from None
    if not revision or revision.startswith("-"):
        raise RevisionError(f"'{revision}' is not a revision name")
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], directory)
    except _GitFailed:
        raise RevisionError(
            f"unknown revision '{revision}': no commit of that name in this repository"
        ) from None
    commit = commit.strip()
    blobs: list[tuple[str, bytes | None]] = []
    errors: list[ReadError] = []
    absent: set[str] = set()
    for path in paths:
        if path == "-":
            errors.append(
                ReadError(path, None, "standard input has no version in Git; give a path")
            )
            continue
        absolute = Path(directory, path).resolve()
        if not absolute.is_relative_to(top):
            message = f"outside the Git repository {top}, so not read at {revision}"
            errors.append(ReadError(path, None, message))
            continue
        inside = absolute.relative_to(top).as_posix()
        try:
            files = _files(commit, inside, directory=directory)
            if not files:
                absent.add(path)
            for name, oid, size in files:
                # `cat-file blob` gives the stored bytes exactly (no textconv, no path parsing).
                data = (
                    None
                    if size > MAX_INPUT_BYTES
                    else _git_bytes(["cat-file", "blob", oid], directory)
                )
                blobs.append((f"{revision}:{name}", data))
        except _GitFailed as failed:
            raise RevisionError(f"cannot read {path} at {revision}: {failed.reason}") from None
    documents, read_errors = read_blobs(blobs)
    return RevisionManifests(revision, documents, [*errors, *read_errors], frozenset(absent))


def read_working_tree(
    paths: Sequence[str], old: RevisionManifests
) -> tuple[list[Document], list[ReadError]]:
    """The new side of `--diff git:REV`: the `paths` read as `-f` reads them, except that a
    path missing from the working tree holds nothing, as one missing at the revision `old` was
    read at does (a pull request that removes a directory removes every object in it). A path
    missing on both sides names nothing at all (a typo, most likely): that is an error."""
    present = [path for path in paths if path == "-" or Path(path).exists()]
    documents, errors = read_documents(present)
    for path in paths:
        if path not in present and path in old.absent:
            message = f"no such file or directory, here or at {old.revision}"
            errors.append(ReadError(path, None, message))
    return documents, errors


def _files(commit: str, inside: str, *, directory: Path) -> list[tuple[str, str, int]]:
    """The files at `inside` (a file, or a directory's manifests) in `commit`: (path from the
    repository's top, object id, size in bytes). `inside` is read literally (no wildcards)."""
    arguments = ["ls-tree", "-r", "-l", "-z", "--full-tree", commit]
    if inside != ".":
        arguments += ["--", inside]
    listed = _git_bytes(arguments, directory)
    entries: list[tuple[str, str, int]] = []
    for raw in listed.split(b"\0"):
        if not raw:
            continue
        head, _, name_bytes = raw.partition(b"\t")
        mode, kind, oid, size = head.decode("ascii").split(maxsplit=3)
        if kind != "blob" or mode == _SYMLINK_MODE:
            continue
        entries.append((os.fsdecode(name_bytes), oid, int(size)))
    if len(entries) == 1 and entries[0][0] == inside:
        return entries  # the path is a file: read whatever its name, as `-f FILE` does
    return sorted(entry for entry in entries if entry[0].endswith(MANIFEST_SUFFIXES))


class _GitFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _git(arguments: list[str], directory: Path) -> str:
    return _git_bytes(arguments, directory).decode("utf-8", "replace")


def _git_bytes(arguments: list[str], directory: Path) -> bytes:
    """What `git ARGUMENTS` prints; _GitFailed with git's own last line if it fails."""
    try:
        done = subprocess.run(
            ["git", *arguments],
            cwd=directory,
            # A path is a name, not a pattern: `deploy/[a]` is that directory.
            env={**os.environ, "GIT_LITERAL_PATHSPECS": "1"},
            capture_output=True,
            check=False,
            timeout=_GIT_TIMEOUT,
        )
    except FileNotFoundError:
        raise RevisionError("git:REV needs the git command, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise RevisionError(f"git {arguments[0]} took more than {_GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitFailed(
            said[-1].removeprefix("fatal: ") if said else f"exit status {done.returncode}"
        )
    return done.stdout
