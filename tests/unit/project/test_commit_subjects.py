"""hack/check_commit_subjects.py (`make lint`): subjects of at most 72 characters after 4151648.

Each test builds a small repository with the subjects, commit times and clone depth it needs,
and runs the script on it as `make lint` does (docs/development.md, "Commits").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "hack" / "check_commit_subjects.py"
T0 = 1_700_000_000  # the commit times of the repositories below: T0, T0 + 60, ...


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """git without the user's or the system's configuration (signing, hooks, templates)."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@localhost",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@localhost",
        "LC_ALL": "C",
    }


def _git(repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _repository(path: Path, env: dict[str, str], subjects: list[str]) -> list[str]:
    """A repository of one commit per subject, the i-th committed at T0 + 60 i; their hashes."""
    path.mkdir()
    _git(path, env, "init", "-q", "-b", "main")
    hashes = []
    for index, subject in enumerate(subjects):
        when = f"@{T0 + 60 * index} +0000"
        dated = {**env, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        (path / "file").write_text(f"{index}\n")
        _git(path, dated, "add", "file")
        _git(
            path, dated, "commit", "-q", "-m", subject, "-m", "the body may be as long as it likes"
        )
        hashes.append(_git(path, env, "rev-parse", "HEAD"))
    return hashes


def _check(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "-C", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )


def _named(output: str) -> list[str]:
    """The commits (12 characters of their hash) the check names as too long."""
    return [line.split(":")[0] for line in output.splitlines()]


def test_a_subject_over_72_characters_after_the_base_fails_and_older_ones_are_not_checked(
    tmp_path: Path, env: dict[str, str]
) -> None:
    subjects = [
        "an old subject, from before the rule, " + "x" * 60,
        "the last commit before the rule",
        "y" * 72,
        "\N{RIGHTWARDS ARROW}" * 72,  # 72 characters, 216 bytes
        "z" * 73,
    ]
    old, base, _, _, long = _repository(tmp_path / "repo", env, subjects)
    failed = _check(tmp_path / "repo", env, "--after", base)
    assert failed.returncode == 1, failed.stderr
    assert _named(failed.stdout) == [long[:12]]
    assert "subject of 73 characters (at most 72)" in failed.stdout
    assert "Reword them" in failed.stderr

    _git(tmp_path / "repo", env, "reset", "-q", "--hard", "HEAD~1")
    passed = _check(tmp_path / "repo", env, "--after", base)
    assert (passed.returncode, passed.stdout) == (0, ""), passed.stderr

    # A range given is checked whole, older history included.
    older = _check(tmp_path / "repo", env, f"{base}~1")
    assert older.returncode == 1
    assert _named(older.stdout) == [old[:12]]


def test_a_shallow_clone_without_the_base_checks_the_commits_made_after_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    subjects = ["the last commit before the rule", "fine", "w" * 80, "fine again"]
    base, _, long, _ = _repository(tmp_path / "origin", env, subjects)
    clone = tmp_path / "clone"
    _git(tmp_path, env, "clone", "-q", "--depth", "3", f"file://{tmp_path / 'origin'}", "clone")
    assert _git(clone, env, "rev-parse", "--is-shallow-repository") == "true"

    checked = _check(clone, env, "--after", base, "--after-time", str(T0))
    assert checked.returncode == 1
    assert _named(checked.stdout) == [long[:12]]
    assert "a shallow clone without" in checked.stderr
    assert "checked the 3 of its 3 commits committed after it" in checked.stderr

    # Its commit time stands in for the history the clone lacks: nothing committed up to then
    # is checked.
    later = _check(clone, env, "--after", base, "--after-time", str(T0 + 120))
    assert (later.returncode, later.stdout) == (0, ""), later.stderr
    assert "checked the 1 of its 3 commits" in later.stderr


def test_a_full_clone_without_the_base_says_to_give_a_range(
    tmp_path: Path, env: dict[str, str]
) -> None:
    _repository(tmp_path / "repo", env, ["v" * 90])
    lost = _check(tmp_path / "repo", env, "--after", "0123456" + "0" * 33)
    assert lost.returncode == 1
    assert "0123456 is not in this clone's history; give the range to check" in lost.stderr


def test_outside_a_git_work_tree_there_is_nothing_to_check(
    tmp_path: Path, env: dict[str, str]
) -> None:
    nowhere = _check(tmp_path, {**env, "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert (nowhere.returncode, nowhere.stdout) == (0, "")
    assert "not a git work tree" in nowhere.stderr
