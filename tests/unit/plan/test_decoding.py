"""The manifest reader against kubectl: every value read as kubectl reads it, documents cut where
kubectl cuts them, and the limits that keep any input cheap.

The table of values kubectl reads (tests/unit/kubectl_scalars.py) is checked here against the
reader, and by tests/integration/test_plan_parity.py against the real kubectl.
"""

from __future__ import annotations

import math
import time
import tracemalloc

import pytest
import yaml

from spa.api.validation.messages import WrittenNumber
from spa.plan import decoding
from spa.plan.decoding import MAX_DEPTH, Decoded, Failed, decode_stream
from tests.unit.kubectl_scalars import REFUSED, SCALARS, same


def read_value(value: str) -> object:
    """spec.v of a one-document file, or REFUSED."""
    [result] = decode_stream(f"apiVersion: v1\nkind: Schedule\nspec:\n  v: {value}\n")
    if isinstance(result, Failed):
        return REFUSED
    assert isinstance(result.value, dict)
    return result.value["spec"].get("v", "<absent>")


@pytest.mark.parametrize(("value", "expected"), SCALARS, ids=[value for value, _ in SCALARS])
def test_values_are_read_as_kubectl_reads_them(value: str, expected: object) -> None:
    found = read_value(value)
    if expected is REFUSED:
        assert found is REFUSED
    else:
        assert same(found, expected), (found, expected)


def documents(text: str) -> list[tuple[int, object]]:
    """(document number, value or the Failed message) of every document."""
    return [
        (result.index, result.value if isinstance(result, Decoded) else result.message)
        for result in decode_stream(text)
    ]


# -- Structure, each case checked with kubectl v1.36.4 ----------------------------------------


def test_merge_keys_follow_go_yaml() -> None:
    # An explicit key before `<<` is overridden, one after it wins; in a list of merges the
    # earlier mapping wins. Unquoted y is a boolean key, "true" (and n would be "false").
    [(_, value)] = documents(
        "base: &b {x: 1, k: 2}\n"
        "m: {x: 0, <<: *b}\n"
        "r: {<<: *b, x: 0}\n"
        "o: {<<: [*b, {k: 9, z: 3}]}\n"
        "p: {'<<': {a: 1}}\n"
        "q: {!!merge '<<': {a: 1}}\n"
        "y: 1\n"
    )
    assert value == {
        "base": {"x": 1, "k": 2},
        "m": {"x": 1, "k": 2},
        "r": {"x": 0, "k": 2},
        "o": {"x": 1, "k": 2, "z": 3},
        "p": {"<<": {"a": 1}},
        "q": {"a": 1},
        "true": 1,
    }


@pytest.mark.parametrize(
    "text",
    [
        "m: {<<: [1]}",
        "m: {<<: ~}",
        "a: &a [1]\nm: {<<: *a}",
        "a: &a 5\nm: {<<: *a}",
        "? [a]\n: 1",
        "a: &a [1]\n*a : 1",
        "~: 1",
        "18446744073709551615: 1",
        "a: &x {b: *x}",
        "a: *nope",
        "a: !!int 1.5",
        "a: !!bool 1",
        "a: !!null x",
        "a: !!float 1e400",
        "a: !!binary '!!!'",
        "a: !!timestamp foo",
        "%YAML 1.2\n--- a: 1",
        "a: .nan",
    ],
)
def test_documents_kubectl_refuses_are_refused(text: str) -> None:
    results = list(decode_stream(text + "\n"))
    assert results
    assert all(isinstance(result, Failed) for result in results)
    assert all(len(result.message) < 200 for result in results)  # type: ignore[union-attr]


def test_a_version_directive_stands_alone_before_the_separator() -> None:
    # kubectl cuts before `---`, so `%YAML 1.1` is a document without content: an error.
    found = documents("%YAML 1.1\n---\na: 1\n")
    assert "did not find expected <document start>" in str(found[0][1])
    assert found[1] == (2, {"a": 1})


def test_a_document_ends_at_a_line_starting_with_three_dashes() -> None:
    assert documents("a: 1\n---\nb: 2\n--- # comment\nc: 3\n---\n---\n") == [
        (1, {"a": 1}),
        (2, {"b": 2}),
        (3, {"c": 3}),
    ]


def test_a_broken_document_is_reported_and_the_next_one_still_read() -> None:
    found = documents("a: 1\n---\nx: b: c\n---\nc: 3\n")
    assert found[0] == (1, {"a": 1})
    assert found[1][0] == 2
    assert str(found[1][1]) == (
        "invalid YAML: mapping values are not allowed in this context (line 3, column 5)"
    )
    assert found[2] == (3, {"c": 3})


