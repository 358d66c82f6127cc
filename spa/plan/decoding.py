"""Manifest text to JSON values, read exactly the way kubectl reads it before sending it.

`spa plan` promises that a file it accepts is a file `kubectl apply` accepts, and that every
value it checks is the value the API server will receive. kubectl does not read YAML 1.2, nor
the YAML 1.1 that PyYAML implements: it reads go-yaml v2's dialect (through sigs.k8s.io/yaml and
apimachinery's YAMLOrJSONDecoder), then round-trips the result through JSON. So `12:00` and
`2026-12-25` are strings, `yes`/`no`/`on`/`off`/`y`/`n` are booleans, `010` is 8, `1e3` is the
integer 1000, `.inf` is an error, and a 5,000-digit number is a string. docs/plan-input.md
lists every rule and why it is hand-written here; tests/unit/plan/test_decoding.py (values recorded
from kubectl) and tests/integration/test_plan_parity.py (the live kubectl) keep them honest.

libyaml (PyYAML's C parser, or PyYAML's pure-Python parser where libyaml is missing) only
tokenises; the composition into values is done here, iteratively, because PyYAML's composers
recurse (its C composer overflows the C stack on 30,000 nested brackets) and resolve scalars by
other rules. Composing ourselves also lets the limits be enforced while reading: nesting depth,
and alias expansion by go-yaml's own rule, so an alias bomb is refused after a few thousand
events instead of being expanded.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import yaml

from spa.api.validation.messages import WrittenNumber

__all__ = ["MAX_DEPTH", "Decoded", "Failed", "decode_stream"]

MAX_DEPTH = 500
"""Deepest nesting of lists and objects read, the top-level object counted (kubectl's parser
stops at 10,000; no Kubernetes object comes near either, and libyaml's cost per character grows
with the depth). It is the project's own and lower than libyaml's (1,000 levels since libyaml
0.2.6; none before), so the same input gets the same error whichever PyYAML is installed."""

_LIBYAML_DEPTH_PROBLEM = "exceeded maximum nesting depth"

_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1

# PyYAML's C-backed loader when libyaml is there; only its event parser is used.
_Parser: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class Decoded:
    """One document that was read: its 1-based number in the file and its JSON value."""

    index: int
    value: object


@dataclass(frozen=True, slots=True)
class Failed:
    """A document that could not be read; `path` is the field being read, if known, and
    `value` the document as far as it was read, the bad value left out (None if not read
    whole), so that the object it belongs to can be named."""

    index: int
    message: str
    path: str | None = None
    value: object = None


class _Failure(Exception):
    def __init__(self, message: str, path: str | None = None, mark: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.mark = mark
        self.value: object = None  # the document, if it was read whole


class _NotJson:
    """A value kubectl reads but cannot send (NaN, infinity), kept in the document until it is
    read whole: a later duplicate key may replace it (`{a: .nan, a: 1}`), and then kubectl, which
    converts to JSON only the final value, sends the document (docs/plan-input.md)."""

    __slots__ = ("mark", "message", "path")

    def __init__(self, message: str, mark: Any) -> None:
        self.message, self.mark = message, mark
        self.path: str | None = None


def decode_stream(text: str) -> Iterator[Decoded | Failed]:
    """Every document of a file or of standard input, in order, as kubectl would read them.

    Empty documents (only comments, or `null`) are skipped and not numbered. A broken document
    is reported and reading goes on with the next one, except where kubectl itself cannot find
    where the next one starts (a JSON stream that breaks after its second value).
    """
    position = _skip(text, 0, " \t\r\n")
    index = 0
    if text.startswith("{", position):
        # apimachinery's YAMLOrJSONDecoder: a stream that starts with `{` is JSON values, one
        # after another; if the first or second does not parse, the rest is read as YAML.
        decoded = 0
        while True:
            position = _skip(text, position, " \t\r\n")
            if position >= len(text):
                return
            numbers = _JsonNumbers()
            try:
                value, end = numbers.decoder.raw_decode(text, position)
            except (ValueError, RecursionError) as error:
                if decoded > 1:
                    yield Failed(index + 1, _json_problem(error, text, position))
                    return
                break
            decoded += 1
            start, position = position, end
            if numbers.out_of_range:
                index += 1
                yield Failed(
                    index,
                    f"the number {_shown(numbers.out_of_range)} is out of range (kubectl "
                    "reads a JSON number as a float64)"
                    + _line_of(text, numbers.out_of_range, start, end),
                    _out_of_range_path(value),
                    value,
                )
            elif value is not None:
                index += 1
                yield Decoded(index, value)
    for chunk in _chunks(text, position):
        if chunk.error is not None:
            index += 1
            yield Failed(index, f"{chunk.error} (line {chunk.first_line})")
            continue
        try:
            value = _compose_first_document(chunk.text)
        except _Failure as failure:
            index += 1
            where = ""
            if failure.mark is not None:
                line = chunk.first_line + failure.mark.line
                where = f" (line {line}, column {failure.mark.column + 1})"
            yield Failed(index, failure.message + where, failure.path, failure.value)
            continue
        if value is not None:
            index += 1
            yield Decoded(index, value)


def _skip(text: str, position: int, characters: str) -> int:
    while position < len(text) and text[position] in characters:
        position += 1
    return position


# -- JSON ---------------------------------------------------------------------------------------


class _JsonNumbers:
    """Numbers as kubectl's JSON decoding leaves them: integers within int64 stay integers,
    other numbers become float64 (and whole ones are integers again once re-encoded); a
    number beyond float64 is an error. NaN and Infinity are not JSON."""

    def __init__(self) -> None:
        self.out_of_range = ""
        self.decoder = json.JSONDecoder(
            parse_int=self._integer, parse_float=self._float, parse_constant=self._constant
        )

    def _integer(self, text: str) -> object:
        digits = text.lstrip("-")
        if len(digits) <= 19:
            value = int(text)
            if _INT64_MIN <= value <= _INT64_MAX:
                return value
        number = self._float(text)  # beyond int64: a float64 in kubectl
        return WrittenNumber(number, text) if isinstance(number, float) else number

    def _float(self, text: str) -> object:
        value = float(text)
        if math.isinf(value):
            if self.out_of_range:
                return None
            self.out_of_range = text
            return _OutOfRange()  # the first one, in the order written
        return _whole(value)

    @staticmethod
    def _constant(text: str) -> object:
        raise ValueError(f"{text} is not JSON")


class _OutOfRange:
    """Where the first number beyond float64 of a JSON value was, until its path is known."""


def _out_of_range_path(value: object) -> str | None:
    """The path of the first number beyond float64 in a decoded JSON value (`spec.minReplicas`,
    `items[2].spec.maxReplicas[1]`), which is taken out of the value (None in its place)."""
    pending: list[tuple[object, str]] = [(value, "")]
    while pending:
        current, path = pending.pop()
        children: list[tuple[object, str, Any]] = []
        if isinstance(current, dict):
            children = [
                (child, f"{path}.{key}" if path else str(key), key)
                for key, child in current.items()
            ]
        elif isinstance(current, list):
            children = [(child, f"{path}[{n}]", n) for n, child in enumerate(current)]
        for child, where, key in children:
            if isinstance(child, _OutOfRange):
                current[key] = None  # type: ignore[index]
                return where
        pending.extend((child, where) for child, where, _ in reversed(children))
    return None


def _line_of(text: str, number: str, start: int, end: int) -> str:
    """` (line N)` of the first place the number `number` is written in `text[start:end]`, not
    inside a string (nothing if it cannot be told)."""
    found = re.search(rf'(?<![\w."]){re.escape(number)}(?![\w."])', text[start:end])
    if found is None:
        return ""
    return f" (line {text.count(chr(10), 0, start + found.start()) + 1})"


def _json_problem(error: BaseException, text: str, position: int) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
    if isinstance(error, RecursionError):
        line = text.count("\n", 0, position) + 1
        return f"invalid JSON: nested too deeply (the value starting on line {line})"
    return f"invalid JSON: {error}"


# -- Cutting YAML into documents ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Chunk:
    first_line: int
    text: str
    error: str | None = None


def _chunks(text: str, start: int) -> Iterator[_Chunk]:
    """apimachinery's YAMLReader: a document ends at a line that starts with `---`, which may be
    followed by a comment only; each document is then parsed on its own, so one broken
    document does not hide the next."""
    base_line = text.count("\n", 0, start) + 1
    lines = text[start:].split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    buffer: list[str] = []
    first_line = base_line
    for offset, raw in enumerate(lines):
        line = raw.removesuffix("\r")
        number = base_line + offset
        if line.startswith("---"):
            rest = line[3:].strip()
            if rest and not rest.startswith("#"):
                if buffer:
                    yield _Chunk(first_line, "".join(buffer))
                    buffer = []
                yield _Chunk(
                    number,
                    "",
                    f"invalid document separator: only a comment may follow '---', "
                    f"found {_shown(rest)}",
                )
                continue
            if buffer:
                yield _Chunk(first_line, "".join(buffer))
                buffer = []
                continue
        if not buffer:
            first_line = number
        buffer.append(line + "\n")
    if buffer:
        yield _Chunk(first_line, "".join(buffer))


# -- Composing one YAML document ------------------------------------------------------------------

_TAG = "tag:yaml.org,2002:"
_STR, _BOOL, _INT, _FLOAT = (f"{_TAG}{name}" for name in ("str", "bool", "int", "float"))
_NULL, _TIMESTAMP, _BINARY, _MERGE = (
    f"{_TAG}{name}" for name in ("null", "timestamp", "binary", "merge")
)
_RESOLVABLE = frozenset({"", _STR, _BOOL, _INT, _FLOAT, _NULL, _TIMESTAMP})

# What a resolved scalar is in go-yaml (Go's dynamic type), which decides how it is written as
# a JSON key and as a JSON value.
_K_STR, _K_BOOL, _K_INT, _K_UINT, _K_FLOAT, _K_NULL = "str", "bool", "int", "uint", "float", "null"
_KIND_TAG = {
    _K_STR: _STR,
    _K_BOOL: _BOOL,
    _K_INT: _INT,
    _K_UINT: _INT,
    _K_FLOAT: _FLOAT,
    _K_NULL: _NULL,
}

# go-yaml v2 resolve.go: the first character decides what a plain scalar may be.
_HINT = {
    **dict.fromkeys("+-", "S"),
    **dict.fromkeys("0123456789", "D"),
    **dict.fromkeys("yYnNtTfFoO~", "M"),
    ".": ".",
}
_TRUE = ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
_FALSE = ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
_WORDS: dict[str, tuple[str, object]] = {
    **dict.fromkeys(_TRUE, (_K_BOOL, True)),
    **dict.fromkeys(_FALSE, (_K_BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (_K_NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (_K_FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (_K_FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (_K_FLOAT, -math.inf)),
}
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")
_LONE_UNDERSCORE = re.compile(r"(?<![0-9])_|_(?![0-9])")
# Go's strconv.ParseInt(s, 0, 64) after go-yaml removed every underscore.
_GO_INTEGER = re.compile(
    r"(?P<sign>[+-]?)(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[oO](?P<oct>[0-7]+)|0[bB](?P<bin>[01]+)"
    r"|0(?P<legacy>[0-7]+)|(?P<dec>0|[1-9][0-9]*))\Z"
)
_GO_BINARY = re.compile(r"[+-]?[01]+\Z")
# A plain scalar that go-yaml would read as a decimal integer, had it fitted in 64 bits.
_INTEGER_TEXT = re.compile(r"[-+]?[0-9][0-9_]*\Z")
_TIMESTAMP_SHAPE = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?:(?P<t>[Tt])|(?P<space> ))(?P<H>[0-9]{1,2}):(?P<M>[0-9]{1,2}):(?P<S>[0-9]{1,2})"
    r"(?:\.[0-9]{1,9})?(?P<zone>Z|[+-][0-9]{2}:[0-9]{2})?)?\Z"
)


def _go_integer(text: str, *, signed: bool) -> int | None:
    match = _GO_INTEGER.match(text)
    if match is None or (not signed and match["sign"]):
        return None
    group, base = next(
        (group, base)
        for group, base in (("hex", 16), ("oct", 8), ("bin", 2), ("legacy", 8), ("dec", 10))
        if match[group] is not None
    )
    digits = match[group].lstrip("0") or "0"
    if len(digits) > 64:  # beyond 64 bits in any base; also keeps int() away from huge inputs
        return None
    value = int(digits, base) * (-1 if match["sign"] == "-" else 1)
    low, high = (_INT64_MIN, _INT64_MAX) if signed else (0, _UINT64_MAX)
    return value if low <= value <= high else None


def _is_timestamp(text: str) -> bool:
    match = _TIMESTAMP_SHAPE.match(text)
    if match is None or (match["space"] and match["zone"]) or (match["t"] and not match["zone"]):
        return False
    try:
        datetime(int(match["y"]), int(match["m"]), int(match["d"]))
    except ValueError:
        return False
    if match["H"] is None:
        return True
    return int(match["H"]) < 24 and int(match["M"]) < 60 and int(match["S"]) < 60


def _implicit(text: str, tag: str) -> tuple[str, object]:
    """go-yaml v2's `resolve` for a plain scalar, or for a scalar with a resolvable tag."""
    hint = "N" if text == "" else _HINT.get(text[0])
    if hint is None:
        return _K_STR, text
    word = _WORDS.get(text)
    if word is not None:
        return word
    if hint == ".":
        # strconv.ParseFloat on the text as written: an underscore only between two digits.
        if _DOT_FLOAT.match(text.replace("_", "")) and not _LONE_UNDERSCORE.search(text):
            number = float(text.replace("_", ""))
            if not math.isinf(number):
                return _K_FLOAT, number
    elif hint in "DS":
        if tag in ("", _TIMESTAMP) and _is_timestamp(text):
            return _TIMESTAMP, text  # kept as the text it was written as
        plain = text.replace("_", "")
        for signed, kind in ((True, _K_INT), (False, _K_UINT)):
            integer = _go_integer(plain, signed=signed)
            if integer is not None:
                return kind, integer
        if _YAML_FLOAT.match(plain):
            number = float(plain)
            if not math.isinf(number):
                return _K_FLOAT, number
        binary = None
        if plain.startswith("0b"):
            binary = plain[2:]
        elif plain.startswith("-0b"):
            binary = "-" + plain[3:]
        if binary is not None and _GO_BINARY.match(binary) and len(binary) <= 66:
            integer = int(binary, 2)
            if _INT64_MIN <= integer <= _INT64_MAX:
                return _K_INT, integer
            if integer <= _UINT64_MAX and binary[0] not in "+-":
                return _K_UINT, integer
    return _K_STR, text


