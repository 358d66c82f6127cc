"""Shell completion from the parser (spa/cli/completion.py, docs/operations.md "Shell
completion"): the candidates argcomplete's finder gives for words typed, driven in process with
the cluster's listers replaced; kubectl's protocol; and argcomplete's own path through `main()`
as a shell's script runs it. tests/integration/test_kubectl_spa.py runs real kubectl."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from spa.cli import build_parser, main
from spa.cli.completion import (
    DIRECTIVE_DEFAULT,
    DIRECTIVE_DIRECTORIES,
    DIRECTIVE_NO_FILES,
    SHELLS,
    complete_words,
    completer_missing,
    kubectl_complete,
    kubectl_protocol,
    plugin_script,
    shell_script,
    within,
)

ROOT = Path(__file__).resolve().parents[3]


class Cluster:
    """Stands in for the cluster's listers, and records the flags each was called with."""

    def __init__(self) -> None:
        self.calls: list[argparse.Namespace] = []

    def autoscalers(self, arguments: argparse.Namespace) -> list[str]:
        self.calls.append(arguments)
        return {"shop": ["web", "api", "worker"], "blog": ["blog"]}.get(arguments.namespace, [])

    def namespaces(self, arguments: argparse.Namespace) -> list[str]:
        self.calls.append(arguments)
        return ["shop", "blog", "kube-system"]

    def contexts(self, arguments: argparse.Namespace) -> list[str]:
        self.calls.append(arguments)
        return ["prod", "staging"]


@pytest.fixture
def cluster() -> Cluster:
    return Cluster()


def complete(cluster: Cluster, *words: str) -> tuple[list[str], int]:
    candidates, directive = complete_words(
        build_parser(prog="kubectl spa"),
        words,
        autoscalers=cluster.autoscalers,
        namespaces=cluster.namespaces,
        contexts=cluster.contexts,
    )
    return [value for value, _ in candidates], directive


def test_commands_are_the_parsers_subcommands(cluster: Cluster) -> None:
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert complete(cluster, "") == (list(commands.choices), DIRECTIVE_NO_FILES)
    assert complete(cluster, "st") == (["status"], DIRECTIVE_NO_FILES)


def test_a_command_added_to_the_parser_is_completed_without_a_change(cluster: Cluster) -> None:
    def parser() -> argparse.ArgumentParser:
        root = build_parser(prog="kubectl spa")
        [commands] = [a for a in root._actions if isinstance(a, argparse._SubParsersAction)]
        pause = commands.add_parser("hold", help="hold an autoscaler")
        pause.add_argument("name", metavar="NAME")
        pause.add_argument("-n", "--namespace")
        pause.add_argument("--until", metavar="RFC3339")
        pause.add_argument("--reason", choices=("release", "incident"))
        return root

    def run(*words: str) -> list[str]:
        found, _ = complete_words(parser(), words, autoscalers=cluster.autoscalers)
        return [value for value, _ in found]

    assert "hold" in run("")
    assert run("hold", "--") == ["--help", "--namespace", "--until", "--reason"]
    assert run("hold", "--reason", "") == ["release", "incident"]
    assert run("hold", "-n", "shop", "w") == ["web", "worker"]
    assert run("hold", "--until", "") == []  # a time: no file names
    # The incident commands, added to the parser by spa/cli/incident.py, name an SPA too.
    for command in ("pause", "override", "resume"):
        assert run(command, "-n", "shop", "w") == ["web", "worker"]


def test_flags_once_a_dash_is_typed_with_their_help(cluster: Cluster) -> None:
    candidates, directive = complete_words(
        build_parser(prog="kubectl spa"), ["status", "--se"], autoscalers=cluster.autoscalers
    )
    assert directive == DIRECTIVE_NO_FILES
    [(flag, description)] = candidates
    assert flag == "--selector"
    assert description.startswith("only the ScheduledPodAutoscalers with these labels")
    flags, _ = complete(cluster, "status", "-")
    assert {"-n", "--namespace", "-A", "-o", "--output", "-l", "--no-headers"} <= set(flags)
    # -n and -A exclude each other: once one is given the other is not offered.
    flags, _ = complete(cluster, "status", "-A", "-")
    assert "-A" in flags  # argparse allows repeating a store_true
    assert not {"-n", "--namespace"} & set(flags)


def test_output_formats(cluster: Cluster) -> None:
    assert complete(cluster, "status", "-o", "") == (
        ["table", "wide", "json", "yaml", "name"],
        DIRECTIVE_NO_FILES,
    )
    assert complete(cluster, "plan", "-o", "") == (
        ["table", "json", "yaml", "html"],
        DIRECTIVE_NO_FILES,
    )
    # `--output=y`: values only, as cobra gives them (its scripts put the flag back).
    assert complete(cluster, "status", "--output=y") == (["yaml"], DIRECTIVE_NO_FILES)


