"""The one error hierarchy of smpref: every exception smpref defines is here.

Every error smpref raises is a :class:`SmprefError`; each carries enough context (a field path,
a byte offset, a column, a file and line) to tell the user what was wrong and where. A class
whose errors can reach the wire names the one SMP ``ERR`` a server answers with
(:attr:`SmprefError.smp_error`, deployed SMP's text form; :func:`smpref.wire.schema.wire_error`
turns it into an ``ErrorType``). Anything else raised from smpref code is a bug.

The tree, by layer:

* specification and data: :class:`ResourceMissingError`, :class:`NotationError`;
* bytes: :class:`WireError` and its kinds, :class:`BlockError`, :class:`CredentialError`;
* text: :class:`InvalidValueError`, :class:`UriSyntaxError`;
* cryptography: :class:`CryptoError`, :class:`RatchetError`;
* storage: :class:`StoreError` and its kinds, :class:`LineError`;
* transport and clients: :class:`TlsCredentialError`, :class:`IdentityError`,
  :class:`VersionError`, :class:`HandshakeFailedError`, :class:`ConnectionClosedError`,
  :class:`ClientError`, :class:`UnsupportedError`, :class:`ConnectError`;
* agents: :class:`AgentError`, :class:`RotationRefusedError`, :class:`EnvelopeError`;
* vectors: :class:`VectorError`, :class:`VectorCheckError`, :class:`MalformedError`;
* test harnesses: :class:`StoresDisagreeError`, :class:`SimulatedCrashError`,
  :class:`UnsupportedStrategyError`.

The one exception: a conformance case's verdicts (``Fail``, ``Skip``, ``Info``), outcomes a
case raises to end early rather than errors of smpref, live in :mod:`smpref.conform.case_verdicts`.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.Enum):
    """Every ``ERR`` smpref's own code answers with, by name; the value is deployed SMP's text
    form (what follows ``ERR ``), which :func:`smpref.wire.schema.error_type` turns into the
    ``ErrorType`` the codec encodes. tests/test_errors.py checks each value parses and renders
    back to itself."""

    AUTH = "AUTH"
    BLOCK = "BLOCK"
    SESSION = "SESSION"
    SERVICE = "SERVICE"
    CRYPTO = "CRYPTO"
    LARGE_MSG = "LARGE_MSG"
    NO_MSG = "NO_MSG"
    QUOTA = "QUOTA"
    INTERNAL = "INTERNAL"
    STORE = "STORE storage failure"
    CMD_SYNTAX = "CMD SYNTAX"
    CMD_UNKNOWN = "CMD UNKNOWN"
    CMD_PROHIBITED = "CMD PROHIBITED"
    CMD_NO_AUTH = "CMD NO_AUTH"
    CMD_HAS_AUTH = "CMD HAS_AUTH"
    CMD_NO_ENTITY = "CMD NO_ENTITY"
    PROXY_BASIC_AUTH = "PROXY BASIC_AUTH"
    PROXY_NO_SESSION = "PROXY NO_SESSION"
    PROXY_BROKER_HOST = "PROXY BROKER HOST"
    PROXY_BROKER_NETWORK = "PROXY BROKER NETWORK"
    PROXY_BROKER_TIMEOUT = "PROXY BROKER TIMEOUT"
    PROXY_BROKER_VERSION = "PROXY BROKER TRANSPORT VERSION"
    PROXY_BROKER_NO_AUTH = "PROXY BROKER TRANSPORT NO_AUTH"


class SmprefError(Exception):
    """Base of every error smpref raises.

    ``smp_error`` is the ``ERR`` a server answers with when the error reaches the wire
    (:class:`ErrorCode`; :func:`smpref.wire.schema.wire_error` makes it an ``ErrorType``); None
    for errors that never reach the wire (files, command-line input, test harnesses).
    """

    smp_error: ErrorCode | None = None

    def describe(self) -> tuple[str, dict[str, str | int]]:
        """(what was wrong, where it was): the where as named fields, any of ``path``,
        ``field``, ``offset``, ``column``, ``line``. The command line prints them as one line,
        or as JSON with ``--json``."""
        return str(self), {}


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
        self.message = message
        self.line = line
        self.column = column

    def describe(self) -> tuple[str, dict[str, str | int]]:
        where: dict[str, str | int] = {"path": "spec/commands.smpn"}
        if self.line is not None:
            where["line"] = self.line
        if self.column is not None:
            where["column"] = self.column
        return self.message, where


class WireError(SmprefError):
    """Bytes that do not decode, or a value that cannot be encoded.

    Attributes:
        path: dotted field path, e.g. ``NEW.queueRequest.queueLink.senderId``.
        offset: byte offset in the input where the problem was found (None when encoding).
        smp_error: the ``ERR`` a server answers with, e.g. ``ErrorCode.CMD_SYNTAX``.
    """

    smp_error: ErrorCode = ErrorCode.CMD_SYNTAX

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

    def describe(self) -> tuple[str, dict[str, str | int]]:
        where: dict[str, str | int] = {}
        if self.path:
            where["field"] = self.path
        if self.offset is not None:
            where["offset"] = self.offset
        return self.reason, where

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

    smp_error: ErrorCode = ErrorCode.CMD_UNKNOWN


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

    smp_error: ErrorCode = ErrorCode.BLOCK


class CredentialError(WireError):
    """A transmission's authorization or entity breaks its command's credential rule (TRANS-7).
    One subclass per answer."""


class NoAuthError(CredentialError):
    """The command needs an authorization and an entity ID and lacks one."""

    smp_error: ErrorCode = ErrorCode.CMD_NO_AUTH


class HasAuthError(CredentialError):
    """The command carries an authorization or an entity ID it must not carry."""

    smp_error: ErrorCode = ErrorCode.CMD_HAS_AUTH


class NoEntityError(CredentialError):
    """The command needs an entity ID and has none."""

    smp_error: ErrorCode = ErrorCode.CMD_NO_ENTITY


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

    def describe(self) -> tuple[str, dict[str, str | int]]:
        return f"not a valid {self.kind}: {self.what}", {"column": self.column}


class StoreError(SmprefError):
    """The journal store cannot read or write a file (STORE-11, STORE-12).

    A server answers the command that met it with ``ERR STORE`` and keeps serving every other
    queue. Attributes:
        path: the file or folder, relative to the store's root.
        line: the 1-based line of a log file, when the problem is one line.
    """

    smp_error: ErrorCode = ErrorCode.STORE

    def __init__(self, path: str, reason: str, *, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")

    def describe(self) -> tuple[str, dict[str, str | int]]:
        where: dict[str, str | int] = {"path": self.path}
        if self.line is not None:
            where["line"] = self.line
        return self.reason, where


class StoreReadOnlyError(StoreError):
    """Opening the store read-only met something that would have to be written (a recovery,
    a compaction); ``smpref store check --repair`` does it."""


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


class LineError(SmprefError, ValueError):
    """One line of a store log does not parse; the message says which field and why. The
    journal store turns it into a :class:`StoreCorruptError` naming the file and line."""


# ---------------------------------------------------------------------------------------------
# Cryptography


class CryptoError(SmprefError):
    """A ciphertext, signature or key failed a cryptographic check."""

    smp_error: ErrorCode = ErrorCode.CRYPTO


class RatchetError(CryptoError):
    """The ratchet mirror rejected a record; ``reason`` names why (QENC-8)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason


# ---------------------------------------------------------------------------------------------
# Agents (spec/rotation.md): refusals and undecodable envelopes; none reaches the wire.


class AgentError(SmprefError):
    """An agent refused an operation, or met a message it cannot take."""


class RotationRefusedError(AgentError):
    """A rotation cannot start or abort now (ROT-11, ROT-12); the message says why."""


class EnvelopeError(AgentError):
    """A delivered message is not an agent envelope (ROT-5); the message says what failed."""


# ---------------------------------------------------------------------------------------------
# Transport and clients: these end a connection; none is an ERR answer.


class TlsCredentialError(SmprefError):
    """The credential folder holds files that are missing, unreadable or inconsistent."""


class IdentityError(SmprefError):
    """The server's certificates do not prove the identity in the address (TRANS-1)."""


class VersionError(SmprefError):
    """The two sides have no version in common (deployed TEVersion)."""


class HandshakeFailedError(SmprefError):
    """The handshake failed. ``error`` is deployed SMP's transport error for it
    (``HANDSHAKE PARSE``, ``HANDSHAKE IDENTITY``, ``VERSION``, ...); the connection closes."""

    def __init__(self, error: str, detail: str) -> None:
        super().__init__(f"{error}: {detail}")
        self.error = error
        self.detail = detail


