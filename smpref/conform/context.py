"""What a conformance case works with: connections, queues, expectations and verdicts.

A case is an async function of a :class:`Context`. It passes by returning (optionally a note),
and ends otherwise by raising :class:`Fail`, :class:`Skip` (the server does not support what
the case needs) or :class:`Info` (an observation, not a verdict on conformance).

The context knows from the handshake whether the server speaks smpref's seed extensions
(TRANS-11): at a deployed version, responses that differ by design (SUB's ``SOK``, OFF's
``OK``, message bodies without ratchet records) are read in their deployed form.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from smpref.client.connection import SmpClient, at_version, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, LinkKeys, OwnedQueue, Reply, make_link_blob
from smpref.conform.case_verdicts import Fail, Skip
from smpref.errors import ClientError, CryptoError
from smpref.wire.blocks import pad
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    KEY,
    MSG,
    NEW,
    PING,
    SEND,
    SUB,
    ConnectionMode,
    LinkBlob,
    LinkData,
    MsgFlags,
    NtfRequest,
    QueueLink,
    QueueRequest,
    RecordKind,
    SubscriptionMode,
)
from smpref.wire.schema import encode_message
from smpref.wire.structs import Command, Response
from smpref.wire.transmission import Transmission, authorized_bytes, transmission_at

R = TypeVar("R", bound=Response)

if TYPE_CHECKING:
    from smpref.serve.listener import SmpServer


@dataclass
class Queue:
    """A queue a case created: its owner's keys and IDs, its link, its sender's key."""

    owner: OwnedQueue
    mode: str
    link: LinkKeys | None = None
    sender_key: AuthKeyPair | None = None
    notifier_key: AuthKeyPair | None = None
    notifier_id: bytes = b""
    ids: IDS | None = None

    @property
    def rid(self) -> bytes:
        return self.owner.recipient_id

    @property
    def sid(self) -> bytes:
        return self.owner.sender_id

    @property
    def key(self) -> AuthKeyPair:
        return self.owner.auth_key


#: deployed's interval for END and DELD to previous subscribers (Server/Main.hs:575)
PENDING_EVENTS_INTERVAL = 15.0


@dataclass
class Context:
    """Connections to the server under test, and helpers that state expectations."""

    address: str
    extended: bool
    version: int
    embedded: SmpServer | None = None
    timeout: float = 10.0
    #: the server password from the address (basicAuth), sent in every NEW (CMD-10)
    password: bytes | None = None
    clients: list[SmpClient] = field(default_factory=list)
    #: the version every connection is made at, when the run forces one (TRANS-11)
    forced: int | None = None
    #: a MSG that answered the last ACK on (session, queue), for the next :meth:`receive`
    pending: dict[tuple[bytes, bytes], Reply] = field(default_factory=dict)
    #: the queues the case made (recipient ID, key, the connection that made it), deleted
    #: when it ends
    made: list[tuple[bytes, AuthKeyPair, SmpClient]] = field(default_factory=list)

    def random(self, n: int) -> bytes:
        return os.urandom(n)

    # --- connections ------------------------------------------------------------------------

    async def connect(self) -> SmpClient:
        client = await SmpClient.connect(self.address, timeout=self.timeout,
                                         version=self.forced)
        self.clients.append(client)
        return client

    async def end_case(self) -> None:
        """End a case: delete the queues it made, then close its connections."""
        await self._delete_made()
        await self.close()

    async def close(self) -> None:
        """Close the connections (the queues stay: :meth:`end_case` deletes a case's)."""
        for client in self.clients:
            await client.close()
        self.clients.clear()
        self.pending.clear()

    async def _delete_made(self) -> None:
        """DEL each queue the case made (an answer of AUTH means it is gone already), on the
        connection that made it while it is open, else on a new one at its version (a queue is
        served only in the protocol that made it, DEP-1): a case leaves the server as it found
        it, so cases run in any order, any number of times."""
        made, self.made = self.made, []
        again: dict[int, SmpClient] = {}
        for rid, key, maker in made:
            try:
                client = maker
                if not maker.alive:
                    version = maker.negotiated.version
                    if version not in again:
                        again[version] = await SmpClient.connect(
                            self.address, timeout=self.timeout, version=version)
                        self.clients.append(again[version])
                    client = again[version]
                await client.request(DEL(), rid, key, timeout=self.timeout)
            except ClientError:
                continue  # the server under test closed it: what is left is its to expire

    def made_by(self, client: SmpClient, recipient_id: bytes, key: AuthKeyPair) -> None:
        """Note a queue the case made without :meth:`create`, to be deleted when it ends."""
        self.made.append((recipient_id, key, client))

    def require_extensions(self, what: str) -> None:
        if not self.extended:
            raise Skip(f"{what} is a seed extension; the server negotiated deployed version "
                       f"{self.version} (TRANS-11)")

    def require_deployed(self, what: str) -> None:
        if self.extended:
            raise Skip(f"{what} uses deployed SMP's own commands, which the seed design "
                       "replaces; the server negotiated the seed design (TRANS-11)")

    def require_clock(self) -> SmpServer:
        if self.embedded is None:
            raise Skip("needs control of the server's clock: runs only against the embedded "
                       "server (smpref conform without an address)")
        return self.embedded

    # --- keys -------------------------------------------------------------------------------

    def key(self) -> AuthKeyPair:
        return AuthKeyPair.ed25519(self.random)

    # --- expectations -----------------------------------------------------------------------

    @staticmethod
    def expect(reply: Reply, *tags: str, error: str | None = None, step: str = "") -> Reply:
        """Fail unless the reply's tag is one of ``tags`` (or it is ``ERR error``)."""
        where = f"{step}: " if step else ""
        if error is not None:
            if reply.error != error:
                got = f"ERR {reply.error}" if reply.error is not None else reply.tag
                raise Fail(f"{where}expected ERR {error}, got {got}")
            return reply
        if reply.tag not in tags:
            got = f"ERR {reply.error}" if reply.error is not None else reply.tag
            raise Fail(f"{where}expected {' or '.join(tags)}, got {got}")
        return reply

    @staticmethod
    def message(reply: Reply, cls: type[R], step: str = "") -> R:
        """The reply's message as ``cls``; Fail naming what came instead."""
        if not isinstance(reply.message, cls):
            where = f"{step}: " if step else ""
            got = f"ERR {reply.error}" if reply.error is not None else reply.tag
            raise Fail(f"{where}expected {cls.__name__}, got {got}")
        return reply.message

    @staticmethod
    def expect_bodies(got: list[bytes], expected: list[bytes], step: str = "receive") -> None:
        """Fail unless the received message bodies are exactly ``expected``, in order."""
        if got != expected:
            raise Fail(f"{step}: received {got!r}, expected {expected!r}")

    async def request(self, client: SmpClient, message: Command, entity: bytes = b"",
                      key: AuthKeyPair | None = None, *, corr_id: bytes | None = None
                      ) -> Reply:
        try:
            reply = await client.request(message, entity, key, corr_id=corr_id,
                                         timeout=self.timeout)
        except ClientError as exc:
            raise Fail(f"{message.TAG}: {exc}") from None
        if reply.tag in ("OK", "SOK") and reply.transmission.entity_id != entity:
            # every case checks it of every OK it gets (CMD-32): deployed answers with the
            # command's own entity ID (Server.hs:1644, 2088)
            raise Fail(f"{message.TAG}: {reply.tag}'s entity ID is not the command's (CMD-32)")
        return reply

    async def event(self, client: SmpClient, tag: str | tuple[str, ...],
                    entity: bytes | None = None, timeout: float | None = None) -> Reply:
        """The next pushed ``tag`` (for ``entity``); other events stay queued, in order."""
        tags = (tag,) if isinstance(tag, str) else tag
        stash: list[Reply] = []
        try:
            while True:
                try:
                    reply = await client.next_event(timeout or self.timeout)
                except ClientError:
                    raise Fail(f"expected {' or '.join(tags)} pushed by the server; none came "
                               f"within {timeout or self.timeout} s") from None
                if reply.tag in tags and (entity is None
                                          or reply.transmission.entity_id == entity):
                    return reply
                stash.append(reply)
        finally:
            for reply in stash:
                client.events.put_nowait(reply)

    async def ended(self, client: SmpClient, entity: bytes, *, deleted: bool = False) -> Reply:
        """The END (or, for a deleted queue, ``DELD``) that tells ``client`` its subscription
        ended, in the form its version has: the seed design's END, deployed's DELD from
        version 10 and END below (Protocol.hs:1848-1850). Deployed gathers these and sends
        them every 15 s (Server.hs:413-436, Server/Main.hs:575), so the wait is that long
        more than for an answer."""
        tag = "DELD" if deleted and not self.extended and \
            client.negotiated.version >= 10 else "END"
        return await self.event(client, tag, entity,
                                timeout=PENDING_EVENTS_INTERVAL + self.timeout)

    async def no_event(self, client: SmpClient, seconds: float = 0.5, what: str = "") -> None:
        """Fail (saying ``what`` was expected) if the server pushes anything to ``client``
        before it answers a PING sent now, or, against a server that is not embedded, within
        ``seconds`` more.

        A server answers a connection's transmissions in order, and what a command caused for
        a connection (a MSG for a subscriber, an END) goes out before the server answers that
        connection's next transmission: the PING is a barrier. The embedded server routes
        every event at once (or END and DELD at its next pending-events tick, when it gathers
        them), so the barrier is enough there; another server may send some from other
        threads (deployed delivers to subscribers and notifiers from their own connections'
        threads), hence the wait."""
        reply = await self.request(client, PING())
        self.expect(reply, "PONG", step="PING (to see that nothing was pushed before it)")
        if self.embedded is None:
            await asyncio.sleep(seconds)
        elif (gathered := self.embedded.config.pending_events_interval) > 0:
            await asyncio.sleep(2 * gathered)  # END and DELD it gathers come by the next tick
        if not client.events.empty():
            pushed = client.events.get_nowait()
            client.events.put_nowait(pushed)  # left for the case, as event() leaves others
            expected = f"; expected {what}" if what else ""
            raise Fail(f"unexpected {pushed.tag} pushed by the server{expected}")

    # --- queues -----------------------------------------------------------------------------

    def new_command(self, queue: Queue, *, subscribe: bool, blob: LinkBlob | None = None,
                    ntf: NtfRequest | None = None, sender_id: bytes | None = None,
                    password: bytes | None = None, omit_password: bool = False) -> NEW:
        """NEW for ``queue``, with the address's server password unless ``password`` replaces
        it or ``omit_password`` leaves it out."""
        mode = ConnectionMode.Contact if queue.mode == "C" else ConnectionMode.Invitation
        link = None
        if queue.link is not None:
            link = QueueLink(link_id=queue.link.link_id, sender_id=sender_id or self.random(24),
                             enc_link_data=blob if blob is not None else make_link_blob(
                                 queue.link, self.random,
                                 LinkData(conn_req=b"conformance", user_data=b"profile")))
        basic_auth = None if omit_password else password or self.password
        # below deployed version 9 NEW says no mode: the queue has none (DEP-12, DIV-39)
        modeless = link is None and self.deployed_version is not None and \
            self.deployed_version < 9
        return NEW(rcv_auth_key=queue.owner.auth_key.public,
                 rcv_dh_key=queue.owner.dh_key.public, basic_auth=basic_auth,
                 sub_mode=SubscriptionMode.Subscribe if subscribe else SubscriptionMode.OnlyCreate,
                 queue_request=None if modeless else QueueRequest(conn_mode=mode,
                                                                 queue_link=link),
                 ntf_request=ntf)

    def draft(self, mode: str = "M", *, link: bool = False) -> Queue:
        """Keys for a queue not created yet."""
        owner = OwnedQueue(self.key(), DhKeyPair.generate(self.random))
        return Queue(owner, mode, LinkKeys.generate(self.random) if link else None)

    async def create(self, client: SmpClient, mode: str = "M", *, subscribe: bool = False,
                     link: bool = False, notifier: bool = False, blob: LinkBlob | None = None
                     ) -> Queue:
        """Create a queue; fail unless the server answers IDS."""
        queue = self.draft(mode, link=link)
        ntf = None
        if notifier:
            queue.notifier_key = self.key()
            queue.notifier_id = self.random(24)
            ntf = NtfRequest(notifier_id=queue.notifier_id,
                             ntf_auth_key=queue.notifier_key.public,
                             rcv_ntf_dh_key=DhKeyPair.generate(self.random).public)
        reply = await self.request(client, self.new_command(queue, subscribe=subscribe,
                                                            blob=blob, ntf=ntf),
                                   key=queue.key)
        self.expect(reply, "IDS", step="NEW")
        queue.ids = self.message(reply, IDS, "NEW")
        queue.owner.created(queue.ids)
        self.made_by(client, queue.rid, queue.key)
        return queue

    async def secure(self, client: SmpClient, queue: Queue) -> AuthKeyPair:
        """KEY with a fresh sender key."""
        queue.sender_key = self.key()
        reply = await self.request(client, KEY(sender_key=queue.sender_key.public),
                                   queue.rid, queue.key)
        self.expect(reply, "OK", step="KEY")
        return queue.sender_key

    async def send(self, client: SmpClient, queue: Queue, body: bytes, *,
                   notify: bool = False) -> Reply:
        return await self.request(client, SEND(flags=MsgFlags(notification=notify),
                                            body=body), queue.sid, queue.sender_key)

    def open(self, queue: Queue, msg: MSG) -> tuple[str, bytes]:
        """("message", body), ("control", b"") for ratchet records, or ("quota", b"")."""
        try:
            if not self.extended:
                opened = open_deployed_message(queue.owner.rcv_dh_secret, msg)
                return ("quota", b"") if opened.quota else ("message", opened.body)
            _, received, _ = queue.owner.open_message(msg)
        except CryptoError as exc:
            raise Fail(f"MSG does not open for the queue's owner: {exc}") from None
        if received.kind is RecordKind.Message:
            return "message", received.body or b""
        if received.kind is RecordKind.Quota:
            return "quota", b""
        return "control", b""

    async def receive(self, client: SmpClient, queue: Queue, count: int, *,
                      first: Reply | None = None, via_get: bool = False) -> list[bytes]:
        """Receive and acknowledge ``count`` messages (control records are acknowledged and
        skipped). With ``via_get`` each is fetched with GET; otherwise they are pushed to a
        subscribed ``client``."""
        bodies: list[bytes] = []
        slot = (client.session_id, queue.rid)
        reply = first or self.pending.pop(slot, None)
        while len(bodies) < count:
            if reply is None or reply.tag != "MSG":
                if via_get:
                    reply = await self.request(client, GET(), queue.rid, queue.key)
                    if reply.tag == "OK":
                        raise Fail(f"GET: queue empty after {len(bodies)} of {count} messages")
                else:
                    reply = await self.event(client, "MSG", queue.rid)
            self.expect(reply, "MSG", step="receive")
            msg = self.message(reply, MSG, "receive")
            kind, body = self.open(queue, msg)
            ack = await self.request(client, ACK(msg_id=msg.msg_id), queue.rid,
                                     queue.key)
            self.expect(ack, "OK", "MSG", step="ACK")
            if kind == "message":
                bodies.append(body)
            elif kind == "quota":
                bodies.append(b"<quota>")
            reply = ack
        if reply is not None and reply.tag == "MSG":  # ACK delivered the next one already
            self.pending[slot] = reply
        return bodies

    def sub_answer(self, client: SmpClient) -> str:
        """What SUB and NSUB are answered with on ``client``: deployed's SOK from version 16,
        OK below (DEP-4, DEP-12; simplexmq Server.hs:1644, Protocol.hs:1835-1837), and OK in
        the seed design (DIV-22). A message waiting is pushed after it, never in its place."""
        version = None if client.extended else client.negotiated.version
        return "SOK" if version is not None and version >= 16 else "OK"

    async def subscribe(self, client: SmpClient, queue: Queue) -> Reply:
        """SUB, answered exactly as the client's version answers it (:meth:`sub_answer`)."""
        reply = await self.request(client, SUB(), queue.rid, queue.key)
        return self.expect(reply, self.sub_answer(client), step="SUB")

    @property
    def deployed_version(self) -> int | None:
        """The deployed version the connections speak, or None in the seed design."""
        return None if self.extended else self.version

    # --- transmissions built by hand ---------------------------------------------------------

    @staticmethod
    def encoded(client: SmpClient, message: Command) -> bytes:
        """A command's bytes as the client's connection writes them, in the layout of its
        version (DEP-12)."""
        version = client.session.version
        return encode_message(message if version is None else at_version(message, version),
                              version)

    @staticmethod
    def authorization(client: SmpClient, key: AuthKeyPair, corr_id: bytes, entity_id: bytes,
                      command: bytes, *, session_id: bytes | None = None) -> bytes:
        """``key``'s authorization of TRANS-6's authorized bytes, over the client's session
        (or ``session_id``): a signature, or an authenticator to the server's session key."""
        return key.authorize(authorized_bytes(
            client.session_id if session_id is None else session_id, corr_id, entity_id,
            command), corr_id, client.session.server_session_public)

    @staticmethod
    def raw_transmission(client: SmpClient, authorization: bytes, corr_id: bytes,
                         entity_id: bytes, command: bytes, *, named: bytes | None = None,
                         service: bytes | None = None) -> bytes:
        """A transmission built by hand, in the layout of the client's version: below 7 it
        names its session (``named``, this one by default); from 16 ``service`` is a service
        signature after the authorization."""
        return transmission_at(client.session.version,
                               client.session_id if named is None else named,
                               Transmission(authorization, corr_id, entity_id, command,
                                            service))

    async def raw_request(self, client: SmpClient, transmission: bytes, corr_id: bytes,
                          step: str = "a transmission built by hand") -> Reply:
        """Send one transmission as it is, in a block of its own; its answer, which carries
        ``corr_id``. Fail when none comes in time or the connection ends."""
        future = client.answer(corr_id)
        try:
            await client.send_raw([transmission])
            async with asyncio.timeout(self.timeout):
                return await future
        except (TimeoutError, ClientError) as exc:
            raise Fail(f"{step}: no answer with its corrId ({exc or 'timeout'})") from None
        finally:
            client.forget(corr_id)

    def block(self, client: SmpClient, content: bytes) -> bytes:
        """A block's bytes as the client's connection frames it: encrypted with its send
        chain when the version encrypts blocks (11+), else padded (TRANS-2, TRANS-10)."""
        chain = client.stream.framing.send_chain
        return chain.encrypt(content) if chain is not None else pad(content)


async def wait_closed(client: SmpClient, timeout: float) -> bool:
    """Whether the server closed the connection within ``timeout`` seconds."""
    try:
        await client.wait_closed(timeout)
    except TimeoutError:
        return False
    except asyncio.CancelledError:
        return True
    return True
