"""One party's agent of a duplex connection, and queue rotation (spec/rotation.md).

Theory of operation
-------------------
The agent owns a receive queue and sends to the peer's receive queue, each on any server. It
talks to servers only through a :class:`~smpref.agent.port.Port`, one command and one answer at
a time; deliveries are handed to :meth:`Agent.deliver` by whoever runs it, in any order. Its
state is split into :class:`~smpref.agent.state.Durable` (kept across :meth:`Agent.restart`)
and :class:`~smpref.agent.state.Memory` (lost).

Sending: :meth:`Agent.send` numbers an application message into an envelope and queues it
(ROT-5); :meth:`Agent.transmit` sends the oldest queued envelope, which leaves the queue only on
``OK`` (ROT-10). Agent messages of a rotation go through the same queue, except ``QHELLO``
(``QTEST``), which goes straight to the new queue.

Receiving: every delivered record is opened with the queue's ratchet mirror; a Message record
is an envelope, classified against the receive chain (ROT-6) and acted on, then acknowledged.

Rotation runs one of three flows (:class:`~smpref.agent.state.Profile`):

* ``seed``: spec/rotation.md. The recipient creates the new queue and sends ``QNEW``; the
  sender answers ``QKEYS``; the recipient secures the queue with ``KEY`` and sends ``QREADY``;
  the sender sends ``QHELLO`` (number 0, ROT-7) to the new queue; the recipient sends
  ``QSWITCH`` and suspends the old queue with ``OFF``, holds the first numbered delivery from
  the new queue (ROT-8), drains the old queue (ROT-9) and deletes it; the sender switches on
  ``QSWITCH`` or on ``ERR AUTH`` from the old queue and sends what it did not deliver to the new
  one (ROT-10).
* ``seed-as-written``: the same with ``QHELLO`` numbered like any message (DIV-33).
* ``deployed``: ``QADD``, ``QKEY``, ``QUSE``, ``QTEST`` with no hold and no drain (ROT-14).
"""

from __future__ import annotations

from collections.abc import Callable

from smpref.agent.envelope import Verdict, decode_envelope, probe
from smpref.agent.port import Port
from smpref.agent.state import (
    Durable,
    Held,
    Memory,
    Phase,
    Profile,
    ReceiveQueue,
    SenderState,
    SendQueue,
    Unsent,
)
from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue, Reply
from smpref.crypto.randomness import Random
from smpref.errors import AgentError, CryptoError, RotationRefusedError
from smpref.wire.messages import (
    ACK,
    COUNT,
    DEL,
    IDS,
    KEY,
    MSG,
    NEW,
    OFF,
    SEND,
    SUB,
    AgentEnvelope,
    AgentMessage,
    ConnectionMode,
    MsgFlags,
    QueueAddress,
    QueueRequest,
    SubscriptionMode,
)
from smpref.wire.structs import Command

#: answers that mean a command was accepted (a MSG answer carries the next delivery)
ACCEPTED = ("OK", "MSG", "COUNT", "IDS")


