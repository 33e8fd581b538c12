"""Short links in deployed SMP's form: NEW with link data, LSET, LGET, LKEY and LDEL (DEP-3,
DEP-5).

A deployed link is a fixed and a user part, each signed by the link's root key and sealed by
the client (:mod:`smpref.crypto.deployed_links`); the server stores them as it got them. Each
case seals its own parts and opens what LGET or LKEY answer, so a server that returns other
bytes, another queue's data or another sender ID fails.

Versions (DEP-12): deployed's parser gates only NEW by version (simplexmq Protocol.hs:1765-1815),
so LSET, LDEL, LGET and LKEY work at every version 6-18 on a queue whose state allows them
(Server.hs:1454-1498). What the version decides is the queue NEW can make: below 9 a queue has
no mode, so it reads as a contact queue while unsecured and LKEY never applies to it
(Server.hs:1287-1306); from 9 NEW says messaging or contact; from 15 NEW can carry the link,
and below 15 a NEW in that layout does not parse.

The LinkId of a contact link is derived from its fixed data (DIV-8), so every run makes new
ones and a case can run twice against the same server.
"""

from __future__ import annotations

from dataclasses import dataclass

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, Reply
from smpref.conform.case_verdicts import Fail, Skip
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.crypto import deployed_links as links
from smpref.crypto.primitives import ed25519_public, sha3_384
from smpref.errors import CryptoError
from smpref.wire.messages import (
    DEL,
    IDS,
    ConnectionMode,
    ContactLink,
    DeployedLDEL,
    DeployedLGET,
    DeployedLinkData,
    DeployedLKEY,
    DeployedLNK,
    DeployedLSET,
    DeployedNEW,
    MessagingLink,
    QueueReqData,
    SubscriptionMode,
)
from smpref.wire.schema import encode_message
from smpref.wire.version_history import SENDER_SECURES, SHORT_LINKS

group = CaseGroup("deployed_links")
case = group.case


# --- links as their owner keeps them ------------------------------------------------------


@dataclass
class _Link:
    """A link's secrets, its sealed fixed part (sealed once: LSET must repeat it byte for byte
    to keep it, Server/QueueStore/STM.hs:173-176) and its LinkId."""

    fixed: bytes
    root: bytes
    sb_key: bytes
    enc_fixed: bytes
    link_id: bytes

    def data(self, ctx: Context, user: bytes) -> DeployedLinkData:
        """The link data with a freshly sealed user part."""
        return DeployedLinkData(enc_fixed=self.enc_fixed, enc_user=_seal(
            ctx, self.sb_key, self.root, user, links.USER_PADDED))


def _seal(ctx: Context, sb_key: bytes, root: bytes, data: bytes, padded: int) -> bytes:
    return links.seal_part(sb_key, ctx.random(24), links.signed(root, data), padded)


def _fixed(ctx: Context, kind: str) -> bytes:
    return f"fixed data of a {kind} link ".encode() + ctx.random(16).hex().encode()


def _contact_link(ctx: Context) -> _Link:
    """A contact link: its LinkId and key derive from its fixed data (DIV-8)."""
    fixed, root = _fixed(ctx, "contact"), ctx.random(32)
    link_id, sb_key = links.contact_link_keys(links.link_key(fixed))
    return _Link(fixed, root, sb_key, _seal(ctx, sb_key, root, fixed, links.FIXED_PADDED),
                 link_id)


def _invitation_link(ctx: Context, link_id: bytes = b"") -> _Link:
    """A one-time invitation's link: its LinkId is the server's when NEW carries the link
    (Server.hs:1517), the client's when LSET sets it."""
    fixed, root = _fixed(ctx, "one-time"), ctx.random(32)
    sb_key = links.invitation_sb_key(links.link_key(fixed))
    return _Link(fixed, root, sb_key, _seal(ctx, sb_key, root, fixed, links.FIXED_PADDED),
                 link_id)


