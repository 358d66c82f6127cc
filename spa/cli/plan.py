"""`spa plan`: its flags, and the plan of the manifests (or, `--from-cluster`, of the live
objects; or, `--diff`, what a change of the manifests changes) printed (docs/plan.md).

The plan itself is spa.plan; this reads what it is given, prints the plan, then its warnings and
its errors on standard error, and exits as docs/plan.md says. The Kubernetes client is imported
only for `--from-cluster`, so that `plan -f` starts fast and works where it cannot be imported.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from spa.cli.help import command
from spa.cli.options import add_cluster_arguments, cluster_arguments_given
from spa.cli.output import ReaderGone, emit, reading_cluster
from spa.plan import (
    Plan,
    build_plan,
    read_documents,
    render_errors,
    render_html,
    render_json,
    render_table,
    render_warnings,
    render_yaml,
)
from spa.plan.diff import (
    PlanDiff,
    diff_plans,
    render_diff_errors,
    render_diff_json,
    render_diff_table,
    render_diff_yaml,
)
from spa.plan.html import render_diff_html
from spa.plan.revision import GIT_PREFIX, RevisionError, read_revision, read_working_tree
from spa.schedule import format_instant, instant_of

__all__ = ["add_plan_command", "rfc3339_instant", "run_plan"]

# The instants a plan may cover, as docs/plan.md states them; the engine itself answers for
# any instant, up to the end of the calendar (docs/schedules.md, "The end of the calendar").
_EARLIEST = instant_of(datetime(1970, 1, 1, tzinfo=UTC))
_LATEST = instant_of(datetime(9999, 1, 1, tzinfo=UTC))
_MAX_DAYS = 3660
_DAY_SECONDS = 86400


def add_plan_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`spa plan` and its flags, on the `spa` parser's subcommands."""
    plan = command(
        commands,
        "plan",
        help="preview the effective min/maxReplicas of ScheduledPodAutoscalers from manifests",
        description=(
            "Read ScheduledPodAutoscaler and Schedule manifests (files, directories, "
            "multi-document YAML; '-' for standard input), validate them, and print for every "
            "ScheduledPodAutoscaler the effective values at --at and every change after it "
            "up to the horizon. Needs no cluster. Errors go to standard error; exits 1 if "
            "any document is invalid. With --diff OLD, show instead the transitions the -f "
            "manifests add, remove or change compared with OLD (docs/plan.md, '--diff')."
        ),
    )
    source = plan.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "-f",
        "--filename",
        action="append",
        metavar="PATH",
        help="a manifest file, a pipe such as <(kustomize build .), or a directory of "
        "manifests; repeatable",
    )
    source.add_argument(
        "--from-cluster",
        action="store_true",
        help="plan the ScheduledPodAutoscalers and Schedules of a live cluster (read-only; "
        "--kubeconfig, --context, -n and -A as in kubectl)",
    )
    plan.add_argument(
        "--diff",
        type=_diff_source,
        metavar="OLD",
        help="compare with OLD: show the transitions the -f manifests add, remove or change; "
        "OLD is a file or directory of manifests, or git:REV for the -f paths at Git revision "
        "REV (e.g. --diff git:origin/main -f deploy/); exits 0 if none differ, 1 if some do, "
        "2 on any error",
    )
    plan.add_argument(
        "--at",
        type=rfc3339_instant,
        metavar="RFC3339",
        help="the instant to start from, e.g. 2026-03-08T06:30:00Z (default: now)",
    )
    horizon = plan.add_mutually_exclusive_group()
    horizon.add_argument(
        "--days",
        type=_positive_days,
        default=7,
        metavar="N",
        help="how many days after --at to list transitions for (default: 7)",
    )
    horizon.add_argument(
        "--until",
        type=rfc3339_instant,
        metavar="RFC3339",
        help="list transitions up to this instant",
    )
    plan.add_argument(
        "-o",
        "--output",
        choices=("table", "json", "yaml", "html"),
        default="table",
        help="table (default), json (docs/plan.md), yaml (the same document) or html (one "
        "self-contained page with a timeline per ScheduledPodAutoscaler)",
    )

    add_cluster_arguments(plan)


