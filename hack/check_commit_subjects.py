#!/usr/bin/env python3
"""Fails on a commit subject longer than 72 characters (docs/development.md, "Commits").

`git log --oneline`, `git shortlog`, the forges' commit lists and e-mailed patches show the
subject alone and cut or wrap a longer one, so the detail goes in the body. `make lint` runs
this over the commits after 4151648, the last one before the rule: the history before it is
what it is.

    hack/check_commit_subjects.py              # the commits after 4151648 (4151648..HEAD)
    hack/check_commit_subjects.py main..HEAD   # the commits of any range git log takes

A shallow clone may not hold 4151648. Then every commit it holds that was committed after
4151648 was (committer time) is checked, and stderr says so. Outside a git work tree there is
nothing to check. Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

LIMIT = 72
AFTER = "4151648d8b502f0027080bb54a85cabfb8f1ed27"
AFTER_TIME = 1_795_751_868  # its committer time, for a shallow clone that lacks it


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        check=False,
    )


def _commits(args: list[str], *, cwd: Path) -> list[tuple[str, int, str]]:
    """(hash, committer time, subject) of each commit `git log args` lists."""
    listed = _git("log", "--no-color", "--format=%H%x1f%ct%x1f%s", *args, "--", cwd=cwd)
    if listed.returncode != 0:
        raise SystemExit(f"check_commit_subjects: git log {' '.join(args)}: {listed.stderr}")
    commits = []
    for line in listed.stdout.splitlines():
        commit, time, subject = line.split("\x1f", 2)
        commits.append((commit, int(time), subject))
    return commits


def _default_commits(after: str, after_time: int, *, cwd: Path) -> list[tuple[str, int, str]]:
    """The commits after `after`: its range where the clone holds it, else (a shallow clone)
    those committed after it."""
    if _git("cat-file", "-e", f"{after}^{{commit}}", cwd=cwd).returncode == 0:
        return _commits([f"{after}..HEAD"], cwd=cwd)
    shallow = _git("rev-parse", "--is-shallow-repository", cwd=cwd).stdout.strip() == "true"
    if not shallow:
        raise SystemExit(
            f"check_commit_subjects: {after[:7]} is not in this clone's history; "
            "give the range to check (hack/check_commit_subjects.py main..HEAD)"
        )
    held = _commits(["HEAD"], cwd=cwd)
    newer = [commit for commit in held if commit[1] > after_time]
    print(
        f"check_commit_subjects: a shallow clone without {after[:7]}: checked the "
        f"{len(newer)} of its {len(held)} commits committed after it",
        file=sys.stderr,
    )
    return newer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("range", nargs="?", help=f"commits to check (default: {AFTER[:7]}..HEAD)")
    parser.add_argument("--after", default=AFTER, help="without a range: the commits after this")
    parser.add_argument(
        "--after-time", type=int, default=AFTER_TIME, help="its committer time (shallow clones)"
    )
    parser.add_argument("-C", dest="directory", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    inside = _git("rev-parse", "--is-inside-work-tree", cwd=args.directory)
    if inside.stdout.strip() != "true":
        print("check_commit_subjects: not a git work tree, nothing to check", file=sys.stderr)
        return 0
    if args.range:
        commits = _commits([args.range], cwd=args.directory)
    else:
        commits = _default_commits(args.after, args.after_time, cwd=args.directory)
    long = [(commit, subject) for commit, _, subject in commits if len(subject) > LIMIT]
    for commit, subject in long:
        print(f"{commit[:12]}: subject of {len(subject)} characters (at most {LIMIT}): {subject}")
    if long:
        print(
            "Reword them (git rebase -i, `reword`) with the detail in the body "
            '(docs/development.md, "Commits").',
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
