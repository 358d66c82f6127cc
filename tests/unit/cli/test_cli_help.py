"""Every command's `--help` ends with examples (spa/cli/help.py, EXAMPLES), and each example
is a command line the parser accepts: parsed here, so that an example cannot outlive a flag."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from spa.cli import build_parser
from spa.cli.help import EXAMPLES, program_name


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def _examples(help_text: str, prog: str) -> list[str]:
    """The command lines of the examples section, cut at the shell's own syntax (a pipe, a
    redirection, the end of `<(...)` or `"$(...)"`), from the program's name on."""
    _, found, section = help_text.partition("\nexamples:\n")
    assert found, help_text
    lines = []
    for line in section.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        assert prog in line, f"{line!r} does not run {prog}"
        command = line[line.index(prog) :]
        lines.append(re.split(r"\s*[|>)\"]", command)[0])
    return lines


@pytest.mark.parametrize("prog", ["spa", "kubectl spa"])
def test_every_command_has_examples_the_parser_accepts(prog: str) -> None:
    parser = build_parser(prog=prog)
    commands = _subparsers(parser)
    assert set(EXAMPLES) == {"", *commands}
    checked = 0
    for name, command in {"": parser, **commands}.items():
        help_text = command.format_help()
        examples = _examples(help_text, command.prog)
        assert examples, f"no example in the help of {command.prog}"
        for example in examples:
            words = shlex.split(example)[len(prog.split()) :]
            if name:
                assert words[0] == name, example
            try:
                arguments = build_parser(prog=prog).parse_args(words)
            except SystemExit:
                pytest.fail(f"{example!r} is not a valid command line")
            assert arguments.command == (name or words[0])
            checked += 1
    assert checked >= 15


def test_examples_keep_their_layout_and_name_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    help_text = _subparsers(build_parser(prog="kubectl spa"))["status"].format_help()
    # The description is still wrapped to the terminal; only the examples are kept as written.
    description = help_text.split("\n\n")[1]
    assert description.startswith("For each ScheduledPodAutoscaler of the cluster")
    assert max(len(line) for line in description.splitlines()) <= 80
    assert len(description.splitlines()) > 2
    assert "\n  # Those labelled team=checkout, in every namespace, as YAML\n" in help_text
    assert "\n  kubectl spa status -A -l team=checkout -o yaml\n" in help_text
    assert program_name("/usr/local/bin/kubectl-spa") == "kubectl spa"