def run_plan(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> int:
    """`spa plan`: the plan printed, its warnings and errors after it; the exit status."""
    at = arguments.at if arguments.at is not None else instant_of(datetime.now(UTC))
    if arguments.until is not None:
        until = arguments.until
        if until <= at:
            parser.error("--until must be after --at")
        if until - at > _MAX_DAYS * _DAY_SECONDS:
            parser.error(f"--until must be at most {_MAX_DAYS} days after --at")
    else:
        # Days that would pass the last instant a plan covers end there: the end of the
        # calendar is the plan's end (docs/plan.md).
        until = min(at + arguments.days * _DAY_SECONDS, _LATEST)
        if until <= at:
            parser.error(
                f"--at must be before {format_instant(_LATEST)}, the last instant a plan covers"
            )
    if arguments.from_cluster:
        if arguments.diff is not None:
            parser.error("--diff compares manifests: give the new side with -f, not --from-cluster")
        from spa.cli.cluster import cluster_plan, connected, read_cluster

        def from_cluster() -> Plan:
            with connected(arguments) as scope:
                objects = read_cluster(scope, everything=False)
            return cluster_plan(objects, at=at, until=until)

        found = reading_cluster(from_cluster)
        if isinstance(found, int):
            return found
        plan = found
    else:
        if given := cluster_arguments_given(arguments):
            parser.error(f"{', '.join(given)} can only be used with --from-cluster")
        if arguments.diff is not None:
            return _plan_diff(parser, arguments, at=at, until=until)

        def from_files() -> Plan:
            documents, read_errors = read_documents(arguments.filename)
            return build_plan(documents, read_errors, at=at, until=until)

        made = _without_traceback(from_files)
        if made is None:
            return _PLAN_FAILED
        plan = made
    # The whole output is made before any of it is written: a failure writes nothing.
    text = _without_traceback(lambda: _RENDERERS[arguments.output](plan))
    if text is None:
        return _PLAN_FAILED
    with contextlib.suppress(ReaderGone):
        emit(text)
    if plan.warnings:
        # Before the errors, which end the output; they change nothing of the exit status.
        with contextlib.suppress(OSError):
            print(render_warnings(plan), file=sys.stderr, flush=True)
    if plan.errors:
        # As kubectl: the result on standard output, the errors on standard error, after it. The
        # JSON and the HTML page carry the errors too, so that the document is complete.
        with contextlib.suppress(OSError):
            print(render_errors(plan), file=sys.stderr, flush=True)
        return 1
    return 0


_RENDERERS = {
    "table": render_table,
    "json": render_json,
    "yaml": render_yaml,
    "html": render_html,
}


def _plan_diff(
    parser: argparse.ArgumentParser, arguments: argparse.Namespace, *, at: int, until: int
) -> int:
    """`spa plan --diff OLD -f NEW`: both sides planned over the same range and compared
    (docs/plan.md, "`--diff`"). Exits as `kubectl diff` and `diff` do: 0 when no transition
    differs, 1 when some do, 2 on any error on either side (the comparison is then
    incomplete, or was not made) or when the arguments are wrong."""
    old_source: str = arguments.diff
    paths: list[str] = arguments.filename
    if old_source == "-" and "-" in paths:
        parser.error("standard input ('-') can be only one side of --diff")

    def compared() -> tuple[PlanDiff, str]:
        if old_source.startswith(GIT_PREFIX):
            old = read_revision(old_source.removeprefix(GIT_PREFIX), paths)
            old_documents, old_errors = old.documents, old.errors
            new_documents, new_errors = read_working_tree(paths, old)
        else:
            old_documents, old_errors = read_documents([old_source])
            new_documents, new_errors = read_documents(paths)
        diff = diff_plans(
            build_plan(old_documents, old_errors, at=at, until=until),
            build_plan(new_documents, new_errors, at=at, until=until),
            old_label=old_source,
            new_label=", ".join(paths),
        )
        # Rendered in full before anything is written, as the plan is.
        return diff, _DIFF_RENDERERS[arguments.output](diff)

    try:
        made = _without_traceback(compared)
    except RevisionError as error:
        print(f"error: --diff {old_source}: {error.message}", file=sys.stderr)
        return _DIFF_TROUBLE
    if made is None:
        return _DIFF_TROUBLE
    diff, text = made
    with contextlib.suppress(ReaderGone):
        emit(text)
    if diff.errors:
        with contextlib.suppress(OSError):
            print(render_diff_errors(diff), file=sys.stderr, flush=True)
        return _DIFF_TROUBLE
    return 1 if diff.differs else 0


_DIFF_RENDERERS = {
    "table": render_diff_table,
    "json": render_diff_json,
    "yaml": render_diff_yaml,
    "html": render_diff_html,
}
_DIFF_TROUBLE = 2
# `spa plan` could not make its output at all (docs/plan.md): 2, as for bad arguments, so that
# no caller takes it for a plan with invalid documents (1) or, with --diff, for a difference.
_PLAN_FAILED = 2

Made = TypeVar("Made")


def _without_traceback(make: Callable[[], Made]) -> Made | None:
    """What `make` returns, or None when it failed unexpectedly: then one `error:` line on
    standard error says what failed and where, instead of a traceback, and nothing is written
    to standard output (no empty or partial page). An expected failure (RevisionError, bad
    input) is reported where it happens; reaching this is a bug of spa, which the line asks to
    report."""
    try:
        return make()
    except (RevisionError, ReaderGone):
        raise
    except Exception as error:
        frames = traceback.extract_tb(error.__traceback__)
        where = f" at {_shown_path(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
        with contextlib.suppress(OSError):
            print(
                f"error: spa plan failed: {type(error).__name__}: {error}{where}. This is a "
                "bug of spa: please report it with the command and the manifests",
                file=sys.stderr,
                flush=True,
            )
        return None


def _shown_path(filename: str) -> str:
    """A source file's path from the package's directory on (`spa/schedule/windows.py`)."""
    parts = filename.replace(os.sep, "/").split("/")
    return "/".join(parts[parts.index("spa") :]) if "spa" in parts else parts[-1]


def rfc3339_instant(text: str) -> int:
    """An RFC 3339 instant as epoch seconds, within the years a plan covers."""
    shown = text if len(text) <= 40 else f"{text[:40]}..."
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{shown}' is not an RFC 3339 instant such as 2026-03-08T06:30:00Z"
        ) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"'{shown}' needs an offset, such as Z or +09:00")
    try:
        instant = instant_of(moment)
    except (OverflowError, ValueError):
        instant = _LATEST + 1 if moment.year > 1970 else _EARLIEST - 1
    if not _EARLIEST <= instant <= _LATEST:
        raise argparse.ArgumentTypeError(
            f"'{shown}' is outside {format_instant(_EARLIEST)} to {format_instant(_LATEST)}, "
            "the instants a plan covers"
        )
    return instant


def _diff_source(text: str) -> str:
    """The old side of --diff: a path, or git:REV with a revision that can be one."""
    if text.startswith(GIT_PREFIX):
        revision = text.removeprefix(GIT_PREFIX)
        example = "such as git:main, git:origin/main or git:HEAD~1"
        if not revision:
            raise argparse.ArgumentTypeError(
                f"'{text}' needs a revision after git: (a branch, a tag or a commit, {example})"
            )
        if revision.startswith("-"):
            raise argparse.ArgumentTypeError(
                f"'{text}': '{revision[:40]}' is not a revision name (a branch, a tag or a "
                f"commit, {example})"
            )
    return text


def _positive_days(text: str) -> int:
    try:
        days = int(text) if len(text) <= 10 else 0
    except ValueError:
        days = 0
    if days < 1 or days > _MAX_DAYS:
        shown = text if len(text) <= 40 else f"{text[:40]}..."
        raise argparse.ArgumentTypeError(
            f"'{shown}' is not a whole number of days from 1 to {_MAX_DAYS}"
        )
    return days
