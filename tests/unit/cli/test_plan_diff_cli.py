"""`spa plan --diff` end to end through the installed `spa`: files, directories, and `git:REV`
read from a real Git repository made by the real `git` (docs/plan.md, "`--diff`")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import OFFICE_HOURS, autoscaler, manifests, schedule

SPA = Path(sys.executable).parent / "spa"
RANGE = ("--at", "2026-11-23T00:00:00Z", "--days", "2")


def web(start: str = "09:00", zone: str = "Europe/Berlin", namespace: str = "shop") -> str:
    """The SPA `web` (2 to 8) with its Schedule office-hours, starting at `start` in `zone`."""
    return manifests(
        autoscaler(namespace=namespace, minReplicas=2, maxReplicas=8, metrics=None),
        schedule(
            name="office-hours",
            namespace=namespace,
            minReplicas=5,
            **{**OFFICE_HOURS, "startTime": start, "timeZone": zone},
        ),
    )


def api_spa(name: str = "api", maxReplicas: int = 4) -> str:
    return manifests(autoscaler(name=name, minReplicas=None, maxReplicas=maxReplicas, metrics=None))


def spa(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SPA), "plan", *arguments, *RANGE],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def diff_json(*arguments: str, cwd: Path) -> tuple[int, dict[str, Any], str]:
    result = spa(*arguments, "-o", "json", cwd=cwd)
    return result.returncode, json.loads(result.stdout), result.stderr


def write(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)


def git(repository: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", *arguments],
        cwd=repository,
        check=True,
        capture_output=True,
        timeout=60,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "test",
            "GIT_AUTHOR_EMAIL": "test@example.com",
            "GIT_COMMITTER_NAME": "test",
            "GIT_COMMITTER_EMAIL": "test@example.com",
        },
    )


def test_files_that_plan_the_same_exit_0(tmp_path: Path) -> None:
    write(tmp_path, {"old.yaml": web(), "new.yaml": web() + "---\n# a comment only\n"})
    result = spa("--diff", "old.yaml", "-f", "new.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Unchanged: 1 ScheduledPodAutoscaler(s) (shop/web)" in result.stdout
    assert not any(line[:2] in ("+ ", "- ", "! ") for line in result.stdout.splitlines())


def test_directories_that_differ_exit_1_with_each_change(tmp_path: Path) -> None:
    write(
        tmp_path, {"old/web.yaml": web(), "old/api.yaml": api_spa(), "new/web.yaml": web("08:00")}
    )
    code, document, stderr = diff_json("--diff", "old", "-f", "new", cwd=tmp_path)
    assert (code, stderr) == (1, "")
    assert (document["old"], document["new"]) == ("old", "new")
    changes = {a["name"]: a["change"] for a in document["autoscalers"]}
    assert changes == {"api": "removed", "web": "changed"}
    web_changes = next(a for a in document["autoscalers"] if a["name"] == "web")
    assert [(t["time"], t["change"]) for t in web_changes["transitions"]] == [
        ("2026-11-23T07:00:00Z", "added"),
        ("2026-11-23T08:00:00Z", "removed"),
        ("2026-11-24T07:00:00Z", "added"),
        ("2026-11-24T08:00:00Z", "removed"),
    ]


def test_the_diff_in_yaml_is_the_json_document(tmp_path: Path) -> None:
    """`-o yaml` is offered with --diff too (it was a KeyError traceback)."""
    write(tmp_path, {"old/web.yaml": web(), "new/web.yaml": web("08:00")})
    code, document, _ = diff_json("--diff", "old", "-f", "new", cwd=tmp_path)
    result = spa("--diff", "old", "-f", "new", "-o", "yaml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (code, "")
    assert yaml.safe_load(result.stdout) == document


def test_the_old_side_may_be_standard_input(tmp_path: Path) -> None:
    write(tmp_path, {"new.yaml": web("10:00")})
    result = subprocess.run(
        [str(SPA), "plan", "--diff", "-", "-f", "new.yaml", "-o", "json", *RANGE],
        cwd=tmp_path,
        input=web("09:00"),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["old"] == "-"
    (changed,) = document["autoscalers"]
    assert changed["transitions"][0]["change"] == "removed"  # 09:00 Berlin
    assert changed["transitions"][0]["time"] == "2026-11-23T08:00:00Z"


def test_an_error_on_either_side_is_reported_with_its_side_and_exits_2(tmp_path: Path) -> None:
    write(tmp_path, {"old.yaml": web(zone="Europe/Berln"), "new.yaml": web()})
    result = spa("--diff", "old.yaml", "-f", "new.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: old (old.yaml): old.yaml (document 2) Schedule shop/office-hours: "
        "spec.timeZone: unknown time zone 'Europe/Berln'; did you mean 'Europe/Berlin'?"
    ]
    # The rest is still compared: the old side's web has no Schedule, so the new one adds.
    assert "shop/web: changed" in result.stdout


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    write(tmp_path, {"new.yaml": web()})
    both_stdin = spa("--diff", "-", "-f", "-", cwd=tmp_path)
    assert both_stdin.returncode == 2
    assert "can be only one side of --diff" in both_stdin.stderr
    cluster = spa("--diff", "new.yaml", "--from-cluster", cwd=tmp_path)
    assert cluster.returncode == 2
    empty = spa("--diff", "git:", "-f", "new.yaml", cwd=tmp_path)
    assert empty.returncode == 2
    assert "needs a revision" in empty.stderr


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("git:", "'git:' needs a revision after git:"),
        ("git:--all", "'git:--all': '--all' is not a revision name"),
    ],
)
def test_a_git_source_without_a_revision_names_the_argument(
    tmp_path: Path, source: str, said: str
) -> None:
    """The error is the plan command's, says which argument and what a revision is, and comes
    with `spa plan`'s usage, not the top-level one."""
    write(tmp_path, {"new.yaml": web()})
    result = spa("--diff", source, "-f", "new.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("usage: spa plan ")
    (last,) = result.stderr.splitlines()[-1:]
    assert last.startswith(f"spa plan: error: argument --diff: {said}")
    assert "a branch, a tag or a commit, such as git:main" in last


def test_a_failure_on_either_side_exits_2_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exception while one side is planned (a bug) is not "transitions differ" (exit 1,
    which a pull-request job accepts): it exits 2 with one line, and no partial output."""
    import spa.cli
    import spa.cli.plan

    write(tmp_path, {"old.yaml": web(), "new.yaml": web("08:00")})
    monkeypatch.chdir(tmp_path)
    from spa.plan import build_plan as planned

    calls: list[int] = []

    def failing_once(*arguments: Any, **keywords: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OverflowError("date value out of range")
        return planned(*arguments, **keywords)

    monkeypatch.setattr(spa.cli.plan, "build_plan", failing_once)
    for output in ("table", "json", "html"):
        calls.clear()
        code = spa.cli.main(["plan", "--diff", "old.yaml", "-f", "new.yaml", "-o", output, *RANGE])
        captured = capsys.readouterr()
        assert (code, captured.out) == (2, ""), output
        (line,) = captured.err.splitlines()
        assert line.startswith("error: spa plan failed: OverflowError: date value out of range")
        assert "This is a bug of spa" in line


def test_a_plan_that_cannot_be_rendered_writes_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-o html > plan.html` leaves no empty or partial page behind a failure: the page is made
    in full before a byte of it is written, and a failure exits 2 with one line."""
    import spa.cli
    import spa.cli.plan

    def failing(*_: Any) -> str:
        raise ValueError("year 10000 is out of range")

    write(tmp_path, {"new.yaml": web()})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(spa.cli.plan._RENDERERS, "html", failing)
    code = spa.cli.main(["plan", "-f", "new.yaml", "-o", "html", *RANGE])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert captured.err.startswith("error: spa plan failed: ValueError: year 10000 is out of range")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    if shutil.which("git") is None:  # pragma: no cover - git is part of the development setup
        pytest.fail("git is not installed")
    repository = tmp_path / "repo"
    repository.mkdir()
    git(repository, "init", "-q", "-b", "main")
    write(repository, {"deploy/web.yaml": web(), "deploy/api.yaml": api_spa(), "README.md": "x"})
    git(repository, "add", ".")
    git(repository, "commit", "-q", "-m", "first")
    return repository


def test_git_revision_against_the_working_tree(repository: Path) -> None:
    write(
        repository,
        {
            "deploy/web.yaml": web("08:00"),
            "deploy/batch/worker.yaml": api_spa("worker"),
        },
    )
    code, document, stderr = diff_json("--diff", "git:main", "-f", "deploy", cwd=repository)
    assert (code, stderr) == (1, "")
    assert document["old"] == "git:main"
    assert {a["name"]: a["change"] for a in document["autoscalers"]} == {
        "web": "changed",
        "worker": "added",
    }
    assert document["unchanged"] == [{"namespace": "shop", "name": "api"}]


def test_git_revision_errors_are_named_by_revision_and_path(repository: Path) -> None:
    write(repository, {"deploy/web.yaml": web(zone="Europe/Berln")})
    git(repository, "commit", "-q", "-am", "a typo")
    write(repository, {"deploy/web.yaml": web()})
    result = spa("--diff", "git:HEAD", "-f", "deploy/", cwd=repository)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "error: old (git:HEAD): HEAD:deploy/web.yaml (document 2) Schedule shop/office-hours: "
        "spec.timeZone: "
    )
    # One commit back, the same manifests as the working tree: nothing differs.
    assert spa("--diff", "git:HEAD~1", "-f", "deploy/", cwd=repository).returncode == 0


