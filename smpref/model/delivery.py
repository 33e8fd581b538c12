"""What the model sends to readers and notifiers, and the records a queue stores: MSG (MSG-2,
QENC-7, ROT-4), NMSG (MSG-7, CMD-34), and new records."""

from __future__ import annotations

from smpref.crypto import ratchet
from smpref.crypto.primitives import secretbox
from smpref.model.records import QueueRecord, StoredRecord
from smpref.model.server_state import ServerState
from smpref.model.sessions import Outgoing, Session
from smpref.wire.blocks import pad
from smpref.wire.deployed import DeployedMessageBody
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    MSG,
    NMSG,
    NtfMetadata,
    RcvMessage,
    RcvMsgFlags,
    RecordKind,
)

#: MSG bodies are padded to this before sealing, as deployed (DEP-7, QENC-7; simplexmq
#: Protocol.hs:310-313)
PADDED_RCV_MESSAGE = 16106
NMSG_PADDED = 128


def seal_record(queue: QueueRecord, record: StoredRecord, *, last: bool) -> bytes:
    """MSG's encBody: RcvMessage padded and boxed with rcvDhSecret, nonce = msgId (QENC-7).
    A deployed queue's record is sealed in deployed's layout instead: the body as sent, or the
    quota marker, and one flag (DEP-7)."""
    if queue.dialect is Dialect.DEPLOYED:
        quota = record.kind is RecordKind.Quota
        body = DeployedMessageBody(record.timestamp, record.notification and not quota,
                                   b"" if quota else record.data, quota=quota).encode()
    else:
        body = RcvMessage(
            timestamp=record.timestamp,
            flags=RcvMsgFlags(notification=record.notification, last=last),
            record=ratchet.decode_record(record.data),
        ).encode()
    return secretbox(queue.rcv_dh_secret, record.msg_id, pad(body, PADDED_RCV_MESSAGE))


def deliver_first(server: ServerState, session: Session, queue: QueueRecord, corr_id: bytes
                  ) -> Outgoing | None:
    """Deliver the queue's first record to a session, if there is one (MSG-2); it stays in
    flight on that session until ACK. The only record of a suspended queue carries ``last``."""
    records = server.store.records(queue.recipient_id)
    if not records:
        return None
    first = records[0]
    # deployed SMP has no last-message marker (DEP-4; simplexmq Protocol.hs:884-892)
    # mutant-equivalent[Eq_LtE]: records is not empty here (the function returned before)
    # mutant-equivalent-deployed[*]: a deployed MSG has no last flag: seal_record's deployed layout
    #   does not carry it (DEP-4, DEP-7)
    last = queue.suspended and len(records) == 1 and queue.dialect is Dialect.SEED
    # mutant-equivalent[AddNot]: {observer}
    # mutant-equivalent-deployed[*]: what delivery reports to the coverage observer, which no client
    #   receives
    server.observe("deliver.last" if last else "deliver", ("ROT-4",) if last else ("MSG-2",))
    session.delivered[queue.recipient_id] = first.msg_id
    message = MSG(msg_id=first.msg_id, enc_body=seal_record(queue, first, last=last))
    return Outgoing(session.session_id, corr_id, queue.recipient_id, message)


def push_to_subscriber(server: ServerState, queue: QueueRecord) -> list[Outgoing]:
    """After a record is added: a subscriber with nothing in flight gets it (MSG-2)."""
    sid = server.subscribers.get(queue.recipient_id)
    session = server.sessions.get(sid) if sid else None
    if session is None or queue.recipient_id in session.delivered:
        return []
    out = deliver_first(server, session, queue, b"")
    return [out] if out else []


def enqueue(server: ServerState, queue: QueueRecord, kind: RecordKind, data: bytes,
            notification: bool) -> StoredRecord:
    """Store a record at the end of a queue, with a fresh message ID and the time now."""
    record = StoredRecord(server.new_id(), server.clock.now(), notification, kind, data)
    server.store.append(queue.recipient_id, record)
    return record


def notify(server: ServerState, queue: QueueRecord, stored: StoredRecord) -> list[Outgoing]:
    """NMSG to the notifier's subscriber, if there is one (MSG-7, CMD-34)."""
    sid = server.notifier_subscribers.get(queue.recipient_id)
    # mutant-equivalent[ReplaceOrWithAnd]: a notifier subscriber's session is always open
    #   (close_session drops its subscriptions) and a queue without a notifier has no notifier
    #   subscriber (notifier_gone drops it with the credentials): only `sid is None` ever decides
    if sid is None or sid not in server.sessions or queue.notifier is None:
        return []
    server.observe("notify", ("MSG-7", "CMD-34"))
    meta = NtfMetadata(msg_id=stored.msg_id, timestamp=stored.timestamp).encode()
    nonce = server.random(24)
    sealed = secretbox(queue.notifier.dh_secret, nonce, pad(meta, NMSG_PADDED))
    return [Outgoing(sid, b"", queue.notifier.notifier_id,
                     NMSG(nonce=nonce, enc_metadata=sealed))]
