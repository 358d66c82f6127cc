"""Synthetic workloads with known truth, for `spa suggest` and `spa backtest` (docs/suggest.md,
"How it is tested").

Each workload is defined by its *true* Schedules (the floor it really needed) and a few
accidents: a one-off spike, a monthly batch, gaps in the scrapes, restarts of its pods. The
replicas its HPA wanted, minute by minute, are made from the true Schedules' floor by the
same engine `spa plan` uses (so daylight-saving time and public holidays follow the
controller's rules), each day's demand coming up to 4 minutes before or after the windows
start, a climb of 5 minutes at each rise and noise below the floor. The history is
written as OpenMetrics text, as kube-state-metrics and an application would have exposed it,
for `promtool tsdb create-blocks-from openmetrics`; the same values are also given in memory to
the unit tests.

The standard corpus (`standard_corpus`) is four weeks in America/New_York from Monday
2026-10-12 (Columbus Day) to Monday 2026-11-09, across the end of summer time on
2026-11-01:

- `shop/web` (base 2): office hours Monday to Friday 08:00-18:00 at 12 that skip US
  holidays (so a dip on Columbus Day), a lunch peak every day 12:00-13:30 at 20, a Friday
  evening 18:00-22:00 at 16, a weekend from Saturday 10:00 to Sunday 20:00 at 8; a one-off
  spike on Thursday 2026-10-29 at 03:00; four hours without scrapes on Tuesday 2026-10-20.
- `batch/importer` (base 1): a nightly import 01:00-02:30 at 6 (through the repeated hour of
  2026-11-01), a monthly batch on the 1st 02:00-04:00 at 30 (seen once in four weeks: not
  scheduled), a one-off spike on Wednesday 2026-10-21 15:00-15:40.
- `shop/quiet` (base 3): no peak at all.

Each also exposes a counter of requests (40 a second per replica needed) that restarts three
times, for the load-based queries.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from spa.history.need import Need, needed_replicas
from spa.plan import Document, build_plan
from spa.schedule import State, to_instant
from tests.builders import autoscaler, schedule

__all__ = [
    "CLIMB",
    "JITTER",
    "LEAD",
    "OFFSET",
    "PER_POD",
    "Corpus",
    "Workload",
    "floor_at",
    "floors",
    "openmetrics",
    "standard_corpus",
]

ZONE = "America/New_York"
CLIMB = 300
"""Seconds the HPA takes to climb to a new floor after the demand rises."""
LEAD = "5m"
"""The true Schedules' leadTime: the climb."""
PER_POD = 40.0
"""Requests a second one replica serves."""
SAMPLE = 60
"""Seconds between two scrapes."""
JITTER = 240
"""Seconds a day's demand may come before or after its windows start (less than the lead)."""
OFFSET = 17
"""Seconds after each whole minute at which it is scraped (a real scrape is never at a step's
boundary, where it would count in two steps: docs/suggest.md, "Reading the history")."""


@dataclass(frozen=True, slots=True)
class Burst:
    """Demand that no Schedule should hold: `level` replicas from `start` to `end` (local)."""

    start: datetime
    end: datetime
    level: int


