"""Every transmission the server receives and sends, decoded: ``smpref serve --trace FILE``
writes them as JSON lines, and at ``--log-level debug`` each is also a ``transmission`` event.

For implementers of clients: the trace shows the command exactly as the server decoded it
(its corrId, entity ID, tag and fields, and whether its credentials passed the command's rule)
next to the answer, so an ``ERR`` can be read against what was sent. A transmission that does
not decode is traced with the decoding error. Every line carries the transmission's bytes in
hex and the version whose layouts it was decoded in (1000 for the seed design), so that
``smpref wire decode --version VERSION HEX`` reads any line again. One line per
transmission::

    {"ts": "...", "conn": 3, "dir": "in", "protocol": "deployed", "version": 18, "hex": "...",
     "corrId": "...", "entityId": "...", "message": {"tag": "NEW", "fields": {...}},
     "credentialCheck": "ok"}

Decoding costs time, so nothing is decoded unless a file is given or debug events are on.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import IO, Any

from smpref.errors import WireError
from smpref.serve import events
from smpref.wire.dialects import SEED_VERSION, Dialect
from smpref.wire.json_forms import transmission_to_json


class TransmissionTrace:
    """Where decoded transmissions go: a JSON-lines file, debug events, both or neither."""

    def __init__(self, path: Path | None = None) -> None:
        # line-buffered: a trace is read while the server runs, and must survive a kill
        self.file: IO[str] | None = path.open("a", buffering=1, encoding="utf-8") \
            if path is not None else None

    @property
    def active(self) -> bool:
        return self.file is not None or events.LOGGER.isEnabledFor(logging.DEBUG)

    def record(self, direction: str, conn: int, data: bytes,
               dialect: Dialect = Dialect.SEED, version: int | None = None) -> None:
        """Trace one transmission (``direction`` is ``in`` or ``out``), decoded in the
        protocol its connection speaks, in its version's layouts."""
        if not self.active:
            return
        entry: dict[str, Any] = {"conn": conn, "dir": direction, "protocol": dialect.value}
        # the seed design's layouts are the current ones (None); its number names them
        layouts = SEED_VERSION if dialect is Dialect.SEED else version
        if layouts is not None:
            entry["version"] = layouts
        entry["hex"] = data.hex()
        try:
            decoded = transmission_to_json(data, dialect=dialect, version=version)
        except WireError as exc:
            entry["error"] = str(exc)
        else:
            if direction == "out":  # the credential rule is for commands, not answers
                decoded.pop("credentialCheck", None)
            entry.update(decoded)
        events.event("transmission", logging.DEBUG, **entry)
        if self.file is not None:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
            self.file.write(json.dumps({"ts": stamp, **entry}, separators=(",", ":")) + "\n")

    def handshake(self, conn: int, error: str, reason: str, alpn: str | None,
                  sni: str | None) -> None:
        """Trace a refused client hello: deployed's error, why (with the requirement ID), the
        ALPN TLS selected and the SNI the client sent (TRANS-17). The log has it already."""
        if self.file is not None:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
            entry = {"ts": stamp, "conn": conn, "dir": "handshake", "error": error,
                     "reason": reason, "alpn": alpn, "sni": sni}
            self.file.write(json.dumps(entry, separators=(",", ":")) + "\n")

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
