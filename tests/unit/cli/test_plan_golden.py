"""`spa plan` output for the calendar fields, compared with files checked by hand.

Each case runs the installed `spa plan` on manifests of tests/unit/cli/golden/plan and compares
its exit code, standard output and standard error (after `standard error:`) with the `.out`
file of the same name: excluded dates and holidays in the table and in JSON (`skipped`),
WeeklySpan and Cron windows, cron matches in a skipped and a repeated hour, Only-mode holidays,
and the field-addressed errors of each new field. After a deliberate change of the output,
`SPA_UPDATE_GOLDEN=1` rewrites the files; review their diff like code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden" / "plan"
SPA = Path(sys.executable).parent / "spa"

CASES = {
    # A holiday-aware weekday Schedule, a December weekend span and a cron batch, in Berlin,
    # over Christmas week.
    "calendars-table": ["-f", "calendars.yaml", "--at", "2026-12-21T00:00:00Z", "--days", "7"],
    "calendars-json": [
        *("-f", "calendars.yaml", "--at", "2026-12-21T00:00:00Z", "--days", "7"),
        *("-o", "json"),
    ],
    # New York: 02:30 is skipped on 8 March, 01:30 repeated on 1 November.
    "dst-spring": ["-f", "dst.yaml", "--at", "2026-03-07T12:00:00Z", "--days", "2"],
    "dst-autumn": ["-f", "dst.yaml", "--at", "2026-10-31T12:00:00Z", "--days", "2"],
    # Thanksgiving, the one day of the Only-mode holiday window.
    "holiday-only": ["-f", "dst.yaml", "--at", "2026-11-26T00:00:00Z", "--days", "2"],
    "errors": ["-f", "errors.yaml", "--at", "2026-12-01T00:00:00Z", "--days", "1"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_output_matches_the_golden_file(case: str) -> None:
    result = subprocess.run(
        [str(SPA), "plan", *CASES[case]],
        cwd=GOLDEN,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    actual = f"exit code {result.returncode}\n{result.stdout}"
    if result.stderr:
        actual += f"standard error:\n{result.stderr}"
    expected_file = GOLDEN / f"{case}.out"
    if os.environ.get("SPA_UPDATE_GOLDEN") == "1":
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")