@dataclass(slots=True)
class Workload:
    namespace: str
    name: str
    base: int
    schedules: list[dict[str, Any]]
    """The true Schedules (with leadTime LEAD), as manifests."""
    spikes: list[Burst] = field(default_factory=list)
    """One-off peaks (not to be scheduled)."""
    monthly: list[Burst] = field(default_factory=list)
    """Monthly batches: seen once in the history, so not to be scheduled either."""
    gaps: list[tuple[datetime, datetime]] = field(default_factory=list)
    restarts: list[datetime] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    climb: int = CLIMB
    """Seconds its HPA takes to climb to a new floor after the demand rises."""
    jitter: int = JITTER
    """Seconds a day's demand may come before or after its windows start."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def manifests(self, *, schedules: bool = True) -> list[dict[str, Any]]:
        """The SPA and (`schedules`) its true Schedules."""
        spa = autoscaler(
            name=self.name, namespace=self.namespace, minReplicas=self.base, maxReplicas=60
        )
        return [spa, *(self.schedules if schedules else [])]


@dataclass(slots=True)
class Corpus:
    zone: ZoneInfo
    start: int
    """The first instant of the history (a local midnight)."""
    until: int
    """The instant after the history (a local midnight)."""
    workloads: list[Workload]
    seed: int = 7

    @property
    def weeks(self) -> int:
        return round((self.until - self.start) / (7 * 86400))


def _local(zone: ZoneInfo, text: str) -> datetime:
    """A wall-clock time of the corpus's zone (instants are made with the engine's rules)."""
    del zone
    return datetime.fromisoformat(text)


def standard_corpus() -> Corpus:
    zone = ZoneInfo(ZONE)
    common: dict[str, Any] = {"timeZone": ZONE, "leadTime": LEAD}
    web = Workload(
        namespace="shop",
        name="web",
        base=2,
        labels={"label_team": "shop"},
        schedules=[
            schedule(
                name="office",
                target="web",
                type="Weekly",
                startDayOfWeek="Monday",
                endDayOfWeek="Friday",
                startTime="08:00",
                endTime="18:00",
                minReplicas=12,
                holidays={"country": "US"},
                **common,
            ),
            schedule(
                name="lunch",
                target="web",
                type="Daily",
                startTime="12:00",
                endTime="13:30",
                minReplicas=20,
                **common,
            ),
            schedule(
                name="friday-evening",
                target="web",
                type="Weekly",
                startDayOfWeek="Friday",
                endDayOfWeek="Friday",
                startTime="18:00",
                endTime="22:00",
                minReplicas=16,
                **common,
            ),
            schedule(
                name="weekend",
                target="web",
                type="WeeklySpan",
                startDayOfWeek="Saturday",
                endDayOfWeek="Sunday",
                startTime="10:00",
                endTime="20:00",
                minReplicas=8,
                **common,
            ),
        ],
        spikes=[Burst(_local(zone, "2026-10-29T03:00"), _local(zone, "2026-10-29T03:30"), 30)],
        gaps=[(_local(zone, "2026-10-20T09:00"), _local(zone, "2026-10-20T13:00"))],
        restarts=[
            _local(zone, "2026-10-14T16:20"),
            _local(zone, "2026-10-27T04:00"),
            _local(zone, "2026-11-05T11:11"),
        ],
    )
    importer = Workload(
        namespace="batch",
        name="importer",
        base=1,
        labels={"label_team": "data"},
        schedules=[
            schedule(
                name="nightly",
                namespace="batch",
                target="importer",
                type="Daily",
                startTime="01:00",
                endTime="02:30",
                minReplicas=6,
                **common,
            ),
        ],
        spikes=[Burst(_local(zone, "2026-10-21T15:00"), _local(zone, "2026-10-21T15:40"), 25)],
        monthly=[Burst(_local(zone, "2026-11-01T02:00"), _local(zone, "2026-11-01T04:00"), 30)],
        gaps=[(_local(zone, "2026-11-03T20:00"), _local(zone, "2026-11-03T22:00"))],
        restarts=[_local(zone, "2026-10-19T09:30"), _local(zone, "2026-11-02T00:05")],
    )
    quiet = Workload(
        namespace="shop", name="quiet", base=3, labels={"label_team": "shop"}, schedules=[]
    )
    start = to_instant(datetime(2026, 10, 12), zone)
    until = to_instant(datetime(2026, 11, 9), zone)
    return Corpus(zone=zone, start=start, until=until, workloads=[web, importer, quiet])


def _documents(manifests: Sequence[dict[str, Any]], *, lead: bool = True) -> list[Document]:
    documents = []
    for index, body in enumerate(manifests, start=1):
        if not lead and body.get("kind") == "Schedule":
            spec = {k: v for k, v in body["spec"].items() if k != "leadTime"}
            body = {**body, "spec": spec}
        documents.append(Document(file="corpus", index=index, body=body))
    return documents


def floors(
    manifests: Sequence[dict[str, Any]], *, namespace: str, name: str, start: int, until: int,
    lead: bool = True,
) -> list[tuple[int, State]]:  # fmt: skip
    """The effective values of the SPA `namespace/name` of `manifests` from `start` (its
    state then, then every transition up to `until`), by the engine of `spa plan`."""
    plan = build_plan(_documents(manifests, lead=lead), [], at=start, until=until)
    assert not plan.errors, plan.errors
    [found] = [a for a in plan.autoscalers if (a.namespace, a.name) == (namespace, name)]
    return [(start, found.state), *found.transitions]


def floor_at(steps: Sequence[tuple[int, State]], instant: int) -> int:
    """The effective minReplicas at `instant` of `floors`'s steps."""
    low, high = 0, len(steps)
    while high - low > 1:
        middle = (low + high) // 2
        if steps[middle][0] <= instant:
            low = middle
        else:
            high = middle
    return steps[low][1].min_replicas


