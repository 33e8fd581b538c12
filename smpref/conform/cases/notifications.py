"""Notifications: NKEY and NID, NSUB, NMSG and the notification flag, NDEL, DELD to the
notifier's subscriber (DEP-6, MSG-7, CMD-15, CMD-23, CMD-34).

A queue gets notifier credentials from deployed's NKEY, answered with NID (the notifier ID the
server chose and its notifier DH key; DEP-6), or in the seed design from NEW's notifier
request, whose notifier ID the client chooses (CMD-12, DIV-10). The notification server
subscribes with NSUB, signed by the notifier key, on the notifier ID; a SEND that asks for a
notification then sends it NMSG, whose metadata opens with the DH secret of the recipient's
notifier key and the server's (MSG-7, CMD-34).

NKEY, NID, NSUB, NDEL and NMSG exist at every deployed version (6-18) with one layout each
(simplexmq Protocol.hs:1696-1697, 1706, 1791-1792, 1814, 1841-1842, 1892-1893). What changes
with the version is around them: NSUB is answered with ``SOK`` from 16 and ``OK`` below
(Protocol.hs:1835-1837), the end of a notifier subscription by NKEY, NDEL or DEL is ``DELD``
from 10 and ``END`` below (Protocol.hs:1848-1850), and NEW carries notifier credentials from
17 (Protocol.hs:1682-1683, 1768). Every case here runs at every version.

Deployed delivers notifications every 1.5 s, not at once (simplexmq Server.hs:350-361,
Server/Main.hs:576), and gathers END and DELD for 15 s (Server.hs:413-436): every wait allows
for that. Deployed also keeps the notifications of a queue nobody has subscribed to for a
later NSUB, where smpref drops them (DIV-46): no case here sends NSUB after a notified SEND.

Not checked: NKEY with an X25519 key that is a low-order point. smpref refuses it with
``ERR CMD SYNTAX`` (DEP-6, DIV-41); deployed computes the all-zero secret and answers NID
(simplexmq Crypto.hs:1285-1286, Server.hs:1581-1583), so no one outcome holds for both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from smpref.client.connection import SmpClient, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, Reply, deployed_new
from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.crypto.primitives import box_key, secretbox_open
from smpref.errors import ClientError, CryptoError, WireError
from smpref.wire.blocks import unpad
from smpref.wire.buffer import Writer
from smpref.wire.keys import PublicKey
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    MSG,
    NDEL,
    NMSG,
    NSUB,
    PING,
    ConnectionMode,
    DeployedNID,
    DeployedNKEY,
    DeployedSOK,
    NewNtfCreds,
    NtfMetadata,
    NtfRequest,
    RecordKind,
    SubscriptionMode,
)
from smpref.wire.schema import decode_struct, encode_message
from smpref.wire.version_history import NOTIFIER_CREDENTIALS

group = CaseGroup("notifications")
case = group.case

#: NMSG's metadata is padded to 128 bytes before it is boxed (MSG-7; simplexmq Server.hs:1971)
NMSG_PADDED = 128
#: how long to watch for an NMSG that must not come: longer than deployed's delivery interval
#: of 1.5 s (simplexmq Server/Main.hs:576)
NO_NMSG_WAIT = 2.0


# --- helpers -------------------------------------------------------------------------------


@dataclass
class _Notifier:
    """A queue's notifier credentials: what a notification server and the recipient keep."""

    notifier_id: bytes
    key: AuthKeyPair
    dh: DhKeyPair
    server_dh: PublicKey

    @property
    def secret(self) -> bytes:
        """rcvNtfDhSecret: the recipient's notifier DH key with the server's (MSG-7)."""
        return box_key(self.server_dh.raw, self.dh.secret)

    def open(self, event: Reply) -> NtfMetadata:
        """NMSG's metadata: ``crypto_box(rcvNtfDhSecret, nonce, pad(ss(msgId) || Int64 ts,
        128))`` (MSG-7, CMD-34; simplexmq Server.hs:1967-1972, Protocol.hs:875-877)."""
        nmsg = event.message
        if not isinstance(nmsg, NMSG):
            raise Fail(f"expected NMSG, got {event.tag}")
        if event.transmission.corr_id:
            raise Fail("NMSG came with a corrId; a pushed event has none")
        if event.transmission.entity_id != self.notifier_id:
            raise Fail("NMSG came for another entity than the notifier ID")
        try:
            padded = secretbox_open(self.secret, nmsg.nonce, nmsg.enc_metadata)
            if len(padded) != NMSG_PADDED:
                raise Fail(f"NMSG's metadata is padded to {len(padded)} bytes, not "
                           f"{NMSG_PADDED}")
            return decode_struct(NtfMetadata, unpad(padded))
        except (CryptoError, WireError) as exc:  # WireError: BlockError too
            raise Fail(f"NMSG's metadata does not open with the notifier DH secret: "
                       f"{exc}") from None


