"""What an agent keeps: its durable state, which survives a restart, and its memory, which
does not (spec/rotation.md).

Durable: the queues it owns and sends to, the rotation's phase, the unsent envelopes, both
chains, and what it handed to the application. Memory: a message held back (ROT-8), how much
of a suspended queue is left to drain (ROT-9), and which queues are subscribed on the current
connections. A restarted agent starts with empty memory and rebuilds it from the servers:
subscribing again makes the servers deliver every unacknowledged message again.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field

from smpref.agent.envelope import ReceiveChain, SendChain
from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue
from smpref.wire.messages import MSG, AgentEnvelope, QueueAddress


class Profile(enum.Enum):
    """Which rotation flow an agent runs."""

    SEED = "seed"  # spec/rotation.md: seed 002 with ROT-5 to ROT-13
    SEED_AS_WRITTEN = "seed-as-written"  # seed 002 read literally: QHELLO is numbered (DIV-33)
    DEPLOYED = "deployed"  # deployed agents' QADD, QKEY, QUSE, QTEST (ROT-14)


class Phase(enum.Enum):
    """The recipient's side of a rotation of its receive queue."""

    IDLE = "idle"
    CREATED = "created"  # the new queue exists; QNEW (QADD) is queued
    SECURED = "secured"  # KEY done; QREADY (QUSE) is queued
    SWITCHING = "switching"  # QSWITCH queued and OFF sent: the old queue drains (ROT-9)


class SenderState(enum.Enum):
    """The sender's side of a new queue the peer announced."""

    KEYS_SENT = "keys sent"  # QKEYS (QKEY) is queued
    HELLO_SENT = "hello sent"  # QHELLO (QTEST) was accepted by the new queue


@dataclass
class ReceiveQueue:
    """A queue the agent owns: its server, its owner keys and IDs, and the end-to-end DH key
    the sender is given for it."""

    server: bytes
    owner: OwnedQueue
    e2e: DhKeyPair

    @property
    def rid(self) -> bytes:
        return self.owner.recipient_id

    def address(self) -> QueueAddress:
        return QueueAddress(server=self.server, sender_id=self.owner.sender_id,
                            dh_key=self.e2e.public)


@dataclass
class SendQueue:
    """A queue the agent sends to: its address and the key that secures it."""

    address: QueueAddress
    key: AuthKeyPair
    state: SenderState = SenderState.HELLO_SENT

    @property
    def server(self) -> bytes:
        return self.address.server


@dataclass
class Unsent:
    """An envelope waiting for a server's OK (ROT-10). ``bound`` is the sender ID of the queue
    it was assigned to when it was made (the deployed profile only; None otherwise)."""

    data: bytes
    msg_no: int
    bound: bytes | None = None


@dataclass
class Durable:
    """Everything an agent keeps across a restart."""

    receive: ReceiveQueue | None = None
    receive_new: ReceiveQueue | None = None
    phase: Phase = Phase.IDLE
    send: SendQueue | None = None
    send_new: SendQueue | None = None
    outbox: list[Unsent] = field(default_factory=list)
    send_chain: SendChain = field(default_factory=SendChain)
    receive_chain: ReceiveChain = field(default_factory=ReceiveChain)
    delivered: list[bytes] = field(default_factory=list)
    deleted: bool = False
    #: rotations completed / aborted, envelopes by ROT-6 verdict, envelopes dropped unsent...
    counts: Counter[str] = field(default_factory=Counter)


@dataclass
class Held:
    """A delivery from the new queue held back, unacknowledged (ROT-8)."""

    queue: ReceiveQueue
    msg: MSG
    envelope: AgentEnvelope


@dataclass
class Memory:
    """What a restart loses."""

    held: Held | None = None
    #: records of the suspended old queue still to acknowledge, from OFF's COUNT (ROT-9)
    drain_left: int | None = None
    subscribed: set[bytes] = field(default_factory=set)
