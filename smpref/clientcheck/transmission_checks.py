"""The judge's checks of each transmission a client sends: its correlation ID (CLNT-12), the
entity it names (CLNT-13) and its authorization (CLNT-11), with what a wrong authorization does
cover when a usual mistake explains it."""

from __future__ import annotations

from typing import Any

from smpref.clientcheck.judge_state import Connection, JudgeState, Sent
from smpref.crypto.auth import verify
from smpref.model.server import queue_key, signer_key
from smpref.model.sessions import Session
from smpref.notation.definitions import EntityKind, Signer
from smpref.wire.keys import PublicKey
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission

#: a correlation ID is 24 random bytes (CLNT-12)
CORR_ID_SIZE = 24


class TransmissionChecks(JudgeState):
    """The ``tx.corr-id``, ``tx.entity`` and ``tx.authorization`` checks, for the judge's hooks
    to call."""

    def _corr_id(self, c: Connection, tx: Transmission, data: bytes) -> None:
        corr = tx.corr_id
        sent = Sent("in", data, c.dialect, c.version)
        if corr in c.pending:
            self.record("tx.corr-id", False, c, f"CLNT-12: correlation ID {corr.hex()} "
                        "reused while the command that used it is still pending", sent)
        elif corr in c.corr_ids:
            self.record("tx.corr-id", False, c, f"CLNT-12: correlation ID {corr.hex()} "
                        "reused: each command's corrId is a fresh random nonce", sent)
        elif len(corr) != CORR_ID_SIZE:
            self.record("tx.corr-id", False, c, f"CLNT-12: correlation ID of {len(corr)} "
                        f"bytes; a client sends {CORR_ID_SIZE} random bytes", sent)
        else:
            self.record("tx.corr-id", True, c)
        c.corr_ids.add(corr)

    def _entity(self, c: Connection, tx: Transmission, message: Command, found: bool) -> None:
        if message.DEF.entity is EntityKind.NONE:
            return
        if tx.entity_id in self.deleted:  # case 3 judges the use of the queue it deleted
            if self.cases is not None:
                self.cases.on_deleted_use(c, message.DEF.tag, message.DEF.entity)
            return
        if found:
            self.record("tx.entity", True, c)
        elif message.DEF.entity not in (EntityKind.RECIPIENT_ID, EntityKind.NOTIFIER_ID):
            return  # a sender or a link reader cannot know that the queue is gone since
        else:
            self.record("tx.entity", False, c,
                        f"CLNT-13: {message.DEF.tag} names {tx.entity_id.hex() or 'nothing'}, "
                        f"which is no queue's {message.DEF.entity.value.replace('_', ' ')} here")

    def _authorization(self, c: Connection, session: Session, tx: Transmission,
                       message: Command, queue: Any) -> None:
        definition = message.DEF
        if definition.signer is Signer.NONE:
            return
        if queue is None and definition.signer is not Signer.FIELD:
            return  # no queue: tx.entity says so
        key = signer_key(message, queue)
        if not tx.authorization:
            if key is not None and definition.signer is not Signer.FIELD:
                self.record("tx.authorization", False, c,
                            f"CLNT-11: {definition.tag} carries no authorization, but the "
                            f"queue has its {definition.signer.value.replace('_', ' ')}")
            return
        if key is None:
            self.record("tx.authorization", False, c,
                        f"CLNT-11: {definition.tag} is authorized, but the queue has no "
                        f"{definition.signer.value.replace('_', ' ')} to verify it with")
            return
        right = tx.authorized_bytes(session.signing_id)
        if verify(key, tx.authorization, right, tx.corr_id, session.secret):
            self.record("tx.authorization", True, c)
            return
        self.record("tx.authorization", False, c,
                    f"CLNT-11: {definition.tag}'s authorization does not verify with the "
                    f"{definition.signer.value.replace('_', ' ')} over ss(sessionId) ss(corrId) "
                    f"ss(entityId) command (TRANS-6)"
                    + _diagnosis(tx, session, right, key, queue))


def _diagnosis(tx: Transmission, session: Session, right: bytes, key: PublicKey,
               queue: Any) -> str:
    """What the authorization does cover, when one of the usual mistakes explains it."""
    own = right[1 + len(session.signing_id):]  # ss(corrId) ss(entityId) command
    tries = {
        "without the session ID (the bytes as sent from version 7)": own,
        "with the service signature's '0' after the session ID": right[:1 + len(
            session.signing_id)] + b"0" + own,
        "with the service signature's '0' and without the session ID": b"0" + own,
    }
    for what, candidate in tries.items():
        if verify(key, tx.authorization, candidate, tx.corr_id, session.secret):
            return f"; it covers the bytes {what}"
    for signer in (Signer.RECIPIENT_KEY, Signer.SENDER_KEY, Signer.NOTIFIER_KEY):
        other = queue_key(signer, queue) if queue is not None else None
        if other is not None and other != key and verify(
                other, tx.authorization, right, tx.corr_id, session.secret):
            return f"; it is made with the queue's {signer.value.replace('_', ' ')}"
    return ""