def _nkey(key: AuthKeyPair, dh: DhKeyPair) -> DeployedNKEY:
    return DeployedNKEY(ntf_auth_key=key.public, rcv_ntf_dh_key=dh.public)


async def _add_notifier(ctx: Context, c: SmpClient, q: Queue, key: AuthKeyPair | None = None,
                        dh: DhKeyPair | None = None) -> _Notifier:
    """NKEY on a deployed queue: the NID it is answered with (DEP-6)."""
    key, dh = key or ctx.key(), dh or DhKeyPair.generate(ctx.random)
    reply = await ctx.request(c, _nkey(key, dh), q.rid, q.key)
    nid = ctx.message(reply, DeployedNID, "NKEY")
    if reply.transmission.entity_id != q.rid:
        raise Fail("NID came with another entity ID than NKEY's recipient ID")
    if not nid.notifier_id or nid.notifier_id in (q.rid, q.sid):
        raise Fail("NID's notifier ID is empty or the queue's recipient or sender ID")
    return _Notifier(nid.notifier_id, key, dh, nid.srv_ntf_dh_key)


async def _notified(ctx: Context, c: SmpClient, *, subscribe: bool = False
                    ) -> tuple[Queue, _Notifier]:
    """A contact queue with notifier credentials: deployed's NKEY after NEW, or in the seed
    design NEW's notifier request, whose notifier ID IDS returns as sent (CMD-12)."""
    if not ctx.extended:
        q = await ctx.create(c, "C", subscribe=subscribe)
        return q, await _add_notifier(ctx, c, q)
    q, key, dh = ctx.draft("C"), ctx.key(), DhKeyPair.generate(ctx.random)
    request = NtfRequest(notifier_id=ctx.random(24), ntf_auth_key=key.public,
                         rcv_ntf_dh_key=dh.public)
    reply = await ctx.request(c, ctx.new_command(q, subscribe=subscribe, ntf=request),
                              key=q.key)
    q.ids = ctx.message(reply, IDS, "NEW with a notifier request")
    q.owner.created(q.ids)
    creds = q.ids.server_ntf_creds
    if creds is None or creds.notifier_id != request.notifier_id:
        raise Fail("IDS does not carry the notifier ID NEW's notifier request chose")
    return q, _Notifier(creds.notifier_id, key, dh, creds.srv_ntf_dh_key)


def _expect_subscribed(ctx: Context, c: SmpClient, reply: Reply, step: str) -> None:
    """NSUB's answer: ``OK`` in the seed design (DIV-22) and in deployed below 16, ``SOK``
    with no service ID from 16 (DEP-4; simplexmq Server.hs:1773, Protocol.hs:1835-1837)."""
    ctx.expect(reply, ctx.sub_answer(c), step=step)
    if reply.tag == "SOK" and ctx.message(reply, DeployedSOK, step).service_id is not None:
        raise Fail(f"{step}: SOK names a service; NSUB was sent without one")


async def _nsub(ctx: Context, c: SmpClient, n: _Notifier, step: str = "NSUB") -> None:
    reply = await ctx.request(c, NSUB(), n.notifier_id, n.key)
    _expect_subscribed(ctx, c, reply, step)


async def _send(ctx: Context, c: SmpClient, q: Queue, body: bytes, *, notify: bool) -> None:
    ctx.expect(await ctx.send(c, q, body, notify=notify), "OK",
               step=f"SEND{' with the notification flag' if notify else ''}")


