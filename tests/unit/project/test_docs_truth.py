"""The docs say what the repository holds and what its measurements show (issue 22).

Each test reads a claim of README.md or docs/*.md and checks it against its source: the files
the repository holds, the scripts and tests a sentence describes, the CRDs, and the raw
results of the benchmarks (docs/results/) that performance.md quotes. Every one of
them failed on the text it was written against; when one fails, fix the sentence (or the
figure) rather than the test, unless the source changed on purpose.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import json
import re
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spa.api.crd import schedule_crd, scheduled_pod_autoscaler_crd
from spa.controller.capacity import buffer_name, placeholder_name
from spa.controller.decide.memory import Memory
from spa.controller.manager import Manager
from spa.controller.permissions import PlaceholderAccess
from spa.kube import KubeClient
from spa.kube.resources import HPA_V2

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
MARKDOWN = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


def _flat(text: str) -> str:
    """The text with every run of white space as one space, so that a phrase may wrap."""
    return " ".join(text.split())


def _section(text: str, heading: str) -> str:
    """From `heading` (a whole line) to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(f"\n{heading}\n")
    end = re.compile(rf"\n#{{1,{level}}} ").search(text, start + 1)
    return text[start : end.start() if end else len(text)]


def _load(name: str) -> Any:
    return json.loads((DOCS / name).read_text(encoding="utf-8"))


# -- files ----------------------------------------------------------------------------------

# A path of this repository, as the docs write them (in backticks or in prose).
_REPO_PATH = re.compile(
    r"(?<![\w./~-])((?:spa|tests|hack|config|bench|docs|charts|plugins)/[\w./<>{}*…-]*[\w/])"
)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# Paths that look like ours but name another project's file, with where they are.
_NOT_OURS = {
    "hack/lib/version.sh": "each Kubernetes release's own (docs/development.md, The binaries)",
}


def _named_paths() -> Iterator[tuple[Path, int, str]]:
    for doc in MARKDOWN:
        text = doc.read_text(encoding="utf-8")
        for match in _REPO_PATH.finditer(text):
            path = match.group(1)
            # Patterns, not files: placeholders and globs.
            if any(mark in path for mark in "<>{}*…") or "VERSION" in path or "DIGEST" in path:
                continue
            if path not in _NOT_OURS:
                yield doc, text.count("\n", 0, match.start()) + 1, path


def test_no_doc_names_a_file_the_repository_does_not_have() -> None:
    # schedules.md named spa/runtime/asyncclient.py, gone with the asyncio client of issue 10;
    # reliability.md named tests/reliability/processes.py, moved to tests/integration.
    missing = [
        f"{doc.relative_to(ROOT)}:{line}: {path}"
        for doc, line, path in _named_paths()
        if not (ROOT / path).exists()
    ]
    for doc in MARKDOWN:  # and every relative link resolves
        for match in _LINK.finditer(doc.read_text(encoding="utf-8")):
            target = match.group(1).split("#")[0]
            if target and "://" not in target and not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)}: link {match.group(1)}")
    assert not missing, "\n".join(missing)


# -- installing -------------------------------------------------------------------------------


def _server_side_from() -> int:
    """The first Kubernetes minor on which tests/compat installs config/install server-side
    (read from its source: importing it would start nothing, but needs the test plane)."""
    source = (ROOT / "tests" / "compat" / "install.py").read_text(encoding="utf-8")
    match = re.search(
        r"if minor < (\d+):\n(?:\s*#.*\n)*\s*return \(\"apply\", \"--validate=false\"", source
    )
    assert match, "tests/compat/install.py: install_command changed; update this test"
    return int(match.group(1))


def test_server_side_apply_is_given_the_release_the_compat_suite_uses() -> None:
    # The README said `--server-side` works from 1.16; before 1.23 the API server refuses it.
    minor = _server_side_from()
    for doc in ("README.md", "docs/install.md"):
        lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
        commented = [
            line
            for line in lines
            if "apply --server-side -f config/install/install.yaml" in line
            and "# Kubernetes" in line
        ]
        assert commented, f"{doc}: no commented server-side apply of config/install/install.yaml"
        for line in commented:
            assert re.search(rf"# Kubernetes 1\.{minor}\b", line), f"{doc}: {line}"
        for line in lines:
            if "apply --validate=false -f config/install/install.yaml" in line and "#" in line:
                assert re.search(rf"# Kubernetes 1\.16 to 1\.{minor - 1}\b", line), line