def _resolve(event: yaml.ScalarEvent) -> tuple[str, object]:
    """The Go type and value go-yaml gives a scalar decoded into interface{}."""
    tag = event.tag or ""
    text = event.value
    if not tag and not event.implicit[0]:
        return _K_STR, text  # quoted
    if tag == _BINARY:
        try:
            data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
        except (binascii.Error, ValueError):
            raise _Failure("the !!binary value is not base64", mark=event.start_mark) from None
        return _K_STR, data.decode("utf-8", errors="replace")
    if tag not in _RESOLVABLE or tag == _STR:
        return _K_STR, text  # other tags (!foo, !!set, !!merge ...) leave the text
    kind, value = _implicit(text, tag)
    if tag == "" or _KIND_TAG.get(kind, kind) == tag:
        return kind, value
    if tag == _FLOAT and kind == _K_INT:
        return _K_FLOAT, float(value)  # type: ignore[arg-type]
    short = "!!" + tag.removeprefix(_TAG)
    raise _Failure(f"{_shown(text)} is not a valid {short}", mark=event.start_mark)


def _whole(number: float) -> object:
    # kubectl re-encodes float64 as JSON, whole numbers below 1e21 in positional notation with
    # the shortest digits that identify the float (1000.0 is written `1000`, 2**63 is written
    # `9223372036854776000`), and decodes that with int64 preferred: what fits in int64 reaches
    # the API server as an integer. Python's repr has the same shortest digits.
    if number.is_integer() and abs(number) < 1e21:
        written = int(Decimal(repr(number)))
        if _INT64_MIN <= written <= _INT64_MAX:
            return written
    return number