async def _next_message(ctx: Context, c: SmpClient, q: Queue, *, via_get: bool
                        ) -> tuple[bytes, int]:
    """The ID and timestamp of the queue's next message (a pushed MSG, or GET's), which is
    acknowledged; the seed design's ratchet records are acknowledged and skipped."""
    slot = (c.session_id, q.rid)
    reply = ctx.pending.pop(slot, None)
    while True:
        if reply is None or reply.tag != "MSG":
            reply = await ctx.request(c, GET(), q.rid, q.key) if via_get else \
                await ctx.event(c, "MSG", q.rid)
        msg = ctx.message(reply, MSG, "the recipient's message")
        try:
            if ctx.extended:
                rcv, received, _ = q.owner.open_message(msg)
                timestamp, control = rcv.timestamp, received.kind not in (
                    RecordKind.Message, RecordKind.Quota)
            else:
                timestamp = open_deployed_message(q.owner.rcv_dh_secret, msg).timestamp
                control = False
        except CryptoError as exc:
            raise Fail(f"MSG does not open for the queue's owner: {exc}") from None
        reply = await ctx.request(c, ACK(msg_id=msg.msg_id), q.rid, q.key)
        ctx.expect(reply, "OK", "MSG", step="ACK")
        if not control:
            if reply.tag == "MSG":  # the next one, for a later read
                ctx.pending[slot] = reply
            return msg.msg_id, timestamp


async def _no_nmsg(ctx: Context, c: SmpClient, seconds: float = NO_NMSG_WAIT) -> None:
    """Fail if an NMSG reaches ``c`` before the server answers a PING sent now (the barrier of
    :meth:`Context.no_event`) or, against a server that is not embedded, within ``seconds``
    more (deployed sends NMSG from another thread, every 1.5 s); other events stay queued."""
    ctx.expect(await ctx.request(c, PING()), "PONG", step="PING (to see what came before it)")
    loop = asyncio.get_running_loop()
    end, stash = loop.time() + (0.0 if ctx.embedded is not None else seconds), []
    try:
        while True:
            if not c.events.empty():
                reply = c.events.get_nowait()
            elif (left := end - loop.time()) > 0:
                try:
                    reply = await c.next_event(left)
                except ClientError:
                    return
            else:
                return
            if reply.tag == "NMSG":
                raise Fail("an NMSG came where none was due")
            stash.append(reply)
    finally:
        for reply in stash:
            c.events.put_nowait(reply)


async def _raw_request(ctx: Context, c: SmpClient, command: bytes, entity: bytes,
                       key: AuthKeyPair) -> Reply:
    """A command whose bytes smpref's encoder would refuse to write, authorized with ``key``;
    its answer."""
    corr = ctx.random(24)
    signed = ctx.authorization(c, key, corr, entity, command)
    return await ctx.raw_request(c, ctx.raw_transmission(c, signed, corr, entity, command),
                                 corr, command.split(b" ")[0].decode())


async def _ended(ctx: Context, c: SmpClient, n: _Notifier, step: str) -> None:
    """The end of a notifier subscription that NKEY, NDEL or DEL ended, told to its
    subscriber with the old notifier ID: deployed's DELD from version 10, END below and in
    the seed design (DEP-6, MSG-8; Protocol.hs:1848-1850), allowing for deployed's 15 s."""
    try:
        await ctx.ended(c, n.notifier_id, deleted=True)
    except Fail as exc:
        raise Fail(f"{step}: the notifier's subscriber got no word for the old notifier ID "
                   f"({exc})") from None


# --- NKEY and NID (deployed) ---------------------------------------------------------------


@case("ntf.d.nkey", "NKEY gets NID: a new notifier ID and the server's notifier DH key; NSUB "
      "on it subscribes", "DEP-6", "CMD-23", "DEP-4", needs="deployed")