def test_a_path_new_in_the_working_tree_adds_everything_in_it(repository: Path) -> None:
    write(repository, {"more/web.yaml": web(namespace="next")})
    code, document, _ = diff_json("--diff", "git:main", "-f", "more", cwd=repository)
    assert code == 1
    assert [(a["namespace"], a["change"]) for a in document["autoscalers"]] == [("next", "added")]


def test_a_subdirectory_reads_paths_from_where_it_is_run(repository: Path) -> None:
    write(repository, {"deploy/api.yaml": api_spa(maxReplicas=5)})
    code, document, _ = diff_json("--diff", "git:main", "-f", "api.yaml", cwd=repository / "deploy")
    assert code == 1
    (api,) = document["autoscalers"]
    assert api["start"]["old"]["maxReplicas"] == 4
    assert api["start"]["new"]["maxReplicas"] == 5


def test_an_unknown_revision_is_a_clear_error(repository: Path) -> None:
    result = spa("--diff", "git:no-such-branch", "-f", "deploy", cwd=repository)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "error: --diff git:no-such-branch: unknown revision 'no-such-branch': "
        "no commit of that name in this repository"
    )


def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    write(outside, {"web.yaml": web()})
    result = subprocess.run(
        [str(SPA), "plan", "--diff", "git:main", "-f", "web.yaml", *RANGE],
        cwd=outside,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        # Stop git from finding a repository above the temporary directory.
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)},
    )
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"error: --diff git:main: {outside.resolve()} is not in a Git repository"
    )


