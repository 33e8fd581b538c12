"""One command being processed: what the generic step found, and the rule table's guards.

A :class:`Step` is built by :meth:`smpref.model.server.ServerState.receive` after the queue lookup
and the authorization check; the rule table (:mod:`smpref.model.rules`) decides with it, and the
effect of an accepted command (:mod:`smpref.model.effects`) reads it. :data:`GUARDS` holds one
predicate per :class:`~smpref.model.rules.Guard`.

Two values are prepared lazily, once, because a guard and an effect both need them and their
cost or their randomness must be spent only once: the server's choices for a NEW
(:class:`NewQueueMaterial`, drawn from the server's random source in a fixed order) and the
sealed LINK answer of an LGET; and an RFWD opened (:mod:`smpref.model.relay`), which
several guards read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from smpref.crypto.link_crypto import seal_link_response
from smpref.crypto.primitives import box_key
from smpref.crypto.ratchet import RatchetState
from smpref.errors import CryptoError
from smpref.model.config import ServerConfig
from smpref.model.records import QueueRecord
from smpref.model.relay import Opened, open_rfwd
from smpref.model.server_state import ServerState
from smpref.model.sessions import Session
from smpref.model.states import Credential
from smpref.wire.dialects import Dialect
from smpref.wire.keys import PublicKey
from smpref.wire.messages import (
    NEW,
    ConnectionMode,
    DeployedLinkData,
    DeployedNEW,
    DeployedNKEY,
    DeployedRFWD,
    LinkBlob,
    LinkPart,
    LinkPartPriority,
    QueueLink,
    QueueReqData_C,
    QueueReqData_M,
)
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission

C = TypeVar("C", bound=Command)

LINK_ID_SIZE = 32  # SHA-256(k) (LINK-2)
#: the ratchet of a deployed queue, which has none (DEP-7): stored, never used
NO_RATCHET = RatchetState(seq=0, key=bytes(32))


@dataclass(frozen=True, slots=True)
class NewRequest:
    """A NEW of either dialect, as the model reads it (TRANS-11, DEP-3).

    ``link_id``/``sender_id``: what the client chose (None: the server chooses);
    ``server_link_id``: a deployed messaging link, whose LinkId the server chooses;
    ``blob``: the link data as stored; ``notifier_id``: the client's (seed) or None (deployed:
    the server's); ``queue_mode``: what IDS reports (None for a deployed NEW without
    queueReqData, served as a contact queue).
    """

    mode: ConnectionMode
    queue_mode: ConnectionMode | None
    link_id: bytes | None
    sender_id: bytes | None
    server_link_id: bool
    blob: LinkBlob | None
    ntf_key: PublicKey | None
    ntf_dh_key: PublicKey | None
    notifier_id: bytes | None
    dialect: Dialect


def new_request(cmd: NEW | DeployedNEW) -> NewRequest:
    """Read a NEW of either dialect."""
    if isinstance(cmd, NEW):
        link = cmd.queue_request.queue_link if cmd.queue_request is not None else None
        ntf = cmd.ntf_request
        mode = queue_mode(cmd)
        return NewRequest(mode, mode, link.link_id if link else None,
                          link.sender_id if link else None, False,
                          link.enc_link_data if link else None,
                          ntf.ntf_auth_key if ntf else None, ntf.rcv_ntf_dh_key if ntf else None,
                          ntf.notifier_id if ntf else None, Dialect.SEED)
    data = cmd.queue_req_data
    creds = cmd.ntf_creds
    link_id = sender_id = blob = None
    server_link_id = False
    if isinstance(data, QueueReqData_M) and data.link is not None:
        sender_id, blob, server_link_id = data.link.sender_id, deployed_blob(
            data.link.link_data), True
    elif isinstance(data, QueueReqData_C) and data.link is not None:
        link_id, sender_id = data.link.link_id, data.link.sender_id
        blob = deployed_blob(data.link.link_data)
    reported = None if data is None else (
        ConnectionMode.Invitation if isinstance(data, QueueReqData_M) else ConnectionMode.Contact)
    if cmd.snd_secure is not None:  # versions 9-14: T is a messaging queue, F a contact one
        reported = ConnectionMode.Invitation if cmd.snd_secure else ConnectionMode.Contact
    return NewRequest(reported or ConnectionMode.Contact, reported, link_id, sender_id,
                      server_link_id, blob, creds.ntf_auth_key if creds else None,
                      creds.rcv_ntf_dh_key if creds else None, None, Dialect.DEPLOYED)


def deployed_blob(data: DeployedLinkData) -> LinkBlob:
    """Deployed link data as the model stores it: two mandatory parts, the fixed one first
    (DEP-5); never dropped under blob pressure, as deployed keeps it."""
    return LinkBlob(parts=(LinkPart(priority=LinkPartPriority.Mandatory, sealed=data.enc_fixed),
                           LinkPart(priority=LinkPartPriority.Mandatory, sealed=data.enc_user)))


def deployed_link_data(blob: LinkBlob) -> DeployedLinkData:
    """The inverse of :func:`deployed_blob`."""
    fixed, user = blob.parts
    return DeployedLinkData(enc_fixed=fixed.sealed, enc_user=user.sealed)


@dataclass(frozen=True, slots=True)
class NewQueueMaterial:
    """What the server chooses for a NEW, drawn in this order: the recipient ID, the sender ID
    (unless the link carries it), the queue's DH secret, the notifier's DH secret (with
    notifier credentials), then, for a deployed NEW only, the LinkId of a messaging link and
    the notifier ID. The shared secrets are None when a client key is a low-order point."""

    recipient_id: bytes
    sender_id: bytes
    server_secret: bytes
    ntf_secret: bytes
    rcv_dh_secret: bytes | None
    ntf_dh_secret: bytes | None
    link_id: bytes | None = None
    notifier_id: bytes | None = None


@dataclass(frozen=True, slots=True)
class NotifierMaterial:
    """What the server chooses for a deployed NKEY, drawn in this order: the notifier ID and
    the notifier DH key; ``dh_secret`` is None when the client's key is a low-order point."""

    notifier_id: bytes
    server_secret: bytes
    dh_secret: bytes | None


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
    _notifier: NotifierMaterial | None = field(default=None, repr=False)
    _opened: Opened | None = field(default=None, repr=False)

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
            assert isinstance(self.command, NEW | DeployedNEW)
            self._material = _draw_material(self.server, new_request(self.command),
                                            self.command.rcv_dh_key)
        return self._material

    def notifier_material(self) -> NotifierMaterial:
        """The server's choices for this NKEY (drawn at the first call only)."""
        if self._notifier is None:
            assert isinstance(self.command, DeployedNKEY)
            nid, secret = self.server.new_id(), self.server.random(32)
            try:
                dh: bytes | None = box_key(self.command.rcv_ntf_dh_key.raw, secret)
            except CryptoError:
                dh = None
            self._notifier = NotifierMaterial(nid, secret, dh)
        return self._notifier

    def opened(self) -> Opened:
        """This RFWD opened as far as it goes (DEP-14; opened at the first call only)."""
        if self._opened is None:
            assert isinstance(self.command, DeployedRFWD)
            self._opened = open_rfwd(self.session, self.tx.corr_id,
                                     self.command.enc_fwd_transmission)
        return self._opened

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