def _json_value(kind: str, value: object, event: yaml.ScalarEvent) -> object:
    if kind == _K_FLOAT:
        assert isinstance(value, float)
        if math.isnan(value) or math.isinf(value):
            return _NotJson(
                f"{_shown(event.value)} is not a number JSON can carry (quote it if it is text)",
                event.start_mark,
            )
        number = _whole(value)
        if isinstance(number, float) and _INTEGER_TEXT.match(event.value):
            return WrittenNumber(number, event.value)  # an integer beyond int64
        return number
    if kind == _K_UINT:
        # Beyond int64: a float64 in kubectl.
        return WrittenNumber(float(value), event.value)  # type: ignore[arg-type]
    return value


def _go_float32_text(number: float) -> str:
    """strconv.FormatFloat(x, 'g', -1, 32), which sigs.k8s.io/yaml uses for float keys."""
    if math.isnan(number):
        return ".nan"
    try:
        single = struct.unpack("f", struct.pack("f", number))[0]
    except OverflowError:
        single = math.copysign(math.inf, number)
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for precision in range(1, 10):
        text = f"{single:.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent_text = text.split("e")
    digits = mantissa.replace(".", "").lstrip("-").rstrip("0") or "0"
    sign = "-" if single < 0 else ""
    exponent = int(exponent_text)
    if exponent < -4 or exponent >= 6:  # Go's rule for the shortest form
        fraction = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{fraction}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    whole, fraction = digits[: exponent + 1], digits[exponent + 1 :]
    whole = whole.ljust(exponent + 1, "0")
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"