async def _d_nkey(ctx: Context) -> str | None:
    # Server.hs:1493, 1581-1599: a random notifier ID (tried 3 times against the notifier
    # map), a fresh X25519 key pair, answered NID nId srvNtfDhKey (Protocol.hs:1841)
    owner, ntf = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C")
    a, b = await _add_notifier(ctx, owner, q), await _add_notifier(ctx, owner, q)
    if b.notifier_id == a.notifier_id:
        raise Fail("NKEY again answered the notifier ID it replaced; deployed draws a new one "
                   "that no notifier has (Server/QueueStore/STM.hs:222)")
    if b.server_dh == a.server_dh:
        raise Fail("NKEY again answered the same server DH key; deployed makes a new key "
                   "pair for every NKEY (Server.hs:1583)")
    await _nsub(ctx, ntf, b)
    await _nsub(ctx, ntf, b, "NSUB again on the same connection")
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


@case("ntf.d.nkey-refused", "NKEY with a DH key that is not X25519 is CMD SYNTAX; NKEY not "
      "signed by the recipient key, or on the sender ID, is AUTH", "DEP-6", "CMD-20",
      needs="deployed")
async def _d_nkey_refused(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    # an Ed25519 key where NKEY's X25519 key goes: RcvNtfPublicDhKey does not parse
    # (Protocol.hs:1791, Crypto.hs:540-548), PECmdSyntax is CMD SYNTAX (Protocol.hs:1906)
    w = Writer()
    w.raw(b"NKEY ")
    w.short_string(ctx.key().public.der)
    w.short_string(ctx.key().public.der)
    reply = await _raw_request(ctx, c, bytes(w), q.rid, q.key)
    ctx.expect(reply, error="CMD SYNTAX", step="NKEY with an Ed25519 key as its DH key")
    # NKEY is a recipient command: the recipient key on the recipient ID (Server.hs:1249,
    # 1237)
    command = _nkey(ctx.key(), DhKeyPair.generate(ctx.random))
    ctx.expect(await ctx.request(c, command, q.rid, ctx.key()), error="AUTH",
               step="NKEY signed by another key")
    ctx.expect(await ctx.request(c, command, q.sid, q.key), error="AUTH",
               step="NKEY on the sender ID")
    ctx.expect(await ctx.request(c, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


@case("ntf.d.nkey-again", "NKEY over earlier credentials replaces them: DELD to the old "
      "notifier's subscriber, the old ID and key are AUTH, NMSG uses the new secret",
      "DEP-6", "MSG-7", "CMD-23", "CMD-34", needs="deployed")
async def _d_nkey_again(ctx: Context) -> str | None:
    # Server.hs:1595-1598: NKEY over credentials sends CSDeleted for the old notifier ID,
    # which ends its subscription with DELD to a subscriber on another connection
    # (Server.hs:286-290, 320-324); Server/QueueStore/STM.hs:222-227 removes the old ID
    owner, ntf = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C")
    first = await _add_notifier(ctx, owner, q)
    await _nsub(ctx, ntf, first)
    # the same keys again: still a new notifier ID, and the old one's subscription ends
    second = await _add_notifier(ctx, owner, q, first.key, first.dh)
    await _ended(ctx, ntf, first, "NKEY with the same keys")
    ctx.expect(await ctx.request(ntf, NSUB(), first.notifier_id, first.key), error="AUTH",
               step="NSUB on the notifier ID NKEY replaced")
    # other keys: the notifier key before them no longer signs NSUB
    third = await _add_notifier(ctx, owner, q)
    ctx.expect(await ctx.request(ntf, NSUB(), second.notifier_id, second.key), error="AUTH",
               step="NSUB on the second notifier ID after a third NKEY")
    ctx.expect(await ctx.request(ntf, NSUB(), third.notifier_id, first.key), error="AUTH",
               step="NSUB signed by the replaced notifier key")
    await _nsub(ctx, ntf, third)
    await _send(ctx, owner, q, b"after NKEY again", notify=True)
    meta = third.open(await ctx.event(ntf, "NMSG", third.notifier_id))
    msg_id, _ = await _next_message(ctx, owner, q, via_get=True)
    if meta.msg_id != msg_id:
        raise Fail("NMSG names another message ID than the recipient's MSG")
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


# --- NSUB and NMSG (core) ------------------------------------------------------------------


@case("ntf.nsub", "NSUB with the notifier key subscribes (SOK from 16, OK below); another "
      "key, the recipient's ID, or no signature is refused", "CMD-23", "DEP-4", "DEP-6",
      "CMD-12")
async def _nsub_keys(ctx: Context) -> str | None:
    owner, ntf = await ctx.connect(), await ctx.connect()
    q, n = await _notified(ctx, owner)
    # the notifier key on the notifier ID, and nothing else (Server.hs:1257, 1237)
    ctx.expect(await ctx.request(ntf, NSUB(), n.notifier_id, ctx.key()), error="AUTH",
               step="NSUB signed by another key")
    ctx.expect(await ctx.request(ntf, NSUB(), n.notifier_id, q.key), error="AUTH",
               step="NSUB signed by the recipient key")
    ctx.expect(await ctx.request(ntf, NSUB(), q.rid, n.key), error="AUTH",
               step="NSUB on the recipient ID")
    # NSUB must be signed (Protocol.hs:1738, 1754-1757)
    ctx.expect(await ctx.request(ntf, NSUB(), n.notifier_id), error="CMD NO_AUTH",
               step="NSUB without a signature")
    await _nsub(ctx, ntf, n)
    # again on the same connection: subscribed still (Server.hs:1762-1773), and an END
    # the server sent at once would come before the NMSG (deployed ends no subscription
    # of the connection that subscribes again: Server.hs:320-324)
    await _nsub(ctx, ntf, n, "NSUB again on the same connection")
    await _send(ctx, owner, q, b"still subscribed", notify=True)
    n.open(await ctx.event(ntf, ("NMSG", "END", "DELD")))
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


@case("ntf.nmsg-metadata", "a notified SEND sends NMSG to the notifier's subscriber; it "
      "opens to the message's ID and timestamp", "MSG-7", "CMD-34", "DEP-6")
async def _nmsg(ctx: Context) -> str | None:
    # Server.hs:1876-1877, 1959-1972: NMSG nonce (crypto_box rcvNtfDhSecret nonce
    # (pad (ss msgId <> Int64 msgTs) 128)), with no corrId and the notifier ID as entity
    owner, sender, ntf = await ctx.connect(), await ctx.connect(), await ctx.connect()
    q, n = await _notified(ctx, owner)
    await _nsub(ctx, ntf, n)
    await _send(ctx, sender, q, b"tell my notification server", notify=True)
    meta = n.open(await ctx.event(ntf, "NMSG", n.notifier_id))
    msg_id, timestamp = await _next_message(ctx, owner, q, via_get=True)
    if meta.msg_id != msg_id:
        raise Fail("NMSG's metadata names another message ID than the MSG the recipient got")
    if meta.timestamp != timestamp:
        raise Fail(f"NMSG's timestamp {meta.timestamp} is not the message's ({timestamp})")
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


@case("ntf.flag", "only a SEND with the notification flag is notified, also while the "
      "recipient is subscribed", "MSG-7", "CMD-34")
async def _flag(ctx: Context) -> str | None:
    # Server.hs:1876: the notification is made only when the flag is set
    owner, ntf = await ctx.connect(), await ctx.connect()
    q, n = await _notified(ctx, owner, subscribe=True)
    await _nsub(ctx, ntf, n)
    await _send(ctx, owner, q, b"quiet", notify=False)
    await _send(ctx, owner, q, b"loud", notify=True)
    quiet, _ = await _next_message(ctx, owner, q, via_get=False)
    loud, _ = await _next_message(ctx, owner, q, via_get=False)
    # deployed sends the notifications it has in the order they were made (Server.hs:402),
    # so the first NMSG would be the quiet message's if it had one
    meta = n.open(await ctx.event(ntf, "NMSG", n.notifier_id))
    if meta.msg_id == quiet:
        raise Fail("a SEND without the notification flag was notified")
    if meta.msg_id != loud:
        raise Fail("NMSG names neither message sent")
    await _no_nmsg(ctx, ntf)
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


@case("ntf.unsubscribed", "a notified SEND pushes nothing to a notification server that has "
      "not subscribed, nor to the recipient's connection", "MSG-7", "CMD-34")
async def _unsubscribed(ctx: Context) -> str | None:
    # Server.hs:377-381: notifications go only to clients whose NSUB holds the notifier ID
    owner, ntf = await ctx.connect(), await ctx.connect()
    q, _ = await _notified(ctx, owner, subscribe=True)
    plain = await ctx.create(owner, "C")
    await _send(ctx, owner, q, b"no one listens", notify=True)
    await _send(ctx, owner, plain, b"no notifier at all", notify=True)
    await _next_message(ctx, owner, q, via_get=False)
    await _no_nmsg(ctx, ntf)
    await _no_nmsg(ctx, owner, 0.2)
    for queue in (q, plain):
        ctx.expect(await ctx.request(owner, DEL(), queue.rid, queue.key), "OK", step="DEL")
    return None


@case("ntf.nsub-moves", "NSUB from another connection moves the notifier subscription: END "
      "to the previous one, NMSG to the new one", "MSG-7", "CMD-23")
async def _nsub_moves(ctx: Context) -> str | None:
    # Server.hs:283-284: a new subscriber ends the previous one's subscription with END
    owner, first, second = await ctx.connect(), await ctx.connect(), await ctx.connect()
    q, n = await _notified(ctx, owner)
    await _nsub(ctx, first, n)
    await _nsub(ctx, second, n, "NSUB from another connection")
    await ctx.ended(first, n.notifier_id)
    await _send(ctx, owner, q, b"for the second", notify=True)
    n.open(await ctx.event(second, "NMSG", n.notifier_id))
    await _no_nmsg(ctx, first)
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


# --- NDEL and DEL --------------------------------------------------------------------------


@case("ntf.ndel", "NDEL removes the notifier credentials: OK (again too), the notifier ID is "
      "AUTH, no NMSG follows; deployed sends DELD to the notifier's subscriber",
      "CMD-15", "DEP-6", "MSG-7")
async def _ndel(ctx: Context) -> str | None:
    # Server.hs:1601-1613: NDEL deletes the credentials and answers OK (OK also without
    # any); the subscriber of the old notifier ID on another connection gets DELD
    # (Server.hs:1609, 286-290), END below 10. The seed design says nothing of an event.
    owner, ntf = await ctx.connect(), await ctx.connect()
    q, n = await _notified(ctx, owner)
    await _nsub(ctx, ntf, n)
    ctx.expect(await ctx.request(owner, NDEL(), q.rid, q.key), "OK", step="NDEL")
    if not ctx.extended:
        await _ended(ctx, ntf, n, "NDEL")
    ctx.expect(await ctx.request(ntf, NSUB(), n.notifier_id, n.key), error="AUTH",
               step="NSUB after NDEL")
    ctx.expect(await ctx.request(owner, NDEL(), q.rid, q.key), "OK",
               step="NDEL without credentials")
    await _send(ctx, owner, q, b"after NDEL", notify=True)
    await _no_nmsg(ctx, ntf)
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None


@case("ntf.d.ndel-same-connection", "NDEL or NKEY sent on the notifier subscriber's own "
      "connection sends it no DELD; from another connection it does", "DEP-6",
      needs="deployed")
async def _d_ndel_same(ctx: Context) -> str | None:
    # Server.hs:1609, 1598: the event is queued with the sending client's ID, and
    # checkAnotherClient (Server.hs:320-324) sends it only to another client
    ntf, other = await ctx.connect(), await ctx.connect()
    by_ndel = await ctx.create(ntf, "C")
    by_nkey = await ctx.create(ntf, "C")
    by_other = await ctx.create(other, "C")
    notifiers = [await _add_notifier(ctx, ntf, by_ndel), await _add_notifier(ctx, ntf, by_nkey),
                 await _add_notifier(ctx, other, by_other)]
    for n in notifiers:
        await _nsub(ctx, ntf, n)
    ctx.expect(await ctx.request(ntf, NDEL(), by_ndel.rid, by_ndel.key), "OK", step="NDEL")
    await _add_notifier(ctx, ntf, by_nkey)
    ctx.expect(await ctx.request(other, NDEL(), by_other.rid, by_other.key), "OK",
               step="NDEL from another connection")
    # deployed sends a client's gathered events in one write (Server.hs:422-429): once the
    # DELD for the other connection's NDEL is here, one for the others would be too
    await _ended(ctx, ntf, notifiers[2], "NDEL from another connection")
    for queue, c in ((by_ndel, ntf), (by_nkey, ntf), (by_other, other)):  # no one to tell
        ctx.expect(await ctx.request(c, DEL(), queue.rid, queue.key), "OK", step="DEL")
    await ctx.no_event(ntf, 1.0, "nothing on the subscriber's own connection, which sent the "
                       "NDEL and NKEY that ended its notifier subscriptions")
    return None


@case("ntf.del", "DEL of a queue ends its notifier subscription on another connection: DELD "
      "from 10, END below and in the seed design; its notifier ID is then AUTH",
      "MSG-8", "DEP-4", "DEP-6", "CMD-21")
async def _del(ctx: Context) -> str | None:
    # Server.hs:2053-2061: DEL sends CSDeleted for the notifier ID, which is DELD to its
    # subscriber on another connection (Server.hs:286-290), END below 10 (Protocol.hs:1848)
    owner, ntf = await ctx.connect(), await ctx.connect()
    q, n = await _notified(ctx, owner, subscribe=True)
    await _nsub(ctx, ntf, n)
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    await _ended(ctx, ntf, n, "DEL")
    ctx.expect(await ctx.request(ntf, NSUB(), n.notifier_id, n.key), error="AUTH",
               step="NSUB after DEL")
    return None


# --- NEW with notifier credentials (deployed, 17+) -----------------------------------------


@case("ntf.d.new-creds", "NEW with notifier credentials (17+) gets them in IDS and NMSG opens "
      "with them; below 17 NEW that carries them is CMD SYNTAX", "DEP-3", "DEP-6", "MSG-7",
      needs="deployed")
async def _d_new_creds(ctx: Context) -> str | None:
    # Server.hs:1508-1510, 1527-1530, 1558: the server chooses the notifier ID and a DH key,
    # and IDS carries them from 17 (Protocol.hs:1827); below 17 NEW ends before them and a
    # longer NEW does not parse (Protocol.hs:1764-1783, 1933-1936)
    owner, ntf = await ctx.connect(), await ctx.connect()
    version = owner.negotiated.version
    q, key, dh = ctx.draft("C"), ctx.key(), DhKeyPair.generate(ctx.random)
    creds = NewNtfCreds(ntf_auth_key=key.public, rcv_ntf_dh_key=dh.public)
    plain = deployed_new(version, rcv_auth_key=q.key.public, rcv_dh_key=q.owner.dh_key.public,
                         basic_auth=ctx.password, sub_mode=SubscriptionMode.OnlyCreate,
                         mode=ConnectionMode.Contact if version >= 9 else None)
    if version < NOTIFIER_CREDENTIALS:  # the version's NEW, then v17's Maybe ntfCreds
        longer = encode_message(plain, version) + b"1" + creds.encode()
        reply = await _raw_request(ctx, owner, longer, b"", q.key)
        ctx.expect(reply, error="CMD SYNTAX", step=f"NEW with notifier credentials at {version}")
        return f"version {version}: NEW has no notifier credentials"
    new = replace(plain, ntf_creds=creds)
    q.ids = ctx.message(await ctx.request(owner, new, key=q.key), IDS, "NEW")
    q.owner.created(q.ids)
    server = q.ids.server_ntf_creds
    if server is None:
        raise Fail("IDS carries no notifier credentials for a NEW that asked for them")
    if not server.notifier_id or server.notifier_id in (q.rid, q.sid):
        raise Fail("IDS's notifier ID is empty or the queue's recipient or sender ID")
    n = _Notifier(server.notifier_id, key, dh, server.srv_ntf_dh_key)
    await _nsub(ctx, ntf, n)
    await _send(ctx, owner, q, b"created with a notifier", notify=True)
    meta = n.open(await ctx.event(ntf, "NMSG", n.notifier_id))
    msg_id, _ = await _next_message(ctx, owner, q, via_get=True)
    if meta.msg_id != msg_id:
        raise Fail("NMSG names another message ID than the recipient's MSG")
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    return None