def _lnk(reply: Reply, link: _Link, sender_id: bytes, user: bytes, step: str) -> None:
    """Fail unless ``reply`` is LNK with ``sender_id`` and the link's data, the fixed part as
    it was sealed, and both parts opening with the link's key to what was sealed, signed by
    its root key (DEP-5, Server.hs:1578-1579)."""
    lnk = Context.message(reply, DeployedLNK, step)
    if lnk.sender_id != sender_id:
        raise Fail(f"{step}: LNK carries sender ID {lnk.sender_id.hex()}, the queue's is "
                   f"{sender_id.hex()}")
    if lnk.link_data.enc_fixed != link.enc_fixed:
        raise Fail(f"{step}: LNK's fixed part is not the one LSET/NEW stored")
    root = ed25519_public(link.root)
    try:
        fixed = links.open_part(link.sb_key, lnk.link_data.enc_fixed, root)
        got = links.open_part(link.sb_key, lnk.link_data.enc_user, root)
    except CryptoError as exc:
        raise Fail(f"{step}: the link data does not open with the link's key: {exc}") from None
    if fixed != link.fixed:
        raise Fail(f"{step}: the fixed part opens to other data than was sealed")
    if got != user:
        raise Fail(f"{step}: the user part opens to {got!r}, expected {user!r}")


# --- queues -------------------------------------------------------------------------------


def _version(ctx: Context) -> int:
    ctx.require_deployed("deployed short links (LSET, LGET, LKEY, LDEL)")
    return ctx.version


def _new_linked(ctx: Context, queue: Queue, link: _Link, user: bytes, sender_id: bytes
                ) -> DeployedNEW:
    """NEW with a contact link (the client's LinkId) or a messaging one (the server's),
    without notifier credentials, in the layout of 15 and later (Protocol.hs:661-669)."""
    data = link.data(ctx, user)
    request = QueueReqData.C(link=ContactLink(link_id=link.link_id, sender_id=sender_id,
                                              link_data=data)) if queue.mode == "C" else \
        QueueReqData.M(link=MessagingLink(sender_id=sender_id, link_data=data))
    return DeployedNEW(rcv_auth_key=queue.key.public, rcv_dh_key=queue.owner.dh_key.public,
                       basic_auth=ctx.password, sub_mode=SubscriptionMode.OnlyCreate,
                       queue_req_data=request)


async def _request_new(ctx: Context, client: SmpClient, queue: Queue, link: _Link,
                       user: bytes, *, corr: bytes, sender_id: bytes | None = None) -> Reply:
    """Send NEW carrying the link; the sender ID is SHA3-384(corrId)[0:24] unless given
    (DEP-3, Server.hs:1513)."""
    sid = sha3_384(corr)[:24] if sender_id is None else sender_id
    return await ctx.request(client, _new_linked(ctx, queue, link, user, sid),
                             key=queue.key, corr_id=corr)


async def _create_linked(ctx: Context, client: SmpClient, mode: str, link: _Link,
                         user: bytes) -> tuple[Queue, bytes]:
    """A queue created with its link in NEW (15+); the corrId NEW was sent with. A messaging
    link takes the LinkId IDS names."""
    queue, corr = ctx.draft(mode), ctx.random(24)
    reply = await _request_new(ctx, client, queue, link, user, corr=corr)
    ids = ctx.message(reply, IDS, f"NEW with a {'contact' if mode == 'C' else 'messaging'} "
                                  "link")
    queue.ids = ids
    queue.owner.created(ids)
    if mode == "M":
        if ids.link_id is None:
            raise Fail("IDS of a NEW with a messaging link names no LinkId")
        link.link_id = ids.link_id
    return queue, corr


