"""The pause/override rule of spa/api/incident.py: parsing, expiry at the exact second, and
field-addressed errors for malformed annotations (docs/api.md, "Annotations")."""

from __future__ import annotations

import pytest

from spa.api.incident import (
    OVERRIDE_ANNOTATION,
    PAUSED_UNTIL_ANNOTATION,
    Override,
    Pause,
    describe_override,
    describe_pause,
    incident_at,
    override_value,
    parse_for,
    pause_value,
)
from spa.schedule import format_instant

# 2026-11-25T15:00:00Z
END = 1_795_618_800
assert format_instant(END) == "2026-11-25T15:00:00Z"


def test_pause_is_in_force_until_the_second_it_ends() -> None:
    annotations = {PAUSED_UNTIL_ANNOTATION: "2026-11-25T15:00:00Z"}
    before = incident_at(annotations, base_max=10, instant=END - 1)
    assert before.pause == Pause(END)
    assert before.wake_at == END
    at = incident_at(annotations, base_max=10, instant=END)
    assert at.pause is None
    assert at.expired_pause == Pause(END)
    assert at.wake_at is None


def test_indefinite_pause_never_expires_and_wakes_nobody() -> None:
    incident = incident_at({PAUSED_UNTIL_ANNOTATION: "indefinite"}, base_max=10, instant=END * 2)
    assert incident.pause == Pause(None)
    assert incident.wake_at is None
    assert describe_pause(incident.pause) == "paused until resumed"


def test_offsets_and_fractions_are_read_as_the_instant_rounded_up() -> None:
    tokyo = incident_at(
        {PAUSED_UNTIL_ANNOTATION: "2026-11-26T00:00:00+09:00"}, base_max=1, instant=0
    )
    assert tokyo.pause == Pause(END)
    fraction = incident_at(
        {PAUSED_UNTIL_ANNOTATION: "2026-11-25T14:59:59.2Z"}, base_max=1, instant=0
    )
    assert fraction.pause == Pause(END)


def test_override_holds_its_values_until_it_ends() -> None:
    annotations = {OVERRIDE_ANNOTATION: "min=20,max=40,until=2026-11-25T15:00:00Z"}
    incident = incident_at(annotations, base_max=10, instant=END - 1)
    assert incident.override == Override(20, 40, END)
    assert incident.wake_at == END
    expired = incident_at(annotations, base_max=10, instant=END)
    assert expired.override is None
    assert expired.expired_override == Override(20, 40, END)


@pytest.mark.parametrize(("base_max", "expected"), [(10, 20), (50, 50)])
def test_override_max_defaults_to_the_larger_of_min_and_the_base_max(
    base_max: int, expected: int
) -> None:
    incident = incident_at(
        {OVERRIDE_ANNOTATION: "until=2026-11-25T15:00:00Z, min=20"}, base_max=base_max, instant=0
    )
    assert incident.override == Override(20, expected, END)


def test_the_earliest_end_wakes_the_controller() -> None:
    incident = incident_at(
        {
            PAUSED_UNTIL_ANNOTATION: format_instant(END + 60),
            OVERRIDE_ANNOTATION: override_value(min_replicas=3, max_replicas=None, until=END),
        },
        base_max=10,
        instant=0,
    )
    assert incident.pause == Pause(END + 60)
    assert incident.override == Override(3, 10, END)
    assert incident.wake_at == END


def test_values_written_by_the_cli_read_back() -> None:
    annotations = {
        PAUSED_UNTIL_ANNOTATION: pause_value(END),
        OVERRIDE_ANNOTATION: override_value(min_replicas=5, max_replicas=7, until=END),
    }
    incident = incident_at(annotations, base_max=10, instant=0)
    assert incident.pause == Pause(END)
    assert incident.override == Override(5, 7, END)
    assert pause_value(None) == "indefinite"
    assert describe_override(Override(5, 7, END)) == (
        "overridden to minReplicas 5, maxReplicas 7 until 2026-11-25T15:00:00Z"
    )