def test_a_path_outside_the_repository_is_an_error_of_that_path(
    repository: Path, tmp_path: Path
) -> None:
    write(tmp_path, {"elsewhere/web.yaml": web()})
    elsewhere = str(tmp_path / "elsewhere" / "web.yaml")
    result = spa("--diff", "git:main", "-f", elsewhere, cwd=repository)
    assert result.returncode == 2
    assert f"error: old (git:main): {elsewhere}: outside the Git repository" in result.stderr


def test_a_path_removed_from_the_working_tree_removes_what_it_held(repository: Path) -> None:
    """Symmetric with a path that is new in the working tree: a pull request that deletes a
    directory (or a file) shows its ScheduledPodAutoscalers as removed, and its check passes."""
    shutil.rmtree(repository / "deploy")
    code, document, stderr = diff_json("--diff", "git:main", "-f", "deploy", cwd=repository)
    assert (code, stderr) == (1, "")
    assert {a["name"]: a["change"] for a in document["autoscalers"]} == {
        "api": "removed",
        "web": "removed",
    }
    one = diff_json("--diff", "git:main", "-f", "deploy/web.yaml", cwd=repository)
    assert one[0] == 1
    assert [(a["name"], a["change"]) for a in one[1]["autoscalers"]] == [("web", "removed")]


def test_a_path_on_neither_side_is_an_error(repository: Path) -> None:
    """A path that is neither in the working tree nor at REV names nothing (a typo): exit 2."""
    result = spa("--diff", "git:main", "-f", "deploy", "-f", "deplyo", cwd=repository)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: new (deploy, deplyo): deplyo: no such file or directory, here or at main"
    ]