async def _messaging_link(ctx: Context, client: SmpClient, user: bytes) -> tuple[Queue, _Link]:
    """A messaging queue with a link (9+): in NEW from 15, set by LSET on the unsecured queue
    at 9-14, where NEW cannot carry it (both: Server.hs:1484-1488, 1516-1517)."""
    if ctx.version >= SHORT_LINKS:
        link = _invitation_link(ctx)
        queue, _ = await _create_linked(ctx, client, "M", link, user)
        return queue, link
    queue = await ctx.create(client, "M")
    link = _invitation_link(ctx, ctx.random(24))
    ctx.expect(await _lset(ctx, client, queue, link, user), "OK",
               step="LSET on an unsecured messaging queue")
    return queue, link


async def _lset(ctx: Context, client: SmpClient, queue: Queue, link: _Link, user: bytes, *,
                link_id: bytes | None = None) -> Reply:
    """LSET on the queue's recipient ID: the link's LinkId (or ``link_id``), its fixed part
    and ``user`` sealed as the user part."""
    lset = DeployedLSET(link_id=link.link_id if link_id is None else link_id,
                        link_data=link.data(ctx, user))
    return await ctx.request(client, lset, queue.rid, queue.key)


async def _lget(ctx: Context, client: SmpClient, link_id: bytes) -> Reply:
    """LGET: unauthenticated, the LinkId as its entity (Protocol.hs:1732)."""
    return await ctx.request(client, DeployedLGET(), link_id)


async def _lkey(ctx: Context, client: SmpClient, link_id: bytes, key: AuthKeyPair,
                signer: AuthKeyPair | None = None) -> Reply:
    """LKEY carrying ``key``, signed by ``signer`` (by default the key it carries)."""
    return await ctx.request(client, DeployedLKEY(sender_key=key.public), link_id,
                             signer or key)


async def _delete(ctx: Context, client: SmpClient, *queues: Queue) -> None:
    for queue in queues:
        ctx.expect(await ctx.request(client, DEL(), queue.rid, queue.key), "OK",
                   step="DEL (clean-up)")


async def _new_in_link_layout(ctx: Context, client: SmpClient, mode: str) -> str:
    """Below 15, NEW in the layout of 15 (with queueReqData and its link) does not parse:
    deployed reads the version's own layout to the end (Protocol.hs:1765-1783, 1932-1937),
    so the answer is CMD SYNTAX and no queue is made."""
    queue, link = ctx.draft(mode), _contact_link(ctx) if mode == "C" else _invitation_link(ctx)
    corr = ctx.random(24)
    body = encode_message(_new_linked(ctx, queue, link, b"user", sha3_384(corr)[:24]),
                          SHORT_LINKS)
    signed = ctx.authorization(client, queue.key, corr, b"", body)
    reply = await ctx.raw_request(client, ctx.raw_transmission(client, signed, corr, b"", body),
                                  corr, f"NEW in the layout of {SHORT_LINKS}")
    ctx.expect(reply, error="CMD SYNTAX",
               step=f"NEW with link data (the layout of {SHORT_LINKS}) at version "
                    f"{ctx.version}")
    if mode == "C":
        ctx.expect(await _lget(ctx, client, link.link_id), error="AUTH",
                   step="LGET of the link the refused NEW carried")
    return (f"version {ctx.version}: NEW cannot carry link data before {SHORT_LINKS}; its "
            "layout is CMD SYNTAX")


# --- cases ----------------------------------------------------------------------------------


@case("dlink.new-contact", "NEW with a contact link: the client's LinkId and derived sender "
      "ID; LGET reads the data back", "DEP-3", "DEP-5", "DEP-12", needs="deployed")