def _draw_material(server: ServerState, request: NewRequest, rcv_dh_key: PublicKey
                   ) -> NewQueueMaterial:
    has_ntf = request.ntf_dh_key is not None
    rid = server.new_id()
    sender_id = request.sender_id if request.sender_id is not None else server.new_id()
    server_secret = server.random(32)
    ntf_secret = server.random(32) if has_ntf else b""
    link_id = server.new_id() if request.server_link_id else request.link_id
    notifier_id = request.notifier_id
    if has_ntf and notifier_id is None:
        notifier_id = server.new_id()
    rcv_dh_secret = ntf_dh_secret = None
    try:
        rcv_dh_secret = box_key(rcv_dh_key.raw, server_secret)
        ntf_dh_secret = box_key(request.ntf_dh_key.raw, ntf_secret) \
            if request.ntf_dh_key is not None else b""
    except CryptoError:
        pass
    return NewQueueMaterial(rid, sender_id, server_secret, ntf_secret, rcv_dh_secret,
                            ntf_dh_secret, link_id, notifier_id)


def queue_mode(cmd: NEW) -> ConnectionMode:
    """The mode a NEW asks for: its connMode, or a contact queue without a QueueRequest
    (DIV-5)."""
    return ConnectionMode.Contact if cmd.queue_request is None else cmd.queue_request.conn_mode


def blob_limit(config: ServerConfig, mode: ConnectionMode) -> int:
    """QUEUE-6: the largest encoded blob of a queue of this mode."""
    return (config.contact_blob_limit if mode is ConnectionMode.Contact
            else config.invitation_blob_limit)
