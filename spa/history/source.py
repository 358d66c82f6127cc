"""Which series `spa suggest` and `spa backtest` ask Prometheus for, and what they make of the
answer: one grid of needed replicas per autoscaler, or the reason there is none.

By default the history is kube-state-metrics' `kube_horizontalpodautoscaler_status_desired_replicas`
(what the HPA wanted), the most of it in each step; `--query` replaces it with any PromQL of
replicas, or of a load with `--per-pod` (what one replica serves). Series are matched to
autoscalers by kube-state-metrics' labels `namespace` and `horizontalpodautoscaler`, except
that a query for one autoscaler may return one series with any labels. A label selector (`-l`,
kubectl's syntax) is matched against the HPA's labels as kube-state-metrics exports them
(`kube_horizontalpodautoscaler_labels`, `label_<name>`). docs/suggest.md, "Reading the
history", is the contract.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from spa.api.hpa import INT32_MAX
from spa.history.need import Need, NeedError, counter_resets, gaps, needed_replicas
from spa.history.prometheus import (
    EXIT_BAD_QUERY,
    EXIT_DATA,
    Connection,
    Opener,
    PrometheusError,
    Series,
    query_instant,
    query_range,
)

__all__ = [
    "DESIRED",
    "IDENTITY",
    "Histories",
    "Key",
    "Selection",
    "SelectorError",
    "Source",
    "label_matchers",
    "read_histories",
]

DESIRED = "kube_horizontalpodautoscaler_status_desired_replicas"
MIN_REPLICAS = "kube_horizontalpodautoscaler_spec_min_replicas"
LABELS = "kube_horizontalpodautoscaler_labels"
IDENTITY = ("namespace", "horizontalpodautoscaler")
_BY = "namespace, horizontalpodautoscaler"
_LEAST_KNOWN = 0.5
"""An autoscaler needs data for at least this share of the range."""

Key = tuple[str, str]
"""(namespace, name) of an autoscaler (its HPA has the same name)."""


class SelectorError(ValueError):
    """A label selector that is not kubectl's syntax (the message says where)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The autoscalers asked for: `autoscalers` by name, or those whose HPA's labels match
    `selector`, or `everything`."""

    autoscalers: tuple[Key, ...] = ()
    selector: str | None = None
    everything: bool = False


@dataclass(frozen=True, slots=True)
class Source:
    """What the history is: `query` (None: the HPA's desired replicas), and `per_pod` when
    its values are a load rather than replicas."""

    query: str | None = None
    per_pod: float | None = None

    def describe(self) -> str:
        if self.query is None:
            return f"{DESIRED} (kube-state-metrics)"
        if self.per_pod is not None:
            return f"{self.query} / {self.per_pod:g} per replica"
        return self.query


@dataclass(slots=True)
class Histories:
    query: str
    """The PromQL asked (each step's most of the history)."""
    needs: dict[Key, Need] = field(default_factory=dict)
    bases: dict[Key, int] = field(default_factory=dict)
    """The HPA's minReplicas, the lowest of the range, where kube-state-metrics has it."""
    errors: dict[Key, str] = field(default_factory=dict)
    """Autoscalers without a usable history, and why."""
    notes: dict[Key, list[str]] = field(default_factory=dict)
    """What the history lacks that the analysis went without (gaps)."""
    warnings: list[str] = field(default_factory=list)


def history_query(selection: Selection, source: Source, *, step: int) -> str:
    """The PromQL of the history: the most of each step."""
    if source.query is None:
        inner = f"max by ({_BY}) (max_over_time({DESIRED}{_identity(selection)}[{step}s]))"
    else:
        resolution = min(60, step)
        inner = f"max_over_time(({source.query})[{step}s:{resolution}s])"
    if selection.selector is not None:
        matchers = ",".join(label_matchers(selection.selector))
        inner = f"({inner}) and on({_BY}) {LABELS}{{{matchers}}}"
    return inner


def base_query(selection: Selection, *, seconds: int) -> str:
    return f"min by ({_BY}) (min_over_time({MIN_REPLICAS}{_identity(selection)}[{seconds}s]))"


def _identity(selection: Selection) -> str:
    """The matchers of the named autoscalers (every pair of their namespaces and names:
    the answer is filtered), or none."""
    if not selection.autoscalers:
        return ""
    namespaces = sorted({namespace for namespace, _ in selection.autoscalers})
    names = sorted({name for _, name in selection.autoscalers})
    return (
        f'{{namespace=~"{"|".join(map(_regex, namespaces))}",'
        f'horizontalpodautoscaler=~"{"|".join(map(_regex, names))}"}}'
    )


def _regex(text: str) -> str:
    return _string(re.escape(text))


def _string(text: str) -> str:
    """`text` inside a PromQL double-quoted string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


_SELECTOR_KEY = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$")


def label_matchers(selector: str) -> list[str]:
    """kubectl's label selector (`team=shop,tier!=batch`, `env in (a,b)`, `env notin (a)`,
    `key`, `!key`) as matchers on the `label_<name>` labels of kube-state-metrics (every
    character other than a letter, a digit or `_` of a name becomes `_`, as it writes
    them). SelectorError for anything else."""
    requirements = _split(selector)
    matchers = []
    for requirement in requirements:
        text = requirement.strip()
        if not text:
            raise SelectorError(f"'{selector}': an empty requirement (two commas?)")
        found = re.fullmatch(r"(\S+?)\s+(in|notin)\s*\((.*)\)", text)
        if found is not None:
            key, operator, values = found.groups()
            listed = [value.strip() for value in values.split(",")]
            if not all(listed):
                raise SelectorError(f"'{text}': an empty value in the list")
            alternatives = "|".join(_regex(value) for value in listed)
            matchers.append(f'{_label(key)}{"=~" if operator == "in" else "!~"}"{alternatives}"')
            continue
        found = re.fullmatch(r"([^=!\s]+)\s*(==|=|!=)\s*(\S*)", text)
        if found is not None:
            key, operator, value = found.groups()
            matchers.append(f'{_label(key)}{"!=" if operator == "!=" else "="}"{_string(value)}"')
            continue
        if text.startswith("!"):
            matchers.append(f'{_label(text[1:].strip())}=""')
            continue
        if re.fullmatch(r"\S+", text):
            matchers.append(f'{_label(text)}!=""')
            continue
        raise SelectorError(
            f"'{text}' is not a label requirement such as team=shop, tier!=batch, "
            "env in (a,b) or env"
        )
    return matchers


def _split(selector: str) -> list[str]:
    """The requirements of a selector: split at commas outside parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for character in selector:
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"'{selector}': a ')' without its '('")
        if character == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(character)
    if depth:
        raise SelectorError(f"'{selector}': a '(' without its ')'")
    parts.append("".join(current))
    return parts