def test_the_readme_names_every_binary_of_the_first_build() -> None:
    build = (ROOT / "hack" / "testenv" / "build.sh").read_text(encoding="utf-8")
    match = re.search(r"^REQUIRED=\(([^)]*)\)", build, re.M)
    assert match
    readme = _flat((ROOT / "README.md").read_text(encoding="utf-8"))
    missing = [binary for binary in match.group(1).split() if binary not in readme]
    assert not missing, f"README.md does not say the first run builds {missing}"


def test_no_command_shown_to_users_gets_schedules_by_the_ambiguous_name() -> None:
    # `kubectl get schedule` may list Velero's or Chaos Mesh's Schedules (docs/api.md); the
    # short name is spasched. The README and `make run` recommended `spa,schedule,hpa`.
    for path in ("README.md", "Makefile"):
        text = (ROOT / path).read_text(encoding="utf-8")
        ambiguous = re.findall(r"kubectl get [\w,]*\bschedules?\b[\w,]*", text)
        assert not ambiguous, f"{path}: {ambiguous}"


def test_install_md_lists_every_printer_column() -> None:
    section = _section((DOCS / "install.md").read_text(encoding="utf-8"), "## Printer columns")
    for crd in (scheduled_pod_autoscaler_crd(), schedule_crd()):
        for column in crd["spec"]["versions"][0]["additionalPrinterColumns"]:
            assert f"`{column['name']}`" in section, (crd["spec"]["names"]["kind"], column)


def test_no_doc_installs_the_package_from_pypi() -> None:
    # It is not published there; the docs say how to install it from the repository. Drop
    # this test when a release is published on PyPI.
    for doc in MARKDOWN:
        assert "pip install scheduled-pod-autoscaler" not in doc.read_text(encoding="utf-8"), doc


# -- the suites ---------------------------------------------------------------------------------


def _count_tests(directory: Path) -> int:
    """The tests pytest collects from `directory`, counted from the source: each test function
    once per combination of its literal `parametrize` lists."""
    total = 0
    for path in sorted(directory.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if not node.name.startswith("test_"):
                continue
            count = 1
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith(
                    "parametrize"
                ):
                    values = decorator.args[1]
                    assert isinstance(values, ast.List | ast.Tuple), ast.unparse(decorator)
                    count *= len(values.elts)
            total += count
    return total


def test_the_reliability_docs_count_the_suite_and_name_its_target() -> None:
    # reliability.md said "10 cases" and "part of `make test`" while the Makefile's test target
    # leaves tests/reliability out; development.md gave another figure.
    tests = _count_tests(ROOT / "tests" / "reliability")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--ignore=tests/reliability" in makefile
    reliability = _flat((DOCS / "reliability.md").read_text(encoding="utf-8"))
    assert f"holds {tests} tests" in reliability
    assert "not part of `make test`" in reliability
    assert not re.search(r"(?<!not )part of `make test`", reliability)
    row = next(
        line
        for line in (DOCS / "development.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `make test-reliability` |")
    )
    assert f"{tests} tests" in row, row


def test_the_compat_durations_quoted_are_those_of_the_table() -> None:
    text = (DOCS / "development.md").read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if "`tests/compat` warm" in line)
    rows = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    cells = [row.split("|")[-2].strip() for row in rows]
    assert all(re.fullmatch(r"\d+ s", cell) for cell in cells), cells
    seconds = [int(cell.removesuffix(" s")) for cell in cells]
    total = sum(seconds)
    quoted = (
        f"({min(seconds)} to {max(seconds)} s a release, {total // 60} min {total % 60} s in all)"
    )
    assert quoted in _flat(text)


# -- performance.md against its raw results --------------------------------------------------


def _performance() -> str:
    return _flat((DOCS / "performance.md").read_text(encoding="utf-8"))


