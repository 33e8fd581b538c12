"""Binary primitives of SMP (ENC-1): a strict :class:`Reader` and its pair, the
:class:`Writer`. Every byte layout in smpref is written with these two and nothing else.

Reading is strict: a short read, a bad Bool or Maybe byte, or (via :func:`Reader.finish`)
trailing bytes raise a :class:`~smpref.errors.WireError` subclass carrying the byte offset.
Callers add the field path as the error unwinds (:meth:`WireError.within`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Final

from smpref.errors import (
    BadBoolError,
    BadMaybeError,
    FieldTooLongError,
    ShortReadError,
    TrailingBytesError,
)

_U16: Final = struct.Struct(">H")
_U32: Final = struct.Struct(">I")
_I64: Final = struct.Struct(">q")

SPACE: Final = 0x20
MAYBE_NOTHING: Final = ord("0")
MAYBE_JUST: Final = ord("1")
BOOL_TRUE: Final = ord("T")
BOOL_FALSE: Final = ord("F")


class Reader:
    """A cursor over immutable bytes. ``pos`` is the offset of the next unread byte."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int) -> bytes:
        """Read exactly n bytes."""
        pos = self.pos
        if pos + n > self.end:
            raise ShortReadError(
                f"needs {n} byte{'s' if n != 1 else ''}, {self.end - pos} left", offset=pos
            )
        self.pos = pos + n
        return self.buf[pos : pos + n]

    def byte(self) -> int:
        pos = self.pos
        if pos >= self.end:
            raise ShortReadError("needs 1 byte, 0 left", offset=pos)
        self.pos = pos + 1
        return self.buf[pos]

    def short_string(self) -> bytes:
        """``ss``: one length byte, then that many bytes."""
        pos = self.pos
        if pos >= self.end:
            raise ShortReadError("needs a length byte, 0 left", offset=pos)
        n = self.buf[pos]
        start = pos + 1
        if start + n > self.end:
            raise ShortReadError(
                f"length byte says {n} bytes, {self.end - start} left", offset=pos
            )
        self.pos = start + n
        return self.buf[start : start + n]

    def large(self) -> bytes:
        """``Large``: a big-endian Word16 length, then that many bytes."""
        pos = self.pos
        if pos + 2 > self.end:
            raise ShortReadError(f"needs a 2-byte length, {self.end - pos} left", offset=pos)
        (n,) = _U16.unpack_from(self.buf, pos)
        start = pos + 2
        if start + n > self.end:
            raise ShortReadError(
                f"length says {n} bytes, {self.end - start} left", offset=pos
            )
        self.pos = start + n
        return self.buf[start : start + n]

    def rest(self) -> bytes:
        """``Tail``: everything up to the end."""
        pos = self.pos
        self.pos = self.end
        return self.buf[pos : self.end]

    def word(self) -> bytes:
        """ASCII up to (not including) the next space, or to the end."""
        pos = self.pos
        i = self.buf.find(b" ", pos, self.end)
        stop = self.end if i < 0 else i
        self.pos = stop
        return self.buf[pos:stop]

    def word16(self) -> int:
        return int(_U16.unpack(self.take(2))[0])

    def word32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def int64(self) -> int:
        return int(_I64.unpack(self.take(8))[0])

    def boolean(self) -> bool:
        pos = self.pos
        b = self.byte()
        if b == BOOL_TRUE:
            return True
        if b == BOOL_FALSE:
            return False
        raise BadBoolError(f"Bool byte must be 'T' or 'F', got 0x{b:02x}", offset=pos)

    def maybe(self) -> bool:
        """Read a Maybe tag; True means a value follows."""
        pos = self.pos
        b = self.byte()
        if b == MAYBE_JUST:
            return True
        if b == MAYBE_NOTHING:
            return False
        raise BadMaybeError(f"Maybe byte must be '0' or '1', got 0x{b:02x}", offset=pos)

    def finish(self) -> None:
        """Require that everything was read."""
        if self.pos != self.end:
            raise TrailingBytesError(
                f"{self.end - self.pos} unexpected trailing bytes", offset=self.pos
            )


class Writer(bytearray):
    """An output buffer with SMP's primitives, the pair of :class:`Reader`: every method writes
    one primitive of ENC-1, so no caller writes a length, a tag byte or a separator by
    hand. It is a ``bytearray``: ``bytes(writer)`` is the encoding.

    Methods return nothing; an encoder that cannot write a value (a ShortString over 255 bytes)
    raises :class:`~smpref.errors.FieldTooLongError` before writing anything.
    """

    __slots__ = ()

    #: bytes as they are: fixed-size fields, ``Tail``, or a literal of the notation (the C
    #: method itself: these run once per field, so no Python frame is added for them)
    raw = bytearray.extend
    #: one byte
    byte = bytearray.append

    def word16(self, value: int) -> None:
        self += _U16.pack(value)

    def word32(self, value: int) -> None:
        self += _U32.pack(value)

    def int64(self, value: int) -> None:
        self += _I64.pack(value)

    def short_string(self, value: bytes) -> None:
        """``ss``: one length byte, then the bytes."""
        if len(value) > 255:
            raise FieldTooLongError(f"shortString holds at most 255 bytes, got {len(value)}")
        self.append(len(value))
        self += value

    def large(self, value: bytes | bytearray) -> None:
        """``Large``: a big-endian Word16 length, then the bytes."""
        if len(value) > 0xFFFF:
            raise FieldTooLongError(f"Large holds at most 65535 bytes, got {len(value)}")
        self += _U16.pack(len(value))
        self += value

    def boolean(self, value: bool) -> None:
        """``'T'`` or ``'F'``."""
        self.append(BOOL_TRUE if value else BOOL_FALSE)

    def nothing(self) -> None:
        """An absent ``Maybe``: ``'0'``."""
        self.append(MAYBE_NOTHING)

    def just(self) -> None:
        """A present ``Maybe``: ``'1'``; its value follows."""
        self.append(MAYBE_JUST)

    def list_count(self, n: int) -> None:
        """The count byte of a list (1 byte: at most 255 items)."""
        if not 0 <= n <= 255:
            raise FieldTooLongError(f"a list holds at most 255 items, got {n}")
        self.append(n)

    def space(self) -> None:
        """The 0x20 between a tag or word and what follows."""
        self.append(SPACE)


def encode(write: Callable[[Writer], None]) -> bytes:
    """The bytes ``write`` produces into a fresh :class:`Writer`."""
    w = Writer()
    write(w)
    return bytes(w)
