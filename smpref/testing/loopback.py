"""A server and its clients in one process, exchanging encoded transmissions (no I/O).

Every command goes through the wire format both ways, so the model is exercised exactly as a
transport would exercise it. Pushed events for a connection are queued in its ``inbox``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from smpref.client.core import AuthKeyPair, ClientSession, Reply
from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import Random, SeededRandom
from smpref.model.config import ServerConfig
from smpref.model.environment import ManualClock
from smpref.model.queue_store import MemoryStore, QueueStore
from smpref.model.server import Server
from smpref.model.sessions import Outgoing
from smpref.wire.dialects import Dialect
from smpref.wire.structs import Message


@dataclass
class LoopbackConnection:
    """One client connection to a :class:`Loopback` server."""

    loopback: Loopback
    client: ClientSession
    inbox: deque[Reply] = field(default_factory=deque)
    #: the protocol the connection speaks, as its ALPN would choose (TRANS-11)
    dialect: Dialect = Dialect.SEED
    #: the X25519 secret whose key the client's hello carried, when it sent one (a proxy's
    #: connection to a relay, DEP-14)
    hello_secret: bytes | None = None

    @property
    def session_id(self) -> bytes:
        return self.client.session_id

    def send_raw(self, data: bytes) -> list[Reply]:
        """Send encoded bytes; return the replies with this transmission's answer first."""
        return self.loopback.deliver(self, data)

    def send(self, message: Message, entity_id: bytes = b"", key: AuthKeyPair | None = None,
             corr_id: bytes | None = None) -> list[Reply]:
        _, data = self.client.transmission(message, entity_id, key, corr_id)
        return self.send_raw(data)

    def request(self, message: Message, entity_id: bytes = b"",
                key: AuthKeyPair | None = None) -> tuple[bytes, list[Reply]]:
        corr, data = self.client.transmission(message, entity_id, key)
        return corr, self.send_raw(data)

    def close(self) -> None:
        self.loopback.server.close_session(self.session_id)


class Loopback:
    """A model server with a manual clock, seeded randomness and a store."""

    def __init__(self, seed: int = 0, config: ServerConfig | None = None,
                 store: QueueStore | None = None) -> None:
        self.clock = ManualClock()
        self.server_random: Random = SeededRandom(b"server" + seed.to_bytes(8, "big"))
        self.client_random: Random = SeededRandom(b"client" + seed.to_bytes(8, "big"))
        self.store = store if store is not None else MemoryStore()
        self.server = Server(config or ServerConfig(), self.store, self.clock,
                             self.server_random)
        self.connections: dict[bytes, LoopbackConnection] = {}

    def connect(self, dialect: Dialect = Dialect.SEED, version: int | None = None, *,
                hello_key: bool = False) -> LoopbackConnection:
        """A new session of ``dialect``, at a deployed ``version`` (None: the current
        layouts), whose transmissions both ways are in that version's layouts (DEP-12);
        with ``hello_key``, its hello carried a key, as a proxy's does (DEP-14)."""
        session_id = self.client_random(32)
        secret = self.server_random(32)
        hello_secret = self.client_random(32) if hello_key else None
        self.open_session(session_id, secret, dialect, version,
                          None if hello_secret is None else x25519_public(hello_secret))
        client = ClientSession(session_id, x25519_public(secret), self.client_random, version)
        connection = LoopbackConnection(self, client, dialect=dialect,
                                        hello_secret=hello_secret)
        self.connections[session_id] = connection
        return connection

    def route(self, outgoing: list[Outgoing]) -> list[tuple[bytes, Reply]]:
        """Encode and decode every outgoing transmission, each in its session's layouts;
        return (session, reply) pairs."""
        out_replies = []
        for out in outgoing:
            connection = self.connections.get(out.session_id)
            dialect = connection.dialect if connection is not None else Dialect.SEED
            version = connection.client.version if connection is not None else None
            out_replies.append((out.session_id,
                                Reply.decode(out.encode(version), dialect, version)))
        return out_replies

    def deliver(self, connection: LoopbackConnection, data: bytes) -> list[Reply]:
        mine = []
        for session_id, reply in self.route(self.process(connection.session_id, data)):
            if session_id == connection.session_id:
                mine.append(reply)
            else:
                self.connections[session_id].inbox.append(reply)
        return mine

    def expire(self) -> None:
        for session_id, reply in self.route(self.sweep()):
            self.connections[session_id].inbox.append(reply)

    def sweep_slice(self, limit: int) -> bool:
        """One slice of the sweep over at most ``limit`` queues (RET-7), its pushes queued in
        the inboxes; whether the cycle ended."""
        out, done = self.process_slice(limit)
        for session_id, reply in self.route(out):
            self.connections[session_id].inbox.append(reply)
        return done

    def process_slice(self, limit: int) -> tuple[list[Outgoing], bool]:
        """One slice of the server's sweep (a hook for shadowing servers)."""
        return self.server.sweep(limit)

    def open_session(self, session_id: bytes, secret: bytes,
                     dialect: Dialect = Dialect.SEED, version: int | None = None,
                     peer_key: bytes | None = None) -> None:
        """Register a connection with the server (a hook for shadowing servers)."""
        self.server.open_session(session_id, secret, dialect, version, peer_key)

    def process(self, session_id: bytes, data: bytes) -> list[Outgoing]:
        """The server's answer to one transmission (a hook for shadowing servers)."""
        return self.server.receive(session_id, data)

    def sweep(self) -> list[Outgoing]:
        """A whole sweep cycle of the server (a hook for shadowing servers)."""
        return self.server.expire()