class Agent:
    """One party of a duplex connection. See the module docstring."""

    def __init__(self, name: str, profile: Profile, port: Port, random: Random, *,
                 durable: Durable | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.name = name
        self.profile = profile
        self.port = port
        self.random = random
        self.durable = durable if durable is not None else Durable()
        self.memory = Memory()
        self.log = log

    # --- setting up a connection (out of band, as an invitation would) -----------------------

    def create_receive_queue(self, server: bytes) -> QueueAddress:
        """NEW on ``server``, subscribed; the queue becomes the agent's receive queue."""
        self.durable.receive = self._new_queue(server)
        return self.durable.receive.address()

    def join(self, address: QueueAddress) -> AuthKeyPair:
        """Take the peer's receive queue as the send queue; the key it must be secured with."""
        key = AuthKeyPair.ed25519(self.random)
        self.durable.send = SendQueue(address, key)
        return key

    def secure(self, sender_key: AuthKeyPair) -> None:
        """KEY the receive queue with the sender's key."""
        queue = self._receive()
        self._request(queue.server, KEY(sender_key=sender_key.public), queue.rid, queue)

    # --- the application's side --------------------------------------------------------------

    @property
    def delivered(self) -> list[bytes]:
        """The application messages received, in the order they were processed."""
        return self.durable.delivered

    @property
    def rotating(self) -> bool:
        return self.durable.phase is not Phase.IDLE

    def send(self, body: bytes) -> None:
        """Queue an application message (ROT-5, ROT-10)."""
        if self.durable.deleted:
            raise AgentError("the connection is deleted")
        self._queue_message(AgentMessage.M(body=body))

    def transmit(self) -> bool:
        """Send the oldest unsent envelope; whether anything changed (an envelope left the
        outbox, or the agent switched to the new queue)."""
        durable = self.durable
        if not durable.outbox or durable.send is None or durable.deleted:
            return False
        target = durable.send
        answer = self._send_to(target, durable.outbox[0].data)
        if answer.tag == "OK":
            durable.outbox.pop(0)
            return True
        new = durable.send_new
        if (answer.error == "AUTH" and self.profile is not Profile.DEPLOYED
                and new is not None and new.state is SenderState.HELLO_SENT):
            self._switch("ERR AUTH from the old queue")  # ROT-10
            return True
        return False

    def transmit_all(self) -> int:
        """:meth:`transmit` until nothing changes; how many times something did."""
        count = 0
        while self.transmit():
            count += 1
        return count

    # --- rotation, started by the recipient --------------------------------------------------

    def start_rotation(self, server: bytes) -> None:
        """Rotate the receive queue to a new queue on ``server`` (ROT-2, ROT-12).

        Raises:
            RotationRefusedError: a rotation is running, or the connection is deleted.
        """
        durable = self.durable
        if durable.deleted:
            raise RotationRefusedError("the connection is deleted")
        if durable.phase is not Phase.IDLE:
            raise RotationRefusedError(
                f"a rotation is running (phase {durable.phase.value}); one at a time (ROT-12)")
        new = durable.receive_new = self._new_queue(server)
        durable.phase = Phase.CREATED
        old = self._receive().address()
        if self.profile is Profile.DEPLOYED:
            self._queue_message(AgentMessage.QA(address=new.address(), replaced=old))
        else:
            self._queue_message(AgentMessage.QN(address=new.address()))

    def abort_rotation(self) -> None:
        """Abort the running rotation: delete the new queue (ROT-11).

        Raises:
            RotationRefusedError: no rotation is running, or it is past the point where the
                sender may already use the new queue.
        """
        durable = self.durable
        allowed = ((Phase.CREATED,) if self.profile is Profile.DEPLOYED
                   else (Phase.CREATED, Phase.SECURED))
        if durable.phase not in allowed:
            raise RotationRefusedError(
                f"no rotation can be aborted in phase {durable.phase.value} (ROT-11)")
        new = durable.receive_new
        assert new is not None, "a running rotation has its new queue"
        self._request(new.server, DEL(), new.rid, new)
        if self.memory.held is not None and self.memory.held.queue is new:
            self.memory.held = None
        durable.receive_new, durable.phase = None, Phase.IDLE
        durable.counts["rotations aborted"] += 1
        self._note("rotation aborted; the new queue is deleted")

    def delete_connection(self) -> None:
        """Delete every queue the agent owns and end any rotation (ROT-13)."""
        durable = self.durable
        for queue in (durable.receive, durable.receive_new):
            if queue is not None:
                self._request(queue.server, DEL(), queue.rid, queue)
        durable.receive_new, durable.phase, durable.deleted = None, Phase.IDLE, True
        durable.outbox.clear()
        self.memory = Memory()

    # --- connections -------------------------------------------------------------------------

    def restart(self) -> None:
        """Lose the memory and keep the durable state; the caller reconnects and calls
        :meth:`resubscribe` for each server."""
        self.memory = Memory()

    def link_lost(self, server: bytes) -> None:
        """The connection to ``server`` closed: its subscriptions, and any delivery from it
        held in memory, are gone (the server keeps those messages)."""
        memory = self.memory
        for queue in self.owned_queues():
            if queue.server == server:
                memory.subscribed.discard(queue.rid)
        if memory.held is not None and memory.held.queue.server == server:
            memory.held = None
        old = self.durable.receive
        if old is not None and old.server == server:
            memory.drain_left = None

    def resubscribe(self, server: bytes) -> None:
        """SUB every owned queue on ``server``; suspend a draining old queue there again to
        learn what is left (ROT-9)."""
        durable, memory = self.durable, self.memory
        for queue in self.owned_queues():
            if (queue.server == server and queue.rid not in memory.subscribed
                    and self._request(server, SUB(), queue.rid, queue).tag in ACCEPTED):
                memory.subscribed.add(queue.rid)
        old = durable.receive
        if (durable.phase is Phase.SWITCHING and old is not None and old.server == server
                and memory.drain_left is None):
            self._suspend_old()

    def needs_subscription(self, server: bytes) -> bool:
        """Whether a queue the agent owns on ``server`` is not subscribed on its current
        connection (after a lost connection or a restart)."""
        return any(q.server == server and q.rid not in self.memory.subscribed
                   for q in self.owned_queues())

    def owned_queues(self) -> list[ReceiveQueue]:
        """The receive queues the agent owns: the current one, and a rotation's new one."""
        return [q for q in (self.durable.receive, self.durable.receive_new) if q is not None]

    # --- deliveries --------------------------------------------------------------------------

    def deliver(self, reply: Reply) -> None:
        """Take one delivery (``MSG``) from a server."""
        msg = reply.message
        queue = self._owned_by_rid(reply.transmission.entity_id)
        if not isinstance(msg, MSG) or queue is None or self.durable.deleted:
            return  # a delivery for a queue the agent no longer owns
        try:
            body, received, _ = queue.owner.open_message(msg)
        except CryptoError as exc:
            self.durable.counts["records rejected"] += 1
            self._note(f"record rejected: {exc}")
            self._ack(queue, msg, last=False)
            return
        last = body.flags.last
        if received.body is None:  # Initial, Update, Quota: nothing for the agent
            self._ack(queue, msg, last)
            return
        try:
            envelope = decode_envelope(received.body)
        except AgentError as exc:
            self.durable.counts["envelopes rejected"] += 1
            self._note(str(exc))
            self._ack(queue, msg, last)
            return
        if self._holds(queue, envelope):
            self.memory.held = Held(queue, msg, envelope)
            self.durable.counts["held"] += 1
            self._note(f"held #{envelope.msg_no} from the new queue until the old is drained")
            return
        self._process(queue, envelope)
        self._ack(queue, msg, last)

    def _holds(self, queue: ReceiveQueue, envelope: AgentEnvelope) -> bool:
        """ROT-8: a numbered delivery from the new queue waits until the old is deleted."""
        if self.profile is Profile.DEPLOYED or self.durable.phase is Phase.IDLE:
            return False
        if queue is not self.durable.receive_new or envelope.msg_no == 0:
            return False
        # seed 002 read literally numbers QHELLO, and still acts on it at once
        return not (self.profile is Profile.SEED_AS_WRITTEN
                    and isinstance(envelope.message, AgentMessage.QH))

    def _process(self, queue: ReceiveQueue, envelope: AgentEnvelope) -> None:
        durable = self.durable
        message = envelope.message
        self._note(f"received #{envelope.msg_no} {_describe(message)} "
                   f"from {queue.server.decode()}")
        if envelope.msg_no == 0:  # QHELLO, outside the sequence (ROT-7)
            if (self.profile is Profile.SEED and isinstance(message, AgentMessage.QH)
                    and queue is durable.receive_new and durable.phase is Phase.SECURED):
                self._hello(queue)
            else:  # delivered again after a crash, or not for a running rotation: ignored
                durable.counts["ignored probes"] += 1
            return
        verdict = durable.receive_chain.classify(envelope)
        durable.counts[f"verdict {verdict.value}"] += 1
        if verdict is Verdict.DUPLICATE:
            return
        durable.receive_chain.accept(envelope)
        if (self.profile is Profile.DEPLOYED and queue is durable.receive_new
                and durable.phase is Phase.SECURED):
            self._finish("the first message arrived in the new queue")  # ROT-14
        self._act(queue, message)

    def _act(self, queue: ReceiveQueue, message: AgentMessage) -> None:
        durable = self.durable
        if isinstance(message, AgentMessage.M):
            durable.delivered.append(message.body)
        elif isinstance(message, (AgentMessage.QN, AgentMessage.QA)):
            self._announced(message.address)
        elif isinstance(message, AgentMessage.QK):
            new = durable.receive_new
            if (durable.phase is Phase.CREATED and new is not None
                    and message.address == new.address()):
                self._request(new.server, KEY(sender_key=message.sender_key), new.rid, new)
                durable.phase = Phase.SECURED
                address = new.address()
                self._queue_message(AgentMessage.QU(address=address)
                                    if self.profile is Profile.DEPLOYED
                                    else AgentMessage.QR(address=address))
        elif isinstance(message, (AgentMessage.QR, AgentMessage.QU)):
            self._ready(message.address)
        elif isinstance(message, AgentMessage.QH):
            if queue is durable.receive_new and durable.phase is Phase.SECURED:
                self._hello(queue)
        elif isinstance(message, AgentMessage.QS):
            new_send = durable.send_new
            if (new_send is not None and new_send.address == message.address
                    and new_send.state is SenderState.HELLO_SENT):
                self._switch("QSWITCH")

    # --- the sender's side of the peer's rotation --------------------------------------------

    def _announced(self, address: QueueAddress) -> None:
        """QNEW (QADD): make the keys for the new queue and send them in QKEYS (QKEY)."""
        key = AuthKeyPair.ed25519(self.random)
        self.durable.send_new = SendQueue(address, key, SenderState.KEYS_SENT)
        e2e = DhKeyPair.generate(self.random)
        self._queue_message(AgentMessage.QK(address=address, sender_key=key.public,
                                            dh_key=e2e.public))

    def _ready(self, address: QueueAddress) -> None:
        """QREADY (QUSE): QHELLO (QTEST) straight to the new queue; the deployed sender then
        moves to it at once (ROT-10, ROT-14)."""
        durable = self.durable
        new = durable.send_new
        if new is None or new.address != address or new.state is not SenderState.KEYS_SENT:
            return
        if self.profile is Profile.SEED:
            envelope = probe(AgentMessage.QH())
        elif self.profile is Profile.SEED_AS_WRITTEN:
            envelope = durable.send_chain.seal(AgentMessage.QH())
        else:
            envelope = durable.send_chain.seal(AgentMessage.QT(address=address))
        answer = self._send_to(new, bytes(envelope.encode()))
        if answer.tag != "OK":  # the recipient aborted and deleted the queue (ROT-11)
            durable.send_new = None
            durable.counts["new queues dropped"] += 1
            return
        new.state = SenderState.HELLO_SENT
        if self.profile is Profile.DEPLOYED:
            self._switch("QTEST sent")

    def _switch(self, why: str) -> None:
        durable = self.durable
        old, new = durable.send, durable.send_new
        assert new is not None
        durable.send, durable.send_new = new, None
        durable.counts["switches"] += 1
        self._note(f"switched sending to {new.server.decode()} ({why})")
        if self.profile is Profile.DEPLOYED and old is not None:
            # deployed drops the envelopes still assigned to the old queue with it (ROT-14)
            kept = [u for u in durable.outbox if u.bound != old.address.sender_id]
            durable.counts["dropped unsent"] += len(durable.outbox) - len(kept)
            durable.outbox[:] = kept

    # --- the recipient's side of its own rotation --------------------------------------------

    def _hello(self, queue: ReceiveQueue) -> None:
        """QHELLO arrived in the new queue: QSWITCH, then suspend the old queue (ROT-7,
        ROT-9)."""
        self._queue_message(AgentMessage.QS(address=queue.address()))
        self.durable.phase = Phase.SWITCHING
        self.durable.counts["hellos"] += 1
        self._suspend_old()

    def _suspend_old(self) -> None:
        old = self._receive()
        answer = self._request(old.server, OFF(), old.rid, old)
        if isinstance(answer.message, COUNT):
            self.durable.counts["suspensions"] += 1
            self.memory.drain_left = answer.message.remaining
            if answer.message.remaining == 0:
                self._finish("the old queue is empty")

    def _finish(self, why: str) -> None:
        """Delete the old queue; the new one becomes the receive queue; a held delivery is
        processed now (ROT-8, ROT-9)."""
        durable, memory = self.durable, self.memory
        old, new = self._receive(), durable.receive_new
        assert new is not None
        self._request(old.server, DEL(), old.rid, old)
        memory.subscribed.discard(old.rid)
        durable.receive, durable.receive_new, durable.phase = new, None, Phase.IDLE
        memory.drain_left = None
        durable.counts["rotations completed"] += 1
        self._note(f"old queue deleted ({why}); receiving from {new.server.decode()}")
        held, memory.held = memory.held, None
        if held is not None and held.queue is new:
            self._process(held.queue, held.envelope)
            self._ack(held.queue, held.msg, last=False)

    def _ack(self, queue: ReceiveQueue, msg: MSG, last: bool) -> None:
        answer = self._request(queue.server, ACK(msg_id=msg.msg_id), queue.rid, queue)
        durable, memory = self.durable, self.memory
        if (durable.phase is not Phase.SWITCHING or queue is not durable.receive
                or answer.tag not in ACCEPTED):
            return
        if memory.drain_left is not None:
            memory.drain_left -= 1
        durable.counts["last flags"] += last
        if last or memory.drain_left == 0:
            self._finish("the old queue is drained")

    # --- helpers -----------------------------------------------------------------------------

    def _new_queue(self, server: bytes) -> ReceiveQueue:
        owner = OwnedQueue(AuthKeyPair.ed25519(self.random), DhKeyPair.generate(self.random))
        queue = ReceiveQueue(server, owner, DhKeyPair.generate(self.random))
        new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                  basic_auth=None, sub_mode=SubscriptionMode.Subscribe,
                  queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation,
                                             queue_link=None),
                  ntf_request=None)
        answer = self.port.request(server, new, b"", owner.auth_key)
        if not isinstance(answer.message, IDS):
            raise AgentError(f"NEW on {server.decode()} answered {answer.error or answer.tag}")
        owner.created(answer.message)
        self.memory.subscribed.add(owner.recipient_id)
        return queue

    def _queue_message(self, message: AgentMessage) -> None:
        durable = self.durable
        envelope = durable.send_chain.seal(message)
        bound = (durable.send.address.sender_id
                 if self.profile is Profile.DEPLOYED and durable.send is not None else None)
        durable.outbox.append(Unsent(bytes(envelope.encode()), envelope.msg_no, bound))
        self._note(f"queued #{envelope.msg_no} {_describe(message)}")

    def _send_to(self, queue: SendQueue, data: bytes) -> Reply:
        return self.port.request(queue.server, SEND(flags=MsgFlags(notification=False),
                                                    body=data),
                                 queue.address.sender_id, queue.key)

    def _request(self, server: bytes, command: Command, rid: bytes,
                 queue: ReceiveQueue) -> Reply:
        return self.port.request(server, command, rid, queue.owner.auth_key)

    def _receive(self) -> ReceiveQueue:
        assert self.durable.receive is not None, "the agent has a receive queue"
        return self.durable.receive

    def _owned_by_rid(self, rid: bytes) -> ReceiveQueue | None:
        return next((q for q in self.owned_queues() if q.rid == rid), None)

    def _note(self, text: str) -> None:
        if self.log is not None:
            self.log(f"{self.name}: {text}")


def connect(alice: Agent, bob: Agent, alice_server: bytes, bob_server: bytes) -> None:
    """Set up a duplex connection out of band, as an invitation would: each agent creates its
    receive queue, the other takes it as its send queue, and the owner secures it with the
    sender's key."""
    for owner, sender, server in ((alice, bob, alice_server), (bob, alice, bob_server)):
        address = owner.create_receive_queue(server)
        owner.secure(sender.join(address))


def _describe(message: AgentMessage) -> str:
    """The message's tag, and an application message's body."""
    if isinstance(message, AgentMessage.M):
        return f"M {message.body.decode('utf-8', 'replace')}"
    return type(message).__name__.rsplit("_", 1)[-1]
