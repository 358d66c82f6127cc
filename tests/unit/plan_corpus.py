"""Inputs for `spa plan`: the seeds that once broke it, and generators of manifests.

Shared by the fuzz tests (tests/unit/plan/test_plan_input.py: nothing crashes, hangs or grows) and
the parity test against the API server (tests/integration/test_plan_parity.py: `spa plan` and
`kubectl apply --dry-run=server` accept and refuse the same documents).

A generated manifest is YAML text, not a dict, so that reading YAML is part of what is tested:
a valid ScheduledPodAutoscaler, Schedule, Calendar or ClusterCalendar in block style, then a
few mutations that replace a value with one of the tokens that YAML, kubectl and the schema
disagree about most (`12:00`, `yes`, `0x10`, `"5"`, `1e3`, `~`, dates, huge numbers ...), drop
a field, add a misspelt one, or add a status.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NAME = "__NAME__"
"""Placeholder for metadata.name; the parity test gives each document its own."""

TARGET = "web"
"""The ScheduledPodAutoscaler every generated Schedule targets."""

GROUP_VERSION = "autoscaling.d-kuro.github.io/v1"

TARGET_AUTOSCALER = f"""\
apiVersion: {GROUP_VERSION}
kind: ScheduledPodAutoscaler
metadata:
  name: {TARGET}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {TARGET}}}
    minReplicas: 3
    maxReplicas: 10
