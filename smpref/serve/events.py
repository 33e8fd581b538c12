"""Structured logging: one JSON object per line, with an ``event`` name and its fields."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LOGGER = logging.getLogger("smpref.serve")


class JsonLines(logging.Formatter):
    """Formats a record as ``{"ts": ..., "level": ..., "event": ..., <fields>}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        return json.dumps(entry, separators=(",", ":"), default=str)


def configure(level: str = "info", stream: Any = None) -> None:
    """Send the server's events to ``stream`` (stderr) as JSON lines."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLines())
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(level.upper())
    LOGGER.propagate = False


def event(name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one event with its fields."""
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, name, extra={"fields": fields})