def _key_text(kind: str, value: object, shown: str, mark: Any) -> str:
    """sigs.k8s.io/yaml's conversion of a map key to the string JSON needs."""
    if kind in (_K_STR, _TIMESTAMP):
        return str(value)
    if kind == _K_BOOL:
        return "true" if value else "false"
    if kind == _K_INT:
        return str(value)
    if kind == _K_FLOAT:
        assert isinstance(value, float)
        return _go_float32_text(value)
    if kind == _K_NULL:
        raise _Failure("a key cannot be null (~, null or nothing): quote it", mark=mark)
    raise _Failure(f"the key {shown} is too large a number for kubectl: quote it", mark=mark)


@dataclass(slots=True)
class _Anchor:
    value: object  # of a list or an object
    scalar: tuple[str, object, yaml.ScalarEvent] | None  # (kind, value, event) of a scalar
    size: int
    is_mapping: bool
    open: bool


class _Frame:
    __slots__ = ("anchor", "items", "key", "key_ready", "mapping", "merge", "start_count")

    def __init__(self, mapping: bool, anchor: str | None, start_count: int) -> None:
        self.mapping = mapping
        self.items: Any = {} if mapping else []
        self.key: str | None = None
        self.key_ready = False
        self.merge = False
        self.anchor = anchor
        self.start_count = start_count


