"""Shell completion of `spa` and of `kubectl spa`, from the argparse parser itself.

Operators reach for TAB: commands, flags, the values of `-o`, namespaces and the names of the
ScheduledPodAutoscalers in the cluster. Everything but the cluster's names comes from the
parser that parses the command line (argcomplete walks it), so a command or flag added later
is completed without a change here (docs/operations.md, "Help and shell completion", says why
argcomplete and not shtab).

Two ways in, one finder:

* `spa completion bash|zsh|fish` prints argcomplete's script for the `spa` command; the shell
  then runs `spa` with argcomplete's environment at each TAB, and :func:`autocomplete` answers
  from `main()` before anything else happens.
* kubectl (1.26 and later) completes a plugin by running `kubectl_complete-<plugin>` from PATH
  with the words typed after the plugin's name, the last one being the word to complete, and
  reads cobra's protocol back: one candidate a line (`candidate<TAB>description`), then a line
  `:<directive>`. :func:`kubectl_complete` is that executable (a console script of setup.cfg).
  So what completes `kubectl spa` in a shell is kubectl's own completion: `kubectl spa
  completion bash|zsh|fish` prints the script that loads it (:func:`plugin_script`), not
  argcomplete's script for `spa`, and says how to add `kubectl_complete-spa` where it is not on
  PATH, as after a Krew install (:func:`completer_missing`).

Values that are read from the cluster (namespaces, SPA names) use the same connection as
`kubectl spa status` (spa/cli/cluster.py) with the same kubectl flags already typed, within
:data:`CLUSTER_TIMEOUT` seconds in all; a cluster that is slow, unreachable or forbids the list
gives no candidates and no message, as kubectl's own completion does.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shlex
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import argcomplete
from argcomplete.completers import DirectoriesCompleter, FilesCompleter
from argcomplete.finders import CompletionFinder
from argcomplete.shell_integration import shellcode

from spa.cli.help import PLUGIN_COMPLETION_EXAMPLES, command, plugin
from spa.cli.output import ReaderGone, emit

__all__ = [
    "CLUSTER_TIMEOUT",
    "DIRECTIVE_DEFAULT",
    "DIRECTIVE_DIRECTORIES",
    "DIRECTIVE_NO_FILES",
    "KUBECTL_COMPLETER",
    "SHELLS",
    "Candidate",
    "add_completion_command",
    "attach_completers",
    "autocomplete",
    "complete_words",
    "completer_missing",
    "kubectl_complete",
    "kubectl_protocol",
    "plugin_script",
    "run_completion",
    "shell_script",
    "within",
]

CLUSTER_TIMEOUT = 2.0
"""Seconds a TAB may wait for the cluster, connection included: longer than a list takes on a
reachable API server, short enough that a dead one is not noticed as a hung shell."""

SHELLS = ("bash", "zsh", "fish")

# cobra's ShellCompDirective values (kubectl reads them from the last line).
DIRECTIVE_DEFAULT = 0
"""The shell may complete file names when there is no candidate."""
DIRECTIVE_NO_FILES = 4
DIRECTIVE_DIRECTORIES = 16

# What a value is completed with, by the argument's `dest`. An argument that takes a value and
# is in none of these (and has no choices) is completed with nothing, rather than with file
# names that would be wrong for it (`--at`, `--days`).
_AUTOSCALER_NAMES = frozenset({"name"})  # the positional NAME of status and later commands
_NAMESPACES = frozenset({"namespace", "namespaces", "leader_election_namespace"})
_CONTEXTS = frozenset({"context"})
_FILES = frozenset({"kubeconfig", "filename"})
_DIRECTORIES = frozenset({"metrics_cert_dir"})

_WORKER = "spa-completion"

Candidate = tuple[str, str]
"""A completion and its description (empty when it has none)."""
Lister = Callable[[argparse.Namespace], Iterable[str]]
"""Reads names from the cluster the parsed flags choose."""


def shell_script(shell: str, *, executable: str = "spa") -> str:
    """The script that makes `shell` complete `executable` (argcomplete's, for that shell)."""
    if shell not in SHELLS:
        raise ValueError(f"shell: {shell!r} is not one of {', '.join(SHELLS)}")
    return shellcode([executable], shell=shell)


KUBECTL_COMPLETER = "kubectl_complete-spa"
"""The executable kubectl runs from PATH to complete `kubectl spa` (kubectl 1.26 and later)."""

# How each shell loads kubectl's own completion, as `kubectl completion --help` says.
_KUBECTL_COMPLETION = {
    "bash": "source <(kubectl completion bash)",
    "zsh": "source <(kubectl completion zsh)",
    "fish": "kubectl completion fish | source",
}


def plugin_script(shell: str) -> str:
    """What `kubectl spa completion SHELL` prints: the script that loads kubectl's own
    completion in `shell`, which completes `kubectl spa` through :data:`KUBECTL_COMPLETER`."""
    if shell not in SHELLS:
        raise ValueError(f"shell: {shell!r} is not one of {', '.join(SHELLS)}")
    return (
        "# kubectl completes `kubectl spa` itself (kubectl 1.26 and later): for\n"
        f"# `kubectl spa ...<TAB>` it runs {KUBECTL_COMPLETER} from PATH, which answers from\n"
        "# kubectl-spa's parser and the cluster. So what completes `kubectl spa` in "
        f"{shell} is\n"
        "# kubectl's own completion, loaded here (docs/operations.md, \"Help and shell\n"
        '# completion").\n'
        f"{_KUBECTL_COMPLETION[shell]}"
    )


def completer_missing(path: str | None = None) -> str | None:
    """How to add :data:`KUBECTL_COMPLETER` beside kubectl-spa, when it is not on `path` (None:
    PATH), as after a Krew install, which links only the plugin's own executable; None when
    it is there. The lines are commands to copy, the same in bash, zsh and fish."""
    if shutil.which(KUBECTL_COMPLETER, path=path) is not None:
        return None
    plugin = shutil.which("kubectl-spa", path=path)
    if plugin is not None:
        target = shlex.quote(os.path.join(os.path.dirname(plugin), KUBECTL_COMPLETER))
    else:
        target = f'"$HOME/.krew/bin/{KUBECTL_COMPLETER}"'
    return (
        f"kubectl spa: kubectl completes `kubectl spa` by running {KUBECTL_COMPLETER}, which "
        "is not on PATH (Krew installs only kubectl-spa). Add it beside kubectl-spa, once:\n"
        f"  printf '#!/bin/sh\\nexec kubectl-spa __complete \"$@\"\\n' > {target}\n"
        f"  chmod +x {target}"
    )


def autocomplete(parser: argparse.ArgumentParser) -> None:
    """Answer the shell and exit, when the shell's completion script ran `spa` for a TAB;
    return at once otherwise (the environment variable is argcomplete's)."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    attach_completers(parser)
    argcomplete.autocomplete(parser, always_complete_options=False)


def attach_completers(
    parser: argparse.ArgumentParser,
    *,
    files: Any = None,
    directories: Any = None,
    autoscalers: Lister | None = None,
    namespaces: Lister | None = None,
    contexts: Lister | None = None,
) -> None:
    """Give every argument of `parser` and its subcommands that takes a value a completer, by
    its `dest` (see above). The keywords replace what each kind is read with (tests, and the
    kubectl protocol, which leaves file names to the shell)."""
    files = files if files is not None else FilesCompleter()
    directories = directories if directories is not None else DirectoriesCompleter()
    by_kind: list[tuple[frozenset[str], Any]] = [
        (_NAMESPACES, _ClusterNames(namespaces or _list_namespaces)),
        (_CONTEXTS, _ClusterNames(contexts or _list_contexts)),
        (_FILES, files),
        (_DIRECTORIES, directories),
    ]
    for action in _actions(parser):
        if isinstance(action, argparse._SubParsersAction) or action.nargs == 0:
            continue
        completer: Any = _nothing
        if action.choices is not None:
            # The values themselves, without the flag's help repeated beside each of them.
            completer = _Choices([str(choice) for choice in action.choices])
        elif not action.option_strings and action.dest in _AUTOSCALER_NAMES:
            completer = _ClusterNames(autoscalers or _list_autoscalers)
        else:
            for dests, kind in by_kind:
                if action.dest in dests:
                    completer = kind
        action.completer = completer  # type: ignore[attr-defined]


def _actions(parser: argparse.ArgumentParser) -> Iterable[argparse.Action]:
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for subparser in dict.fromkeys(action.choices.values()):
                yield from _actions(subparser)


def _nothing(**_: Any) -> list[str]:
    return []


class _Choices:
    def __init__(self, choices: list[str]) -> None:
        self.choices = choices

    def __call__(self, **_: Any) -> list[str]:
        return self.choices


class _ClusterNames:
    """A completer that reads names within :data:`CLUSTER_TIMEOUT`, silently."""

    def __init__(self, lister: Lister, *, timeout: float = CLUSTER_TIMEOUT) -> None:
        self.lister = lister
        self.timeout = timeout

    def __call__(self, *, parsed_args: argparse.Namespace, **_: Any) -> list[str]:
        # argcomplete keeps those that start with the word typed.
        return sorted({name for name in within(self.timeout, self.lister, parsed_args) if name})


def within(timeout: float, lister: Lister, arguments: argparse.Namespace) -> list[str]:
    """What `lister` reads, if it does within `timeout` seconds without an error; else nothing.
    It runs in a daemon thread that is abandoned when late, so that no TAB waits longer (the
    process exits right after answering)."""
    found: list[str] = []

    def read() -> None:
        with contextlib.suppress(Exception):
            found.extend(lister(arguments))

    worker = threading.Thread(target=read, name=_WORKER, daemon=True)
    worker.start()
    worker.join(timeout)
    return [] if worker.is_alive() else list(found)


def _cluster_flags(arguments: argparse.Namespace) -> argparse.Namespace:
    """The kubectl flags typed so far, whichever command parsed them (`spa run` has no
    `--context`); `-n` and `-A` are dropped where a lister reads every namespace itself."""
    return argparse.Namespace(
        kubeconfig=getattr(arguments, "kubeconfig", None),
        context=getattr(arguments, "context", None),
        namespace=getattr(arguments, "namespace", None),
        all_namespaces=bool(getattr(arguments, "all_namespaces", False)),
    )


def _list_autoscalers(arguments: argparse.Namespace) -> list[str]:
    """The names of the SPAs in the namespace the flags choose, with one list call."""
    from spa.cli.cluster import connected, object_name
    from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS

    with connected(_cluster_flags(arguments), request_timeout=CLUSTER_TIMEOUT) as scope:
        listed = scope.client.list(SCHEDULED_POD_AUTOSCALERS, namespace=scope.namespace)
        return [object_name(item) for item in listed.items]


def _list_namespaces(arguments: argparse.Namespace) -> list[str]:
    from spa.cli.cluster import connected, object_name
    from spa.kube import Resource

    namespaces = Resource("", "v1", "namespaces", "Namespace", False)
    flags = _cluster_flags(arguments)
    flags.all_namespaces = True  # no default namespace to look up: it is not used
    with connected(flags, request_timeout=CLUSTER_TIMEOUT) as scope:
        return [object_name(item) for item in scope.client.list(namespaces).items]


def _list_contexts(arguments: argparse.Namespace) -> list[str]:
    from spa.kube import context_names

    return context_names(kubeconfig=_cluster_flags(arguments).kubeconfig)


# -- in process: the kubectl protocol ------------------------------------------------------------


class _Finder(CompletionFinder):
    """argcomplete's finder, answering for words already split (kubectl passes them so) and
    without the shell quoting argcomplete adds for bash: cobra's scripts quote for themselves."""

    def quote_completions(
        self, completions: list[str], cword_prequote: str, last_wordbreak_pos: int | None
    ) -> list[str]:
        if last_wordbreak_pos is None:
            return completions
        # `--output=ya`: the candidates are values (`yaml`), as cobra gives them.
        return [c[last_wordbreak_pos + 1 :] for c in completions]


def complete_words(
    parser: argparse.ArgumentParser, words: Sequence[str], **completers: Any
) -> tuple[list[Candidate], int]:
    """The candidates for the last of `words` (the words typed after the program's name, the
    last one possibly empty) and cobra's directive, for `parser` with `completers` as in
    :func:`attach_completers` (cluster listers may be replaced; file names are left to the
    shell). argcomplete patches the classes of `parser` and its actions for the finder of that
    call: a parser serves one call (the process answers one TAB)."""
    wanted = {"files": False, "directories": False}

    def files(**_: Any) -> list[str]:
        wanted["files"] = True
        return []

    def directories(**_: Any) -> list[str]:
        wanted["directories"] = True
        return []

    attach_completers(parser, files=files, directories=directories, **completers)
    typed = list(words) or [""]
    prefix = typed[-1]
    comp_words = [parser.prog, *typed[:-1]]
    wordbreak = None
    if prefix[:1] in parser.prefix_chars and "=" in prefix:
        # As argcomplete does for a shell: the flag goes to the parser, the value is completed.
        comp_words.append(prefix.split("=", 1)[0])
        wordbreak = prefix.index("=")
    finder = _Finder(parser, always_complete_options=False, append_space=False)
    with contextlib.redirect_stderr(io.StringIO()):
        # The step of argcomplete's own entry point after it has split the shell's line (and
        # of its readline completer): the words here come split already. argcomplete is
        # bounded below 4 in setup.cfg; tests/unit/cli/test_completion.py drives this path.
        found = finder._get_completions(  # type: ignore[no-untyped-call]
            comp_words, prefix, "", wordbreak
        )
    descriptions = finder.get_display_completions()
    candidates = [(c, _one_line(descriptions.get(c) or "")) for c in found]
    if candidates:
        return candidates, DIRECTIVE_NO_FILES
    if wanted["directories"]:
        return [], DIRECTIVE_DIRECTORIES
    if wanted["files"]:
        return [], DIRECTIVE_DEFAULT
    return [], DIRECTIVE_NO_FILES


def _one_line(text: str) -> str:
    return " ".join(text.split())


def kubectl_protocol(candidates: Sequence[Candidate], directive: int) -> str:
    """cobra's answer: one `candidate<TAB>description` a line, then `:<directive>`."""
    lines = [
        f"{value}\t{description}" if description else value for value, description in candidates
    ]
    return "".join(f"{line}\n" for line in [*lines, f":{directive}"])


def kubectl_complete(argv: Sequence[str] | None = None) -> int:
    """`kubectl_complete-spa WORD...`: what kubectl asks for `kubectl spa WORD...<TAB>`. Never
    fails: whatever goes wrong answers with no candidate (exit status 0, as kubectl reads the
    answer of a plugin only when it succeeds, and says nothing)."""
    from spa.cli import build_parser

    words = list(sys.argv[1:] if argv is None else argv)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            candidates, directive = complete_words(build_parser(prog="kubectl spa"), words)
    except Exception:
        candidates, directive = [], DIRECTIVE_NO_FILES
    with contextlib.suppress(OSError):
        sys.stdout.write(kubectl_protocol(candidates, directive))
        sys.stdout.flush()
    if any(t.name == _WORKER and t.is_alive() for t in threading.enumerate()):
        # A cluster read that was too late is abandoned, not waited for at exit.
        os._exit(0)
    return 0


# -- the command ----------------------------------------------------------------------------


def add_completion_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], *, prog: str
) -> None:
    """`spa completion SHELL` on the `spa` parser's subcommands; `kubectl spa completion
    SHELL` when `prog` is the plugin's."""
    if plugin(prog):
        completion = command(
            commands,
            "completion",
            help="print what makes the shell complete kubectl spa (bash, zsh or fish)",
            description=(
                "kubectl completes `kubectl spa` itself (kubectl 1.26 and later): at a TAB it "
                f"runs the executable {KUBECTL_COMPLETER} from PATH, which answers with this "
                "command's commands, flags, their values and the names of "
                "ScheduledPodAutoscalers in the cluster. This prints the script that loads "
                "kubectl's own completion for the shell, and says on standard error how to "
                f"add {KUBECTL_COMPLETER} beside kubectl-spa where it is not on PATH: a pip "
                'install puts it there, Krew does not (docs/operations.md, "Help and shell '
                'completion").'
            ),
            examples=PLUGIN_COMPLETION_EXAMPLES,
        )
    else:
        completion = command(
            commands,
            "completion",
            help="print the shell completion script of spa (bash, zsh or fish)",
            description=(
                "Print the script that makes the shell complete spa's commands, flags, their "
                "values and the names of ScheduledPodAutoscalers in the cluster. kubectl "
                f"completes `kubectl spa` itself, through the executable {KUBECTL_COMPLETER} "
                "installed beside kubectl-spa: `kubectl spa completion` prints what sets it "
                'up (docs/operations.md, "Help and shell completion").'
            ),
        )
    completion.add_argument("shell", choices=SHELLS, help="the shell to print the script for")


def run_completion(parser: argparse.ArgumentParser, shell: str) -> int:
    """`spa completion SHELL` prints argcomplete's script for `spa`; `kubectl spa completion
    SHELL` the script that loads kubectl's completion, which completes `kubectl spa` through
    kubectl_complete-spa, and, where that is missing (Krew), how to add it, on standard error
    (docs/operations.md, "Help and shell completion")."""
    if plugin(parser.prog):
        script = plugin_script(shell)
        missing = completer_missing()
        if missing is not None:
            print(missing, file=sys.stderr, flush=True)
    else:
        script = shell_script(shell)
    with contextlib.suppress(ReaderGone):
        emit(script)
    return 0