"""


def _deep_brackets(depth: int) -> str:
    return "[" * depth + "]" * depth


def _merge_bomb() -> str:
    lines = ["a0: &a0 {" + ", ".join(f"k{n}: v" for n in range(9)) + "}"]
    lines += [f"a{n}: &a{n} {{<<: [" + ", ".join([f"*a{n - 1}"] * 9) + "]}" for n in range(1, 9)]
    return "".join(f"    {line}\n" for line in lines)


def _schedule(spec: str, name: str = "noon") -> str:
    return (
        f"apiVersion: {GROUP_VERSION}\nkind: Schedule\nmetadata:\n  name: {name}\nspec:\n"
        f"  scaleTargetRef: {{name: {TARGET}}}\n{spec}"
    )


_DAILY = "  type: Daily\n  startTime: '12:00'\n  endTime: '13:00'\n"

SEEDS: dict[str, str] = {
    "unquoted times": _schedule("  type: Daily\n  startTime: 12:00\n  endTime: 13:00\n"),
    "30k nested brackets": _schedule(_DAILY + f"  minReplicas: {_deep_brackets(30000)}\n"),
    "5000-digit integer": _schedule(_DAILY + "  minReplicas: " + "1" * 5000 + "\n"),
    "merge bomb": _schedule(_DAILY + "  x-bomb:\n" + _merge_bomb()),
    "70 KB value": _schedule(_DAILY + "  timeZone: " + "x" * 70000 + "\n"),
    "70 KB key": _schedule(_DAILY + "  " + "k" * 70000 + ": 1\n"),
    "end beyond the calendar": _schedule(
        "  type: OneShot\n  startTime: '2026-01-01T00:00'\n  endTime: '9999-12-31T23:59'\n"
        "  timeZone: Pacific/Honolulu\n"
    ),
    "start before the calendar": _schedule(
        "  type: OneShot\n  startTime: '0001-01-01T00:00'\n  endTime: '2026-01-01T00:00'\n"
        "  timeZone: Asia/Tokyo\n"
    ),
    "strings for numbers and booleans": _schedule(
        _DAILY + "  minReplicas: '5'\n  suspend: 'yes'\n"
    ),
    "typos": _schedule(
        "  type: Daily\n  startTime: '12:00'\n  endtime: '13:00'\n  timeZone: Europe/Londn\n"
    ),
    "infinity": _schedule(_DAILY + "  minReplicas: .inf\n"),
    "null key": _schedule(_DAILY + "  ~: 1\n"),
    "list as key": _schedule(_DAILY + "  ? [a]\n  : 1\n"),
    "self alias": _schedule(_DAILY + "  x: &x {y: *x}\n"),
    "unknown alias": _schedule(_DAILY + "  x: *nope\n"),
    "bad separator": _schedule(_DAILY) + "--- {a: 1}\n",
    "YAML 1.2": "%YAML 1.2\n" + _schedule(_DAILY),
    "nested List": "kind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n",
    "List of scalars": "apiVersion: v1\nkind: List\nitems: [1, ~, [2]]\n",
    "items not a list": "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
    "scalar document": "hello\n",
    "JSON breaking after two values": '{"a": 1}\n{"b": 2}\n{"c": \n',
    "JSON out of range": '{"apiVersion": "v1", "kind": "X", "n": 1e400}',
    "JSON deep": '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
    "binary noise": "\x00\x01\x02 \ufffe",
    "tabs": "a:\t1\n\tb: 2\n",
    "huge status": _schedule(_DAILY + "status:\n  bogus: " + "z" * 5000 + "\n"),
    "weird name": _schedule(_DAILY, name="'" + "N" * 300 + "'"),
    "many bad items": (
        f"apiVersion: {GROUP_VERSION}\nkind: ScheduledPodAutoscaler\nmetadata: {{name: m}}\n"
        "spec:\n  horizontalPodAutoscalerSpec:\n"
        "    scaleTargetRef: {kind: Deployment, name: m}\n    maxReplicas: 3\n"
        "    metrics: [" + ", ".join(["{type: Nope}"] * 20000) + "]\n"
    ),
}
"""Inputs that once crashed, hung, exhausted memory or produced unreadable errors."""

# -- Generated manifests --------------------------------------------------------------------------

Tree = dict[str, Any]
"""A manifest as nested dicts whose leaves are YAML text, pasted as written."""

TIMES = ["'12:00'", "12:00", "'7:05'", "23:59", "'24:00'", "'12:60'", "1200", "'noon'"]
DATETIMES = [
    "'2026-03-08T09:00'",
    "2026-03-08T09:00",
    "'2026-03-08 09:00'",
    "2026-02-30T10:00",
    "'2026-12-25'",
    "2026-12-25",
    "'0001-01-01T00:00'",
    "'9999-12-31T23:59'",
]
DATES = ["2026-12-25", "'2026-12-26'", "2026-02-30", "'2026-1-5'", "2027-01-01", "20261225"]
CRONS = [
    "'0 9 * * MON-FRI'",
    "'*/15 8-18 * * 1-5'",
    "'@daily'",
    "'@reboot'",
    "'0 9 * *'",
    "'0 0 9 * * *'",
    "'61 9 * * *'",
    "'0 9 L * *'",
    "'0 9 * * MON-XYZ'",
]
DURATIONS = ["8h", "90m", "1h30m", "30s", "745h", "1d", "'1.5h'", "0h"]
COUNTRIES = ["DE", "US", "JP", "XX", "de", "DEU"]
SUBDIVISIONS = ["BY", "CA", "ZZ", "''"]
ZONES = ["Asia/Tokyo", "UTC", "Europe/London", "America/New_York", "''", "Europe/Londn", "CEST"]
DAYS = ["Monday", "Friday", "Sunday", "''", "monday", "Mon"]
TOKENS = [
    *TIMES,
    *DATETIMES[:4],
    "yes",
    "'yes'",
    "no",
    "on",
    "off",
    "y",
    "n",
    "true",
    "false",
    "'true'",
    "0x10",
    "1e3",
    "1.0",
    "1.5",
    "~",
    "null",
    "''",
    "010",
    "08",
    "0o10",
    "1_000",
    "5",
    "'5'",
    "0",
    "-1",
    "2147483647",
    "2147483648",
    "9223372036854775808",
    "1" * 30,
    "Weekly",
    "weekly",
    "Daily",
    "OneShot",
    "WeeklySpan",
    "Cron",
    "Monday",
    "Asia/Tokyo",
    "web",
    "500m",
    "'1e3'",
    "1Gi",
    "[]",
    "{}",
    "'0.5'",
    "0.5",
    "-500m",
    "1800",
    "1801",
    "3601",
    "[1]",
    "{a: 1}",
    "!!str 5",
    "!!int '5'",
    "'" + "x" * 1100 + "'",
]
"""Values YAML, kubectl and the schema disagree about most; each replaces a field's value."""

INVALID_NAMES = ["Bad_Name", "''", "'-x'", "yes", "123", "'" + "a" * 254 + "'", "'a..b'"]


def _autoscaler(draw: st.DrawFn) -> Tree:
    spec: Tree = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "app"},
        "minReplicas": draw(st.sampled_from(["1", "3", "10"])),
        "maxReplicas": draw(st.sampled_from(["10", "20"])),
    }
    if draw(st.booleans()):
        target = draw(
            st.sampled_from(
                [
                    {"type": "Utilization", "averageUtilization": "70"},
                    {"type": "AverageValue", "averageValue": "'500m'"},
                    {"type": "Value", "value": "1000"},
                    {"type": "AverageValue", "averageValue": "1.5"},
                    {"type": "Value", "value": "'1e3'"},
                ]
            )
        )
        metric = {"name": "requests", "selector": {"matchLabels": {"app": "web"}}}
        spec["metrics"] = [
            draw(
                st.sampled_from(
                    [
                        {"type": "Resource", "resource": {"name": "cpu", "target": target}},
                        {"type": "Pods", "pods": {"metric": metric, "target": target}},
                        {"type": "External", "external": {"metric": metric, "target": target}},
                        {
                            "type": "Object",
                            "object": {
                                "describedObject": {"kind": "Service", "name": "web"},
                                "metric": {"name": "hits"},
                                "target": target,
                            },
                        },
                        {
                            "type": "ContainerResource",
                            "containerResource": {
                                "name": "memory",
                                "container": "app",
                                "target": target,
                            },
                        },
                    ]
                )
            )
        ]
    if draw(st.booleans()):
        rules = {
            "stabilizationWindowSeconds": draw(st.sampled_from(["300", "0", "3600"])),
            "selectPolicy": draw(st.sampled_from(["Max", "Min", "Disabled"])),
            "policies": [{"type": "Percent", "value": "10", "periodSeconds": "60"}],
        }
        spec["behavior"] = {draw(st.sampled_from(["scaleDown", "scaleUp"])): rules}
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ScheduledPodAutoscaler",
        "metadata": {"name": NAME},
        "spec": {"horizontalPodAutoscalerSpec": spec},
    }