def test_autoscaler_names_from_the_namespace_typed(cluster: Cluster) -> None:
    assert complete(cluster, "status", "-n", "shop", "") == (
        ["api", "web", "worker"],
        DIRECTIVE_NO_FILES,
    )
    assert complete(cluster, "status", "-n", "shop", "w")[0] == ["web", "worker"]
    assert complete(cluster, "status", "--namespace=blog", "")[0] == ["blog"]
    arguments = cluster.calls[-1]
    assert (arguments.namespace, arguments.context, arguments.kubeconfig) == ("blog", None, None)
    complete(cluster, "status", "--kubeconfig", "/k", "--context", "prod", "-n", "shop", "")
    arguments = cluster.calls[-1]
    assert (arguments.kubeconfig, arguments.context) == ("/k", "prod")
    # After the name, nothing more is a name.
    assert complete(cluster, "status", "-n", "shop", "web", "") == ([], DIRECTIVE_NO_FILES)


def test_namespaces_and_contexts(cluster: Cluster) -> None:
    assert complete(cluster, "status", "-n", "") == (
        ["blog", "kube-system", "shop"],
        DIRECTIVE_NO_FILES,
    )
    assert complete(cluster, "plan", "--from-cluster", "-n", "s")[0] == ["shop"]
    assert complete(cluster, "run", "--namespace", "")[0] == ["blog", "kube-system", "shop"]
    assert complete(cluster, "status", "--context", "")[0] == ["prod", "staging"]


def test_file_names_are_left_to_the_shell(cluster: Cluster) -> None:
    assert complete(cluster, "plan", "-f", "") == ([], DIRECTIVE_DEFAULT)
    assert complete(cluster, "status", "--kubeconfig", "") == ([], DIRECTIVE_DEFAULT)
    assert complete(cluster, "run", "--metrics-cert-dir", "") == ([], DIRECTIVE_DIRECTORIES)
    # Values that are not files complete with nothing, rather than with file names.
    assert complete(cluster, "plan", "-f", "x", "--at", "") == ([], DIRECTIVE_NO_FILES)
    assert complete(cluster, "status", "-l", "") == ([], DIRECTIVE_NO_FILES)


def test_a_failing_or_slow_cluster_gives_nothing_quickly() -> None:
    def failing(arguments: argparse.Namespace) -> list[str]:
        raise RuntimeError("connection refused")

    release = threading.Event()

    def hanging(arguments: argparse.Namespace) -> list[str]:
        release.wait(30)
        return ["late"]

    assert within(5, failing, argparse.Namespace()) == []
    started = time.monotonic()
    try:
        assert within(0.2, hanging, argparse.Namespace()) == []
        assert time.monotonic() - started < 5
    finally:
        release.set()
    assert within(5, lambda arguments: ["web"], argparse.Namespace()) == ["web"]


