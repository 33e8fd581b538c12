"""What the judge knows (:mod:`smpref.clientcheck.judge`): each connection, each queue a client
created, and the findings; :class:`JudgeState`, the state every part of the judge shares, and
how a judgement is recorded.

The state is shared between the event loop and the engine's thread: every hook holds
:attr:`JudgeState.lock`.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from smpref.clientcheck.catalogue import CHECK_BY_ID
from smpref.errors import WireError
from smpref.serve.watcher import Watcher
from smpref.wire.dialects import Dialect
from smpref.wire.json_forms import transmission_to_json

if TYPE_CHECKING:
    from smpref.clientcheck.situations import CaseRunner

#: transmissions kept per connection for the exchange a finding quotes
EXCHANGE = 6


@dataclass
class Sent:
    """One transmission of an exchange: its direction and bytes, decoded for the report."""

    direction: str
    data: bytes
    dialect: Dialect
    version: int | None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"dir": self.direction}
        try:
            decoded = transmission_to_json(self.data, dialect=self.dialect,
                                           version=self.version)
        except WireError as exc:
            entry.update(error=str(exc), hex=self.data.hex())
        else:
            decoded.pop("credentialCheck", None)
            entry.update(decoded)
        return entry


@dataclass
class Finding:
    """A check failed once: why, and the exchange that decided it."""

    check: str
    conn: int
    detail: str = ""
    exchange: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Connection:
    """What the judge knows of one client connection."""

    number: int
    #: the ALPN token TLS selected
    alpn: str | None
    sni: str | None
    #: the protocol the server serves for that ALPN (TRANS-11)
    dialect: Dialect
    session_id: bytes = b""
    version: int | None = None
    #: the negotiated version, also for the seed design (1000)
    negotiated: int | None = None
    opened: float = field(default_factory=time.monotonic)
    closed: str | None = None
    corr_ids: set[bytes] = field(default_factory=set)
    #: corrId -> entity ID of commands whose answers are not routed yet
    pending: dict[bytes, bytes] = field(default_factory=dict)
    #: recipient ID -> message ID delivered and not acknowledged
    in_flight: dict[bytes, bytes] = field(default_factory=dict)
    #: recipient IDs whose subscription END ended, not subscribed again since
    ended: set[bytes] = field(default_factory=set)
    recent: deque[Sent] = field(default_factory=lambda: deque(maxlen=EXCHANGE))
    transmissions: int = 0
    #: its TLS handshake failed: it never reached SMP, and the server gave it no number
    refused: bool = False
    #: its client hello was judged, or its lack of one
    hello_judged: bool = False

    def exchange(self, *extra: Sent) -> list[dict[str, Any]]:
        return [sent.to_json() for sent in (*self.recent, *extra)]

    def to_json(self) -> dict[str, Any]:
        """The report's entry: what was negotiated (no ALPN is ``none``; a connection whose
        TLS failed has no protocol), never a default."""
        return {"conn": self.number, "alpn": self.alpn or "none", "sni": self.sni,
                "protocol": "none" if self.refused else self.dialect.value,
                "version": self.negotiated, "transmissions": self.transmissions,
                "end": self.closed}


@dataclass
class QueueSeen:
    """A queue the client created: its IDs, and whether the session used it."""

    recipient_id: bytes
    conn: int
    ids: set[bytes]
    used: bool = False


class JudgeState(Watcher):
    """The state of a judge and its findings, which its checks (the classes
    :class:`~smpref.clientcheck.judge.Judge` is made of) read and record into."""

    def __init__(self, *, cases: CaseRunner | None = None) -> None:
        self.lock = threading.RLock()
        #: every failure, with its detail and exchange; passes are only counted
        self.findings: list[Finding] = []
        self.passes: Counter[str] = Counter()
        self.connections: dict[int, Connection] = {}
        #: connections whose TLS handshake failed (the server never numbered them)
        self.refused: list[Connection] = []
        self.by_session: dict[bytes, Connection] = {}
        self.queues: dict[bytes, QueueSeen] = {}
        self.commands: Counter[str] = Counter()
        #: entity IDs of queues the server deleted in a case: the case judges their use
        self.deleted: set[bytes] = set()
        self.cases = cases
        self.last_activity = time.monotonic()
        #: the check is ending: the server closes what the client left open
        self.stopping = False
        #: sessions the server ended on its own (case 9)
        self.ended_by_server: set[bytes] = set()

    # --- findings ----------------------------------------------------------------------------

    def record(self, check: str, passed: bool, conn: Connection | int, detail: str = "",
               *extra: Sent) -> None:
        """Record one judgement of ``check`` (a catalogue ID)."""
        assert check in CHECK_BY_ID, check
        if passed:  # counted, not kept: a long check judges every transmission
            self.passes[check] += 1
            return
        number = conn if isinstance(conn, int) else conn.number
        exchange = [] if isinstance(conn, int) else conn.exchange(*extra)
        self.findings.append(Finding(check, number, detail, exchange))

    def open_connections(self) -> int:
        with self.lock:
            return sum(1 for c in self.connections.values() if c.closed is None)

    def seen_any(self) -> bool:
        """Whether any client connected, whether or not its TLS handshake finished."""
        with self.lock:
            return bool(self.connections or self.refused)

    def recorded(self) -> list[Connection]:
        """Every connection so far, in the order they came: those whose TLS failed too."""
        with self.lock:
            return sorted([*self.connections.values(), *self.refused],
                          key=lambda c: c.opened)