def _true_floor(corpus: Corpus, workload: Workload, *, start: int) -> list[tuple[int, State]]:
    """The floor the demand follows: the true Schedules without their lead (the demand comes
    at the window's start; the lead is what holds the climb)."""
    return floors(
        workload.manifests(), namespace=workload.namespace, name=workload.name, start=start,
        until=corpus.until, lead=False,
    )  # fmt: skip


def desired_replicas(
    corpus: Corpus, workload: Workload, *, margin: int = 86400
) -> list[tuple[int, int]]:
    """(instant, replicas the HPA wanted), one a scrape, from a day before the history (the
    first steps of a query look back) to its end; none inside the gaps. On each day the demand
    of a window comes up to JITTER earlier or later than its start (the same shift all day);
    it ends at its end."""
    zone = corpus.zone
    rng = random.Random(f"{corpus.seed}/{workload.key}")
    start = corpus.start - margin
    steps = _true_floor(corpus, workload, start=start)
    instants = [instant for instant, _ in steps]
    levels = [float(state.min_replicas) for _, state in steps]
    bursts = [
        (to_instant(b.start, zone), to_instant(b.end, zone), b.level)
        for b in [*workload.spikes, *workload.monthly]
    ]
    gaps = [(to_instant(a, zone), to_instant(b, zone)) for a, b in workload.gaps]
    shifts: dict[date, int] = {}
    samples: list[tuple[int, int]] = []
    for instant in range(start + OFFSET, corpus.until, SAMPLE):
        if any(a <= instant < b for a, b in gaps):
            continue
        day = datetime.fromtimestamp(instant, zone).date()
        if day not in shifts:
            shifts[day] = rng.randint(-workload.jitter, workload.jitter)
        # The demand of a window comes at its start shifted by the day's jitter (its end does
        # not move): the floor of `instant`, or of the rise just after or just before it.
        shift = shifts[day]
        index = max(0, bisect.bisect_right(instants, instant) - 1)
        following = index + 1
        rises_next = following < len(instants) and levels[following] > levels[index]
        rose = index > 0 and levels[index] > levels[index - 1]
        if shift < 0 and rises_next and instant >= instants[following] + shift:
            index = following  # the next window's demand came early
        elif shift > 0 and rose and instant < instants[index] + shift:
            index -= 1  # this window's demand has not come yet
        level = levels[index]
        previous = levels[index - 1] if index else level
        climbing = instant - (instants[index] + shift)
        for burst_start, burst_end, burst_level in bursts:
            if burst_start <= instant < burst_end:
                level = max(level, float(burst_level))
        if 0 <= climbing < workload.climb and level > previous:
            wanted = previous + (level - previous) * (climbing + SAMPLE) / workload.climb
        elif level > workload.base:
            wanted = level - rng.uniform(0, 0.12 * (level - workload.base))
        else:
            wanted = workload.base + (1 if rng.random() < 0.2 else 0)
        samples.append((instant, max(workload.base, min(math.ceil(wanted), int(level)))))
    return samples