@pytest.mark.parametrize(
    ("annotation", "value", "message"),
    [
        (PAUSED_UNTIL_ANNOTATION, "tomorrow", "must be an RFC 3339 time"),
        (PAUSED_UNTIL_ANNOTATION, "2026-11-25T15:00:00", "must be an RFC 3339 time"),
        (PAUSED_UNTIL_ANNOTATION, "2026-13-25T15:00:00Z", "must be an RFC 3339 time"),
        (OVERRIDE_ANNOTATION, "20", "must be min=N,max=M,until=TIME"),
        (OVERRIDE_ANNOTATION, "min=2,min=3,until=2026-11-25T15:00:00Z", "must be min=N"),
        (OVERRIDE_ANNOTATION, "min=2,replicas=3,until=2026-11-25T15:00:00Z", "must be min=N"),
        (OVERRIDE_ANNOTATION, "min=2", "until is required"),
        (OVERRIDE_ANNOTATION, "max=2,until=2026-11-25T15:00:00Z", "min is required"),
        (OVERRIDE_ANNOTATION, "min=0,until=2026-11-25T15:00:00Z", "min must be an integer from 1"),
        (OVERRIDE_ANNOTATION, "min=-3,until=2026-11-25T15:00:00Z", "min must be an integer"),
        (OVERRIDE_ANNOTATION, "min=2147483648,until=2026-11-25T15:00:00Z", "min must be"),
        (
            OVERRIDE_ANNOTATION,
            "min=5,max=4,until=2026-11-25T15:00:00Z",
            "max must be an integer from min (5)",
        ),
        (OVERRIDE_ANNOTATION, "min=5,until=2h", "until must be an RFC 3339 time"),
        # In the year 10000 and the year 0 in UTC: the controller failed on them.
        (PAUSED_UNTIL_ANNOTATION, "9999-12-31T23:00:00-05:00", "within the years 1 to 9999"),
        (
            OVERRIDE_ANNOTATION,
            "min=5,until=0001-01-01T00:00:00+05:00",
            "until must be an RFC 3339 time within the years 1 to 9999 in UTC",
        ),
    ],
)
def test_a_malformed_value_is_ignored_with_an_error_naming_its_annotation(
    annotation: str, value: str, message: str
) -> None:
    incident = incident_at({annotation: value}, base_max=10, instant=0)
    assert incident.pause is None
    assert incident.override is None
    [error] = incident.errors
    assert error.field == f'metadata.annotations["{annotation}"]'
    assert message in error.message


def test_one_malformed_annotation_leaves_the_other_in_force() -> None:
    incident = incident_at(
        {
            PAUSED_UNTIL_ANNOTATION: "soon",
            OVERRIDE_ANNOTATION: f"min=4,until={format_instant(END)}",
        },
        base_max=10,
        instant=0,
    )
    assert incident.override == Override(4, 10, END)
    assert [error.field for error in incident.errors] == [
        f'metadata.annotations["{PAUSED_UNTIL_ANNOTATION}"]'
    ]


def test_no_annotations_no_incident() -> None:
    assert incident_at(None, base_max=1, instant=0) == incident_at({}, base_max=1, instant=0)
    assert incident_at({"other": "x"}, base_max=1, instant=0).wake_at is None


@pytest.mark.parametrize(
    ("text", "seconds"), [("2h", 7200), ("1h30m", 5400), ("90s", 90), ("1.5ms", 1)]
)
def test_for_durations_are_go_durations_in_whole_seconds(text: str, seconds: int) -> None:
    assert parse_for(text) == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2 hours", "is not a duration"),
        ("1d", "is not a duration"),
        ("0", "more than 0"),
        ("745h", "at most 744h"),
        ("99999999999999999999h", "at most 744h"),
    ],
)
def test_bad_for_durations_say_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_for(text)
