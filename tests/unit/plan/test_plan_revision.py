"""Reading the `-f` paths at a Git revision (spa/plan/revision.py) from a repository made by
the real `git`: the stored bytes, named `REV:path`, with Git's paths taken literally, files
too large refused unread, symbolic links passed over (docs/plan.md, "`--diff`")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from spa.plan.manifests import MAX_INPUT_BYTES
from spa.plan.revision import RevisionError, read_revision

SPA = """\
apiVersion: autoscaling.d-kuro.github.io/v1
kind: ScheduledPodAutoscaler
metadata: {name: NAME}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: NAME}
    maxReplicas: 4
"""


def git(repository: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", *arguments],
        cwd=repository,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "test",
            "GIT_AUTHOR_EMAIL": "test@example.com",
            "GIT_COMMITTER_NAME": "test",
            "GIT_COMMITTER_EMAIL": "test@example.com",
        },
    ).stdout


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    return tmp_path


def commit(repository: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text)
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "change")


def names(repository: Path, *paths: str, revision: str = "main") -> list[str]:
    found = read_revision(revision, paths, cwd=repository)
    documents, errors = found.documents, found.errors
    assert errors == []
    return [f"{d.file}={d.body['metadata']['name']}" for d in documents]  # type: ignore[index]


def test_the_committed_version_is_read_not_the_working_tree(repository: Path) -> None:
    commit(repository, {"deploy/a.yaml": SPA.replace("NAME", "first")})
    (repository / "deploy" / "a.yaml").write_text(SPA.replace("NAME", "edited"))
    assert names(repository, "deploy") == ["main:deploy/a.yaml=first"]


def test_a_directory_yields_its_manifests_and_a_named_file_is_read_whatever_its_name(
    repository: Path,
) -> None:
    commit(
        repository,
        {
            "deploy/b.yml": SPA.replace("NAME", "b"),
            "deploy/sub/a.json": '{"apiVersion": "autoscaling.d-kuro.github.io/v1", '
            '"kind": "ScheduledPodAutoscaler", "metadata": {"name": "a"}}',
            "deploy/notes.txt": SPA.replace("NAME", "notes"),
        },
    )
    assert names(repository, "deploy") == ["main:deploy/b.yml=b", "main:deploy/sub/a.json=a"]
    assert names(repository, "deploy/notes.txt") == ["main:deploy/notes.txt=notes"]


def test_paths_are_names_not_patterns(repository: Path) -> None:
    commit(repository, {"[a]/x.yaml": SPA.replace("NAME", "bracket"), "a/y.yaml": SPA})
    assert names(repository, "[a]") == ["main:[a]/x.yaml=bracket"]


def test_a_path_absent_at_the_revision_holds_nothing(repository: Path) -> None:
    commit(repository, {"deploy/a.yaml": SPA.replace("NAME", "a")})
    assert names(repository, "not-yet") == []


def test_symbolic_links_are_passed_over(repository: Path) -> None:
    commit(repository, {"real/a.yaml": SPA.replace("NAME", "a")})
    (repository / "deploy").mkdir()
    (repository / "deploy" / "link.yaml").symlink_to("../real/a.yaml")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "link")
    assert names(repository, "deploy") == []
    assert names(repository, ".") == ["main:real/a.yaml=a"]


def test_a_file_too_large_is_refused_unread(repository: Path) -> None:
    commit(repository, {"big.yaml": "#" * (MAX_INPUT_BYTES + 1)})
    found = read_revision("main", ["big.yaml"], cwd=repository)
    documents, errors = found.documents, found.errors
    assert documents == []
    assert [(e.file, e.message.split(",")[0]) for e in errors] == [
        ("main:big.yaml", "larger than 8 MiB")
    ]


def test_standard_input_and_paths_outside_are_errors_of_the_path(
    repository: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    commit(repository, {"a.yaml": SPA.replace("NAME", "a")})
    outside = tmp_path_factory.mktemp("outside")
    found = read_revision("main", ["-", str(outside), "a.yaml"], cwd=repository)
    documents, errors = found.documents, found.errors
    assert [d.file for d in documents] == ["main:a.yaml"]
    assert [e.file for e in errors] == ["-", str(outside)]
    assert "standard input has no version in Git" in errors[0].message
    assert errors[1].message.startswith("outside the Git repository")


def test_an_unknown_revision_or_an_option_is_refused(repository: Path) -> None:
    commit(repository, {"a.yaml": SPA})
    with pytest.raises(RevisionError, match="unknown revision 'nope'"):
        read_revision("nope", ["a.yaml"], cwd=repository)
    with pytest.raises(RevisionError, match="is not a revision name"):
        read_revision("--all", ["a.yaml"], cwd=repository)
    # A revision that names a tree or a blob is no commit either.
    with pytest.raises(RevisionError, match="unknown revision"):
        read_revision("main:a.yaml", ["a.yaml"], cwd=repository)