def _label(key: str) -> str:
    if not _SELECTOR_KEY.fullmatch(key) or key.count("/") > 1:
        raise SelectorError(f"'{key}' is not a label name")
    return "label_" + re.sub(r"[^A-Za-z0-9_]", "_", key)


def read_histories(
    connection: Connection,
    selection: Selection,
    source: Source,
    *,
    start: int,
    until: int,
    step: int,
    opener: Opener | None = None,
) -> Histories:
    """The history of every autoscaler selected over `[start, until)`, or why it has none.
    PrometheusError when the query as a whole fails or returns nothing usable."""
    query = history_query(selection, source, step=step)
    histories = Histories(query=query)
    count = (until - start) // step
    series = query_range(
        connection, query, start=start + step, end=start + count * step, step=step,
        opener=opener, warnings=histories.warnings,
    )  # fmt: skip
    window = f"between {_time(start)} and {_time(until)}"
    if not series:
        raise PrometheusError(
            f"the query returned no series {window}: {query} (is kube-state-metrics scraped? "
            "are the names, the selector or the query right?)",
            EXIT_DATA,
        )
    found = _by_autoscaler(series, selection, source, query)
    for key in selection.autoscalers:
        if key not in found:
            histories.errors[key] = f"no history {window} in the answer to {query}"
    for key, points in sorted(found.items()):
        if selection.autoscalers and key not in selection.autoscalers:
            continue
        if isinstance(points, str):
            histories.errors[key] = points
            continue
        try:
            need = needed_replicas(
                points, start=start, step=step, count=count, per_pod=source.per_pod
            )
        except NeedError as error:
            histories.errors[key] = error.message
            continue
        problem = _problem(need, source)
        if problem is not None:
            histories.errors[key] = problem
            continue
        histories.needs[key] = need
        missing = gaps(need, shortest=max(2, 3600 // step))
        if missing:
            histories.notes[key] = [
                f"No data from {_time(a)} to {_time(b)} ({_duration(b - a)}): left out."
                for a, b in missing
            ]
    if source.query is None or histories.needs:
        histories.bases = _bases(connection, selection, start=start, until=until, opener=opener)
    return histories


def _by_autoscaler(
    series: Sequence[Series], selection: Selection, source: Source, query: str
) -> dict[Key, Iterable[tuple[int, float]] | str]:
    """The points of each autoscaler's series, or why there is no one series for it."""
    if len(selection.autoscalers) == 1 and source.query is not None:
        # One autoscaler asked by name with its own query: its one series, whatever its labels.
        [key] = selection.autoscalers
        identified = [s for s in series if _key(s) == key]
        chosen = identified or list(series)
        if len({tuple(sorted(s.labels.items())) for s in chosen}) > 1:
            return {key: _several(chosen)}
        return {key: _points(chosen)}
    grouped: dict[Key, list[Series]] = {}
    for one in series:
        found = _key(one)
        if found is None:
            raise PrometheusError(
                f"a series of the answer has no {' and '.join(IDENTITY)} labels "
                f"({_labels_text(one.labels)}): with -A, -l or several --autoscaler, the query "
                f"must keep them, e.g. sum by ({_BY}) (...)",
                EXIT_BAD_QUERY,
            )
        grouped.setdefault(found, []).append(one)
    result: dict[Key, Iterable[tuple[int, float]] | str] = {}
    for key, members in grouped.items():
        if len({tuple(sorted(s.labels.items())) for s in members}) > 1:
            result[key] = _several(members)
        else:
            result[key] = _points(members)
    del query
    return result


def _points(members: Sequence[Series]) -> Iterator[tuple[int, float]]:
    """The points of the series of one autoscaler (they have the same labels: one series),
    one at a time: a list of them for every autoscaler of a fleet would be gigabytes."""
    for one in members:
        yield from zip(one.times, one.values, strict=True)


def _several(members: Sequence[Series]) -> str:
    distinct = {tuple(sorted(s.labels.items())): s for s in members}
    shown = "; ".join(_labels_text(dict(labels)) for labels in list(distinct)[:3])
    more = f" and {len(distinct) - 3} more" if len(distinct) > 3 else ""
    return (
        f"the query returned {len(distinct)} series for it ({shown}{more}): aggregate them "
        f"into one, e.g. sum by ({_BY}) (...)"
    )


def _key(series: Series) -> Key | None:
    namespace = series.labels.get(IDENTITY[0])
    name = series.labels.get(IDENTITY[1])
    if namespace is None or name is None:
        return None
    return namespace, name


def _labels_text(labels: dict[str, str]) -> str:
    if not labels:
        return "{}"
    text = "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    return text if len(text) <= 120 else f"{text[:120]}...}}"


