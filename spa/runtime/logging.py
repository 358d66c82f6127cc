"""Structured logging for the controller: one JSON object per line (for log pipelines) or
readable text (for a terminal), selected by ``--log-format``, and an adapter that stamps the
object being worked on (``namespace``/``name``) on every line so one SPA's story can be
filtered out of a busy controller's log.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping, MutableMapping
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

__all__ = [
    "JsonFormatter",
    "LogFormat",
    "ObjectLogger",
    "TextFormatter",
    "configure_logging",
    "object_logger",
]

LogFormat = Literal["json", "text"]

# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is
# structured context worth printing.
_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None)).keys()
) | {"message", "asctime", "taskName"}


# LogRecord refuses ``extra`` keys that clash with its own attributes (``name`` is the logger's
# name), so object context travels in one attribute and is flattened when formatting.
CONTEXT_ATTR = "spa_context"


def _context(record: logging.LogRecord) -> dict[str, Any]:
    context = {
        k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS and k != CONTEXT_ATTR
    }
    context.update(getattr(record, CONTEXT_ATTR, None) or {})
    return context


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "msg", ...context, "error"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_context(record))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value ...`` for humans."""

    def format(self, record: logging.LogRecord) -> str:
        context = " ".join(f"{k}={v}" for k, v in sorted(_context(record).items()))
        line = f"{_timestamp(record)} {record.levelname:<7} {record.name}: {record.getMessage()}"
        if context:
            line = f"{line} {context}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


class ObjectLogger(logging.LoggerAdapter[Any]):
    """A logger adapter that adds its context (e.g. ``namespace``, ``name``) to every line,
    keeping any ``extra=`` of the call too (the stdlib adapter would drop the call's ``extra``).
    Adapters can be nested: ``ObjectLogger(object_logger(...), {"key": k})``."""

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        own: Mapping[str, object] = self.extra or {}
        extra = dict(kwargs.get("extra") or {})
        extra[CONTEXT_ATTR] = {**own, **(extra.get(CONTEXT_ATTR) or {})}
        kwargs["extra"] = extra
        return msg, kwargs


def object_logger(
    logger: logging.Logger | logging.LoggerAdapter[Any],
    namespace: str | None,
    name: str,
    **context: Any,
) -> ObjectLogger:
    """A logger that puts ``namespace`` and ``name`` (and ``context``) on every line."""
    extra: dict[str, Any] = {"name": name, **context}
    if namespace:
        extra["namespace"] = namespace
    return ObjectLogger(logger, extra)


def configure_logging(
    *, level: str = "info", log_format: LogFormat = "json", stream: TextIO | None = None
) -> None:
    """Send all logging to ``stream`` (stderr) in the chosen format at the chosen level."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(numeric)