async def _new_contact(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    if _version(ctx) < SHORT_LINKS:
        return await _new_in_link_layout(ctx, owner, "C")
    link = _contact_link(ctx)
    queue, corr = await _create_linked(ctx, owner, "C", link, b"contact profile")
    ids = queue.ids
    assert ids is not None
    # IDS: the mode as sent, the client's LinkId, the sender ID SHA3-384(corrId)[0:24]
    # (Server.hs:1513-1518, 1558)
    if ids.queue_mode is not ConnectionMode.Contact:
        raise Fail(f"IDS names mode {ids.queue_mode}, NEW asked for a contact queue")
    if ids.link_id != link.link_id:
        raise Fail("IDS names another LinkId than the one NEW carried")
    if ids.snd_id != sha3_384(corr)[:24]:
        raise Fail("IDS's sender ID is not the one NEW carried, SHA3-384(corrId)[0:24]")
    _lnk(await _lget(ctx, reader, link.link_id), link, ids.snd_id, b"contact profile",
         "LGET of the contact link")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.new-messaging", "NEW with a messaging link: the server's LinkId; LGET is refused, "
      "LKEY reads it", "DEP-3", "DEP-5", "DEP-12", needs="deployed")
async def _new_messaging(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    if _version(ctx) < SHORT_LINKS:
        return await _new_in_link_layout(ctx, owner, "M")
    link = _invitation_link(ctx)
    queue, corr = await _create_linked(ctx, owner, "M", link, b"invitation profile")
    ids = queue.ids
    assert ids is not None
    if ids.queue_mode is not ConnectionMode.Invitation:
        raise Fail(f"IDS names mode {ids.queue_mode}, NEW asked for a messaging queue")
    # the server chooses a messaging link's LinkId (Server.hs:1517): 24 bytes, as every ID
    if ids.link_id is None or len(ids.link_id) != 24:
        raise Fail(f"IDS of a NEW with a messaging link names no 24-byte LinkId: {ids.link_id!r}")
    if ids.link_id in (ids.rcv_id, ids.snd_id):
        raise Fail("the messaging link's LinkId is the queue's recipient or sender ID")
    if ids.snd_id != sha3_384(corr)[:24]:
        raise Fail("IDS's sender ID is not the one NEW carried, SHA3-384(corrId)[0:24]")
    # LGET is for contact queues only (Server.hs:1255-1256); LKEY secures and reads
    ctx.expect(await _lget(ctx, sender, link.link_id), error="AUTH",
               step="LGET of a messaging link")
    _lnk(await _lkey(ctx, sender, link.link_id, ctx.key()), link, ids.snd_id,
         b"invitation profile", "LKEY of the messaging link")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.new-ids", "NEW with a link: a sender ID not derived from the corrId is CMD "
      "PROHIBITED, a LinkId or sender ID in use AUTH", "DEP-3", needs="deployed")