_PATH_PARTS_SHOWN = 8

# go-yaml v2 decode.go: how much of a document may come from alias expansion.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    spread = (decodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)
    return 0.99 - 0.89 * spread


class _Composer:
    """Builds one document's value from parser events, with go-yaml v2's semantics."""

    def __init__(self, placeholder: str | None = None) -> None:
        self.placeholder = placeholder
        self.stack: list[_Frame] = []
        self.anchors: dict[str, _Anchor] = {}
        self.root: object = None
        self.not_json: list[_NotJson] = []
        # go-yaml counts every node it decodes (the document itself included), and those that
        # come from expanding an alias; a document made mostly of expansions is refused.
        self.decodes = 1
        self.aliased = 0

    def path(self) -> str | None:
        """The field being read, like `spec.excludeDates[0]`; a deep one is shortened."""
        parts: list[str] = []
        for frame in self.stack:
            if frame.mapping:
                if frame.key_ready and frame.key is not None:
                    key = frame.key if len(frame.key) <= 40 else f"{frame.key[:40]}..."
                    parts.append(f".{key}" if parts else key)
                else:
                    break
            else:
                parts.append(f"[{len(frame.items)}]")
        if len(parts) > _PATH_PARTS_SHOWN:
            hidden = len(parts) - _PATH_PARTS_SHOWN
            parts[_PATH_PARTS_SHOWN:] = [f"...({hidden:,} levels more)"]
        return "".join(parts) or None

    def count(self, decodes: int, aliased: int, mark: Any) -> None:
        self.decodes += decodes
        self.aliased += aliased
        if (
            self.aliased > 100
            and self.decodes > 1000
            and self.aliased / self.decodes > _allowed_alias_ratio(self.decodes)
        ):
            raise _Failure(
                f"aliases expand to {self.aliased:,} of the {self.decodes:,} values read so "
                "far: kubectl refuses a document made mostly of alias expansions",
                mark=mark,
            )

    def _expecting_key(self) -> bool:
        return bool(self.stack) and self.stack[-1].mapping and not self.stack[-1].key_ready

    def scalar(self, event: yaml.ScalarEvent) -> None:
        if self.placeholder is not None and self.placeholder in event.value:
            event.value = event.value.replace(self.placeholder, ":")
        expecting_key = self._expecting_key()
        merge = (event.tag is None and event.implicit[0]) or event.tag == _MERGE
        if expecting_key and event.value == "<<" and merge:
            frame = self.stack[-1]
            frame.merge = frame.key_ready = True
            return
        self.count(1, 0, event.start_mark)
        kind, value = _resolve(event)
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(None, (kind, value, event), 1, False, False)
        self._scalar(kind, value, event, event.start_mark, via_alias=False)

    def _scalar(
        self, kind: str, value: object, event: yaml.ScalarEvent, mark: Any, *, via_alias: bool
    ) -> None:
        if self._expecting_key():
            frame = self.stack[-1]
            frame.key = _key_text(kind, value, _shown(event.value), mark)
            frame.key_ready = True
        else:
            json_value = _json_value(kind, value, event)
            if isinstance(json_value, _NotJson):
                json_value.path, json_value.mark = self.path(), mark
                self.not_json.append(json_value)
            self._attach(json_value, mark, via_alias=via_alias, is_mapping=False)

    def check_json(self) -> None:
        """Refuse the document if a value JSON cannot carry is still in it, the first one
        written; replaced ones are gone, as in kubectl. Walks the document only if it read one."""
        if not self.not_json:
            return
        left: set[int] = set()
        pending: list[object] = [self.root]
        seen: set[int] = set()
        while pending:
            value = pending.pop()
            if isinstance(value, _NotJson):
                left.add(id(value))
            elif isinstance(value, dict | list) and id(value) not in seen:
                seen.add(id(value))
                pending.extend(value.values() if isinstance(value, dict) else value)
        for found in self.not_json:
            if id(found) in left:
                failure = _Failure(found.message, found.path, found.mark)
                failure.value = self.root
                raise failure

    def alias(self, event: yaml.AliasEvent) -> None:
        anchor = self.anchors.get(event.anchor or "")
        if anchor is None:
            raise _Failure(
                f"the alias *{event.anchor} has no anchor &{event.anchor} before it",
                mark=event.start_mark,
            )
        if anchor.open:
            raise _Failure(
                f"the alias *{event.anchor} is inside the value it refers to",
                mark=event.start_mark,
            )
        self.count(1 + anchor.size, anchor.size, event.start_mark)
        if anchor.scalar is not None:
            kind, value, scalar = anchor.scalar
            self._scalar(kind, value, scalar, event.start_mark, via_alias=True)
        elif self._expecting_key():
            raise _Failure("a list or an object cannot be a key", mark=event.start_mark)
        else:
            self._attach(
                anchor.value, event.start_mark, via_alias=True, is_mapping=anchor.is_mapping
            )

    def start_mapping(self, event: yaml.MappingStartEvent) -> None:
        self._start(event, mapping=True)

    def start_sequence(self, event: yaml.SequenceStartEvent) -> None:
        self._start(event, mapping=False)

    def _start(self, event: yaml.CollectionStartEvent, *, mapping: bool) -> None:
        if self._expecting_key():
            raise _Failure("a list or an object cannot be a key", mark=event.start_mark)
        if len(self.stack) >= MAX_DEPTH:
            raise _Failure(f"nested deeper than {MAX_DEPTH:,} levels", mark=event.start_mark)
        start_count = self.decodes
        parent = self.stack[-1] if self.stack else None
        # go-yaml does not count a list given to `<<`, only its elements.
        if mapping or parent is None or not parent.merge:
            self.count(1, 0, event.start_mark)
        frame = _Frame(mapping, event.anchor, start_count)
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(None, None, 0, mapping, True)
        self.stack.append(frame)

    def end(self, event: yaml.Event) -> None:
        frame = self.stack.pop()
        if frame.anchor is not None:
            anchor = self.anchors.get(frame.anchor)
            if anchor is not None and anchor.open:
                anchor.value, anchor.open = frame.items, False
                anchor.size = self.decodes - frame.start_count
        self._attach(frame.items, event.start_mark, via_alias=False, is_mapping=frame.mapping)

    def _attach(self, value: object, mark: Any, *, via_alias: bool, is_mapping: bool) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        if not frame.mapping:
            frame.items.append(value)
            return
        if frame.merge:
            self._merge(frame, value, mark, via_alias=via_alias, is_mapping=is_mapping)
            frame.merge = frame.key_ready = False
            return
        frame.items[frame.key] = value  # a later duplicate wins, as in kubectl
        frame.key, frame.key_ready = None, False

    def _merge(
        self, frame: _Frame, value: object, mark: Any, *, via_alias: bool, is_mapping: bool
    ) -> None:
        problem = "'<<' (merge) takes an object or a list of objects"
        if isinstance(value, dict) and is_mapping:
            frame.items.update(value)
        elif isinstance(value, list) and not via_alias:
            if not all(isinstance(member, dict) for member in value):
                raise _Failure(problem, mark=mark)
            for member in reversed(value):  # earlier ones win
                frame.items.update(member)
        else:
            raise _Failure(problem, mark=mark)


