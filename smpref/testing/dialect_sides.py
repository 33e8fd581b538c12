"""One protocol's side of the dialect machine (:mod:`smpref.testing.dialect_machine`): its model
server, its sessions and its queues, and how a session reads what it receives.

A session reads each reply as a :class:`~smpref.testing.dialect_oracle.Seen` value. Every MSG is
opened twice: by smpref's client for the protocol, and by the second implementation
(smpref.independent, from DEP-7 and QENC-5..8); a seed session acknowledges its queue's key
records itself, as its client would, before anything is compared.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from smpref.client.connection import open_deployed_message
from smpref.client.core import AuthKeyPair, OwnedQueue, Reply
from smpref.independent.ratchet_mirror import RatchetMirror
from smpref.testing.dialect_oracle import Seen
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.machine_base import SeedBody, mirror_takes, open_msg_again
from smpref.testing.queue_exchanges import error_of
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ACK, GET, MSG, RecordKind


@dataclass
class SideQueue:
    """One side's handle of a queue: its IDs and keys (the same keys on both sides)."""

    owned: OwnedQueue
    notifier_id: bytes = b""
    ntf_key: AuthKeyPair | None = None
    #: what the second implementation opens its MSGs with (smpref.independent): the server's
    #: queue DH key from IDS, a ratchet mirror (the seed side), and the records it opened
    server_dh: bytes = b""
    mirror: RatchetMirror | None = None
    opened: set[bytes] = field(default_factory=set)


@dataclass
class Side:
    """One protocol's server, its sessions and its queues; ``stats`` is the machine's run's
    (the MSGs opened twice are counted there)."""

    dialect: Dialect
    loopback: Loopback
    stats: Counter[str]
    connections: list[LoopbackConnection] = field(default_factory=list)
    queues: list[SideQueue] = field(default_factory=list)
    #: the message ID in flight per (session, queue), from the MSGs this side received
    delivered: dict[tuple[int, int], bytes] = field(default_factory=dict)
    modes: dict[tuple[int, int], str] = field(default_factory=dict)

    def queue_of(self, entity: bytes) -> int:
        for index, queue in enumerate(self.queues):
            if entity in (queue.owned.recipient_id, queue.notifier_id):
                return index
        return -1

    def read(self, s: int, replies: list[Reply]) -> list[Seen]:
        """Session ``s``'s replies as Seen values; a seed session absorbs key records first."""
        out: list[Seen] = []
        pending = list(replies)
        while pending:
            reply = pending.pop(0)
            message, tag = reply.message, reply.tag
            q = self.queue_of(reply.transmission.entity_id)
            if isinstance(message, MSG):
                value = self.open(s, q, message)
                if value is None:  # a seed key record: acknowledge it, as its client would
                    pending[:0] = self.absorb(s, q, message)
                    continue
                out.append(value)
            elif tag in ("END", "DELD", "NMSG"):
                out.append(Seen(tag, q))
            elif tag == "ERR":
                out.append(Seen(f"ERR {error_of(reply)}"))
            else:
                out.append(Seen(tag))
        return out

    def open(self, s: int, q: int, message: MSG) -> Seen | None:
        """A MSG of queue ``q`` as session ``s`` reads it; None for a seed key record."""
        owned = self.queues[q].owned
        self.delivered[(s, q)] = message.msg_id
        again = self.open_independently(q, message)
        if self.dialect is Dialect.DEPLOYED:
            body = open_deployed_message(owned.rcv_dh_secret, message)
            assert again == (body.quota, body.notification, None if body.quota else body.body), \
                f"deployed: the second implementation reads {again}"
            return Seen("MSG", q, None if body.quota else body.body, body.notification,
                        body.quota)
        record, received, _ = owned.open_message(message)
        if again is not None and received.kind is RecordKind.Message:
            assert again[2] == received.body, \
                "seed: the second implementation reads another body"
        if received.kind in (RecordKind.Initial, RecordKind.Update):
            return None
        quota = received.kind is RecordKind.Quota
        return Seen("MSG", q, received.body, record.flags.notification, quota)

    def open_independently(self, q: int, message: MSG
                           ) -> tuple[bool, bool, bytes | None] | None:
        """Open a MSG with the second implementation (smpref.independent, from DEP-7
        and QENC-5..8): (quota marker, notification flag, body or record
        plaintext); None for a seed record opened before (the mirror takes each once). A
        record smpref's client opens but this cannot is a mistake both of smpref's sides
        share."""
        queue = self.queues[q]
        where = f"{self.dialect.value} queue {q}"
        body = open_msg_again(where, queue.owned.dh_key.secret, queue.server_dh, message)
        self.stats["MSGs opened twice"] += 1
        if self.dialect is Dialect.DEPLOYED:  # Int64 ts || flag || ' ' || body, or QUOTA
            if body.startswith(b"QUOTA "):
                return True, False, None
            assert body[8:9] in (b"T", b"F") and body[9:10] == b" ", f"{where}: no flag"
            return False, body[8:9] == b"T", body[10:]
        assert queue.mirror is not None
        if message.msg_id in queue.opened:
            return None
        queue.opened.add(message.msg_id)
        seed = SeedBody.read(body)
        plaintext = mirror_takes(where, queue.mirror, seed.record)
        return seed.record[:1] == b"Q", bool(seed.notification), plaintext

    def absorb(self, s: int, q: int, message: MSG) -> list[Reply]:
        """ACK a key record; in GET mode, GET again: what follows replaces it."""
        owned = self.queues[q].owned
        connection = self.connections[s]
        replies = connection.send(ACK(msg_id=message.msg_id), owned.recipient_id,
                                  owned.auth_key)
        assert replies and replies[0].tag in ("OK", "MSG"), replies
        if replies[0].tag == "OK":
            replies = replies[1:]
            if self.modes.get((s, q)) == "GET":
                replies = connection.send(GET(), owned.recipient_id, owned.auth_key) + replies
        return replies