def _schedule_tree(draw: st.DrawFn) -> Tree:
    kind = draw(st.sampled_from(["Daily", "Weekly", "OneShot", "WeeklySpan", "Cron"]))
    spec: Tree = {"scaleTargetRef": {"name": TARGET}, "type": kind}
    if kind == "Cron":
        spec["schedule"] = draw(st.sampled_from([CRONS[0]] * 6 + CRONS))
        spec["duration"] = draw(st.sampled_from([DURATIONS[0]] * 6 + DURATIONS))
    else:
        times = DATETIMES if kind == "OneShot" else TIMES
        # Mostly valid times, so that a mutation elsewhere is what decides.
        end = "'2026-03-09T18:00'" if kind == "OneShot" else "'18:00'"
        spec["startTime"] = draw(st.sampled_from([times[0]] * 8 + times))
        spec["endTime"] = draw(st.sampled_from([end] * 8 + times))
    if kind in ("Weekly", "WeeklySpan"):
        spec["startDayOfWeek"] = draw(st.sampled_from(DAYS[:3] * 5 + DAYS))
        spec["endDayOfWeek"] = draw(st.sampled_from(DAYS[:3] * 5 + DAYS))
    # The calendar fields, mostly valid (OneShot refuses the bounds).
    for field in ("startDate", "endDate"):
        if draw(st.sampled_from([False] * 3 + [True])):
            spec[field] = draw(st.sampled_from([DATES[0]] * 4 + DATES))
    if draw(st.sampled_from([False] * 3 + [True])):
        spec["excludeDates"] = draw(
            st.lists(st.sampled_from([DATES[0]] * 4 + DATES), min_size=0, max_size=3)
        )
    if draw(st.sampled_from([False] * 3 + [True])):
        spec["holidays"] = draw(
            st.fixed_dictionaries(
                {"country": st.sampled_from(COUNTRIES)},
                optional={
                    "subdivision": st.sampled_from(SUBDIVISIONS),
                    "mode": st.sampled_from(["Skip", "Only", "skip", "Never"]),
                },
            )
        )
    if draw(st.sampled_from([False] * 3 + [True])):
        spec["calendars"] = draw(st.lists(_calendar_reference(), min_size=0, max_size=2))
    if draw(st.booleans()):
        spec["timeZone"] = draw(st.sampled_from(ZONES))
    if draw(st.booleans()):
        spec["minReplicas"] = draw(st.sampled_from(["5", "1", "20"]))
    if draw(st.booleans()):
        spec["maxReplicas"] = draw(st.sampled_from(["20", "5", "30"]))
    if draw(st.booleans()):
        spec["suspend"] = draw(st.sampled_from(["false", "true"]))
    if draw(st.booleans()):
        spec["description"] = "'peak'"
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "Schedule",
        "metadata": {"name": NAME},
        "spec": spec,
    }


def _calendar_reference() -> st.SearchStrategy[Tree]:
    """A Schedule's reference to a shared calendar (none of them among the manifests: the API
    server does not check references, so `spa plan`'s "not found" is its own knowledge)."""
    return st.fixed_dictionaries(
        {"name": st.sampled_from(["closed", "closed", "black-friday", "''", "Bad_Name"])},
        optional={
            "kind": st.sampled_from(["ClusterCalendar", "Calendar", "calendar", "Holiday"]),
            "mode": st.sampled_from(["Only", "Skip", "only", "Never"]),
        },
    )