class ConnectionClosedError(SmprefError):
    """The peer closed the connection, possibly in the middle of a block."""


class ClientError(SmprefError):
    """A client's connection failed: TLS, identity, handshake, or the server closed it.

    ``broker`` is deployed's BrokerErrorType for the failure (``NETWORK``, ``TIMEOUT``,
    ``TRANSPORT HANDSHAKE IDENTITY``, ...): what a proxy reports about a relay it could not
    reach (DEP-15)."""

    def __init__(self, message: str, *, broker: str = "NETWORK") -> None:
        super().__init__(message)
        self.broker = broker


class UnsupportedError(ClientError):
    """The command is a seed extension and the server negotiated a deployed version."""


class ConnectError(SmprefError):
    """The conformance runner cannot reach the server or complete its handshake."""


# ---------------------------------------------------------------------------------------------
# Vectors


class VectorError(SmprefError):
    """A vector file, the manifest or its signature failed verification (names the file)."""


class NotVectorsError(VectorError):
    """A folder given as the vectors holds no vector manifest: bad input, not a failed check."""


class UsageError(SmprefError):
    """A command-line argument or option is not usable: a path, a host, a key, a password.
    ``path`` names the file or folder when there is one."""

    def __init__(self, what: str, *, path: str | None = None, option: str | None = None
                 ) -> None:
        super().__init__(what)
        self.what = what
        self.path = path
        self.option = option

    def describe(self) -> tuple[str, dict[str, str | int]]:
        where: dict[str, str | int] = {}
        if self.option:
            where["option"] = self.option
        if self.path:
            where["path"] = self.path
        return self.what, where


class StoreLockedError(SmprefError):
    """Another process holds the store's lock; ``pid`` names it."""

    def __init__(self, root: str, pid: int | None) -> None:
        holder = f"process {pid}" if pid else "another process"
        super().__init__(f"the store is in use by {holder}")
        self.root = root
        self.pid = pid

    def describe(self) -> tuple[str, dict[str, str | int]]:
        return str(self), {"path": self.root}


class VectorCheckError(SmprefError):
    """A vector does not hold under the independent path."""


class MalformedError(SmprefError):
    """The independent decoder rejects bytes; ``unknown`` when the tag is not defined."""

    def __init__(self, reason: str, *, unknown: bool = False) -> None:
        super().__init__(reason)
        self.unknown = unknown


# ---------------------------------------------------------------------------------------------
# Conformance verdicts and test harnesses: outcomes of checks, not faults of smpref.


class SimulatedCrashError(SmprefError):
    """A test harness made an agent crash just before it sent a command (the rotation
    state machine's crash before ``ACK``)."""


class UnsupportedStrategyError(SmprefError, TypeError):
    """A state machine's rule draws from a strategy the seeded campaign engine does not
    translate (:mod:`smpref.testing.seeded_programs`); the message names the strategy."""


class StoresDisagreeError(SmprefError, AssertionError):
    """The journal store and the memory store led the model to different outputs or states
    (the differential harness; an AssertionError, so Hypothesis shrinks it)."""


def shown(data: bytes) -> str:
    """Bytes as an error message shows them: ``'PING'`` when they are printable ASCII, else
    their hex with ``(hex)`` (never Python's ``b'...'``)."""
    if data and all(0x21 <= b < 0x7F for b in data):
        return "'" + data.decode("ascii") + "'"
    return f"{data.hex()} (hex)" if data else "nothing"