def _compose_first_document(text: str) -> object:
    """The value of the first YAML document in `text` (kubectl reads no further), or None."""
    # libyaml refuses a `:` followed by `,` `[` `]` `{` `}` or `?` inside a flow collection
    # (`[a:, b]`), where go-yaml keeps the `:` in the plain scalar. Such a `:` is replaced by a
    # character the text does not hold, and put back in the scalar: the same value as kubectl's.
    placeholder = next(chr(code) for code in range(0xE000, 0xF900) if chr(code) not in text)
    for _ in range(_MOST_FLOW_COLONS):
        try:
            return _compose(text, placeholder)
        except _FlowColon as colon:
            text = text[: colon.index] + placeholder + text[colon.index + 1 :]
    return _compose(text, None)


_MOST_FLOW_COLONS = 100


class _FlowColon(Exception):
    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _compose(text: str, placeholder: str | None) -> object:
    try:
        return _compose_with(_Parser, text, placeholder)
    except _LibyamlTooDeep:
        # libyaml scans a flow collection ahead of the events it hands over, so it can stop at
        # its own limit (1,000 levels) before this composer sees level MAX_DEPTH + 1. PyYAML's
        # own parser has no limit: it reads the document again, and MAX_DEPTH is reported at
        # its place, the same message as for any other depth.
        return _compose_with(yaml.SafeLoader, text, placeholder)


