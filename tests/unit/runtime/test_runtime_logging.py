"""Structured logging: the object's namespace/name on every line, in JSON and in text."""

from __future__ import annotations

import io
import json
import logging

from spa.runtime import ObjectLogger, configure_logging, object_logger


def test_json_lines_carry_object_context_and_call_extras() -> None:
    stream = io.StringIO()
    configure_logging(level="debug", log_format="json", stream=stream)
    try:
        log = object_logger(logging.getLogger("spa.test"), "shop", "web", controller="spa")
        log.info("scaled %s", "up", extra={"min": 5})
        try:
            raise ValueError("bad")
        except ValueError:
            ObjectLogger(log, {"attempt": 2}).exception("failed")
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        logging.getLogger().handlers.clear()
    assert lines[0]["msg"] == "scaled up"
    assert lines[0]["level"] == "info"
    assert lines[0]["logger"] == "spa.test"
    assert lines[0]["namespace"] == "shop"
    assert lines[0]["name"] == "web"
    assert lines[0]["controller"] == "spa"
    assert lines[0]["min"] == 5
    assert lines[0]["time"].endswith("Z")
    assert lines[1]["attempt"] == 2
    assert lines[1]["name"] == "web"  # nested adapters keep the outer context
    assert "ValueError: bad" in lines[1]["error"]


def test_text_format_and_level_filtering() -> None:
    stream = io.StringIO()
    configure_logging(level="warning", log_format="text", stream=stream)
    try:
        log = object_logger(logging.getLogger("spa.test"), "shop", "web")
        log.info("hidden")
        log.warning("shown")
    finally:
        logging.getLogger().handlers.clear()
    output = stream.getvalue()
    assert "hidden" not in output
    assert "WARNING" in output
    assert "spa.test: shown name=web namespace=shop" in output