def test_text_after_a_separator_is_refused() -> None:
    found = documents("a: 1\n--- {b: 1}\nc: 3\n")
    assert found[0] == (1, {"a": 1})
    assert "only a comment may follow '---'" in str(found[1][1])
    assert found[2] == (3, {"c": 3})


def test_only_the_first_yaml_document_of_a_piece_counts() -> None:
    # kubectl cuts only at `---` lines; after `...` the rest of the piece is never read.
    assert documents("a: 1\n...\ngarbage: [\n---\nb: 2\n") == [(1, {"a": 1}), (2, {"b": 2})]


def test_comment_only_and_null_documents_are_skipped_and_not_numbered() -> None:
    assert documents("# header\n---\na: 1\n---\n~\n---\nb: 2\n") == [(1, {"a": 1}), (2, {"b": 2})]


def test_crlf_line_ends() -> None:
    assert documents("a: 1\r\n---\r\nb: '2'\r\n") == [(1, {"a": 1}), (2, {"b": "2"})]


def test_a_stream_starting_with_a_brace_is_json() -> None:
    # JSON keeps its own rules: a number too large for float64 is an error, not text.
    found = documents('{"a": 1.0, "b": 12345678901234567890123}\n{"c": 1e400}\n{"d": [1]}')
    assert found[0] == (1, {"a": 1, "b": 1.2345678901234568e22})
    assert found[1][0] == 2
    assert "out of range" in str(found[1][1])
    assert found[2] == (3, {"d": [1]})


def test_a_json_number_out_of_range_names_its_field_and_line() -> None:
    # It named no object, field or line: in a file of a hundred objects, find it.
    text = '{"a": 1}\n{"kind": "X",\n "spec": {"n": [1, "1e400", 1e400], "m": 1e401}}'
    [_, failed] = decode_stream(text)
    assert isinstance(failed, Failed)
    assert (failed.index, failed.path) == (2, "spec.n[2]")
    assert failed.message == (
        "the number '1e400' is out of range (kubectl reads a JSON number as a float64) (line 3)"
    )
    # The rest of the document is kept (to name the object), the bad numbers taken out.
    assert failed.value == {"kind": "X", "spec": {"n": [1, "1e400", None], "m": None}}


def test_a_brace_that_is_not_json_is_read_as_yaml() -> None:
    assert documents("{a: yes, b: NaN}") == [(1, {"a": True, "b": "NaN"})]
    assert documents('{"a": 1}\n---\nb: on\n') == [(1, {"a": 1}), (2, {"b": True})]


def test_json_that_breaks_after_two_values_stops_the_stream() -> None:
    found = documents('{"a": 1}\n{"b": 2}\n---\nc: 3\n')
    assert found[:2] == [(1, {"a": 1}), (2, {"b": 2})]
    assert len(found) == 3
    assert "invalid JSON" in str(found[2][1])


# -- Limits ------------------------------------------------------------------------------------


def nested(levels: int) -> str:
    """An object (one level) holding lists nested to `levels` levels in all."""
    return "v: " + "[" * (levels - 1) + "]" * (levels - 1)


@pytest.mark.parametrize("parser", ["libyaml", "pure Python"])
def test_nesting_is_limited_by_our_limit_whichever_parser_reads(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PyYAML 6.0.4's libyaml stops at 1,000 levels with a message of its own; the project's
    # limit is lower, so both parsers give the same answer at the same depth.
    if parser == "pure Python":
        monkeypatch.setattr(decoding, "_Parser", yaml.SafeLoader)
    elif decoding._Parser is yaml.SafeLoader:
        pytest.skip("PyYAML was built without libyaml")
    [(_, value)] = documents(nested(MAX_DEPTH))
    assert isinstance(value, dict)
    [(_, message)] = documents(nested(MAX_DEPTH + 1))
    assert message == f"nested deeper than {MAX_DEPTH:,} levels (line 1, column {MAX_DEPTH + 3})"


def test_deeper_than_libyamls_own_limit_is_the_same_error() -> None:
    # libyaml scans a flow collection ahead and stops at its 1,000 levels before the composer
    # sees level MAX_DEPTH + 1; the error must still be ours, at the same place.
    [shallow] = decode_stream(nested(MAX_DEPTH + 1))
    [deep] = decode_stream(nested(30_000))
    assert deep == shallow
    assert isinstance(deep, Failed)
    assert deep.path == "v" + "[0]" * 7 + f"...({MAX_DEPTH - 8} levels more)"


def test_thirty_thousand_brackets_fail_fast_with_a_short_message() -> None:
    started = time.monotonic()
    [result] = decode_stream("v: " + "[" * 30000 + "]" * 30000 + "\n")
    assert time.monotonic() - started < 5
    assert isinstance(result, Failed)
    assert result.path is not None
    assert len(result.path) < 120
    assert len(result.message) < 120


def _alias_document(k: int, m: int, levels: int, plain: int) -> str:
    lines = ["plain: [" + ", ".join(["p"] * plain) + "]", "l0: &l0 [" + ", ".join(["x"] * k) + "]"]
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * m) + "]" for n in range(1, levels + 1)]
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n"
    return head + "".join(f"  {line}\n" for line in lines)