def test_the_api_servers_patch_capacity_is_quoted_as_measured() -> None:
    results = _load("results/load-full.json")["results"]
    capacities = [rate for result in results for rate in result["capacity"].values()]
    low, high = round(min(capacities)), round(max(capacities))
    assert f"between {low} and {high} HPA patches per second" in _performance()
    fastest_n = 1000 / max(capacities)
    slowest_n = 1000 / min(capacities)
    assert f"for 1,000 HPAs that is {fastest_n:.1f} to {slowest_n:.1f} s" in _performance()


def test_the_fleets_share_of_the_capacity_is_quoted_as_measured() -> None:
    ratios = []
    for result in _load("results/load-full.json")["results"]:
        if result["n"] < 100:
            continue
        rate = result["n"] / result["start"]["hpa_lag_audit"]["max"]
        ratios += [100 * rate / capacity for capacity in result["capacity"].values()]
    quoted = (
        f"at {round(min(ratios))} to {round(max(ratios))} % of the capacity measured right after it"
    )
    assert quoted in _performance()


def test_the_idle_period_at_5000_spas_is_quoted_with_its_writes() -> None:
    # The targets table said "0 writes of its own" where the raw results hold 3 status patches.
    (run,) = _load("results/history/load-blocking-vs-async-client.json")[
        "after (integration 2bb76e9), 5,000"
    ]["results"]
    idle = run["idle"]
    watches = sum(
        count for request, count in idle["requests"].items() if request.startswith("watch ")
    )
    quoted = (
        f"at 5,000 in {round(idle['seconds'])} s {idle['writes']} Schedule status patches, the "
        f"tail of the window move, and the renewal of {watches} watches"
    )
    assert idle["writes"] == idle["requests"].get("patch schedules/status")
    assert quoted in _performance()


def _memory_formula(text: str, pattern: str) -> tuple[int, int]:
    """The formula's base (MiB) and slope (KiB per SPA), where the text says it exactly once."""
    matches = re.findall(pattern, _flat(text))
    assert len(matches) == 1, (pattern, matches)
    base, per_spa = matches[0]
    return int(base), int(per_spa)


# The runs of the controller after issue 24's lean work (fc96b91 and later) that the sizing
# fits: bench/original.py's `spa` rounds (its "spa-src" is the code before issue 24), and every
# run of bench/load.py at 1,000 and 5,000 SPAs.
_SIZED_ORIGINAL = "results/original-100-1000.json"
_SIZED_LOAD = ("results/load-1000-pinned-variants.json", "results/load-5000.json")


def _sized_measurements() -> list[tuple[str, int, float]]:
    """(file, SPAs, the highest RSS of the run in MiB) for each run the sizing fits.

    The highest of what each benchmark records: bench/original.py's RSS and peak (VmHWM), and
    bench/load.py's first-start peak, RSS after the restart and peak over the whole run (its
    whole-fleet boundary included).
    """
    measured = [
        (_SIZED_ORIGINAL, r["n"], max(r["rss_mib"], r["peak_rss_mib"]))
        for r in _load(_SIZED_ORIGINAL)["results"]
        if r["controller"] == "spa"
    ]
    for name in _SIZED_LOAD:
        document = _load(name)
        runs = [document] if "results" in document else list(document.values())
        measured += [
            (
                name,
                r["n"],
                max(r["cold_peak_rss_mib"], r["warm"]["rss_mib"], r["peak_rss_mib"]),
            )
            for run in runs
            for r in run["results"]
        ]
    return measured


def test_the_memory_sizing_covers_the_latest_measurements_and_is_said_once() -> None:
    # The sizing said 70 MiB + 75 KiB per SPA, from the controller before issue 10 and before
    # the caches dropped managedFields; it was below the later measurements at 100 SPAs. Then
    # 90 MiB + 62 KiB, from issue 10's runs (results/history/load-blocking-vs-async-client.json):
    # after issue 24's lean work it gave 393 MiB at 5,000 SPAs, more than twice the 183 MiB
    # measured.
    performance = (DOCS / "performance.md").read_text(encoding="utf-8")
    base, per_spa = _memory_formula(performance, r"\*\*Memory\*\* ≈ (\d+) MiB \+ (\d+) KiB per SPA")
    assert (base, per_spa) == _memory_formula(
        (DOCS / "operations.md").read_text(encoding="utf-8"),
        r"about (\d+) MiB plus (\d+) KiB per SPA",
    )
    measured = _sized_measurements()
    assert {n for _, n, _ in measured} == {100, 1000, 5000}
    for name, n, mib in measured:
        sized = base + per_spa * n / 1024
        assert mib <= sized <= mib * 1.15 + 10, (name, n, mib, sized)
    section = _flat(_section(performance, "## Sizing the Deployment"))
    for name in {name for name, _, _ in measured}:
        assert f"`{name}`" in section, name
    at_100, at_1000, at_5000 = (f"{base + per_spa * n / 1024:.1f}" for n in (100, 1000, 5000))
    assert f"The formula gives {at_100}, {at_1000} and {at_5000} MiB at those sizes" in section


