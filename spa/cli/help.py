"""Every command's help: the examples it ends with, laid out as written, and the name the
command is invoked by.

Invoked as `kubectl spa` (the plugin `kubectl-spa`), the help says so. Every command's help
ends with examples, which tests/unit/cli/test_cli_help.py parses, so that none of them goes stale.
Each command's module makes its subcommand with `command`.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = [
    "EXAMPLES",
    "PLUGIN_COMPLETION_EXAMPLES",
    "HelpFormatter",
    "command",
    "plugin",
    "program_name",
]


def plugin(prog: str) -> bool:
    """Whether the parser is that of the kubectl plugin (`kubectl spa`)."""
    return prog.startswith("kubectl ")


def program_name(argv0: str | None = None) -> str:
    """`kubectl spa` when run as the kubectl plugin (kubectl runs `kubectl-spa` with its own
    path as argv[0]), else `spa`."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "kubectl spa" if name.startswith("kubectl-spa") else "spa"


# The examples at the end of each command's help ("%(prog)s" is the command as invoked: `spa
# plan`, or `kubectl spa plan` for the plugin). One command a line, each preceded by a comment:
# tests/unit/cli/test_cli_help.py parses every one of them with this parser.
EXAMPLES = {
    "": """\
examples:
  # What the manifests of a directory do in the next 7 days (no cluster needed)
  %(prog)s plan -f manifests/

  # What each ScheduledPodAutoscaler of a namespace does now, and next
  %(prog)s status -n shop

  # Complete commands, flags and names with TAB in bash
  source <(%(prog)s completion bash)
""",
    "plan": """\
examples:
  # The next 7 days of the manifests of a directory
  %(prog)s -f manifests/

  # A given fortnight of two files, as JSON
  %(prog)s -f spa.yaml -f schedules.yaml --at 2026-12-01T00:00:00Z --days 14 -o json

  # The output of kustomize, read from standard input, up to a date
  kustomize build overlays/prod | %(prog)s -f - --until 2027-01-01T00:00:00Z

  # The live objects of a namespace instead of files, as a page to share
  %(prog)s --from-cluster -n shop -o html > plan.html

  # The same plan as YAML, for every namespace
  %(prog)s --from-cluster -A -o yaml
""",
    "status": """\
examples:
  # Every ScheduledPodAutoscaler of the context's namespace
  %(prog)s

  # One of them, with all its Schedules and more transitions
  %(prog)s web -n shop -o wide

  # Those labelled team=checkout, in every namespace, as YAML
  %(prog)s -A -l team=checkout -o yaml

  # Their names only, as `kubectl get -o name` prints them
  %(prog)s -n shop -o name

  # Watch one as it changes (Ctrl-C ends), reading the cluster every 5 seconds
  %(prog)s web -n shop --watch --interval 5
""",
    "run": """\
examples:
  # The controller as the install manifest runs it
  %(prog)s --enable-leader-election

  # Outside the cluster, on two namespaces, with readable logs
  %(prog)s --kubeconfig ~/.kube/config --namespace shop --namespace blog --log-format text
""",
    "pause": """\
examples:
  # Leave the HPA of web alone during an incident, until resumed
  %(prog)s web -n shop

  # The same for three hours only; the schedule applies again after them
  %(prog)s web -n shop --for 3h
""",
    "override": """\
examples:
  # Hold at least 20 replicas (and at most the spec's maxReplicas) for two hours
  %(prog)s web -n shop --min 20 --for 2h

  # Hold 20 to 40 for 90 minutes
  %(prog)s web -n shop --min 20 --max 40 --for 90m
""",
    "resume": """\
examples:
  # End a pause and an override of web now: the schedule applies again
  %(prog)s web -n shop
""",
    "suggest": """\
examples:
  # Schedules for one autoscaler from the last 4 weeks of its HPA's desired replicas
  %(prog)s --prometheus http://prometheus:9090 --autoscaler shop/web --time-zone Europe/Berlin

  # What they would change in the manifests kept in Git, for the SPAs there
  %(prog)s --prometheus http://prometheus:9090 -f deploy/

  # One autoscaler from 8 weeks of a recorded load, 50 requests/s per replica
  %(prog)s --prometheus http://prometheus:9090 --autoscaler shop/web --weeks 8 """
    """--query web:http_requests:rate5m --per-pod 50

  # Those whose HPA is labelled team=shop, as JSON
  %(prog)s --prometheus http://prometheus:9090 -l team=shop -o json

  # The history per weekday with the suggested floor, as a page
  %(prog)s --prometheus http://prometheus:9090 -A -o html > suggest.html
""",
    "backtest": """\
examples:
  # The last 4 weeks replayed against the Schedules of a directory
  %(prog)s -f deploy/ --prometheus http://prometheus:9090

  # The branch's Schedules against main's, over 8 weeks
  %(prog)s -f deploy/ --prometheus http://prometheus:9090 --weeks 8 --compare git:main

  # The history with the floor and the shortfalls marked, as a page
  %(prog)s -f deploy/ --prometheus http://prometheus:9090 -o html > backtest.html
""",
    "completion": """\
examples:
  # bash: for this shell, then for every new one
  source <(%(prog)s bash)
  %(prog)s bash > ~/.local/share/bash-completion/completions/spa

  # zsh (after compinit)
  eval "$(%(prog)s zsh)"

  # fish
  %(prog)s fish > ~/.config/fish/completions/spa.fish
""",
}


# The examples of `kubectl spa completion`, which prints the script that loads kubectl's own
# completion (kubectl completes its plugins itself): for this shell; add the same line to the
# shell's startup file for every new one.
PLUGIN_COMPLETION_EXAMPLES = """\
examples:
  # bash: kubectl's completion, which completes kubectl spa (add it to ~/.bashrc to keep it)
  source <(%(prog)s bash)

  # zsh (after compinit; in ~/.zshrc to keep it)
  source <(%(prog)s zsh)

  # fish (in ~/.config/fish/config.fish to keep it)
  %(prog)s fish | source
"""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that text written in lines (the examples) keeps its line
    breaks and indentation, as RawDescriptionHelpFormatter would keep them; descriptions,
    written as one paragraph, are still wrapped to the terminal."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" not in text:
            return super()._fill_text(text, width, indent)
        return "".join(indent + line for line in text.splitlines(keepends=True))


def command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    description: str,
    examples: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand whose help ends with its examples (`EXAMPLES[name]` unless given), laid
    out as written."""
    return commands.add_parser(
        name,
        help=help,
        description=description,
        epilog=EXAMPLES[name] if examples is None else examples,
        formatter_class=HelpFormatter,
    )
