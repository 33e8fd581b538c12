"""The judge's checks of the conversation: one command at a time per queue, needless SUBs,
ACKs (CLNT-14..CLNT-16); and what the judge follows for them and for what the end of a
connection or of the check judges (CLNT-17, CLNT-18): the answers (the queues a client created,
ERRs that are the client's fault), the messages in flight, the queues used."""

from __future__ import annotations

from typing import Any

from smpref.clientcheck.catalogue import CHECK_BY_ID
from smpref.clientcheck.judge_state import Connection, JudgeState, QueueSeen
from smpref.model.server import Outgoing, Server
from smpref.model.sessions import Session
from smpref.wire.messages import ERR, IDS, MSG, DeployedNID
from smpref.wire.schema import render_error
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission

#: the ERR answers that say the client's command was wrong in a way the judge does not see
#: before the step, by the check they fail: the rest (BLOCK, SESSION, CMD SYNTAX/UNKNOWN and
#: the credential errors) the judge finds itself, and answers such as CMD PROHIBITED or AUTH
#: may come from the state of a queue, which the client cannot always know
_ERR_CHECKS = {"LARGE_MSG": "tx.size"}


class ConversationChecks(JudgeState):
    """The ``conv.*`` checks, and what they follow, for the judge's hooks to call."""

    def _conversation(self, model: Server, c: Connection, session: Session,  # noqa: PLR0917
                      tag: str, tx: Transmission, message: Command, queue: Any) -> None:
        if queue is None:
            return
        rid = queue.recipient_id
        others = [corr for corr, entity in c.pending.items()
                  if entity == tx.entity_id and corr != tx.corr_id]
        if others and tag != "PING":
            self.record("conv.one-at-a-time", False, c,
                        f"CLNT-15: {tag} for {tx.entity_id.hex()} sent while the command "
                        f"with corrId {others[0].hex()} for it was pending")
        elif tag != "PING":
            self.record("conv.one-at-a-time", True, c)
        if tag == "SUB":
            needless = model.subscribers.get(rid) == session.session_id and \
                rid in session.modes and rid not in c.ended
            self.record("conv.needless-sub", not needless, c, "" if not needless else
                        f"CLNT-16: SUB of {rid.hex()}, which this connection is subscribed "
                        "to already: it forgets the message in flight and delivers it again "
                        "(MSG-2)")
        if tag in ("SUB", "GET"):  # after END, both take the queue up again (CLNT-20)
            c.ended.discard(rid)
        if tag == "ACK" and rid not in c.ended:
            acked = getattr(message, "msg_id", b"")
            delivered = session.delivered.get(rid)
            if delivered is None:
                self.record("conv.ack", False, c, f"CLNT-14: ACK of {acked.hex()} on "
                            f"{rid.hex()}, which has no message in flight on this connection")
            elif acked not in (delivered, b""):
                self.record("conv.ack", False, c, f"CLNT-14: ACK of {acked.hex()} on "
                            f"{rid.hex()}, whose message in flight is {delivered.hex()}")
            else:
                self.record("conv.ack", True, c)

    def _answer(self, c: Connection, tx: Transmission, tag: str, answer: Outgoing) -> None:
        message = answer.message
        if tag in ("ACK", "DEL") and not isinstance(message, ERR):
            # an ACK's MSG, if it answers with one, follows; a deleted queue's message is
            # gone with it, so nothing of it is delivered again (CLNT-17)
            c.in_flight.pop(tx.entity_id, None)
        if isinstance(message, IDS):
            ids = {message.rcv_id, message.snd_id}
            if message.link_id:
                ids.add(message.link_id)
            if message.server_ntf_creds is not None:
                ids.add(message.server_ntf_creds.notifier_id)
            self.queues[message.rcv_id] = QueueSeen(message.rcv_id, c.number, ids)
        elif isinstance(message, DeployedNID):
            for seen in self.queues.values():
                if tx.entity_id == seen.recipient_id:
                    seen.ids.add(message.notifier_id)
        error = render_error(message.error) if isinstance(message, ERR) else ""
        check = _ERR_CHECKS.get(error) if error else None
        if check is not None:
            self.record(check, False, c, f"{CHECK_BY_ID[check].requirements[0]}: the "
                        f"server answered {tag} with ERR {error}")
        elif tag == "SEND":
            self.record("tx.size", True, c)

    def _follow(self, out: list[Outgoing]) -> None:
        """Deliveries and ends the server pushed to the judge's connections."""
        for item in out:
            c = self.by_session.get(item.session_id)
            if c is None:
                continue
            if isinstance(item.message, MSG):
                c.in_flight[item.entity_id] = item.message.msg_id
                self._used(item.entity_id)
            elif item.message.DEF.tag in ("END", "DELD") and item.entity_id in self.queues:
                c.in_flight.pop(item.entity_id, None)
                c.ended.add(item.entity_id)

    def forget(self, ids: set[bytes]) -> None:
        """A case deleted the queue with these IDs: its use is the case's to judge, and it
        does not count as a queue the client never used."""
        self.deleted |= ids
        for seen in self.queues.values():
            if seen.ids & ids or seen.recipient_id in ids:
                seen.used = True

    def _used(self, rid: bytes) -> None:
        for seen in self.queues.values():
            if rid == seen.recipient_id or rid in seen.ids:
                seen.used = True
