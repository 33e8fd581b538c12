"""The agent envelope: message numbers and the hash chain of one direction (ROT-5, ROT-6).

A :class:`SendChain` numbers the envelopes an agent sends on a connection; a
:class:`ReceiveChain` classifies the ones it receives. Both are part of an agent's durable
state: a restarted agent must neither reuse a number nor accept an old envelope twice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from smpref.crypto.primitives import sha256
from smpref.errors import EnvelopeError, WireError
from smpref.wire.messages import AgentEnvelope, AgentMessage
from smpref.wire.schema import decode_struct

#: prevHash of the first envelope of a direction, and of QHELLO (ROT-5, ROT-7)
ZERO_HASH = bytes(32)


def envelope_hash(envelope: AgentEnvelope) -> bytes:
    """SHA-256 of the envelope's encoding: the next envelope's prevHash (ROT-5)."""
    return sha256(bytes(envelope.encode()))


def decode_envelope(data: bytes) -> AgentEnvelope:
    """Decode a delivered message body as an envelope.

    Raises:
        EnvelopeError: the bytes are not an ``AgentEnvelope`` (the error names the field).
    """
    try:
        return decode_struct(AgentEnvelope, data)
    except WireError as exc:
        raise EnvelopeError(f"not an agent envelope: {exc}") from None


def probe(message: AgentMessage) -> AgentEnvelope:
    """QHELLO's envelope: outside the numbered sequence, number 0, zero prevHash (ROT-7)."""
    return AgentEnvelope(msg_no=0, prev_hash=ZERO_HASH, message=message)


@dataclass
class SendChain:
    """The numbering of one direction, on the sending side (ROT-5)."""

    next_no: int = 1
    prev_hash: bytes = ZERO_HASH

    def seal(self, message: AgentMessage) -> AgentEnvelope:
        """The next numbered envelope for ``message``; the chain advances."""
        envelope = AgentEnvelope(msg_no=self.next_no, prev_hash=self.prev_hash, message=message)
        self.next_no += 1
        self.prev_hash = envelope_hash(envelope)
        return envelope


class Verdict(enum.Enum):
    """What the receiving side makes of a numbered envelope (ROT-6)."""

    NEXT = "next"
    DUPLICATE = "duplicate"
    GAP = "gap"
    CONFLICT = "conflict"


@dataclass
class ReceiveChain:
    """The last envelope processed in one direction, on the receiving side (ROT-6)."""

    last_no: int = 0
    last_hash: bytes = ZERO_HASH

    def classify(self, envelope: AgentEnvelope) -> Verdict:
        """ROT-6's verdict on a numbered envelope; the chain is not changed."""
        if envelope.msg_no <= self.last_no:
            return Verdict.DUPLICATE
        if envelope.msg_no > self.last_no + 1:
            return Verdict.GAP
        return Verdict.NEXT if envelope.prev_hash == self.last_hash else Verdict.CONFLICT

    def accept(self, envelope: AgentEnvelope) -> None:
        """Record a processed envelope as the last one."""
        self.last_no = envelope.msg_no
        self.last_hash = envelope_hash(envelope)