@pytest.mark.parametrize(
    ("shape", "accepted"),
    [
        # (k, m, levels, plain): the first of each pair is refused by kubectl, one more plain
        # value before the anchors and it is accepted: go-yaml's alias ratio, to the value.
        ((10, 10, 3, 74), False),
        ((10, 10, 3, 75), True),
        ((3, 20, 3, 348), False),
        ((3, 20, 3, 349), True),
        ((5, 7, 4, 150), False),
        ((5, 7, 4, 151), True),
        ((1, 40, 3, 1878), False),
        ((1, 40, 3, 1879), True),
    ],
)
def test_alias_expansion_is_limited_exactly_as_kubectl_limits_it(
    shape: tuple[int, int, int, int], accepted: bool
) -> None:
    [result] = decode_stream(_alias_document(*shape))
    assert isinstance(result, Decoded) is accepted


def test_an_alias_bomb_is_refused_fast_and_small() -> None:
    # Nine merges of nine merges ... of nine keys: 1 KB of YAML that PyYAML's merge flattening
    # (and spa plan before it read YAML itself) took minutes and gigabytes over.
    lines = ["a0: &a0 {" + ", ".join(f"k{n}: v" for n in range(9)) + "}"]
    lines += [f"a{n}: &a{n} {{<<: [" + ", ".join([f"*a{n - 1}"] * 9) + "]}" for n in range(1, 9)]
    tracemalloc.start()
    started = time.monotonic()
    try:
        [result] = decode_stream("\n".join(lines) + "\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 5
    assert peak < 5_000_000
    assert isinstance(result, Failed)
    assert "alias" in result.message


def test_huge_numbers_are_text_and_never_reach_int() -> None:
    # Python's int() refuses more than 4,300 digits; kubectl reads this as a string.
    assert read_value("1" * 5000) == "1" * 5000
    assert read_value("0x" + "f" * 5000) == "0x" + "f" * 5000
    assert read_value("0x" + "0" * 5000 + "1") == 1
    assert math.isinf(float("1" * 400))
    assert read_value("1" * 400) == "1" * 400


@pytest.mark.parametrize(
    "written",
    ["12345678901234567890123456789012", "9223372036854775808", "-9223372036854775809", "1_0" * 10],
)
def test_an_integer_beyond_int64_is_kubectls_float_that_keeps_its_text(written: str) -> None:
    # kubectl sends it as a float64; the text is kept so that a message shows what was written
    # (spa.api.validation.messages), not 1.2345678901234567e+31.
    found = read_value(written)
    assert isinstance(found, WrittenNumber)
    assert (found, found.text) == (float(written.replace("_", "")), written)
    [(_, aliased)] = documents(f"a: &n {written}\nb: *n\n")
    assert isinstance(aliased, dict)
    assert aliased["b"].text == written
    [(_, json)] = documents(f'{{"a": {written.replace("_", "")}}}')
    assert isinstance(json, dict)
    assert json["a"].text == written.replace("_", "")


def test_other_numbers_keep_no_text() -> None:
    for written in ("1e30", "123.5", "5", "9223372036854775807"):
        assert not isinstance(read_value(written), WrittenNumber), written


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{a: .nan, a: 1}", {"a": 1}),
        ("{a: [.inf], a: 2}", {"a": 2}),
        ("{a: .NaN, a: N, c: x}", {"a": False, "c": "x"}),
        ("{a: .nan}", None),
        ("{a: &x .nan, b: *x, b: 1}", None),  # the anchor's own place still holds it
        ("[1, -.inf]", None),
    ],
)
def test_a_value_json_cannot_carry_counts_only_if_it_is_still_there(
    value: str, expected: object
) -> None:
    # kubectl converts the final value to JSON: a NaN a later duplicate key replaced is gone
    # (found by make test-parity; docs/plan-input.md).
    [read] = decode_stream(f"kind: Schedule\nspec:\n  v: {value}\n")
    if expected is None:
        assert isinstance(read, Failed)
        assert "is not a number JSON can carry" in read.message
        assert read.path is not None
        assert read.path.startswith("spec.v")
    else:
        assert isinstance(read, Decoded)
        assert read.value["spec"]["v"] == expected