class _LibyamlTooDeep(Exception):
    pass


def _compose_with(parser_class: Any, text: str, placeholder: str | None) -> object:
    parser = parser_class(text)
    composer = _Composer(placeholder)
    handlers: dict[type, Any] = {
        yaml.ScalarEvent: composer.scalar,
        yaml.MappingStartEvent: composer.start_mapping,
        yaml.SequenceStartEvent: composer.start_sequence,
        yaml.MappingEndEvent: composer.end,
        yaml.SequenceEndEvent: composer.end,
        yaml.AliasEvent: composer.alias,
    }
    try:
        while True:
            event = parser.get_event()
            handler = handlers.get(type(event))
            if handler is not None:
                handler(event)
            elif isinstance(event, yaml.DocumentStartEvent):
                if event.version not in (None, (1, 1)):
                    major, minor = event.version
                    raise _Failure(
                        f"the document declares %YAML {major}.{minor}; kubectl reads only 1.1",
                        mark=event.start_mark,
                    )
            elif isinstance(event, yaml.DocumentEndEvent | yaml.StreamEndEvent):
                composer.check_json()
                return composer.root
    except _Failure as failure:
        failure.path = failure.path or composer.path()
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context
        if problem == "found unexpected ':'" and placeholder is not None and mark is not None:
            raise _FlowColon(mark.index) from None
        if problem == _LIBYAML_DEPTH_PROBLEM and parser_class is not yaml.SafeLoader:
            raise _LibyamlTooDeep from None
        raise _Failure(f"invalid YAML: {problem}", composer.path(), mark) from None
    except yaml.YAMLError as error:
        raise _Failure(f"invalid YAML: {_reader_problem(error)}") from None
    finally:
        parser.dispose()


def _reader_problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.reader.ReaderError):
        return f"{error.reason} (character {error.position + 1})"
    return str(error).splitlines()[0]


def _shown(text: str, limit: int = 40) -> str:
    """A value quoted for a message, never longer than about `limit` characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"
