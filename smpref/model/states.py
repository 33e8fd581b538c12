"""The states a queue, a session and a transmission's credential can be in.

These are the columns of the rule table (:mod:`smpref.model.rules`): every outcome the model can
give a command depends on these values, on the named guards of the table, and on nothing else.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from smpref.wire.messages import ConnectionMode


class QueueStatus(enum.Enum):
    """Where a queue is in its life (QUEUE-1, ROT-3); deployed SMP's ``EntityActive`` and
    ``EntityOff``. A deleted or expired queue has no status: it is absent."""

    ACTIVE = "active"
    """accepts messages (subject to its sender key and quota)"""
    SUSPENDED = "suspended"
    """OFF was received: it accepts no more messages and drains (ROT-3, ROT-4)"""


class Security(enum.Enum):
    """Whether a queue has a sender key (CMD-13, CMD-14, MSG-1)."""

    UNSECURED = "unsecured"
    """no sender key: SENDs must be unsigned"""
    SECURED = "secured"
    """a sender key: SENDs must be signed with it"""


class SessionMode(enum.Enum):
    """How a session reads one queue: a session that subscribed may not GET, and a session that
    used GET may not subscribe (MSG-3)."""

    SUBSCRIBED = "subscribed"
    """SUB (or NEW with Subscribe): messages are pushed"""
    GETTING = "getting"
    """GET: messages are fetched one at a time"""


class Credential(enum.Enum):
    """What the authorization of one transmission proved (AUTH-1..AUTH-3).

    The key it is checked against is the command's signer (spec/notation.md): a key of the
    queue the entity ID names, or a key the command carries. With no such key a dummy key is
    checked instead, at the same cost, and the credential is INVALID.
    """

    NONE = "none"
    """the transmission carries no authorization"""
    VALID = "valid"
    """the authorization verifies with the signer's key"""
    INVALID = "invalid"
    """the authorization does not verify, or there is no key to verify it with"""


class QueueColumns(Protocol):
    """The columns of a found queue the rule table reads (a QueueRecord, or a
    :class:`QueueView`)."""

    @property
    def mode(self) -> ConnectionMode: ...

    @property
    def security(self) -> Security: ...

    @property
    def status(self) -> QueueStatus: ...


@dataclass(frozen=True, slots=True)
class QueueView:
    """A queue's columns without the queue: for evaluating the table in the abstract (the
    conformance cases, the docs)."""

    mode: ConnectionMode
    security: Security
    status: QueueStatus
