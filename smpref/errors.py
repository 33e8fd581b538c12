"""The one error hierarchy of smpref.

Every error smpref raises on bad input is a :class:`SmprefError`; each carries enough context
(a field path, a byte offset, a column) to tell the user what was wrong and where. Errors that
reach the wire map to exactly one SMP ``ERR`` (:attr:`WireError.smp_error`). Anything else
raised from smpref code is a bug.
"""

from __future__ import annotations


class SmprefError(Exception):
    """Base of every error smpref raises.

    ``smp_error`` is the ``ERR`` a server answers with when the error reaches the wire, in
    deployed SMP's text form (``"CMD SYNTAX"``; :func:`smpref.wire.schema.parse_error` reads
    it); None for errors that never reach the wire (files, command-line input, test harnesses).
    """

    smp_error: str | None = None


class ResourceMissingError(SmprefError):
    """A spec or grammar file is missing from the installed package."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"packaged data file {path!r} is missing: smpref must be imported from an "
            "installed wheel (pip install .), which carries spec/ and grammar/"
        )
        self.path = path


class NotationError(SmprefError):
    """spec/commands.smpn is malformed or inconsistent (a bug in the spec, not user input)."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None):
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"spec/commands.smpn: {where}{message}")
        self.line = line
        self.column = column


class WireError(SmprefError):
    """Bytes that do not decode, or a value that cannot be encoded.

    Attributes:
        path: dotted field path, e.g. ``NEW.queueRequest.queueLink.senderId``.
        offset: byte offset in the input where the problem was found (None when encoding).
        smp_error: the ``ERR`` a server answers with, e.g. ``"CMD SYNTAX"``.
    """

    smp_error = "CMD SYNTAX"

    def __init__(self, reason: str, *, path: str = "", offset: int | None = None) -> None:
        self.reason = reason
        self.path = path
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.path:
            where.append(f"field {self.path}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason

    def within(self, name: str) -> WireError:
        """Prefix ``name`` to the field path (used while the error unwinds) and return self."""
        self.path = f"{name}.{self.path}" if self.path else name
        self.args = (self._render(),)
        return self


class ShortReadError(WireError):
    """The input ended before a field did."""


class TrailingBytesError(WireError):
    """Bytes were left after the last field."""


class BadTagError(WireError):
    """An enum byte, word or union tag is not one of the defined values."""


class UnknownCommandError(WireError):
    """The command or response tag is not defined (ERR CMD UNKNOWN)."""

    smp_error = "CMD UNKNOWN"


class BadMaybeError(WireError):
    """A Maybe byte is neither '0' nor '1'."""


class BadBoolError(WireError):
    """A Bool byte is neither 'T' nor 'F'."""


class FieldTooLongError(WireError):
    """A value is longer than its length prefix can say (encoding) or its type allows."""


class BadKeyError(WireError):
    """A key is not an X.509 SubjectPublicKeyInfo of an allowed algorithm."""


class BadValueError(WireError):
    """A value has the wrong Python type or range for its field (encoding, JSON input)."""


class BlockError(WireError):
    """A transport block is malformed (ERR BLOCK)."""

    smp_error = "BLOCK"


class CredentialError(WireError):
    """A transmission's authorization or entity breaks its command's credential rule."""

    def __init__(self, smp_error: str, reason: str) -> None:
        super().__init__(reason)
        self.smp_error = smp_error


class InvalidValueError(SmprefError, ValueError):
    """A link, address or other value object was constructed with invalid fields."""


class UriSyntaxError(SmprefError):
    """A URI, address or short link does not parse.

    Attributes:
        text: the input.
        column: 1-based column of the first offending character.
        what: what was expected or wrong there.
    """

    def __init__(self, kind: str, text: str, column: int, what: str) -> None:
        self.kind = kind
        self.text = text
        self.column = column
        self.what = what
        super().__init__(f"{kind}: column {column}: {what}")


class StoreError(SmprefError):
    """The journal store cannot read or write a file (STORE-11, STORE-12).

    A server answers the command that met it with ``ERR STORE`` and keeps serving every other
    queue. Attributes:
        path: the file or folder, relative to the store's root.
        line: the 1-based line of a log file, when the problem is one line.
    """

    smp_error = "STORE storage failure"

    def __init__(self, path: str, reason: str, *, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


class StoreCorruptError(StoreError):
    """A file holds something no crash can produce: a complete line that does not parse, a
    journal shorter than its committed size, a blob whose digest matches no copy."""


class StoreIOError(StoreError):
    """The operating system refused a read or write (ENOSPC, EIO, EACCES, ...)."""

    def __init__(self, path: str, error: OSError) -> None:
        self.errno = error.errno
        super().__init__(path, f"{error.strerror or error} (errno {error.errno})")


class NotAStoreError(StoreError):
    """The directory is not empty and is not a smpref journal store of a known version."""