async def _new_ids(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    if _version(ctx) < SHORT_LINKS:
        raise Skip(f"version {ctx.version}: NEW carries no link and no client-chosen ID before "
                   f"{SHORT_LINKS} (dlink.new-contact checks what such a NEW gets)")
    link = _contact_link(ctx)
    first, first_corr = await _create_linked(ctx, owner, "C", link, b"first")
    # a sender ID that is not SHA3-384(corrId)[0:24], above or below it (Server.hs:1520-1524)
    for mode in ("C", "M"):
        for wrong in (bytes(24), b"\xff" * 24):
            other = _contact_link(ctx) if mode == "C" else _invitation_link(ctx)
            reply = await _request_new(ctx, owner, ctx.draft(mode), other, b"u",
                                       corr=ctx.random(24), sender_id=wrong)
            ctx.expect(reply, error="CMD PROHIBITED",
                       step=f"NEW ({mode}) with a sender ID not derived from its corrId")
    # the sender-ID check comes before the collision check: a taken LinkId with a wrong
    # sender ID is still CMD PROHIBITED (Server.hs:1520-1524 before 1545-1548)
    reply = await _request_new(ctx, owner, ctx.draft("C"), link, b"u", corr=ctx.random(24),
                               sender_id=bytes(24))
    ctx.expect(reply, error="CMD PROHIBITED",
               step="NEW with a taken LinkId and a sender ID not derived from its corrId")
    # a client-chosen ID in use: AUTH, no retry (Server.hs:1545-1548, STM.hs:117-133)
    reply = await _request_new(ctx, owner, ctx.draft("C"), link, b"second",
                               corr=ctx.random(24))
    ctx.expect(reply, error="AUTH", step="NEW with a LinkId another queue has")
    reply = await _request_new(ctx, owner, ctx.draft("C"), _contact_link(ctx), b"second",
                               corr=first_corr)
    ctx.expect(reply, error="AUTH", step="NEW with the sender ID another queue has (the "
                                          "same corrId)")
    reply = await _request_new(ctx, owner, ctx.draft("M"), _invitation_link(ctx), b"second",
                               corr=first_corr)
    ctx.expect(reply, error="AUTH", step="NEW (M) with the sender ID another queue has")
    # the refused NEWs changed nothing: the link still reads the first queue's data
    _lnk(await _lget(ctx, reader, link.link_id), link, first.sid, b"first",
         "LGET after the refused NEWs")
    await _delete(ctx, owner, first)
    return None


@case("dlink.lset-contact", "LSET gives a contact queue a link; LGET reads it; LSET again "
      "replaces the user part", "DEP-5", "DEP-12", needs="deployed")
async def _lset_contact(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    v = _version(ctx)
    queue, link = await ctx.create(owner, "C"), _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, queue, link, b"profile 1"), "OK",
               step="LSET on a queue without a link")
    _lnk(await _lget(ctx, reader, link.link_id), link, queue.sid, b"profile 1",
         "LGET after LSET")
    # the same LinkId and the same fixed part: the user part is replaced (STM.hs:173-182)
    ctx.expect(await _lset(ctx, owner, queue, link, b"profile 2"), "OK",
               step="LSET with the same LinkId and fixed part, a new user part")
    _lnk(await _lget(ctx, reader, link.link_id), link, queue.sid, b"profile 2",
         "LGET after the second LSET")
    note = None
    if v >= SENDER_SECURES:
        # a contact queue stays a contact queue when KEY secures it: LSET and LGET go on
        # (isSecuredMsgQueue and isContactQueue look at the mode, Server.hs:1297-1306)
        await ctx.secure(owner, queue)
        ctx.expect(await _lset(ctx, owner, queue, link, b"profile 3"), "OK",
                   step="LSET on a contact queue secured with KEY")
        _lnk(await _lget(ctx, reader, link.link_id), link, queue.sid, b"profile 3",
             "LGET of a secured contact queue")
    else:
        note = (f"version {v}: the queue has no mode (read as a contact queue while "
                "unsecured); not secured here (DIV-39)")
    await _delete(ctx, owner, queue)
    return note


@case("dlink.lset-refused", "LSET with another fixed part or another LinkId than the "
      "queue's is AUTH and changes nothing", "DEP-5", "DEP-12", needs="deployed")
async def _lset_refused(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    _version(ctx)
    queue, link = await ctx.create(owner, "C"), _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, queue, link, b"kept"), "OK", step="LSET")
    # the same LinkId, another fixed part: AUTH (STM.hs:175-176), whether the other sorts
    # before the stored one or after it (any difference counts)
    size = len(link.enc_fixed)
    for other_fixed in (bytes(size), b"\xff" * size):
        changed = _Link(link.fixed, link.root, link.sb_key, other_fixed, link.link_id)
        ctx.expect(await _lset(ctx, owner, queue, changed, b"changed"), error="AUTH",
                   step="LSET with the queue's LinkId and another fixed part")
    # the same fixed plaintext sealed again is other fixed bytes: the server compares the
    # sealed part, as stored
    resealed = _Link(link.fixed, link.root, link.sb_key,
                     _seal(ctx, link.sb_key, link.root, link.fixed, links.FIXED_PADDED),
                     link.link_id)
    ctx.expect(await _lset(ctx, owner, queue, resealed, b"changed"), error="AUTH",
               step="LSET with the same fixed data sealed again (other bytes)")
    # another LinkId than the queue's: AUTH, the LinkId cannot change (Server.hs:1487)
    other_ids = (bytes(24), b"\xff" * 24, _contact_link(ctx).link_id)
    for other_id in other_ids:
        ctx.expect(await _lset(ctx, owner, queue, link, b"changed", link_id=other_id),
                   error="AUTH", step="LSET with another LinkId than the queue's")
    _lnk(await _lget(ctx, reader, link.link_id), link, queue.sid, b"kept",
         "LGET after the refused LSETs")
    for other_id in other_ids:
        ctx.expect(await _lget(ctx, reader, other_id), error="AUTH",
                   step="LGET of a LinkId a refused LSET named")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.lset-messaging", "LSET on a messaging queue: accepted while unsecured, AUTH once "
      "KEY secured it", "DEP-5", "DEP-12", needs="deployed")
