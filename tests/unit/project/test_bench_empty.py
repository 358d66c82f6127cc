"""Every entry point of bench/ on input that measures nothing (bench/measured.py): a run in
which no fault fired, an empty work directory, counts of 0 and empty lists, results with no
row. Each says "0 faults", "nothing measured" or which argument is wrong, never a traceback;
no benchmark is run here (tests/bench runs them)."""

from __future__ import annotations

import importlib
import json
import random
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import capacity, client, load, nodes, original, ready, shards, soak
from bench.measured import NOTHING_MEASURED, NothingMeasured

T0 = datetime(2026, 11, 23, 11, 0, tzinfo=UTC)


def soak_run(workdir: Path) -> Path:
    """The work directory of a two-minute soak of 3 SPAs in which no fault fired and nothing
    was written: its manifests, its record, an empty audit log, and no faults.jsonl (the
    journal is written at the first fault)."""
    first = T0.timestamp()
    (workdir / "manifests.json").write_text(
        json.dumps(soak.fleet(random.Random(1), 3, T0, 2)), encoding="utf-8"
    )
    record = {
        "seed": 1,
        "spas": 3,
        "minutes": 2,
        "first": first,
        "last": first + 120,
        "started": first - 150,
        "settle_end": first + 150,
        "listed_at": first + 150,
        "final": {},
        "exits": [],
        "samples": [],
        "loadavg_end": "0.1 0.1 0.1 1/100 1",
    }
    (workdir / "record.json").write_text(json.dumps(record), encoding="utf-8")
    (workdir / "plane").mkdir()
    (workdir / "plane" / "audit.log").write_text("", encoding="utf-8")
    return workdir


def test_a_soak_in_which_no_fault_fired_reports_0_faults(tmp_path: Path) -> None:
    result = soak.analyze(soak_run(tmp_path))
    assert (result["faults"], result["fault_log"]) == ([], [])
    summary = soak.markdown(result)
    assert "faults: 0 (none fired)" in summary
    assert result["transitions"] > 0  # what was due is still compared: every one missed
    assert len(result["missed"]) == result["transitions"]


def test_the_soak_analysis_of_an_empty_directory_measured_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(NothingMeasured, match=r"holds no record\.json"):
        soak.analyze(tmp_path)
    monkeypatch.setattr(sys, "argv", ["soak.py", "--analyze", str(tmp_path)])
    assert soak.main() == 1
    assert capsys.readouterr().out.startswith(f"{NOTHING_MEASURED}: {tmp_path} holds no")


def test_reports_of_no_rows_say_nothing_was_measured(tmp_path: Path) -> None:
    assert capacity.table([]) == NOTHING_MEASURED
    assert nodes.table([]) == NOTHING_MEASURED
    assert ready.table([]) == NOTHING_MEASURED
    assert ready.drift([]) == []
    assert original.markdown([]) == NOTHING_MEASURED
    assert load.markdown([]) == NOTHING_MEASURED
    assert shards.markdown([]) == NOTHING_MEASURED
    assert client.table({"patch": {"urllib3": []}, "watch": {}}) == NOTHING_MEASURED
    plot = tmp_path / "plot.svg"
    load.svg_plot([], plot)
    assert not plot.exists()


# Arguments that measure nothing, or cannot be measured, for each entry point: refused before
# anything runs (no control plane is started), exit status 2, naming the argument.
REFUSED = [
    ("cache", ["--rounds", "0"], "--rounds"),
    ("cache", ["--hpas", "-3"], "--hpas"),
    ("capacity", ["--sizes", ""], "--sizes"),
    ("capacity", ["--modes", "none"], "--modes"),
    ("capacity", ["--delays", "0,-5"], "--delays"),
    ("client", ["--patches", "0"], "--patches"),
    ("client", ["--stacks", ","], "--stacks"),
    ("decide", ["--decisions", "0"], "--decisions"),
    ("decide", ["--repeats", "0"], "--repeats"),
    ("engine", ["--repeats", "0"], "--repeats"),
    ("imports", ["--top", "-1"], "--top"),
    ("load", ["--sizes", ","], "--sizes"),
    ("load", ["--workers", "0"], "--workers"),
    ("memory", ["--sizes", "600"], "--sizes"),
    ("memory", ["--sizes", "600,100"], "--sizes"),
    ("nodes", ["--sizes", "0"], "--sizes"),
    ("nodes", ["--modes", ""], "--modes"),
    ("ready", ["--sizes", "0"], "--sizes"),
    ("ready", ["--pod-start", "-1"], "--pod-start"),
    ("ready", ["--windows", "3"], "--windows"),
    ("original", ["--rounds", "0"], "--rounds"),
    ("shards", ["--sizes", "0"], "--sizes"),
    ("shards", ["--shards", "1"], "--shards"),
    ("shards", ["--sizes", "3", "--shards", "4"], "--sizes"),
    ("shards", ["--warm-ups", "-1"], "--warm-ups"),
    ("shards", ["--kill-before", "-5"], "--kill-before"),
    ("original", ["--settle", "-1"], "--settle"),
    ("soak", ["--minutes", "0"], "--minutes"),
    ("soak", ["--spas", "x"], "--spas"),
    ("soak", ["--faults", ""], "--faults"),
    ("suggest", ["--repeats", "0"], "--repeats"),
    ("suggest", ["--autoscalers", "0"], "--autoscalers"),
    ("suggest", ["--weeks", "-1"], "--weeks"),
]


@pytest.mark.parametrize(("name", "arguments", "named"), REFUSED)
def test_arguments_that_measure_nothing_are_refused_in_one_line(
    name: str,
    arguments: list[str],
    named: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = importlib.import_module(f"bench.{name}")
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *arguments])
    with pytest.raises(SystemExit) as exited:
        module.main()
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert named in said
    assert "Traceback" not in said