def _problem(need: Need, source: Source) -> str | None:
    """Why the grid cannot be the history of replicas needed, or None."""
    known = sum(1 for value in need.values if value is not None)
    if known < _LEAST_KNOWN * len(need.values):
        share = 100 * known / max(1, len(need.values))
        return (
            f"data for only {share:.0f} % of the range (at least {_LEAST_KNOWN:.0%} is needed "
            "to tell what recurs): a longer --weeks, or a query with fewer gaps"
        )
    resets = counter_resets(need)
    if resets is not None:
        hint = (
            f"ask for its rate, e.g. sum by ({_BY}) (rate(...[5m])) with --per-pod"
            if source.query is not None
            else "this is not what kube-state-metrics exports"
        )
        return (
            f"the series looks like a counter (it only grows, and falls back at {resets} "
            f"restart(s)), not replicas or a load: {hint}"
        )
    return None


def _bases(
    connection: Connection, selection: Selection, *, start: int, until: int, opener: Opener | None
) -> dict[Key, int]:
    found = query_instant(
        connection, base_query(selection, seconds=until - start), at=until, opener=opener
    )
    bases: dict[Key, int] = {}
    for labels, value in found:
        namespace, name = labels.get(IDENTITY[0]), labels.get(IDENTITY[1])
        # A value no HPA's minReplicas can be (NaN, infinite, beyond int32) is no base.
        if namespace is not None and name is not None and 0 <= value <= INT32_MAX:
            bases[(namespace, name)] = int(value)
    return bases


def _time(instant: int) -> str:
    return datetime.fromtimestamp(instant, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if hours and minutes:
        return f"{hours} h {minutes} min"
    return f"{hours} h" if hours else f"{minutes} min"