async def _lset_messaging(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    v = _version(ctx)
    queue = await ctx.create(owner, "M")
    link = _invitation_link(ctx, ctx.random(24))
    ctx.expect(await _lset(ctx, owner, queue, link, b"offer 1"), "OK",
               step="LSET on an unsecured queue")
    if v < SENDER_SECURES:
        # NEW below 9 makes a queue without a mode: while unsecured it reads as a contact
        # queue, LGET answers and LKEY (messaging queues only) is AUTH (Server.hs:1293-1301)
        _lnk(await _lget(ctx, sender, link.link_id), link, queue.sid, b"offer 1",
             f"LGET of a queue created at version {v} (no mode)")
        ctx.expect(await _lkey(ctx, sender, link.link_id, ctx.key()), error="AUTH",
                   step=f"LKEY on a queue created at version {v} (no mode)")
        await _delete(ctx, owner, queue)
        return f"version {v}: the queue has no mode; LGET reads it, LKEY is AUTH"
    ctx.expect(await _lget(ctx, sender, link.link_id), error="AUTH",
               step="LGET of a messaging queue's link")
    ctx.expect(await _lset(ctx, owner, queue, link, b"offer 2"), "OK",
               step="LSET again on the unsecured messaging queue, a new user part")
    key = await ctx.secure(owner, queue)
    # a secured messaging queue takes no LSET, not even the same data (Server.hs:1486)
    ctx.expect(await _lset(ctx, owner, queue, link, b"offer 3"), error="AUTH",
               step="LSET on a messaging queue secured with KEY")
    # LKEY with the key KEY set reads the data the second LSET left (STM.hs:208-212)
    _lnk(await _lkey(ctx, sender, link.link_id, key), link, queue.sid, b"offer 2",
         "LKEY with the key KEY set")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.lkey", "LKEY secures a messaging queue with the key it carries and answers LNK; "
      "again with that key LNK, another key AUTH", "DEP-5", "DEP-12", "QUEUE-11",
      needs="deployed")
