"""One command being processed: what the generic step found, and the rule table's guards.

A :class:`Step` is built by :meth:`smpref.model.server.ServerState.receive` after the queue lookup
and the authorization check; the rule table (:mod:`smpref.model.rules`) decides with it, and the
effect of an accepted command (:mod:`smpref.model.effects`) reads it. :data:`GUARDS` holds one
predicate per :class:`~smpref.model.rules.Guard`.

Two values are prepared lazily, once, because a guard and an effect both need them and their
cost or their randomness must be spent only once: the server's choices for a NEW
(:class:`NewQueueMaterial`, drawn from the server's random source in a fixed order) and the
sealed LINK answer of an LGET.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from smpref.crypto.link_crypto import seal_link_response
from smpref.crypto.primitives import box_key
from smpref.errors import CryptoError
from smpref.model.config import ServerConfig
from smpref.model.records import QueueRecord
from smpref.model.server_state import ServerState
from smpref.model.sessions import Session
from smpref.model.states import Credential
from smpref.wire.messages import (
    NEW,
    ConnectionMode,
    QueueLink,
)
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission

C = TypeVar("C", bound=Command)

LINK_ID_SIZE = 32  # SHA-256(k) (LINK-2)


@dataclass(frozen=True, slots=True)
class NewQueueMaterial:
    """What the server chooses for a NEW, drawn in this order: the recipient ID, the sender ID
    (unless the link carries it), the queue's DH secret, the notifier's DH secret (with an
    NtfRequest). The shared secrets are None when a client key is a low-order point."""

    recipient_id: bytes
    sender_id: bytes
    server_secret: bytes
    ntf_secret: bytes
    rcv_dh_secret: bytes | None
    ntf_dh_secret: bytes | None


@dataclass
class Step(Generic[C]):
    """A command on a session, with the queue its entity ID names and what its authorization
    proved."""

    server: ServerState
    session: Session
    tx: Transmission
    command: C
    queue: QueueRecord | None
    credential: Credential
    _material: NewQueueMaterial | None = field(default=None, repr=False)
    _link_response: bytes | None = field(default=None, repr=False)

    @property
    def config(self) -> ServerConfig:
        return self.server.config

    def found(self) -> QueueRecord:
        """The queue (for an effect: accepted queue commands always have one)."""
        assert self.queue is not None, "an accepted queue command has its queue"
        return self.queue

    # --- lazily prepared values -------------------------------------------------------------

    def material(self) -> NewQueueMaterial:
        """The server's choices for this NEW (drawn at the first call only)."""
        if self._material is None:
            assert isinstance(self.command, NEW)
            self._material = _draw_material(self.server, self.command)
        return self._material

    def link_response(self) -> bytes | None:
        """LINK's sealed QueueLink for this LGET, or None when k is a low-order point."""
        if self._link_response is None:
            queue = self.found()
            assert queue.link is not None
            queue_link = QueueLink(link_id=queue.link.link_id, sender_id=queue.sender_id,
                                   enc_link_data=queue.link.blob)
            try:
                self._link_response = seal_link_response(
                    self.session.secret, self.tx.entity_id, self.tx.corr_id, queue_link.encode())
            except CryptoError:
                return None
        return self._link_response


def _draw_material(server: ServerState, cmd: NEW) -> NewQueueMaterial:
    link = cmd.queue_request.queue_link if cmd.queue_request is not None else None
    ntf = cmd.ntf_request
    rid = server.new_id()
    sender_id = link.sender_id if link is not None else server.new_id()
    server_secret = server.random(32)
    ntf_secret = server.random(32) if ntf is not None else b""
    rcv_dh_secret = ntf_dh_secret = None
    try:
        rcv_dh_secret = box_key(cmd.rcv_dh_key.raw, server_secret)
        ntf_dh_secret = box_key(ntf.rcv_ntf_dh_key.raw, ntf_secret) if ntf is not None else b""
    except CryptoError:
        pass
    return NewQueueMaterial(rid, sender_id, server_secret, ntf_secret, rcv_dh_secret,
                            ntf_dh_secret)


def queue_mode(cmd: NEW) -> ConnectionMode:
    """The mode a NEW asks for: its connMode, or a contact queue without a QueueRequest
    (DIV-5)."""
    return ConnectionMode.Contact if cmd.queue_request is None else cmd.queue_request.conn_mode


def blob_limit(config: ServerConfig, mode: ConnectionMode) -> int:
    """QUEUE-6: the largest encoded blob of a queue of this mode."""
    return (config.contact_blob_limit if mode is ConnectionMode.Contact
            else config.invitation_blob_limit)