def test_the_real_listers_are_silent_without_a_cluster(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # No kubeconfig at all: the connection's ConfigError is swallowed, nothing is printed.
    missing = str(tmp_path / "missing")
    candidates, directive = complete_words(
        build_parser(prog="kubectl spa"), ["status", "--kubeconfig", missing, ""]
    )
    assert (candidates, directive) == ([], DIRECTIVE_NO_FILES)
    candidates, _ = complete_words(
        build_parser(prog="kubectl spa"), ["status", "--kubeconfig", missing, "--context", ""]
    )
    assert candidates == []
    assert capfd.readouterr() == ("", "")


def test_kubectl_protocol_lines() -> None:
    assert kubectl_protocol([("web", ""), ("--selector", "only these")], 4) == (
        "web\n--selector\tonly these\n:4\n"
    )
    assert kubectl_protocol([], 0) == ":0\n"


def test_kubectl_complete_prints_the_protocol(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert kubectl_complete(["status", "-o", "y"]) == 0
    assert capsys.readouterr() == ("yaml\n:4\n", "")
    assert kubectl_complete([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ":4"
    assert [line.split("\t")[0] for line in out[:-1]] == [
        "plan",
        "status",
        "pause",
        "override",
        "resume",
        "run",
        "suggest",
        "backtest",
        "completion",
    ]
    # A cluster that cannot be read: no candidate, no message, success.
    assert kubectl_complete(["status", ""]) == 0
    assert capsys.readouterr() == (":4\n", "")


def test_the_plugin_answers_cobras_hidden_command_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # `kubectl-spa __complete ...`, for a kubectl_complete-spa script where only the plugin's
    # executable is installed (Krew).
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert main(["__complete", "status", "--output=w"]) == 0
    assert capsys.readouterr() == ("wide\n:4\n", "")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_spa(shell: str) -> None:
    script = shell_script(shell)
    assert "spa" in script
    assert "_ARGCOMPLETE" in script
    with pytest.raises(ValueError, match="shell: 'tcsh' is not one of bash, zsh, fish"):
        shell_script("tcsh")


def test_spa_completion_prints_the_script() -> None:
    result = _spa("completion", "bash")
    assert result.returncode == 0, result.stderr
    assert result.stdout == shell_script("bash") + "\n"
    refused = _spa("completion", "tcsh")
    assert refused.returncode == 2
    assert "invalid choice: 'tcsh'" in refused.stderr


def test_the_shell_script_path_through_main(tmp_path: Path) -> None:
    argcomplete_output = tmp_path / "completions"
    # What the bash script of `spa completion bash` sets before running `spa` at a TAB.
    line = "spa status -o y"
    result = _spa(
        env={
            "_ARGCOMPLETE": "1",
            "_ARGCOMPLETE_SHELL": "bash",
            "COMP_LINE": line,
            "COMP_POINT": str(len(line)),
            "_ARGCOMPLETE_STDOUT_FILENAME": str(argcomplete_output),
        }
    )
    assert result.returncode == 0, result.stderr
    assert argcomplete_output.read_text() == "yaml "


@pytest.mark.parametrize("shell", SHELLS)
def test_kubectl_spa_completion_sets_up_kubectls_completion_not_spas(
    shell: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`kubectl spa completion SHELL` (as kubectl runs the plugin: argv[0] kubectl-spa) prints
    what completes `kubectl spa`: kubectl's own completion, which runs kubectl_complete-spa;
    argcomplete's script would complete a command `spa` that a Krew install does not even
    have (docs/operations.md, "Help and shell completion")."""
    monkeypatch.setattr(sys, "argv", ["/home/me/.krew/bin/kubectl-spa"])
    installed = tmp_path / "bin"
    installed.mkdir()
    for executable in ("kubectl-spa", "kubectl_complete-spa"):
        (installed / executable).write_text("#!/bin/sh\n")
        (installed / executable).chmod(0o755)
    monkeypatch.setenv("PATH", str(installed))
    assert main(["completion", shell]) == 0
    printed = capsys.readouterr()
    assert printed.out == plugin_script(shell) + "\n"
    assert printed.err == ""
    loads = {
        "bash": "source <(kubectl completion bash)",
        "zsh": "source <(kubectl completion zsh)",
        "fish": "kubectl completion fish | source",
    }[shell]
    assert printed.out.splitlines()[-1] == loads
    assert "kubectl_complete-spa" in printed.out
    assert "_ARGCOMPLETE" not in printed.out
    # `spa completion` still prints argcomplete's script for `spa`.
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/spa"])
    assert main(["completion", shell]) == 0
    assert capsys.readouterr().out == shell_script(shell) + "\n"


def test_where_kubectl_complete_spa_is_missing_it_says_how_to_add_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    krew = tmp_path / "my krew" / "bin"
    krew.mkdir(parents=True)
    (krew / "kubectl-spa").write_text("#!/bin/sh\n")
    (krew / "kubectl-spa").chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(krew / "kubectl-spa")])
    monkeypatch.setenv("PATH", str(krew))
    assert main(["completion", "zsh"]) == 0
    printed = capsys.readouterr()
    assert printed.out == plugin_script("zsh") + "\n"
    target = f"'{krew}/kubectl_complete-spa'"
    assert printed.err.splitlines()[1:] == [
        f"""  printf '#!/bin/sh\\nexec kubectl-spa __complete "$@"\\n' > {target}""",
        f"  chmod +x {target}",
    ]
    assert "kubectl_complete-spa" in printed.err.splitlines()[0]
    # Without kubectl-spa on PATH either: where Krew puts it.
    assert completer_missing(str(tmp_path)) is not None
    assert '"$HOME/.krew/bin/kubectl_complete-spa"' in str(completer_missing(str(tmp_path)))


def test_the_help_of_kubectl_spa_completion_names_kubectl_complete_spa() -> None:
    help_text = _subparsers(build_parser(prog="kubectl spa"))["completion"].format_help()
    assert "kubectl_complete-spa" in help_text
    assert "source <(kubectl spa completion bash)" in help_text
    # Nothing that sets up the completion of `spa` under the plugin's name.
    assert "completions/spa" not in help_text
    assert 'eval "$(kubectl spa completion zsh)"' not in help_text


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def _spa(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment: dict[str, Any] = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "spa.cli", *arguments],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=environment,
    )