async def _lkey_case(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    v = _version(ctx)
    if v < SENDER_SECURES:
        # no queue made below 9 has the messaging mode LKEY needs (Server.hs:1293-1295, 1463)
        queue = await ctx.create(owner, "M")
        link = _invitation_link(ctx, ctx.random(24))
        ctx.expect(await _lset(ctx, owner, queue, link, b"offer"), "OK", step="LSET")
        ctx.expect(await _lkey(ctx, sender, link.link_id, ctx.key()), error="AUTH",
                   step=f"LKEY on a queue created at version {v} (no mode)")
        ctx.expect(await ctx.send(sender, queue, b"unsigned"), "OK",
                   step="unsigned SEND after the refused LKEY (the queue is not secured)")
        await _delete(ctx, owner, queue)
        return f"version {v}: the queue has no mode; LKEY is AUTH"
    queue, link = await _messaging_link(ctx, owner, b"offer")
    k, other = ctx.key(), ctx.key()
    # LKEY needs an authorization (Protocol.hs:1739-1741) and it must be by the key it
    # carries (Server.hs:1255, 1287-1288)
    reply = await ctx.request(sender, DeployedLKEY(sender_key=k.public), link.link_id)
    ctx.expect(reply, error="CMD NO_AUTH", step="LKEY without an authorization")
    ctx.expect(await _lkey(ctx, sender, link.link_id, k, other), error="AUTH",
               step="LKEY signed by another key than it carries")
    ctx.expect(await ctx.send(sender, queue, b"before"), "OK",
               step="unsigned SEND: the refused LKEYs did not secure the queue")
    _lnk(await _lkey(ctx, sender, link.link_id, k), link, queue.sid, b"offer", "LKEY")
    # the queue is secured with k, as SKEY would (Server.hs:1463, STM.hs:202-212)
    ctx.expect(await ctx.send(sender, queue, b"unsigned"), error="AUTH",
               step="unsigned SEND after LKEY")
    _lnk(await _lkey(ctx, sender, link.link_id, k), link, queue.sid, b"offer",
         "LKEY again with the same key")
    ctx.expect(await _lkey(ctx, sender, link.link_id, other), error="AUTH",
               step="LKEY with another key")
    # secured, the messaging queue takes no LSET from its owner (Server.hs:1486)
    ctx.expect(await _lset(ctx, owner, queue, link, b"late"), error="AUTH",
               step="LSET on the queue LKEY secured")
    queue.sender_key = k
    ctx.expect(await ctx.send(sender, queue, b"signed"), "OK", step="SEND signed with k")
    Context.expect_bodies(await ctx.receive(owner, queue, 2, via_get=True),
                          [b"before", b"signed"])
    await _delete(ctx, owner, queue)
    return None


@case("dlink.lkey-contact", "LKEY on a contact link is AUTH and does not secure the queue",
      "DEP-5", "DEP-12", needs="deployed")
async def _lkey_contact(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    _version(ctx)
    queue, link = await ctx.create(owner, "C"), _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, queue, link, b"address"), "OK", step="LSET")
    k = ctx.key()
    # LKEY's key is allowed on messaging queues only (Server.hs:1287-1295)
    ctx.expect(await _lkey(ctx, sender, link.link_id, k), error="AUTH",
               step="LKEY on a contact link")
    ctx.expect(await ctx.send(sender, queue, b"unsigned"), "OK",
               step="unsigned SEND after the refused LKEY")
    _lnk(await _lget(ctx, sender, link.link_id), link, queue.sid, b"address",
         "LGET after the refused LKEY")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.first-send", "a secured messaging queue loses its link data at the first SEND; "
      "a contact queue keeps it", "DEP-5", "DEP-12", needs="deployed")
async def _first_send(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    v = _version(ctx)
    # a contact queue keeps its link through SENDs (isSecuredMsgQueue, Server.hs:1861-1862)
    contact, address = await ctx.create(owner, "C"), _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, contact, address, b"address"), "OK",
               step="LSET on a contact queue")
    ctx.expect(await ctx.send(sender, contact, b"request"), "OK",
               step="SEND to a contact queue")
    _lnk(await _lget(ctx, sender, address.link_id), address, contact.sid, b"address",
         "LGET of a contact queue after a SEND")
    if v < SENDER_SECURES:
        # a queue without a mode is not secured here: once secured, deployed drops its link
        # at the next SEND where smpref keeps it (DIV-39)
        await _delete(ctx, owner, contact)
        return f"version {v}: no messaging queue can be made; an unsecured contact queue only"
    # secured by KEY, a contact queue is still no messaging queue: SENDs keep its link
    await ctx.secure(owner, contact)
    ctx.expect(await ctx.send(sender, contact, b"signed"), "OK",
               step="signed SEND to a contact queue secured with KEY")
    _lnk(await _lget(ctx, sender, address.link_id), address, contact.sid, b"address",
         "LGET of a secured contact queue after a SEND")
    await _delete(ctx, owner, contact)
    # secured by LKEY: SENDs before securing keep the link, the first after it drops it
    queue, link = await _messaging_link(ctx, owner, b"offer")
    k = ctx.key()
    ctx.expect(await ctx.send(sender, queue, b"unsigned"), "OK", step="SEND before LKEY")
    _lnk(await _lkey(ctx, sender, link.link_id, k), link, queue.sid, b"offer",
         "LKEY after an unsigned SEND")
    queue.sender_key = k
    ctx.expect(await ctx.send(sender, queue, b"signed"), "OK", step="SEND after LKEY")
    ctx.expect(await _lkey(ctx, sender, link.link_id, k), error="AUTH",
               step="LKEY after the first SEND to the secured queue (the link is gone)")
    await _delete(ctx, owner, queue)
    # secured by the owner's KEY: the same (DEP-5: however it is secured)
    queue, link = await _messaging_link(ctx, owner, b"offer")
    key = await ctx.secure(owner, queue)
    _lnk(await _lkey(ctx, sender, link.link_id, key), link, queue.sid, b"offer",
         "LKEY with the key KEY set, before any SEND")
    ctx.expect(await ctx.send(sender, queue, b"signed"), "OK", step="SEND after KEY")
    ctx.expect(await _lkey(ctx, sender, link.link_id, key), error="AUTH",
               step="LKEY after the first SEND to the queue KEY secured")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.ldel", "LDEL removes the link (OK also without one); LGET then AUTH; LSET may "
      "set a new one", "DEP-5", "DEP-12", needs="deployed")
