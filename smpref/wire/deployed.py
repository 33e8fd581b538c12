"""Layouts of deployed SMP that the seed design replaces, written once (DEP-7).

The body a deployed server seals into MSG is ``Int64 ts || flags || ' ' || body``, or
``"QUOTA " || Int64 ts`` for the quota marker; smpref's servers deliver a ``RcvMessage`` with a
ratchet record instead (QENC-7, DIV-29). Deployed parsers read the first flag byte and skip any
further flag bytes up to the space, so this decoder does too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from smpref.errors import BadTagError, BadValueError
from smpref.wire.buffer import Reader, Writer, encode

QUOTA_WORD: Final = b"QUOTA"


@dataclass(frozen=True, slots=True)
class DeployedMessageBody:
    """A message as a deployed server delivers it: a message, or the quota marker."""

    timestamp: int
    notification: bool = False
    body: bytes = b""
    quota: bool = False

    def __post_init__(self) -> None:
        if self.quota and (self.notification or self.body):
            raise BadValueError("the quota marker carries only its timestamp")

    def encode(self) -> bytes:
        return encode(self._write)

    def _write(self, w: Writer) -> None:
        if self.quota:
            w.raw(QUOTA_WORD)
            w.space()
            w.int64(self.timestamp)
            return
        w.int64(self.timestamp)
        w.boolean(self.notification)
        w.space()
        w.raw(self.body)

    @classmethod
    def decode(cls, data: bytes) -> DeployedMessageBody:
        """Decode a deployed MSG body.

        Raises:
            WireError: naming the field and the byte offset.
        """
        r = Reader(data)
        if data.startswith(QUOTA_WORD + b" "):
            r.take(len(QUOTA_WORD) + 1)
            timestamp = r.int64()
            r.finish()
            return cls(timestamp, quota=True)
        timestamp = r.int64()
        flags_at = r.pos
        flags = r.word()
        if not flags or flags[:1] not in (b"T", b"F"):
            raise BadTagError(f"the first flag must be 'T' or 'F', got {flags[:1]!r}",
                              path="flags", offset=flags_at)
        if not r.remaining():
            raise BadTagError("expected ' ' after the flags", path="flags", offset=r.pos)
        r.take(1)  # the space that ends the flags
        return cls(timestamp, flags[:1] == b"T", r.rest())