def _p99(run: dict[str, Any], delay: int, mode: str, what: str) -> float:
    (result,) = [r for r in run["results"] if (r["n"], r["delay"], r["mode"]) == (100, delay, mode)]
    return float(result[what]["p99"])


def _signed(value: float) -> str:
    return f"{value:.1f}".replace("-", "\N{MINUS SIGN}")


def test_what_immediate_scale_up_saves_is_quoted_as_measured() -> None:
    # performance.md said immediate scale-up "takes 10 to 30 s off the HPA-only path" at
    # 2 x 100 Deployments a boundary; the raw results show 8 to 17 s off the raise and
    # -0.2 to 13.1 s off Ready.
    capacity = _load("results/capacity-1-100.json")
    text = _performance()
    double = [capacity["run_1"], capacity["run_2"]]  # 2 x 100 Deployments per boundary
    single = [capacity["run_3"], capacity["run_4"]]  # 100 per boundary
    raised = [
        _p99(run, d, "hpa", "wanted") - _p99(run, d, "immediate", "wanted")
        for run in double
        for d in (0, 20)
    ]
    ready = [
        _p99(run, d, "hpa", "ready") - _p99(run, d, "immediate", "ready")
        for run in double
        for d in (0, 20)
    ]
    assert f"raised `spec.replicas` {round(min(raised))} to {round(max(raised))} s sooner" in text
    assert f"Ready only {_signed(min(ready))} to {_signed(max(ready))} s sooner" in text
    shortened = [
        _p99(run, d, "hpa", "ready") - _p99(run, d, "immediate", "ready")
        for run in single
        for d in (0, 20)
    ]
    assert f"shortens by {round(min(shortened))} to {round(max(shortened))} s at p99" in text


# -- architecture.md against the code ---------------------------------------------------------

_NUMBERS = {"seven": 7, "eight": 8, "nine": 9, "ten": 10}


def test_the_reconciles_step_bound_is_the_codes() -> None:
    # architecture.md said "at most seven steps" in one place and "at most 8" in another.
    source = (ROOT / "spa" / "controller" / "reconciler.py").read_text(encoding="utf-8")
    match = re.search(r"^_MAX_STEPS = (\d+)$", source, re.M)
    assert match
    bound = int(match[1])
    text = _flat((DOCS / "architecture.md").read_text(encoding="utf-8"))
    said = re.findall(r"at most (\w+) (?:steps|decisions)", text)
    assert said
    assert {int(word) if word.isdigit() else _NUMBERS[word] for word in said} == {bound}, said


def _architecture() -> str:
    return (DOCS / "architecture.md").read_text(encoding="utf-8")


def _table_after(text: str, line: str) -> list[list[str]]:
    """The cells of the rows of the first table after `line` (a whole line of `text`)."""
    rest = text.split(f"\n{line}\n", 1)[1].lstrip("\n")
    rows = rest.split("\n\n", 1)[0].splitlines()[2:]
    assert rows, line
    assert all(row.startswith("|") for row in rows), rows[:3]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def _modules(cell: str) -> list[str]:
    """The Python modules a first cell names (`a.py`, `b.py`), without `.py`."""
    return [name.removesuffix(".py") for name in re.findall(r"`([\w/]+\.py)`", cell)]


