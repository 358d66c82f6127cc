"""Inputs for `spa plan`: the seeds that once broke it, manifests as a newcomer writes them with
what the plan must say of each (`NEWCOMER`), and generators of manifests.

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


# -- Newcomer inputs ------------------------------------------------------------------------------

_SHOP_AUTOSCALER = TARGET_AUTOSCALER.replace("  name: web\n", "  name: web\n  namespace: shop\n")


def _newcomer(spec: str, *more: str) -> str:
    """The SPA shop/web, a Schedule `s` of it with `spec` (indented lines), and `more`
    documents."""
    schedule = (
        f"apiVersion: {GROUP_VERSION}\nkind: Schedule\nmetadata: {{name: s, namespace: shop}}\n"
        f"spec:\n  scaleTargetRef: {{name: web}}\n{spec}"
    )
    return "---\n".join([_SHOP_AUTOSCALER, schedule, *more])


_NINE_TO_FIVE = "  type: Daily\n  startTime: '09:00'\n  endTime: '17:00'\n"


def _document(name: str, spec: str) -> str:
    """Another Schedule of shop/web, `name`, with `spec` (indented lines)."""
    return (
        f"apiVersion: {GROUP_VERSION}\nkind: Schedule\n"
        f"metadata: {{name: {name}, namespace: shop}}\n"
        f"spec:\n  scaleTargetRef: {{name: web}}\n{spec}"
    )


NEWCOMER: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (the file, what the plan must say: fragments of its errors and warnings, in
    # order; none for a file that plans cleanly)
    "unquoted times are text": (
        _newcomer("  type: Daily\n  startTime: 08:00\n  endTime: 18:30\n"),
        (),
    ),
    "yes is true": (_newcomer(_NINE_TO_FIVE + "  suspend: yes\n"), ()),
    "BOM and CRLF": ("\ufeff" + _newcomer(_NINE_TO_FIVE).replace("\n", "\r\n"), ()),
    "empty documents and comments": (
        "---\n---\n# only a comment\n---\n" + _newcomer(_NINE_TO_FIVE) + "---\n",
        (),
    ),
    "a List of kubectl get": (
        "apiVersion: v1\nkind: List\nitems:\n"
        + "".join(
            "- " + "\n  ".join(document.strip("\n").split("\n")) + "\n"
            for document in _newcomer(_NINE_TO_FIVE).split("---\n")
        ),
        (),
    ),
    "a time of 12 hours": (
        _newcomer("  type: Daily\n  startTime: '8:00'\n  endTime: 6pm\n"),
        ("spec.endTime: '6pm' is not a time of day in the form HH:mm",),
    ),
    "tabs": (
        _newcomer("  type: Daily\n\tstartTime: '08:00'\n"),
        ("invalid YAML: found a tab character that violates indentation",),
    ),
    "spec as a list": (
        _SHOP_AUTOSCALER + f"---\napiVersion: {GROUP_VERSION}\nkind: Schedule\n"
        "metadata: {name: s, namespace: shop}\nspec:\n- type: Daily\n",
        ("spec: must be an object, got a list",),
    ),
    "accents in a name": (
        _newcomer(_NINE_TO_FIVE).replace("name: s,", "name: wéb-peak,"),
        ("metadata.name: must be at most 253 characters of lowercase letters",),
    ),
    "two Schedules of one name": (
        _newcomer(_NINE_TO_FIVE, _newcomer(_NINE_TO_FIVE).split("---\n")[1]),
        ("metadata.name: duplicate Schedule shop/s, first defined in",),
    ),
    "numbers beyond int32": (
        _newcomer(_NINE_TO_FIVE + "  minReplicas: 1000000000000\n  maxReplicas: 2147483648\n"),
        (
            "spec.minReplicas: must be at most 2147483647, got 1000000000000",
            "spec.maxReplicas: must be at most 2147483647, got 2147483648",
        ),
    ),
    "a negative minimum": (
        _newcomer(_NINE_TO_FIVE + "  minReplicas: -3\n"),
        ("spec.minReplicas: must be at least 0, got -3",),
    ),
    "min above max": (
        _newcomer(_NINE_TO_FIVE + "  minReplicas: 20\n  maxReplicas: 5\n"),
        ("spec.maxReplicas: must not be less than minReplicas (20), got 5",),
    ),
    "a type in lower case": (
        _newcomer("  type: daily\n  startTime: '09:00'\n  endTime: '17:00'\n"),
        (
            "spec.type: must be one of Weekly, Daily, OneShot, WeeklySpan, Cron, got 'daily'; "
            "did you mean 'Daily'?",
        ),
    ),
    "the target as a string": (
        _newcomer(_NINE_TO_FIVE).replace("scaleTargetRef: {name: web}", "scaleTargetRef: web"),
        ("spec.scaleTargetRef: must be an object, got 'web'",),
    ),
    "days abbreviated": (
        _newcomer(
            "  type: Weekly\n  startDayOfWeek: Mon\n  endDayOfWeek: friday\n"
            "  startTime: '09:00'\n  endTime: '17:00'\n"
        ),
        ("did you mean 'Monday'?", "did you mean 'Friday'?"),
    ),
    "a OneShot with times of day": (
        _newcomer("  type: OneShot\n  startTime: '08:00'\n  endTime: '18:00'\n"),
        ("spec.startTime: '08:00' is not a date and time in the form yyyy-MM-ddTHH:mm",),
    ),
    "cron with seconds": (
        _newcomer("  type: Cron\n  schedule: '0 0 9 * * MON-FRI'\n  duration: 8h\n"),
        ("has 6 fields (seconds are not supported)",),
    ),
    "cron without a duration": (
        _newcomer("  type: Cron\n  schedule: '@hourly'\n"),
        ("spec.duration: is required for a Cron schedule",),
    ),
    "Quartz cron": (
        _newcomer("  type: Cron\n  schedule: '0 9 ? * MON#2'\n  duration: 1h\n"),
        ("bad day-of-month field '?'",),
    ),
    "a day duration": (
        _newcomer("  type: Cron\n  schedule: '0 9 * * 1'\n  duration: 1d\n"),
        ("spec.duration: '1d' is not a duration: write hours, minutes and seconds",),
    ),
    "a zone with a trailing space": (
        _newcomer(_NINE_TO_FIVE + "  timeZone: 'Asia/Kolkata '\n"),
        ("did you mean 'Asia/Kolkata'?",),
    ),
    "the local zone": (
        _newcomer(_NINE_TO_FIVE + "  timeZone: Local\n"),
        ("spec.timeZone: 'Local' (the controller machine's own zone) is not supported",),
    ),
    "GMT+1": (
        _newcomer(_NINE_TO_FIVE + "  timeZone: GMT+1\n"),
        ("use an IANA zone such as Etc/GMT-1 (the sign is inverted: Etc/GMT-1 is UTC+01:00)",),
    ),
    "holidays as a country code": (
        _newcomer(_NINE_TO_FIVE + "  holidays: US\n"),
        ("spec.holidays: must be an object, got 'US'",),
    ),
    "a subdivision by its name": (
        _newcomer(_NINE_TO_FIVE + "  holidays: {country: GB, subdivision: England}\n"),
        ("unknown subdivision 'England' of GB; did you mean 'ENG'?",),
    ),
    "calendars as a name": (
        _newcomer(_NINE_TO_FIVE + "  calendars: freeze\n"),
        ("spec.calendars: must be a list, got 'freeze'",),
    ),
    "an instant as an excluded date": (
        _newcomer(_NINE_TO_FIVE + "  excludeDates: [2026-12-25T00:00:00Z]\n"),
        (
            "spec.excludeDates[0]: must be a date in the form yyyy-MM-dd, got "
            "'2026-12-25T00:00:00Z'; write the date alone, 2026-12-25",
        ),
    ),
    "a calendar of impossible dates": (
        _newcomer(
            _NINE_TO_FIVE + "  calendars: [{name: freeze}]\n",
            f"apiVersion: {GROUP_VERSION}\nkind: Calendar\n"
            "metadata: {name: freeze, namespace: shop}\nspec:\n  dates: [2026-02-29]\n"
            "  dateRanges: [{start: 2026-12-31, end: 2026-12-24}]\n",
        ),
        (
            'spec.calendars[0]: Calendar "freeze" in namespace shop is invalid',
            "spec.dates[0]: '2026-02-29' is not a valid date: day is out of range for month",
            "spec.dateRanges[0].end: must not be before start (2026-12-31)",
        ),
    ),
    "a ClusterCalendar referred to without its kind": (
        _newcomer(
            _NINE_TO_FIVE + "  calendars: [{name: peak, mode: Only}]\n",
            f"apiVersion: {GROUP_VERSION}\nkind: ClusterCalendar\nmetadata: {{name: peak}}\n"
            "spec: {dates: ['2026-12-21']}\n",
        ),
        ("a ClusterCalendar of that name exists: write kind: ClusterCalendar",),
    ),
    "lead time in ISO 8601": (
        _newcomer(_NINE_TO_FIVE + "  leadTime: P1D\n"),
        ("must be Auto or a duration such as 90s, 5m or 1h30m",),
    ),
    "auto in lower case": (
        _newcomer(_NINE_TO_FIVE + "  leadTime: auto\n"),
        ("(write Auto, with a capital A)",),
    ),
    "a plural kind": (
        _newcomer(_NINE_TO_FIVE).replace("kind: Schedule\n", "kind: Schedules\n"),
        ("unknown kind 'Schedules' in autoscaling.d-kuro.github.io/v1; did you mean 'Schedule'?",),
    ),
    "a Schedule of another namespace": (
        _newcomer(_NINE_TO_FIVE).replace("namespace: shop}", "namespace: other}"),
        ("ScheduledPodAutoscaler other/web is not among the given manifests",),
    ),
    "the end before the start": (
        _newcomer(_NINE_TO_FIVE + "  startDate: 2026-12-31\n  endDate: 2026-12-01\n"),
        ("spec.endDate: must not be before startDate (2026-12-31)",),
    ),
    "a quoted number": (
        _newcomer(_NINE_TO_FIVE + "  minReplicas: '4'\n"),
        ("spec.minReplicas: must be an integer, got '4' (write it without quotes)",),
    ),
    "midnight as 24:00": (
        _newcomer("  type: Daily\n  startTime: '00:00'\n  endTime: '24:00'\n"),
        ("for a window that ends at midnight write 00:00",),
    ),
    "a description of 5000 characters": (
        _newcomer(_NINE_TO_FIVE + "  description: " + "x" * 5000 + "\n"),
        ("spec.description: must be at most 1024 characters, got 5,000",),
    ),
    "an anchor of another document": (
        _newcomer(
            "  <<: &daily {type: Daily, startTime: '08:00', endTime: '18:00'}\n",
            _newcomer("  <<: *daily\n").split("---\n")[1],
        ),
        ("the alias *daily has no anchor &daily before it",),
    ),
    "a Monday window on a Tuesday": (
        _newcomer(
            "  type: Weekly\n  startDayOfWeek: Monday\n  endDayOfWeek: Monday\n"
            "  startTime: '09:00'\n  endTime: '17:00'\n  startDate: 2026-03-10\n"
            "  endDate: 2026-03-10\n"
        ),
        ("spec.endDate: the window never starts: its type and times give no window",),
    ),
    "a date for a pause": (
        _SHOP_AUTOSCALER.replace(
            "  namespace: shop\n",
            "  namespace: shop\n  annotations:\n"
            "    autoscaling.d-kuro.github.io/pause-until: 2026-12-01\n",
        ),
        (
            "unknown annotation: the controller does not read it; did you mean "
            "'autoscaling.d-kuro.github.io/paused-until'?",
        ),
    ),
    # A second set, written for the audit of issue 35 (other zones, holidays, calendars, YAML
    # and JSON shapes, HPA fields of older APIs): each got a misleading answer or none.
    "midnight in Santiago's gap": (
        _newcomer(
            "  type: Daily\n  startTime: '00:00'\n  endTime: '00:30'\n"
            "  timeZone: America/Santiago\n  minReplicas: 4\n",
            _document(
                "gap",
                "  type: OneShot\n  startTime: '2026-09-06T00:10'\n  endTime: '2026-09-06T00:40'\n"
                "  timeZone: America/Santiago\n",
            ),
        ),
        (
            "the daylight-saving gap of America/Santiago on 2026-09-06 (the clocks go from 00:00 "
            "to 01:00), so it is empty",
        ),
    ),
    "Lord Howe's half-hour gap": (
        _newcomer(
            "  type: OneShot\n  startTime: '2026-10-04T02:05'\n  endTime: '2026-10-04T02:25'\n"
            "  timeZone: Australia/Lord_Howe\n"
        ),
        ("Australia/Lord_Howe on 2026-10-04 (the clocks go from 02:00 to 02:30)",),
    ),
    "Chatham's weekend and a cron match in its gap": (
        _newcomer(
            "  type: WeeklySpan\n  startDayOfWeek: Saturday\n  startTime: '22:00'\n"
            "  endDayOfWeek: Sunday\n  endTime: '03:00'\n  timeZone: Pacific/Chatham\n"
            "  minReplicas: 4\n  excludeDates: ['2026-09-26']\n",
            _document(
                "cron",
                "  type: Cron\n  schedule: '15 3 * * 0'\n  duration: 30m\n"
                "  timeZone: Pacific/Chatham\n  minReplicas: 5\n",
            ),
        ),
        (),
    ),
    "a subdivision in lower case": (
        _newcomer(_NINE_TO_FIVE + "  holidays: {country: DE, subdivision: by}\n"),
        ("spec.holidays.subdivision: unknown subdivision 'by' of DE; did you mean 'BY'?",),
    ),
    "a US state by its name": (
        _newcomer(_NINE_TO_FIVE + "  holidays: {country: US, subdivision: California}\n"),
        ("did you mean 'CA'?",),
    ),
    "a country's alpha-3 code and a mode in lower case": (
        _newcomer(_NINE_TO_FIVE + "  holidays: {country: USA, mode: only}\n"),
        (
            "spec.holidays.country: must be the two capital letters of an ISO 3166-1 alpha-2 "
            "code, got 'USA'; did you mean 'US'?",
            "spec.holidays.mode: must be one of Skip, Only, got 'only'; did you mean 'Only'?",
        ),
    ),
    "a country and its subdivision in one": (
        _newcomer(_NINE_TO_FIVE + "  holidays: {country: de-BY}\n"),
        ("write country: DE and subdivision: BY",),
    ),
    "holidays of two countries": (
        _newcomer(_NINE_TO_FIVE + "  holidays: [{country: DE}, {country: FR}]\n"),
        ("spec.holidays: must be an object, got a list",),
    ),
    "a mode in a Calendar": (
        _newcomer(
            _NINE_TO_FIVE + "  calendars: [{name: sale}]\n",
            f"apiVersion: {GROUP_VERSION}\nkind: Calendar\nmetadata: {{name: sale, namespace: "
            "shop}\nspec:\n  holidays: {country: CH, mode: Only}\n",
        ),
        (
            "spec.holidays.mode: unknown field; a calendar has no mode: each Schedule that "
            "refers to it says Skip or Only",
        ),
    ),
    "calendars of both modes with holidays inside": (
        _newcomer(
            _NINE_TO_FIVE + "  timeZone: Europe/Zurich\n  minReplicas: 4\n  calendars:\n"
            "  - {name: ch-holidays, kind: ClusterCalendar, mode: Skip}\n"
            "  - {name: sale-season, mode: Only}\n",
            f"apiVersion: {GROUP_VERSION}\nkind: ClusterCalendar\nmetadata: {{name: ch-holidays}}\n"
            "spec:\n  holidays: {country: CH, subdivision: ZH}\n  dates: ['2026-12-24']\n",
            f"apiVersion: {GROUP_VERSION}\nkind: Calendar\n"
            "metadata: {name: sale-season, namespace: shop}\nspec:\n"
            "  dateRanges: [{start: '2026-12-20', end: '2027-01-03'}]\n  holidays: {country: CH}\n",
        ),
        (),
    ),
    "a Calendar of another namespace by reference": (
        _newcomer(_NINE_TO_FIVE + "  calendars: [{name: freeze, namespace: ops}]\n"),
        (
            "spec.calendars[0].namespace: unknown field; a Calendar serves the Schedules of its "
            "own namespace only",
        ),
    ),
    "an SPA of another namespace by reference": (
        _newcomer(_NINE_TO_FIVE).replace(
            "scaleTargetRef: {name: web}", "scaleTargetRef: {name: web, namespace: other}"
        ),
        ("a Schedule applies to a ScheduledPodAutoscaler of its own namespace",),
    ),
    "days as a list": (
        _newcomer(
            "  type: Weekly\n  daysOfWeek: [Monday, Tuesday]\n  startTime: '09:00'\n"
            "  endTime: '17:00'\n"
        ),
        ("spec.daysOfWeek: unknown field; a Weekly window's days are a range",),
    ),
    "a range of days in one field": (
        _newcomer(
            "  type: Weekly\n  startDayOfWeek: Mon-Fri\n  startTime: '09:00'\n  endTime: '17:00'\n"
        ),
        (
            "got 'Mon-Fri'; a range is two fields: startDayOfWeek Monday, endDayOfWeek Friday",
            "spec.endDayOfWeek: is required for a Weekly schedule",
        ),
    ),
    "a capacity mode on a Schedule": (
        _newcomer(_NINE_TO_FIVE + "  capacity: {leadTime: 10m, mode: Placeholder}\n"),
        ("spec.capacity.mode: unknown field; the capacity mode is the ScheduledPodAutoscaler's",),
    ),
    "weekdays as cron's numbers": (
        _newcomer(
            "  type: Weekly\n  startDayOfWeek: 1\n  endDayOfWeek: 5\n  startTime: '09:00'\n"
            "  endTime: '17:00'\n"
        ),
        ("got 1; did you mean 'Monday'?", "got 5; did you mean 'Friday'?"),
    ),
    "times as numbers": (
        _newcomer("  type: Daily\n  startTime: 9\n  endTime: 1730\n"),
        (
            "spec.startTime: must be a string, got 9 (a time of day is text in the form HH:mm: "
            "write 09:00)",
            "spec.endTime: must be a string, got 1730 (a time of day is text in the form HH:mm: "
            "write 17:30)",
        ),
    ),
    "times of 12 hours with minutes": (
        _newcomer("  type: Daily\n  startTime: 9am\n  endTime: 5:30 pm\n"),
        ("write 09:00", "write 17:30"),
    ),
    "a OneShot written with a space": (
        _newcomer("  type: OneShot\n  startTime: 2026-12-24 18:00\n  endTime: 2026-12-25T06:00\n"),
        (
            "'2026-12-24 18:00' is not a date and time in the form yyyy-MM-ddTHH:mm; write "
            "2026-12-24T18:00",
        ),
    ),
    "an excluded date as digits": (
        _newcomer(_NINE_TO_FIVE + "  excludeDates: [20261225]\n"),
        (
            "spec.excludeDates[0]: must be a string, got 20261225 (a date is written yyyy-MM-dd: "
            "write 2026-12-25)",
        ),
    ),
    "a zone as a signed number": (
        _newcomer(_NINE_TO_FIVE + "  timeZone: +1\n"),
        (
            "spec.timeZone: must be a string, got 1 (a UTC offset is not a zone: use an IANA zone "
            "such as Etc/GMT-1",
        ),
    ),
    "CRON_TZ in the schedule": (
        _newcomer(
            "  type: Cron\n  schedule: 'CRON_TZ=Europe/Berlin 0 9 * * 1-5'\n  duration: 8h\n"
        ),
        ("write '0 9 * * 1-5' and the zone as the Schedule's timeZone (Europe/Berlin)",),
    ),
    "an @every macro": (
        _newcomer("  type: Cron\n  schedule: '@every 1h'\n  duration: 30m\n"),
        ("unknown macro '@every 1h': use one of @yearly",),
    ),
    "a duration of 8h30": (
        _newcomer("  type: Cron\n  schedule: '0 9 * * 1-5'\n  duration: 8h30\n"),
        ("spec.duration: '8h30' is not a duration",),
    ),
    "a Cron with times of day": (
        _newcomer(
            "  type: Cron\n  schedule: '0 9 * * 1-5'\n  duration: 8h\n  startTime: '09:00'\n"
        ),
        ("spec.startTime: is not used by a Cron schedule",),
    ),
    "a OneShot that ends in the repeated hour before it starts": (
        _newcomer(
            "  type: OneShot\n  startTime: '2026-11-01T01:30'\n  endTime: '2026-11-01T01:15'\n"
            "  timeZone: America/New_York\n"
        ),
        ("spec.endTime: must be after startTime (2026-11-01T01:30)",),
    ),
    "a WeeklySpan without its end day": (
        _newcomer(
            "  type: WeeklySpan\n  startDayOfWeek: Friday\n  startTime: '18:00'\n"
            "  endTime: '06:00'\n"
        ),
        ("spec.endDayOfWeek: is required for a WeeklySpan schedule",),
    ),
    "a OneShot with bounds": (
        _newcomer(
            "  type: OneShot\n  startTime: '2026-03-10T10:00'\n  endTime: '2026-03-11T10:00'\n"
            "  startDate: 2026-03-10\n"
        ),
        ("spec.startDate: is not used by a OneShot schedule",),
    ),
    "objects as a YAML sequence": (
        "- "
        + "\n  ".join(_newcomer(_NINE_TO_FIVE).split("---\n")[1].strip("\n").split("\n"))
        + "\n",
        ("not a Kubernetes object but a list of them",),
    ),
    "objects as a JSON array": (
        '[{"apiVersion": "' + GROUP_VERSION + '", "kind": "Schedule", "metadata": {"name": "s"}, '
        '"spec": {"scaleTargetRef": {"name": "web"}, "type": "Daily", "startTime": "09:00", '
        '"endTime": "17:00"}}]',
        ("not a Kubernetes object but a list of them",),
    ),
    "fields beside spec": (
        _SHOP_AUTOSCALER + f"---\napiVersion: {GROUP_VERSION}\nkind: Schedule\n"
        "metadata: {name: s, namespace: shop}\nscaleTargetRef: {name: web}\ntype: Daily\n",
        (
            "scaleTargetRef: unknown field; it belongs under spec: spec.scaleTargetRef",
            "type: unknown field; it belongs under spec: spec.type",
        ),
    ),
    "an SPA written as an HPA": (
        f"apiVersion: {GROUP_VERSION}\nkind: ScheduledPodAutoscaler\nmetadata: {{name: web}}\n"
        "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
        "  maxReplicas: 10\n",
        (
            "spec.scaleTargetRef: unknown field; it belongs under spec.horizontalPodAutoscalerSpec",
            "spec.maxReplicas: unknown field; it belongs under spec.horizontalPodAutoscalerSpec",
        ),
    ),
    "an autoscaling/v1 target": (
        _SHOP_AUTOSCALER.replace(
            "    maxReplicas: 10\n", "    maxReplicas: 10\n    targetCPUUtilizationPercentage: 70\n"
        ),
        ("targetCPUUtilizationPercentage: unknown field; that is the field of autoscaling/v1",),
    ),
    "an autoscaling/v2beta1 metric": (
        _SHOP_AUTOSCALER.replace(
            "    maxReplicas: 10\n",
            "    maxReplicas: 10\n    metrics:\n    - type: Resource\n"
            "      resource: {name: cpu, targetAverageUtilization: 70}\n",
        ),
        (
            "metrics[0].resource.targetAverageUtilization: unknown field; that is the form of "
            "autoscaling/v2beta1; in autoscaling/v2 write target: {type: Utilization, "
            "averageUtilization: N}",
        ),
    ),
    "an HPA of the SPA's name and a dot for the slash": (
        _SHOP_AUTOSCALER.replace(
            "  namespace: shop\n",
            "  namespace: shop\n  annotations: {autoscaling.d-kuro.github.io.adopt: 'true'}\n",
        )
        + "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
        "metadata: {name: web, namespace: shop}\nspec:\n"
        "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 5\n",
        (
            "metadata.name: a HorizontalPodAutoscaler of this name is among the manifests",
            "did you mean 'autoscaling.d-kuro.github.io/adopt'?",
        ),
    ),
    "a ScheduleList from the API": (
        _SHOP_AUTOSCALER
        + f"---\napiVersion: {GROUP_VERSION}\nkind: ScheduleList\nmetadata: {{}}\nitems:\n"
        "- metadata: {name: s, namespace: shop}\n  spec:\n    scaleTargetRef: {name: web}\n"
        "    type: Daily\n    startTime: '09:00'\n    endTime: '17:00'\n",
        (),
    ),
    "a BOM before a later document and a tab in a quoted value": (
        _newcomer(_NINE_TO_FIVE + "  description: 'a\tb'\n").replace(
            "---\napiVersion: autoscaling.d-kuro.github.io/v1\nkind: Schedule",
            "---\n\ufeffapiVersion: autoscaling.d-kuro.github.io/v1\nkind: Schedule",
        ),
        (),
    ),
    "a name YAML reads as a boolean": (
        _newcomer(_NINE_TO_FIVE).replace("name: s,", "name: y,"),
        ("metadata.name: must be a string, got true (YAML reads unquoted yes",),
    ),
    "a name of digits": (
        _newcomer(_NINE_TO_FIVE).replace("name: s,", "name: 2026,"),
        ("metadata.name: must be a string, got 2026 (quote it to keep it text)",),
    ),
    "full-width digits and a zone with an umlaut": (
        _newcomer(
            "  type: Daily\n  startTime: '\uff10\uff19:\uff10\uff10'\n  endTime: '17:00'\n"
            "  timeZone: Europe/Zürich\n"
        ),
        (
            "spec.startTime: '\uff10\uff19:\uff10\uff10' is not a time of day in the form HH:mm",
            "did you mean 'Europe/Zurich'?",
        ),
    ),
}
"""Manifests as a newcomer writes them (issue 35's hidden set is of this kind), each with what
`spa plan` must say of it: every one a clear answer addressed to its field, none a traceback
(tests/unit/plan/test_plan_input.py)."""
