"""The text line format of every log file in the journal store (STORE-8).

A line is ``name=value`` fields separated by single spaces, then `` crc32=`` and the CRC-32
(zlib's, 8 lower-case hex digits) of every byte before that space, then LF::

    v=1 rec=3 jnl=AbC... crc32=0a1b2c3d\\n

A line is **complete** when its LF is there. A complete line is **valid** when its checksum
matches and its fields parse. The LF written after the checksum is what confirms that a write
finished (seed 001's third strategy, STORE-9): a log whose last bytes are not an LF ends in a
**torn** line, which a crash produces; a complete line that is not valid is **corrupt**, which
no crash produces.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from smpref.errors import LineError

CRC_FIELD = b" crc32="
LF = b"\n"



def b64(data: bytes) -> str:
    """URL-safe base64 without padding: IDs, keys and data in every store file."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str, what: str) -> bytes:
    """Decode :func:`b64` strictly (canonical, no padding).

    Raises:
        LineError: naming ``what``.
    """
    if "=" in text or len(text) % 4 == 1:
        raise LineError(f"{what}: not unpadded base64url")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise LineError(f"{what}: not base64url") from None
    if b64(data) != text:
        raise LineError(f"{what}: not canonical base64url")
    return data


def encode_line(fields: Iterable[tuple[str, str]]) -> bytes:
    """One complete line: the fields, the checksum, the LF."""
    body = " ".join(f"{name}={value}" for name, value in fields).encode("ascii")
    return body + CRC_FIELD + b"%08x" % zlib.crc32(body) + LF


def decode_line(line: bytes) -> dict[str, str]:
    """The fields of one line (without its LF).

    Raises:
        LineError: a bad checksum, a missing checksum, a malformed or repeated field.
    """
    body, sep, crc = line.rpartition(CRC_FIELD)
    if not sep:
        raise LineError("no crc32 field")
    if len(crc) != 8 or crc != b"%08x" % zlib.crc32(body):
        raise LineError("crc32 does not match the line")
    fields: dict[str, str] = {}
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        raise LineError("not ASCII") from None
    for item in text.split(" "):
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise LineError(f"field {item!r} is not name=value")
        if name in fields:
            raise LineError(f"field {name} repeated")
        fields[name] = value
    return fields


@dataclass(frozen=True, slots=True)
class LogLine:
    """A valid line: its 1-based number, its parsed value, and its byte range in the file."""

    number: int
    value: Any
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class LogContents:
    """What one log file holds.

    ``valid``: the valid lines in file order. ``corrupt``: numbers of complete lines that are
    not valid, with the reason. ``torn``: whether the file ends in a line without its LF.
    """

    valid: tuple[LogLine, ...]
    corrupt: tuple[tuple[int, str], ...]
    torn: bool
    line_count: int

    def last_corrupt_after_valid(self) -> tuple[int, str] | None:
        """A corrupt complete line after the last valid one: a change that may have been
        acknowledged and cannot be read (STORE-11), or None."""
        last_valid = self.valid[-1].number if self.valid else 0
        after = [c for c in self.corrupt if c[0] > last_valid]
        return after[-1] if after else None


def read_log(data: bytes, parse: Callable[[dict[str, str]], Any]) -> LogContents:
    """Split a log into lines and classify each (see the module docstring). A line is valid
    when :func:`decode_line` and then ``parse`` accept it."""
    valid: list[LogLine] = []
    corrupt: list[tuple[int, str]] = []
    position, number = 0, 0
    while position < len(data):
        end = data.find(LF, position)
        if end < 0:
            return LogContents(tuple(valid), tuple(corrupt), True, number)
        number += 1
        try:
            value = parse(decode_line(data[position:end]))
        except LineError as exc:
            corrupt.append((number, str(exc)))
        else:
            valid.append(LogLine(number, value, position, end + 1))
        position = end + 1
    return LogContents(tuple(valid), tuple(corrupt), False, number)