async def _ldel(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    _version(ctx)
    queue = await ctx.create(owner, "C")
    # LDEL on a queue without a link: OK (Server.hs:1489-1492)
    ctx.expect(await ctx.request(owner, DeployedLDEL(), queue.rid, queue.key), "OK",
               step="LDEL on a queue without a link")
    link = _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, queue, link, b"profile"), "OK", step="LSET")
    _lnk(await _lget(ctx, reader, link.link_id), link, queue.sid, b"profile", "LGET")
    ctx.expect(await ctx.request(owner, DeployedLDEL(), queue.rid, queue.key), "OK",
               step="LDEL")
    ctx.expect(await _lget(ctx, reader, link.link_id), error="AUTH", step="LGET after LDEL")
    ctx.expect(await ctx.request(owner, DeployedLDEL(), queue.rid, queue.key), "OK",
               step="LDEL again (no link left)")
    # the queue has no link now: LSET may set one with another LinkId (STM.hs:173-175)
    second = _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, queue, second, b"profile 2"), "OK",
               step="LSET of a new link after LDEL")
    _lnk(await _lget(ctx, reader, second.link_id), second, queue.sid, b"profile 2",
         "LGET of the new link")
    ctx.expect(await _lget(ctx, reader, link.link_id), error="AUTH",
               step="LGET of the deleted link after a new one was set")
    await _delete(ctx, owner, queue)
    return None


@case("dlink.unknown", "LGET and LKEY name a queue only by its LinkId: any other ID is AUTH",
      "DEP-5", "AUTH-3", needs="deployed")
async def _unknown(ctx: Context) -> str | None:
    owner, other = await ctx.connect(), await ctx.connect()
    _version(ctx)
    queue, link = await ctx.create(owner, "C"), _contact_link(ctx)
    ctx.expect(await _lset(ctx, owner, queue, link, b"profile"), "OK", step="LSET")
    # LGET and LKEY look the entity up among LinkIds only (STM.hs:141): an unknown ID, and
    # the queue's own recipient and sender IDs, name no link
    for name, entity in (("an unknown ID", ctx.random(24)), ("the recipient ID", queue.rid),
                         ("the sender ID", queue.sid)):
        ctx.expect(await _lget(ctx, other, entity), error="AUTH", step=f"LGET of {name}")
        ctx.expect(await _lkey(ctx, other, entity, ctx.key()), error="AUTH",
                   step=f"LKEY of {name}")
    _lnk(await _lget(ctx, other, link.link_id), link, queue.sid, b"profile",
         "LGET of the LinkId")
    await _delete(ctx, owner, queue)
    return None