def _calendar_tree(draw: st.DrawFn) -> Tree:
    """A Calendar or ClusterCalendar, mostly valid: a few dates, ranges, maybe holidays."""
    spec: Tree = {}
    valid = [DATES[0], DATES[4]]
    if draw(st.booleans()):
        spec["dates"] = draw(st.lists(st.sampled_from(valid * 4 + DATES), max_size=3))
    if draw(st.booleans()):
        spec["dateRanges"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "start": st.sampled_from([DATES[0]] * 4 + DATES),
                        "end": st.sampled_from([DATES[4]] * 4 + DATES),
                    }
                ),
                max_size=2,
            )
        )
    if draw(st.sampled_from([False] * 3 + [True])):
        spec["holidays"] = draw(
            st.fixed_dictionaries(
                {"country": st.sampled_from(COUNTRIES)},
                optional={"subdivision": st.sampled_from(SUBDIVISIONS)},
            )
        )
    if draw(st.booleans()):
        spec["description"] = "'retail peak'"
    return {
        "apiVersion": GROUP_VERSION,
        "kind": draw(st.sampled_from(["ClusterCalendar", "Calendar"])),
        "metadata": {"name": NAME},
        "spec": spec,
    }


def _paths(tree: Tree | list[Any], prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every mutable place in the tree, and in the objects and lists in it (not apiVersion,
    kind, metadata)."""
    found: list[tuple[Any, ...]] = []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for key, value in items:
        if not prefix and key in ("apiVersion", "kind", "metadata"):
            continue
        found.append((*prefix, key))
        if isinstance(value, dict | list):
            found.extend(_paths(value, (*prefix, key)))
    return found


def _parent(tree: Tree, path: tuple[Any, ...]) -> Any:
    node: Any = tree
    for part in path[:-1]:
        node = node[part]
    return node


def _misspelt(draw: st.DrawFn, key: str) -> str:
    return draw(
        st.sampled_from([key.lower(), key[:-1] or "x", key + "s", key.upper(), "bogus", "x-extra"])
    )


def _mutate(draw: st.DrawFn, tree: Tree) -> None:
    paths = _paths(tree)
    if not paths:
        return
    path = draw(st.sampled_from(paths))
    parent, key = _parent(tree, path), path[-1]
    operation = draw(st.sampled_from(["value", "value", "value", "drop", "misspell", "add"]))
    if operation == "value":
        parent[key] = draw(st.sampled_from(TOKENS))
    elif operation == "drop" and isinstance(parent, dict):
        del parent[key]
    elif operation == "misspell" and isinstance(parent, dict):
        parent[_misspelt(draw, str(key))] = parent.pop(key)
    elif operation == "add" and isinstance(parent, dict):
        parent[_misspelt(draw, str(key))] = draw(st.sampled_from(TOKENS))


def _render(tree: Any, indent: int = 0) -> str:
    pad = " " * indent
    if isinstance(tree, dict):
        if not tree:
            return " {}\n"
        lines = "".join(f"{pad}{key}:{_render(value, indent + 2)}" for key, value in tree.items())
        return "\n" + lines if indent else lines
    if isinstance(tree, list):
        if not tree:
            return " []\n"
        out = "\n"
        for item in tree:
            body = _render(item, indent + 2)
            out += f"{pad}-" + (
                " " + body.lstrip("\n").lstrip() if isinstance(item, dict) else body
            )
        return out
    return f" {tree}\n"


@st.composite
def manifests(draw: st.DrawFn, *, max_mutations: int = 3) -> str:
    """One ScheduledPodAutoscaler, Schedule, Calendar or ClusterCalendar document, with
    metadata.name NAME."""
    kind = draw(st.sampled_from(["Schedule", "Schedule", "Autoscaler", "Autoscaler", "Calendar"]))
    tree = {"Schedule": _schedule_tree, "Autoscaler": _autoscaler, "Calendar": _calendar_tree}[
        kind
    ](draw)
    # About a third unchanged, so that both verdicts are common.
    for _ in range(draw(st.sampled_from([0, 0, *range(max_mutations + 1)]))):
        _mutate(draw, tree)
    # Rare on purpose; hypothesis favours the first of the choices it is given.
    if draw(st.sampled_from([False] * 19 + [True])):
        tree["metadata"]["name"] = draw(st.sampled_from(INVALID_NAMES))
    if draw(st.sampled_from([False] * 9 + [True])):
        tree["status"] = draw(
            st.sampled_from(
                [{"condition": "Available"}, {"condition": "Weird"}, {"bogus": "1"}, {}]
            )
        )
    return _render(tree)


@st.composite
def files(draw: st.DrawFn) -> str:
    """A whole file: generated manifests, seeds and debris, cut by separators."""
    parts = draw(
        st.lists(
            st.one_of(
                manifests().map(lambda text: text.replace(NAME, "m")),
                st.sampled_from(sorted(SEEDS.values(), key=len)[:20]),
                st.text(alphabet="{}[]:,-?&*!|>'\"#%@` \n\tabc01.~<", max_size=60),
            ),
            min_size=1,
            max_size=4,
        )
    )
    separator = draw(st.sampled_from(["---\n", "--- # c\n", "...\n---\n", "---"]))
    return separator.join(parts)
