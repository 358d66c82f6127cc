"""What `spa suggest` and `spa backtest` share: the flags that choose Prometheus, the history
and its range, and reading it (docs/suggest.md, "Prometheus" and "Reading the history").

Errors of Prometheus come back as one `error:` line and an exit status (docs/suggest.md, "Exit
status"), never as a traceback.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from spa.api.validation.compile import load_time_zone
from spa.history.calendars import CalendarError, calendar_of
from spa.history.prometheus import (
    EXIT_BAD_QUERY,
    Connection,
    PrometheusError,
    check_url,
)
from spa.history.source import Selection, SelectorError, Source, label_matchers
from spa.schedule import PublicHolidays, WallClockError

__all__ = [
    "CalendarError",
    "HistoryRange",
    "connection_of",
    "history_range",
    "holidays_by_zone",
    "selection_of",
    "source_of",
    "zone_named",
]

_WEEK = 7 * 86400


@dataclass(frozen=True, slots=True)
class HistoryRange:
    start: int
    until: int
    step: int
    weeks: int


def history_range(
    arguments: argparse.Namespace, *, now: Callable[[], float] = time.time
) -> HistoryRange:
    """`--weeks` up to `--until` (default now), both on a step."""
    step: int = arguments.step
    end = arguments.until if arguments.until is not None else int(now())
    until = end - end % step
    return HistoryRange(
        start=until - arguments.weeks * _WEEK, until=until, step=step, weeks=arguments.weeks
    )


def connection_of(arguments: argparse.Namespace) -> Connection:
    """The connection the flags describe; PrometheusError (exit 2) for a bad URL or an
    unreadable token file."""
    problem = check_url(arguments.prometheus)
    if problem is not None:
        raise PrometheusError(f"--prometheus: {problem}", EXIT_BAD_QUERY)
    token = None
    if arguments.token_file is not None:
        try:
            with open(arguments.token_file, encoding="utf-8") as file:
                token = file.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise PrometheusError(
                f"--token-file: cannot read it: {error}", EXIT_BAD_QUERY
            ) from None
        if not token:
            raise PrometheusError(f"--token-file: {arguments.token_file} is empty", EXIT_BAD_QUERY)
    if arguments.client_key is not None and arguments.client_certificate is None:
        raise PrometheusError("--client-key needs --client-certificate", EXIT_BAD_QUERY)
    return Connection(
        url=arguments.prometheus,
        token=token,
        certificate_authority=arguments.certificate_authority,
        client_certificate=arguments.client_certificate,
        client_key=arguments.client_key,
        insecure_skip_tls_verify=arguments.insecure_skip_tls_verify,
        timeout=arguments.request_timeout,
    )


def source_of(arguments: argparse.Namespace) -> Source:
    if arguments.per_pod is not None and arguments.query is None:
        raise PrometheusError(
            "--per-pod needs --query: the HPA's desired replicas are replicas already",
            EXIT_BAD_QUERY,
        )
    if arguments.query is not None and not arguments.query.strip():
        raise PrometheusError("--query is empty", EXIT_BAD_QUERY)
    return Source(query=arguments.query, per_pod=arguments.per_pod)


def selection_of(arguments: argparse.Namespace) -> Selection:
    if arguments.selector is not None:
        try:
            label_matchers(arguments.selector)
        except SelectorError as error:
            raise PrometheusError(f"-l/--selector: {error}", EXIT_BAD_QUERY) from None
    return Selection(
        autoscalers=tuple(dict.fromkeys(arguments.autoscaler or ())),
        selector=arguments.selector,
        everything=arguments.all_autoscalers,
    )


_ZONES: dict[str, ZoneInfo] = {}


def zone_named(name: str) -> ZoneInfo:
    """The zone `name`, one object per name (the local-day layout is computed once per
    zone); WallClockError with a hint for an unknown one."""
    zone = _ZONES.get(name)
    if zone is None:
        zone = _ZONES[name] = load_time_zone(name)
    return zone


def holidays_by_zone(text: str | None) -> Callable[[ZoneInfo], PublicHolidays | None]:
    """The calendar of each zone: `--holidays` for all, or each zone's country's. Checks
    `--holidays` at once (CalendarError)."""
    if text is not None:
        fixed = calendar_of(text, zone_named("UTC"))
        return lambda zone: fixed
    found: dict[str, PublicHolidays | None] = {}

    def of(zone: ZoneInfo) -> PublicHolidays | None:
        key = zone.key or "UTC"
        if key not in found:
            found[key] = calendar_of(None, zone)
        return found[key]

    return of


def zone_and_holidays(
    arguments: argparse.Namespace,
) -> tuple[ZoneInfo | None, Callable[[ZoneInfo], PublicHolidays | None]]:
    """`--time-zone` (None: each autoscaler's own) and the calendar of each zone
    (`--holidays`), both checked at once: a bad one is a PrometheusError naming its flag."""
    try:
        fixed_zone = zone_named(arguments.time_zone) if arguments.time_zone else None
        return fixed_zone, holidays_by_zone(arguments.holidays)
    except WallClockError as error:
        raise PrometheusError(f"--time-zone: {error}", EXIT_BAD_QUERY) from None
    except CalendarError as error:
        raise PrometheusError(f"--holidays: {error}", EXIT_BAD_QUERY) from None
