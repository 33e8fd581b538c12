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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from smpref.crypto.link_crypto import seal_link_response
from smpref.crypto.primitives import box_key
from smpref.errors import CryptoError
from smpref.model.config import ServerConfig
from smpref.model.records import QueueRecord
from smpref.model.rules import Guard
from smpref.model.server_state import ID_SIZE, ServerState
from smpref.model.sessions import Session
from smpref.model.states import Credential, SessionMode
from smpref.wire.messages import (
    ACK,
    KEY,
    LGET,
    LSET,
    NEW,
    SEND,
    SKEY,
    ConnectionMode,
    LinkBlob,
    LinkPartPriority,
    QueueLink,
    RecordKind,
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

    def holds(self, guard: Guard) -> bool:
        # A guard reads the command's own fields after an isinstance check, so any step will
        # do; the cast is only for the type checker (typing.cast is a call: kept off this path).
        predicate: Callable[[Step[C]], bool] = GUARDS[guard]  # type: ignore[assignment]
        return predicate(self)

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


# ---------------------------------------------------------------------------------------------
# Guards


def queue_mode(cmd: NEW) -> ConnectionMode:
    """The mode a NEW asks for: its connMode, or a contact queue without a QueueRequest
    (DIV-5)."""
    return ConnectionMode.Contact if cmd.queue_request is None else cmd.queue_request.conn_mode


def _new_link(step: Step[Command]) -> QueueLink | None:
    cmd = step.command
    if isinstance(cmd, NEW) and cmd.queue_request is not None:
        return cmd.queue_request.queue_link
    return None


def _blob(step: Step[Command]) -> tuple[ConnectionMode, LinkBlob] | None:
    """The link blob a NEW or LSET carries, with the mode of the queue it is for."""
    cmd = step.command
    if isinstance(cmd, LSET):
        return step.found().mode, cmd.enc_link_data
    link = _new_link(step)
    if isinstance(cmd, NEW) and link is not None:
        return queue_mode(cmd), link.enc_link_data
    return None


def blob_limit(config: ServerConfig, mode: ConnectionMode) -> int:
    """QUEUE-6: the largest encoded blob of a queue of this mode."""
    return (config.contact_blob_limit if mode is ConnectionMode.Contact
            else config.invitation_blob_limit)


def _blob_too_large(step: Step[Command]) -> bool:
    blob = _blob(step)
    return blob is not None and len(blob[1].encode()) > blob_limit(step.config, blob[0])


def _malformed_blob(step: Step[Command]) -> bool:
    blob = _blob(step)
    if blob is None:
        return False
    priorities = [p.priority for p in blob[1].parts]
    return priorities[0] is not LinkPartPriority.Mandatory or priorities.count(
        LinkPartPriority.Mandatory) != 1


def _malformed_link_ids(step: Step[Command]) -> bool:
    link = _new_link(step)
    return link is not None and (len(link.link_id) != LINK_ID_SIZE
                                 or len(link.sender_id) != ID_SIZE)


def _malformed_notifier_id(step: Step[Command]) -> bool:
    cmd = step.command
    return isinstance(cmd, NEW) and cmd.ntf_request is not None and len(
        cmd.ntf_request.notifier_id) != ID_SIZE


def _chosen_id_taken(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, NEW)
    link = _new_link(step)
    chosen = [i for i in (link.link_id if link else None, link.sender_id if link else None,
                          cmd.ntf_request.notifier_id if cmd.ntf_request else None)
              if i is not None]
    return len(set(chosen)) != len(chosen) or any(step.server.store.id_taken(i) for i in chosen)


def _wrong_password(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, NEW)
    password = step.config.basic_auth
    return password is not None and cmd.basic_auth != password


def _low_order_key(step: Step[Command]) -> bool:
    material = step.material()
    return material.rcv_dh_secret is None or material.ntf_dh_secret is None


def _other_sender_key(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, KEY | SKEY | LGET)
    queue = step.found()
    return queue.sender_key is not None and queue.sender_key != cmd.sender_key


def _no_link(step: Step[Command]) -> bool:
    return step.found().link is None


def _low_order_link_key(step: Step[Command]) -> bool:
    return step.link_response() is None


def _session_mode(step: Step[Command]) -> SessionMode | None:
    return step.session.modes.get(step.found().recipient_id)


def _nothing_delivered(step: Step[Command]) -> bool:
    return step.found().recipient_id not in step.session.delivered


def _other_message(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, ACK)
    delivered = step.session.delivered.get(step.found().recipient_id)
    return bool(cmd.msg_id) and cmd.msg_id != delivered


def _body_too_large(step: Step[Command]) -> bool:
    cmd = step.command
    assert isinstance(cmd, SEND)
    return len(cmd.body) > step.config.max_message_length


def _quota_held(step: Step[Command]) -> bool:
    return not step.found().can_write


def _queue_full(step: Step[Command]) -> bool:
    records = step.server.store.records(step.found().recipient_id)
    counted = sum(r.kind in (RecordKind.Message, RecordKind.Quota) for r in records)
    return counted >= step.config.quota


#: the predicate of every guard
GUARDS: dict[Guard, Callable[[Step[Command]], bool]] = {
    Guard.WRONG_PASSWORD: _wrong_password,
    Guard.MALFORMED_LINK_IDS: _malformed_link_ids,
    Guard.BLOB_TOO_LARGE: _blob_too_large,
    Guard.MALFORMED_BLOB: _malformed_blob,
    Guard.MALFORMED_NOTIFIER_ID: _malformed_notifier_id,
    Guard.CHOSEN_ID_TAKEN: _chosen_id_taken,
    Guard.LOW_ORDER_KEY: _low_order_key,
    Guard.OTHER_SENDER_KEY: _other_sender_key,
    Guard.NO_LINK: _no_link,
    Guard.LOW_ORDER_LINK_KEY: _low_order_link_key,
    Guard.SESSION_SUBSCRIBED: lambda s: _session_mode(s) is SessionMode.SUBSCRIBED,
    Guard.SESSION_GETS: lambda s: _session_mode(s) is SessionMode.GETTING,
    Guard.NOTHING_DELIVERED: _nothing_delivered,
    Guard.OTHER_MESSAGE: _other_message,
    Guard.BODY_TOO_LARGE: _body_too_large,
    Guard.QUOTA_HELD: _quota_held,
    Guard.QUEUE_FULL: _queue_full,
}