def _contract(container: str) -> list[set[str]]:
    """The layers of setup.cfg's import-linter contract for `container`, from the bottom."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    (section,) = [
        name
        for name in config.sections()
        if name.startswith("importlinter:contract:")
        and config[name].get("type") == "layers"
        and config[name].get("containers", "").split() == [container]
    ]
    layers = [line.strip() for line in config[section]["layers"].splitlines() if line.strip()]
    return [{module.strip() for module in layer.split("|")} for layer in reversed(layers)]


def test_the_decide_table_is_the_package_in_the_order_of_its_contract() -> None:
    # The table left out decide/capacity.py, which the contract and the package had.
    package = ROOT / "spa" / "controller" / "decide"
    modules = {path.stem for path in package.glob("*.py")} - {"__init__"}
    heading = "The package `spa/controller/decide/`, from the bottom"
    rows = _table_after(_architecture(), f"{heading} (`setup.cfg` holds it to this order):")
    table = [name for row in rows for name in _modules(row[0])]
    assert sorted(table) == sorted(modules), "a module of decide/ without its row, or a row more"
    layers = _contract("spa.controller.decide")
    layered = [module for layer in layers for module in layer]
    assert sorted(layered) == sorted(modules), "a module of decide/ without its layer in setup.cfg"
    rank = {module: index for index, layer in enumerate(layers) for module in layer}
    ranks = [rank[name] for name in table]
    assert ranks == sorted(ranks), f"the table is not from the bottom as setup.cfg is: {table}"


def test_every_module_of_the_controller_has_its_row() -> None:
    # permissions.py and eventloop.py had none.
    package = ROOT / "spa" / "controller"
    modules = {path.stem for path in package.glob("*.py")} - {"__init__"}
    rows = _table_after(_architecture(), "## Who does what inside `spa.controller`")
    table = [name for row in rows for name in _modules(row[0])]
    assert sorted(table) == sorted(modules)


class _NoCredentials:
    async def headers(self) -> dict[str, str]:
        raise AssertionError("the wiring sent a request")


async def test_the_informer_count_is_what_the_manager_starts() -> None:
    """architecture.md says how many informers `spa run` runs at most, of which kinds: the
    test wires a real Manager (`_wire`, which builds every cache and starts nothing) with a
    real client that is never sent a request, and counts what it built: the informers of the
    kinds it needs, with placeholder pods permitted (the most), and the optional kinds, each of
    which starts one informer once served (docs/runtime.md, "Optional kinds"). Wiring, rather
    than reading manager.py's source, counts an informer however it comes to be made."""
    # The page said "five informers" while the manager made seven.
    tls = ssl.create_default_context()
    client = KubeClient("https://127.0.0.1:9", credentials=_NoCredentials(), ssl_context=tls)
    try:
        manager = Manager(client=client, metrics_address=None, probe_address=None)
        wired = manager._wire(HPA_V2, PlaceholderAccess())
        needed = len(manager.informers)
        optional = len(list(wired.optional))
    finally:
        await client.close()
    said = re.findall(
        r"So `spa run` runs at most (\w+) informers: (\w+) of the kinds it needs and one for each"
        r" of the (\w+) optional kinds",
        _flat(_architecture()),
    )
    assert len(said) == 1, said
    words = {"three": 3, "four": 4, "five": 5, "six": 6, **_NUMBERS}
    total, required, optional_said = (int(w) if w.isdigit() else words[w] for w in said[0])
    assert (total, required, optional_said) == (needed + optional, needed, optional)


def test_the_writers_table_names_the_capacity_objects_as_the_code_does() -> None:
    # The row said the placeholder Deployment had the CapacityBuffer's name, in the SPA's
    # namespace; it is named after both, in the controller's.
    lines = _architecture().splitlines()
    row = next(line for line in lines if line.startswith("| the SPA's node capacity"))
    assert f"`{buffer_name('<spa>')}`" in row, row
    assert f"`{placeholder_name('<namespace>', '<spa>')}`" in row, row


def test_the_memory_bullet_names_every_field_of_memory() -> None:
    # It left out `following_boundary` and `adopted`.
    text = _flat(_architecture())
    start = text.index("- **Memory** (`decide/memory.py`)")
    bullet = text[start : text.index(" - **", start + 1)]
    missing = [f.name for f in dataclasses.fields(Memory) if f"`{f.name}`" not in bullet]
    assert not missing, missing
