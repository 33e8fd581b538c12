"""The model's stored state: queue records and the records in a queue. Frozen values."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from smpref.crypto.ratchet import RatchetState
from smpref.model.states import QueueStatus, Security
from smpref.wire.dialects import Dialect
from smpref.wire.keys import PublicKey
from smpref.wire.messages import ConnectionMode, LinkBlob, RecordKind


class Role(enum.Enum):
    """What an ID is to its queue; one ID space covers every role (QUEUE-4), and a store finds a
    queue by an ID in one role (:meth:`smpref.model.queue_store.QueueStore.find`)."""

    RECIPIENT = "recipient"
    SENDER = "sender"
    NOTIFIER = "notifier"
    LINK = "link"

@dataclass(frozen=True, slots=True)
class Notifier:
    """A queue's notifier credentials (CMD-12)."""

    notifier_id: bytes
    key: PublicKey
    dh_secret: bytes  # X25519(rcvNtfDhKey, server's notifier key): seals NMSG metadata


@dataclass(frozen=True, slots=True)
class Link:
    """A queue's link (LINK-2): its ID and its blob, a ``LinkBlob`` value.

    ``drop_on_send``: the queue was secured by LGET with a key, so the blob goes at the first
    SEND (LINK-11).
    """

    link_id: bytes
    blob: LinkBlob
    blob_size: int
    drop_on_send: bool = False


@dataclass(frozen=True, slots=True)
class QueueRecord:
    """One queue (QUEUE-1)."""

    recipient_id: bytes
    recipient_key: PublicKey
    rcv_dh_secret: bytes  # X25519(rcvDhKey, server's queue key): seals MSG bodies (QENC-7)
    owner_key: bytes  # rcvDhKey's raw X25519 public key: the queue encryption key (QENC-1)
    server_dh_public: bytes  # returned in IDS
    sender_id: bytes
    mode: ConnectionMode
    ratchet: RatchetState
    updated_at: int  # UTC day number (QUEUE-5)
    sender_key: PublicKey | None = None
    link: Link | None = None
    notifier: Notifier | None = None
    status: QueueStatus = QueueStatus.ACTIVE
    can_write: bool = True  # False from ERR QUOTA until the queue is empty (MSG-6)
    #: the protocol whose NEW created the queue; only that protocol's sessions see it (DEP-1).
    #: A deployed queue has no ratchet: its records are the SEND bodies as received, and its
    #: ``ratchet`` is an unused placeholder (DEP-7).
    dialect: Dialect = Dialect.SEED

    @property
    def secured(self) -> bool:
        return self.sender_key is not None

    @property
    def security(self) -> Security:
        return Security.SECURED if self.sender_key is not None else Security.UNSECURED

    @property
    def suspended(self) -> bool:
        return self.status is QueueStatus.SUSPENDED

    def ids(self) -> dict[Role, bytes]:
        """The queue's IDs by role."""
        return ids_by_role(self.recipient_id, self.sender_id,
                           self.notifier.notifier_id if self.notifier else None,
                           self.link.link_id if self.link else None)


def ids_by_role(recipient_id: bytes, sender_id: bytes, notifier_id: bytes | None,
                link_id: bytes | None) -> dict[Role, bytes]:
    """A queue's IDs by role (QUEUE-4): recipient and sender always, notifier and link when
    the queue has them."""
    ids = {Role.RECIPIENT: recipient_id, Role.SENDER: sender_id}
    if notifier_id is not None:
        ids[Role.NOTIFIER] = notifier_id
    if link_id is not None:
        ids[Role.LINK] = link_id
    return ids


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record in a queue: a ratchet record and what the server knows about it.

    ``data`` is the encoded ``RatchetRecord``: ciphertext, never the message (STORE-3).
    """

    msg_id: bytes
    timestamp: int
    notification: bool
    kind: RecordKind
    data: bytes