def requests_total(
    samples: Sequence[tuple[int, int]], workload: Workload, zone: ZoneInfo
) -> Iterator[tuple[int, float]]:
    """A counter of requests served: PER_POD a second per replica needed, from 0 again at each
    restart."""
    restarts = sorted(to_instant(moment, zone) for moment in workload.restarts)
    total = 0.0
    previous: int | None = None
    for instant, replicas in samples:
        if previous is not None and any(previous < r <= instant for r in restarts):
            total = 0.0
        elif previous is not None:
            total += replicas * PER_POD * (instant - previous) * 0.97
        previous = instant
        yield instant, round(total, 1)


def _labels(labels: dict[str, str]) -> str:
    return ",".join(f'{key}="{value}"' for key, value in labels.items())


def openmetrics(corpus: Corpus) -> Iterator[str]:
    """The whole history as OpenMetrics text, line by line (metric families one after the
    other, each series in time order, `# EOF` last)."""
    histories = {w.key: desired_replicas(corpus, w) for w in corpus.workloads}
    families: list[tuple[str, str]] = [
        ("kube_horizontalpodautoscaler_status_desired_replicas", "gauge"),
        ("kube_horizontalpodautoscaler_spec_min_replicas", "gauge"),
        ("kube_horizontalpodautoscaler_labels", "gauge"),
        ("http_requests", "counter"),
    ]
    for family, kind in families:
        yield f"# TYPE {family} {kind}"
        for workload in corpus.workloads:
            identity = {"namespace": workload.namespace, "horizontalpodautoscaler": workload.name}
            samples = histories[workload.key]
            if family == "kube_horizontalpodautoscaler_status_desired_replicas":
                labels = _labels(identity)
                for instant, value in samples:
                    yield f"{family}{{{labels}}} {value} {instant}"
            elif family == "kube_horizontalpodautoscaler_spec_min_replicas":
                # Constant series, scraped every 4 minutes: within Prometheus's lookback of 5.
                labels = _labels(identity)
                for instant, _ in samples[::4]:
                    yield f"{family}{{{labels}}} {workload.base} {instant}"
            elif family == "kube_horizontalpodautoscaler_labels":
                labels = _labels({**identity, **workload.labels})
                for instant, _ in samples[::4]:
                    yield f"{family}{{{labels}}} 1 {instant}"
            else:
                labels = _labels({**identity, "pod": f"{workload.name}-0"})
                for instant, total in requests_total(samples, workload, corpus.zone):
                    yield f"{family}_total{{{labels}}} {total} {instant}"
    yield "# EOF"


def in_memory(
    samples: Sequence[tuple[int, float]], *, start: int, until: int, step: int = 300
) -> Need:
    """The grid `spa suggest` reads from Prometheus (`max_over_time(x[step])` at each step's
    end), made from the samples directly."""
    best: dict[int, float] = {}
    for instant, value in samples:
        if start <= instant < until:
            point = start + ((instant - start) // step + 1) * step
            best[point] = max(best.get(point, value), value)
    return needed_replicas(
        sorted(best.items()), start=start, step=step, count=(until - start) // step
    )


def day(text: str) -> date:
    return date.fromisoformat(text)


def local_midnight(corpus: Corpus, day_: date) -> int:
    return to_instant(datetime.combine(day_, datetime.min.time()), corpus.zone)


def history_days(corpus: Corpus) -> list[date]:
    first = datetime.fromtimestamp(corpus.start, corpus.zone).date()
    last = datetime.fromtimestamp(corpus.until - 1, corpus.zone).date()
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]
