"""Queues and their answers: NEW's fields and password, contact and messaging queues,
securing, quotas and their marker, size limits, and every error code a server sends.

Each case checks what deployed SMP (simplexmq 6.5.5) answers at the version the run speaks, and
the seed design where it differs (``ctx.extended``). Expected values come from the spec and
simplexmq's source, cited as ``File.hs:line``; nothing is learned from smpref's model.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from smpref.client.connection import SmpClient, open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, Reply, deployed_new
from smpref.client.proxied import relay_server
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.crypto.primitives import sha3_384
from smpref.errors import CryptoError, Fail, Info, Skip
from smpref.text.addresses import parse_server_address
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    KEY,
    LGET,
    MSG,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    ContactLink,
    DeployedLGET,
    DeployedLinkData,
    DeployedNEW,
    DeployedPFWD,
    DeployedPRXY,
    DeployedRFWD,
    MessagingLink,
    MsgFlags,
    NewNtfCreds,
    NtfRequest,
    QueueReqData,
    RecordKind,
    SubscriptionMode,
)
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission, transmission_at

group = CaseGroup("queues")
case = group.case

#: deployed's queue quota: a constant, not a setting (Server/Env/STM.hs:255-256,
#: Server/Main.hs:531); the seed design's default (MSG-6)
QUOTA = 128
#: a MSG body is sealed after padding to 16106 bytes (Protocol.hs:310-313, DEP-7, QENC-7);
#: secretbox adds its 16-byte tag
SEALED_BODY = 16106 + 16
#: the versions at which NEW and IDS change (Protocol.hs:1681-1689, 1825-1833; Transport.hs)
SENDER_SECURES, SHORT_LINKS, SERVICES, NOTIFIER_CREDENTIALS = 9, 15, 16, 17


# ---------------------------------------------------------------------------------------------
# Helpers (candidates for context.py: _raw, _signed, _drain, _open_flags, _message_limit)


def _message_limit(version: int | None) -> int:
    """SEND's largest body: deployed's ``maxMessageLength`` by version (Protocol.hs:300-304),
    16048 in the seed design (MSG-5)."""
    if version is None or version >= 11:
        return 16048
    return 16064 if version >= 8 else 16088


def _signed(c: SmpClient, key: AuthKeyPair | None, corr: bytes, entity: bytes,
            command: bytes, *, service_signature: bytes | None = None) -> bytes:
    """A transmission built by hand, authorized by ``key`` over the client's session (TRANS-6),
    optionally with a service signature after the authorization (v16+ layout)."""
    auth = b"" if key is None else Context.authorization(c, key, corr, entity, command)
    return Context.raw_transmission(c, auth, corr, entity, command,
                                    service=service_signature)


async def _pipelined(ctx: Context, c: SmpClient, items: list[tuple[bytes, bytes]]
                     ) -> list[Reply]:
    """Send transmissions without waiting, each in a block of its own, and return their
    answers in order. One block each, because deployed runs the commands of one block last to
    first (Server.hs:1366-1372, DIV-50): blocks it runs in the order they come."""
    futures = [c.answer(corr) for corr, _ in items]
    try:
        for _, data in items:
            await c.send_raw([data])
        async with asyncio.timeout(ctx.timeout + len(items) * 0.1):
            return list(await asyncio.gather(*futures))
    except TimeoutError:
        raise Fail(f"not all of {len(items)} pipelined commands were answered") from None
    finally:
        for corr, _ in items:
            c.forget(corr)


def _open_flags(ctx: Context, q: Queue, msg: MSG) -> tuple[str, bytes, bool]:
    """(kind, body, notification flag) of a MSG: kind "message", "quota" or "control" (the
    seed design's ratchet records)."""
    try:
        if not ctx.extended:
            opened = open_deployed_message(q.owner.rcv_dh_secret, msg)  # DEP-7
            return ("quota" if opened.quota else "message"), opened.body, opened.notification
        rcv, received, _ = q.owner.open_message(msg)  # QENC-7
    except CryptoError as exc:
        raise Fail(f"MSG does not open for the queue's owner: {exc}") from None
    kind = {RecordKind.Message: "message", RecordKind.Quota: "quota"}.get(received.kind,
                                                                          "control")
    return kind, received.body or b"", rcv.flags.notification


async def _step(ctx: Context, c: SmpClient, q: Queue, reply: Reply
                ) -> tuple[tuple[str, bytes, bool], Reply]:
    """Open the MSG a GET answered, check its sealed size, and send its ACK and the next GET
    at once: what it was, and that GET's answer."""
    msg = ctx.message(reply, MSG, "GET")
    if len(msg.enc_body) != SEALED_BODY:
        raise Fail(f"MSG's sealed body has {len(msg.enc_body)} bytes: a body padded to "
                   f"16106 bytes and sealed has {SEALED_BODY} (DEP-7, QENC-7)")
    record = _open_flags(ctx, q, msg)
    ack = c.session.transmission(ACK(msg_id=msg.msg_id), q.rid, q.key)
    get = c.session.transmission(GET(), q.rid, q.key)
    ack_reply, following = await _pipelined(ctx, c, [ack, get])
    ctx.expect(ack_reply, "OK", step="ACK after GET")
    return record, following


async def _drain(ctx: Context, c: SmpClient, q: Queue, first: Reply | None = None
                 ) -> list[tuple[str, bytes, bool]]:
    """GET and ACK every record until the queue is empty (``first``: the answer of a GET
    already sent); what they were, in order, without the seed design's ratchet records."""
    got: list[tuple[str, bytes, bool]] = []
    reply = first if first is not None else await ctx.request(c, GET(), q.rid, q.key)
    while reply.tag == "MSG":
        record, reply = await _step(ctx, c, q, reply)
        if record[0] != "control":
            got.append(record)
    ctx.expect(reply, "OK", step="GET on the drained queue")
    return got


def _bodies(records: list[tuple[str, bytes, bool]]) -> list[bytes]:
    return [b"<quota>" if kind == "quota" else body for kind, body, _ in records]


async def _delete(ctx: Context, c: SmpClient, *queues: tuple[bytes, AuthKeyPair]) -> None:
    """DEL the queues a case made (recipient ID, recipient key)."""
    for rid, key in queues:
        ctx.expect(await ctx.request(c, DEL(), rid, key), "OK", step="DEL (clean-up)")


def _link_data(ctx: Context) -> DeployedLinkData:
    """Link data as deployed stores it: two parts the client sealed (DEP-5); the server reads
    neither, so random bytes do."""
    return DeployedLinkData(enc_fixed=ctx.random(100), enc_user=ctx.random(100))


def _derived(corr: bytes) -> bytes:
    """The sender ID deployed requires of a NEW with link data: SHA3-384 of its corrId, first
    24 bytes (Server.hs:1513, 1523-1524, DEP-3)."""
    return sha3_384(corr)[:24]


def _deployed_new(ctx: Context, key: AuthKeyPair, dh: DhKeyPair,
                  data: QueueReqData | None, *, password: bytes | None = None
                  ) -> DeployedNEW:
    """Deployed NEW (v15+ layout chosen by the client's version) with ``queueReqData``."""
    return DeployedNEW(rcv_auth_key=key.public, rcv_dh_key=dh.public,
                       basic_auth=password or ctx.password,
                       sub_mode=SubscriptionMode.OnlyCreate, queue_req_data=data)


def _require_links(ctx: Context, what: str) -> None:
    """Client-chosen IDs exist in deployed NEW from version 15 (queueReqData's links,
    Protocol.hs:1765-1783); below it the server chooses every ID and nothing can collide."""
    v = ctx.deployed_version
    if v is not None and v < SHORT_LINKS:
        raise Skip(f"{what}: NEW carries no link below version {SHORT_LINKS}, so no ID is the "
                   f"client's at version {v} (Protocol.hs:1765-1783)")


# ---------------------------------------------------------------------------------------------
# NEW and IDS


def _check_ids(ctx: Context, ids: IDS, mode: str) -> None:
    """IDS's fields as the version lays them out (Protocol.hs:1826-1833, DEP-12, CMD-30)."""
    v = ctx.deployed_version
    invitation = mode == "M"
    if len(ids.rcv_id) != 24 or len(ids.snd_id) != 24:
        raise Fail(f"IDS: recipient ID of {len(ids.rcv_id)} bytes, sender ID of "
                   f"{len(ids.snd_id)}: both are 24 random bytes (QUEUE-3; Server.hs:1505, 1511, "
                   "Server/Main.hs:534)")
    if ids.rcv_id == ids.snd_id:
        raise Fail("IDS: the recipient and sender IDs are the same (QUEUE-4)")
    if ids.rcv_public_dh_key.algorithm is not KeyAlgorithm.X25519:
        raise Fail("IDS: the server's DH key is not an X25519 key (CMD-30)")
    if v is not None and v < SENDER_SECURES:
        if ids.sender_can_secure is not None or ids.queue_mode is not None:
            raise Fail(f"IDS at version {v} carries a queue mode: it has none below 9")
        return
    if v is not None and v < SHORT_LINKS:
        # 9-14: the sndSecure flag, T for a messaging queue (Protocol.hs:1830)
        if ids.sender_can_secure is not invitation:
            raise Fail(f"IDS's sender-can-secure flag is {ids.sender_can_secure} for a "
                       f"{'messaging' if invitation else 'contact'} queue at version {v} "
                       "(expected " + ("T" if invitation else "F") + ", DEP-12)")
        return
    want = ConnectionMode.Invitation if invitation else ConnectionMode.Contact
    if ids.queue_mode is not want:
        raise Fail(f"IDS's queue mode is {ids.queue_mode}, NEW asked for {want.name} "
                   "(QUEUE-2, DEP-3)")
    if ids.link_id is not None:
        raise Fail("IDS carries a link ID for a NEW without a link (CMD-30)")
    if (v is None or v >= SERVICES) and ids.service_id is not None:
        raise Fail("IDS carries a service ID for a client that is no service (CMD-30)")
    if (v is None or v >= NOTIFIER_CREDENTIALS) and ids.server_ntf_creds is not None:
        raise Fail("IDS carries notifier credentials NEW did not ask for (CMD-30)")


@case("queue.new.ids", "IDS at the run's version: 24-byte distinct IDs, the mode where the "
      "version has it, and the server's DH key opens the queue's messages",
      "CMD-10", "CMD-30", "QUEUE-1", "QUEUE-2", "QUEUE-3", "DEP-3", "DEP-7", "DEP-12")
async def _new_ids(ctx: Context) -> str | None:
    c, sender = await ctx.connect(), await ctx.connect()
    queues = [await ctx.create(c, "M"), await ctx.create(c, "C")]
    for q in queues:
        assert q.ids is not None
        _check_ids(ctx, q.ids, q.mode)
    ids = [i for q in queues for i in (q.rid, q.sid)]
    if len(set(ids)) != len(ids):
        raise Fail("two queues share an ID (QUEUE-3, QUEUE-4)")
    keys = {q.ids.rcv_public_dh_key.raw for q in queues if q.ids is not None}
    if len(keys) != len(queues):
        raise Fail("two queues got the same server DH key: each queue has its own "
                   "(QUEUE-1; Server.hs:1507)")
    for q in queues:  # unsigned SEND to an unsecured queue; the box opens with IDS's key
        ctx.expect(await ctx.send(sender, q, b"for " + q.mode.encode()), "OK", step="SEND")
        got = _bodies(await _drain(ctx, c, q))
        Context.expect_bodies(got, [b"for " + q.mode.encode()], f"{q.mode} queue")
    await _delete(ctx, c, *((q.rid, q.key) for q in queues))
    v = ctx.deployed_version
    return "seed IDS" if v is None else (
        "no mode (below 9)" if v < SENDER_SECURES else
        "sndSecure flag (9-14)" if v < SHORT_LINKS else "queue mode (15+)")


@case("queue.new.subscribe-mode", "NEW with Subscribe makes its session the subscriber (a SEND "
      "is pushed at once); OnlyCreate subscribes nobody", "QUEUE-10", "MSG-2", "CMD-10")
async def _new_subscribe(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    # Server.hs:1555-1557, 1655-1662: SMSubscribe subscribes the creating session; a SEND to
    # the empty queue is delivered to it at once (Server.hs:1875, 1904-1912)
    subscribed = await ctx.create(owner, "C", subscribe=True)
    ctx.expect(await ctx.send(sender, subscribed, b"pushed"), "OK", step="SEND")
    Context.expect_bodies(await ctx.receive(owner, subscribed, 1), [b"pushed"],
                          "pushed to the creating session")
    # SMOnlyCreate: nothing is pushed; the message waits for SUB or GET
    quiet = await ctx.create(owner, "C", subscribe=False)
    ctx.expect(await ctx.send(sender, quiet, b"waits"), "OK", step="SEND")
    reply = await ctx.request(owner, GET(), quiet.rid, quiet.key)
    # GET is refused on a session subscribed to the queue (Server.hs:1670-1678): that it is
    # answered shows the NEW did not subscribe
    if reply.error == "CMD PROHIBITED":
        raise Fail("GET after NEW with OnlyCreate got ERR CMD PROHIBITED: the NEW subscribed")
    if not owner.events.empty():
        event = owner.events.get_nowait()
        raise Fail(f"{event.tag} pushed for a queue created with OnlyCreate")
    Context.expect_bodies(await ctx.receive(owner, quiet, 1, first=reply, via_get=True),
                          [b"waits"], "GET after OnlyCreate")
    await _delete(ctx, owner, (subscribed.rid, subscribed.key), (quiet.rid, quiet.key))
    return None


@case("queue.new.password", "NEW with no, an empty or a wrong server password gets AUTH at any "
      "version and makes no queue; the password is checked before the sender ID",
      "CMD-10", "QUEUE-10", "DEP-3", "DEP-11")
async def _new_password(ctx: Context) -> str | None:
    if ctx.password is None:
        raise Skip("the address carries no server password (basicAuth): nothing to check")
    c = await ctx.connect()
    wrong = (("no", None), ("an empty", b""), ("a longer", ctx.password + b"x"),
             ("a shorter", ctx.password[:-1]))
    # Server.hs:1471-1476: a configured password must equal NEW's, else AUTH; below 9 it is
    # NEW's optional 'A' field (Protocol.hs:1688, DEP-11), from 9 a Maybe
    for what, password in wrong:
        draft = ctx.draft()
        command = replace(ctx.new_command(draft, subscribe=False), basic_auth=password)
        ctx.expect(await ctx.request(c, command, key=draft.key), error="AUTH",
                   step=f"NEW with {what} password")
    v = ctx.deployed_version
    if v is not None and v < SHORT_LINKS:
        q = await ctx.create(c)
        await _delete(ctx, c, (q.rid, q.key))
        return f"version {v}: no client-chosen ID shows whether a refused NEW made a queue"
    if v is None:
        # a refused NEW with a link would have taken its sender and link IDs (QUEUE-3):
        # the same NEW with the password is then accepted only if it made nothing
        draft = ctx.draft("M", link=True)
        sid = ctx.random(24)
        refused = ctx.new_command(draft, subscribe=False, sender_id=sid, password=b"x")
        ctx.expect(await ctx.request(c, refused, key=draft.key), error="AUTH",
                   step="NEW with a link and a wrong password")
        accepted = ctx.new_command(draft, subscribe=False, sender_id=sid)
        ids = ctx.message(await ctx.request(c, accepted, key=draft.key), IDS,
                          "the same NEW with the password")
        await _delete(ctx, c, (ids.rcv_id, draft.key))
        return None
    # deployed 15+: the password is checked before the sender ID (Server.hs:1471-1476 before
    # createQueue's check at 1523-1524): a wrong password with an underived ID is AUTH
    key, dh = ctx.key(), DhKeyPair.generate(ctx.random)
    bad = QueueReqData.M(link=MessagingLink(sender_id=ctx.random(24), link_data=_link_data(ctx)))
    ctx.expect(await ctx.request(c, _deployed_new(ctx, key, dh, bad, password=b"x"), key=key),
               error="AUTH", step="NEW with a wrong password and an underived sender ID")
    corr = ctx.random(24)
    data = QueueReqData.M(link=MessagingLink(sender_id=_derived(corr), link_data=_link_data(ctx)))
    ctx.expect(await ctx.request(c, _deployed_new(ctx, key, dh, data, password=b"x"), key=key,
                                 corr_id=corr), error="AUTH",
               step="NEW with a link and a wrong password")
    # the refused NEW took no ID: the same corrId's sender ID is free (Server.hs:1545-1547)
    ids = ctx.message(await ctx.request(c, _deployed_new(ctx, key, dh, data), key=key,
                                        corr_id=corr), IDS, "the same NEW with the password")
    if ids.snd_id != _derived(corr):
        raise Fail("IDS's sender ID is not the one NEW's link carried (DEP-3)")
    await _delete(ctx, c, (ids.rcv_id, key))
    return None


@case("queue.new.sender-id", "NEW with link data: a sender ID that is not SHA3-384(corrId)[0:24] "
      "is CMD PROHIBITED; the derived one is accepted, with the link ID in IDS",
      "DEP-3", "DEP-12", needs="deployed")
async def _new_sender_id(ctx: Context) -> str | None:
    _require_links(ctx, "a client-chosen sender ID")
    c = await ctx.connect()
    made: list[tuple[bytes, AuthKeyPair]] = []
    for mode in ("M", "C"):
        key, dh = ctx.key(), DhKeyPair.generate(ctx.random)
        link_id = ctx.random(24)

        def data(sender_id: bytes, mode: str = mode, link_id: bytes = link_id) -> QueueReqData:
            if mode == "M":
                return QueueReqData.M(link=MessagingLink(sender_id=sender_id,
                                                         link_data=_link_data(ctx)))
            return QueueReqData.C(link=ContactLink(link_id=link_id, sender_id=sender_id,
                                                   link_data=_link_data(ctx)))
        corr = ctx.random(24)
        # Server.hs:1513, 1523-1524: a client's sender ID must be the corrId's hash
        n = int.from_bytes(_derived(corr), "big")
        for what, sid in (("another corrId's hash", _derived(ctx.random(24))),
                          ("the hash + 1", ((n + 1) % 2**192).to_bytes(24, "big")),
                          ("the hash - 1", ((n - 1) % 2**192).to_bytes(24, "big"))):
            ctx.expect(await ctx.request(c, _deployed_new(ctx, key, dh, data(sid)), key=key,
                                         corr_id=corr), error="CMD PROHIBITED",
                       step=f"{mode} NEW whose sender ID is {what}")
        reply = await ctx.request(c, _deployed_new(ctx, key, dh, data(_derived(corr))),
                                  key=key, corr_id=corr)
        ids = ctx.message(reply, IDS, f"{mode} NEW with the derived sender ID")
        made.append((ids.rcv_id, key))
        want_mode = ConnectionMode.Invitation if mode == "M" else ConnectionMode.Contact
        if ids.snd_id != _derived(corr) or ids.queue_mode is not want_mode:
            raise Fail(f"{mode} IDS: sender ID or mode not as NEW said (DEP-3)")
        # a messaging link's ID is the server's (Server.hs:1517), a contact link's the client's
        if mode == "C" and ids.link_id != link_id:
            raise Fail("contact IDS: the link ID is not the one NEW carried (DEP-3)")
        if mode == "M" and (ids.link_id is None or len(ids.link_id) != 24
                            or ids.link_id in (ids.rcv_id, ids.snd_id)):
            raise Fail("messaging IDS: no 24-byte link ID of the server's (DEP-3)")
    await _delete(ctx, c, *made)
    return None


@case("queue.new.id-taken", "NEW whose client-chosen sender or link ID is taken gets AUTH "
      "and makes nothing", "QUEUE-3", "QUEUE-4", "QUEUE-10", "DEP-3")
async def _new_id_taken(ctx: Context) -> str | None:
    _require_links(ctx, "a client-chosen ID")
    c = await ctx.connect()
    if ctx.extended:
        return await _seed_id_taken(ctx, c)
    made: list[tuple[bytes, AuthKeyPair]] = []

    async def new(corr: bytes, data: QueueReqData) -> Reply:
        key, dh = ctx.key(), DhKeyPair.generate(ctx.random)
        reply = await ctx.request(c, _deployed_new(ctx, key, dh, data), key=key, corr_id=corr)
        if isinstance(reply.message, IDS):
            made.append((reply.message.rcv_id, key))
        return reply

    def contact(link_id: bytes, corr: bytes) -> QueueReqData:
        return QueueReqData.C(link=ContactLink(link_id=link_id, sender_id=_derived(corr),
                                               link_data=_link_data(ctx)))

    def messaging(corr: bytes) -> QueueReqData:
        return QueueReqData.M(link=MessagingLink(sender_id=_derived(corr),
                                                 link_data=_link_data(ctx)))
    first, second, third = ctx.random(24), ctx.random(24), ctx.random(24)
    link = ctx.random(24)
    ctx.expect(await new(first, messaging(first)), "IDS", step="a messaging NEW")
    ctx.expect(await new(second, contact(link, second)), "IDS", step="a contact NEW")
    # a collision on a client's ID is AUTH, never retried (Server.hs:1545-1547; the maps of
    # Server/QueueStore/STM.hs:123-133)
    ctx.expect(await new(first, messaging(first)), error="AUTH",
               step="messaging NEW whose sender ID is taken")
    ctx.expect(await new(second, contact(ctx.random(24), second)), error="AUTH",
               step="contact NEW whose sender ID is taken")
    ctx.expect(await new(third, contact(link, third)), error="AUTH",
               step="contact NEW whose link ID is taken")
    # the refused NEW took nothing: its sender ID is free
    ctx.expect(await new(third, contact(ctx.random(24), third)), "IDS",
               step="the refused NEW's sender ID again, with a free link ID")
    await _delete(ctx, c, *made)
    return None


async def _seed_id_taken(ctx: Context, c: SmpClient) -> str | None:
    """The seed design: QueueLink's sender ID and link ID and NtfRequest's notifier ID are the
    client's, any 24 (link: 32) bytes; one taken, or one given twice in the NEW, is AUTH
    (QUEUE-3)."""
    first = ctx.draft("M", link=True)
    sid = ctx.random(24)
    await _create_with(ctx, c, first, sender_id=sid)
    refused: list[tuple[str, Queue, bytes, bytes | None]] = [
        ("sender ID taken", ctx.draft("M", link=True), sid, None)]
    same_link = ctx.draft("M", link=True)
    same_link.link = first.link
    refused.append(("link ID taken", same_link, ctx.random(24), None))
    twice = ctx.random(24)
    refused.append(("the same ID as sender and notifier", ctx.draft("M", link=True), twice,
                    twice))
    for what, draft, sender_id, notifier_id in refused:
        ntf = None if notifier_id is None else NtfRequest(
            notifier_id=notifier_id, ntf_auth_key=ctx.key().public,
            rcv_ntf_dh_key=DhKeyPair.generate(ctx.random).public)
        command = ctx.new_command(draft, subscribe=False, sender_id=sender_id, ntf=ntf)
        ctx.expect(await ctx.request(c, command, key=draft.key), error="AUTH", step=what)
    # the last refused NEW made nothing: its ID is free
    again = ctx.draft("M", link=True)
    await _create_with(ctx, c, again, sender_id=twice)
    await _delete(ctx, c, (first.rid, first.key), (again.rid, again.key))
    return None


async def _create_with(ctx: Context, c: SmpClient, q: Queue, *, sender_id: bytes) -> IDS:
    """NEW for a draft with a link and the given sender ID; fail unless IDS."""
    reply = await ctx.request(c, ctx.new_command(q, subscribe=False, sender_id=sender_id),
                              key=q.key)
    ids = ctx.message(reply, IDS, "NEW")
    q.ids = ids
    q.owner.created(ids)
    return ids


@case("queue.new.id-roles", "a client's ID equal to another queue's ID in another role: AUTH in "
      "the seed design (one ID space); deployed's answer is reported, not judged (DIV-45)",
      "QUEUE-4", "DEP-3", "DIV-45")
async def _new_id_roles(ctx: Context) -> str | None:
    _require_links(ctx, "a client-chosen ID")
    c = await ctx.connect()
    other = await ctx.create(c)
    if ctx.extended:  # QUEUE-4: one ID space over every role
        for what, reused in (("the other queue's recipient ID", other.rid),
                             ("the other queue's sender ID", other.sid)):
            draft = ctx.draft("M", link=True)
            command = ctx.new_command(draft, subscribe=False, sender_id=reused)
            ctx.expect(await ctx.request(c, command, key=draft.key), error="AUTH",
                       step=f"NEW whose sender ID is {what}")
        await _delete(ctx, c, (other.rid, other.key))
        return None
    # deployed: a client's LinkId is looked up in the link map only (Server/QueueStore/
    # STM.hs:131-133), so another queue's recipient or sender ID is a free LinkId; smpref
    # refuses it (DIV-45). Deployed clients' IDs are random, so they never meet either answer:
    # no requirement decides, and the case reports what the server did.
    made = [(other.rid, other.key)]
    answers = []
    for what, reused in (("the other queue's recipient ID", other.rid),
                         ("the other queue's sender ID", other.sid)):
        key, dh, corr = ctx.key(), DhKeyPair.generate(ctx.random), ctx.random(24)
        data = QueueReqData.C(link=ContactLink(link_id=reused, sender_id=_derived(corr),
                                               link_data=_link_data(ctx)))
        reply = await ctx.request(c, _deployed_new(ctx, key, dh, data), key=key, corr_id=corr)
        if isinstance(reply.message, IDS):
            made.append((reply.message.rcv_id, key))
        answers.append(f"a LinkId equal to {what}: "
                       + (f"ERR {reply.error}" if reply.error else reply.tag))
    await _delete(ctx, c, *made)
    raise Info("; ".join(answers) + " (deployed accepts both, smpref refuses both: DIV-45)")


def _key_field(key: PublicKey) -> bytes:
    """A key's encoding in a command: ss(SPKI DER)."""
    return bytes([len(key.der)]) + key.der


@case("queue.new.bad-dh-key", "NEW whose DH key is not an X25519 key, or is cut short, gets "
      "ERR CMD SYNTAX; the session goes on", "CMD-10", "CMD-2", "CMD-20", "QUEUE-10")
async def _new_bad_dh(ctx: Context) -> str | None:
    c = await ctx.connect()
    draft = ctx.draft()
    command = ctx.encoded(c, ctx.new_command(draft, subscribe=False))
    dh = _key_field(draft.owner.dh_key.public)
    if command.count(dh) != 1:
        raise AssertionError("the case's NEW does not carry its DH key once")
    ed = _key_field(ctx.key().public)
    # rcvDhKey is an X25519 key (Protocol.hs:1776): an Ed25519 key, or DER one byte short,
    # does not parse, and a command that does not parse is CMD SYNTAX (Protocol.hs:2243-2246)
    for what, replacement in (("an Ed25519 key", ed),
                              ("an X25519 key one byte short", bytes([dh[0] - 1]) + dh[1:-1])):
        corr = ctx.random(24)
        bad = command.replace(dh, replacement)
        reply = await ctx.raw_request(c, _signed(c, draft.key, corr, b"", bad), corr)
        ctx.expect(reply, error="CMD SYNTAX", step=f"NEW whose DH key is {what}")
    q = await ctx.create(c)  # the server still serves the session
    await _delete(ctx, c, (q.rid, q.key))
    return None


@case("queue.new.low-order-dh-key", "NEW with an X25519 low-order point as DH key: CMD SYNTAX in "
      "the seed design; in deployed SMP the answer is reported, not judged (DIV-41), and the "
      "server must go on serving",
      "QUEUE-10", "DEP-3", "DIV-41")
async def _new_low_order(ctx: Context) -> str | None:
    c = await ctx.connect()
    draft = ctx.draft()
    key = draft.key
    low = PublicKey(KeyAlgorithm.X25519, bytes(32))  # the point 0: every DH with it is 0
    command = replace(ctx.new_command(draft, subscribe=False), rcv_dh_key=low)
    reply = await ctx.request(c, command, key=key)
    if ctx.extended:  # QUEUE-10, DIV-41
        ctx.expect(reply, error="CMD SYNTAX", step="NEW with a low-order DH key")
        return None
    # deployed computes the secret from any point (Crypto.hs:1285-1286, Server.hs:1507, 1536);
    # smpref refuses it (DIV-41). Neither is required of a server: the case reports which
    if isinstance(reply.message, IDS):
        await _delete(ctx, c, (reply.message.rcv_id, key))
    answers = [f"NEW with a low-order DH key: {_answer_of(reply)}"]
    if c.negotiated.version >= NOTIFIER_CREDENTIALS:
        # the same for the notifier's DH key of v17's NEW (Server.hs:1508-1510): whichever
        # answer, the server answers, and goes on serving the connection
        draft = ctx.draft("C")
        creds = NewNtfCreds(ntf_auth_key=ctx.key().public, rcv_ntf_dh_key=low)
        new = replace(deployed_new(c.negotiated.version, rcv_auth_key=draft.key.public,
                                   rcv_dh_key=draft.owner.dh_key.public,
                                   basic_auth=ctx.password,
                                   sub_mode=SubscriptionMode.OnlyCreate,
                                   mode=ConnectionMode.Contact), ntf_creds=creds)
        reply = await ctx.request(c, new, key=draft.key)
        if isinstance(reply.message, IDS):
            await _delete(ctx, c, (reply.message.rcv_id, draft.key))
        ctx.expect(await ctx.request(c, PING()), "PONG",
                   step="PING after a NEW whose notifier DH key is low-order")
        answers.append(f"with a low-order notifier DH key: {_answer_of(reply)}")
    raise Info("; ".join(answers) + " (deployed accepts them, smpref refuses them: DIV-41)")


def _answer_of(reply: Reply) -> str:
    return f"ERR {reply.error}" if reply.error else reply.tag


# ---------------------------------------------------------------------------------------------
# Securing


@case("queue.key", "KEY on contact and messaging queues: the same key again OK, another AUTH; "
      "only SENDs signed by it are accepted after it, none before; SKEY only on a messaging one",
      "CMD-13", "CMD-14", "QUEUE-11", "MSG-1", "CMD-17", "DEP-12")
async def _key(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    v = ctx.deployed_version
    for mode in ("C", "M"):
        q = await ctx.create(owner, mode)
        k, other = ctx.key(), ctx.key()
        step = f"{mode} queue"
        # before KEY a SEND must be unsigned: the queue has no key to verify one with
        # (Server.hs:1253)
        q.sender_key = k
        ctx.expect(await ctx.send(sender, q, b"early"), error="AUTH",
                   step=f"{step}: signed SEND before KEY")
        # KEY needs no mode (Server.hs:1482); the same key again is OK, another AUTH
        # (Server/QueueStore/STM.hs:208-212)
        for key, want in ((k, "OK"), (k, "OK"), (other, "AUTH")):
            reply = await ctx.request(owner, KEY(sender_key=key.public), q.rid, q.key)
            if want == "OK":
                ctx.expect(reply, "OK", step=f"{step}: KEY")
            else:
                ctx.expect(reply, error="AUTH", step=f"{step}: KEY with another key")
        # SEND to a secured queue must be signed by its sender key (Server.hs:1253)
        q.sender_key = None
        ctx.expect(await ctx.send(sender, q, b"unsigned"), error="AUTH",
                   step=f"{step}: unsigned SEND")
        q.sender_key = other
        ctx.expect(await ctx.send(sender, q, b"other"), error="AUTH",
                   step=f"{step}: SEND signed by another key")
        q.sender_key = k
        ctx.expect(await ctx.send(sender, q, b"signed"), "OK", step=f"{step}: signed SEND")
        # SKEY with the queue's own key: a messaging queue answers OK (Server.hs:1293-1294,
        # 1458), a contact queue and one without a mode (below 9) AUTH
        messaging = mode == "M" and (v is None or v >= SENDER_SECURES)
        reply = await ctx.request(sender, SKEY(sender_key=k.public), q.sid, k)
        if messaging:
            ctx.expect(reply, "OK", step=f"{step}: SKEY with the queue's sender key")
        else:
            ctx.expect(reply, error="AUTH", step=f"{step}: SKEY")
        Context.expect_bodies(_bodies(await _drain(ctx, owner, q)), [b"signed"], step)
        await _delete(ctx, owner, (q.rid, q.key))
    return None


@case("queue.skey-key", "after SKEY the recipient's KEY with another key is AUTH and with the "
      "same key OK; below 9 a queue has no mode and SKEY changes nothing",
      "CMD-13", "CMD-14", "QUEUE-11", "MSG-1", "DEP-12")
async def _skey_key(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "M")
    k, other = ctx.key(), ctx.key()
    skey = await ctx.request(sender, SKEY(sender_key=k.public), q.sid, k)
    v = ctx.deployed_version
    if v is not None and v < SENDER_SECURES:
        # no mode below 9: SKEY is AUTH (Server.hs:1293-1295, DEP-12) and secures nothing,
        # so the recipient's KEY with another key is the first
        ctx.expect(skey, error="AUTH", step=f"SKEY at version {v}")
        ctx.expect(await ctx.request(owner, KEY(sender_key=other.public), q.rid, q.key), "OK",
                   step="KEY after the refused SKEY")
        q.sender_key = other
        ctx.expect(await ctx.send(sender, q, b"x"), "OK", step="SEND signed by KEY's key")
        await _delete(ctx, owner, (q.rid, q.key))
        return f"version {v}: a queue without a mode"
    ctx.expect(skey, "OK", step="SKEY")
    ctx.expect(await ctx.request(owner, KEY(sender_key=other.public), q.rid, q.key),
               error="AUTH", step="KEY with another key after SKEY")
    ctx.expect(await ctx.request(owner, KEY(sender_key=k.public), q.rid, q.key), "OK",
               step="KEY with SKEY's key")
    ctx.expect(await ctx.request(sender, SKEY(sender_key=other.public), q.sid, other),
               error="AUTH", step="SKEY with another key")
    ctx.expect(await ctx.send(sender, q, b"unsigned"), error="AUTH", step="unsigned SEND")
    q.sender_key = k
    ctx.expect(await ctx.send(sender, q, b"signed"), "OK", step="signed SEND")
    Context.expect_bodies(_bodies(await _drain(ctx, owner, q)), [b"signed"])
    await _delete(ctx, owner, (q.rid, q.key))
    return None


# ---------------------------------------------------------------------------------------------
# Quota and size


async def _fill(ctx: Context, c: SmpClient, q: Queue) -> int:
    """SEND (unsigned, pipelined) until the first QUOTA; the number accepted. Every reply
    before it must be OK and every one after it QUOTA."""
    accepted, quota_seen = 0, False
    while not quota_seen:
        if accepted > 1000:
            raise Info("no QUOTA within 1000 messages: the quota is above 1000")
        batch = [c.session.transmission(
            SEND(flags=MsgFlags(notification=False), body=b"q%d" % (accepted + i)), q.sid)
            for i in range(QUOTA + 2)]
        for reply in await _pipelined(ctx, c, batch):
            if quota_seen:
                ctx.expect(reply, error="QUOTA", step="SEND after the first QUOTA")
            elif reply.error == "QUOTA":
                quota_seen = True
            else:
                ctx.expect(reply, "OK", step=f"SEND {accepted + 1}")
                accepted += 1
    return accepted


@case("queue.quota", "a queue takes 128 messages; the next SEND stores one quota marker and "
      "gets QUOTA, as every SEND until the queue is empty; the marker comes last",
      "MSG-6", "MSG-5", "DEP-7")
async def _quota(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    accepted = await _fill(ctx, c, q)
    if not ctx.extended and accepted != QUOTA:
        # deployed's quota is a constant (Server/Main.hs:531): 128 are accepted, the 129th
        # stores the marker (MsgStore/STM.hs:147-158, Journal.hs:594-599)
        raise Fail(f"{accepted} messages were accepted before QUOTA; deployed takes {QUOTA}")
    limit = _message_limit(ctx.deployed_version)
    # the size is checked before the quota (Server.hs:1844-1847, MSG-5)
    ctx.expect(await ctx.send(c, q, b"m" * (limit + 1)), error="LARGE_MSG",
               step="a too-long SEND to a full queue")
    # reading two does not reopen it: the queue takes SENDs again only once it is empty
    # (MsgStore/STM.hs:151: canWrite || empty)
    reply = await ctx.request(c, GET(), q.rid, q.key)
    got: list[tuple[str, bytes, bool]] = []
    while len(got) < 2:
        record, reply = await _step(ctx, c, q, reply)
        if record[0] != "control":
            got.append(record)
    ctx.expect(await ctx.send(c, q, b"too early"), error="QUOTA",
               step="SEND with two messages read and the rest still queued")
    got += await _drain(ctx, c, q, reply)
    want = [b"q%d" % i for i in range(accepted)] + [b"<quota>"]
    bodies = _bodies(got)
    if bodies != want:
        extra = [b for b in bodies if not b.startswith(b"q")]
        raise Fail(f"received {len(bodies)} records, expected the {accepted} messages in order "
                   f"and one quota marker last (MSG-6, DEP-7); odd ones: {extra[:3]!r}")
    if any(flag for _, _, flag in got):
        raise Fail("a record arrived with the notification flag set; none was asked for "
                   "(Protocol.hs:794-800)")
    ctx.expect(await ctx.send(c, q, b"after"), "OK", step="SEND to the emptied queue")
    Context.expect_bodies(_bodies(await _drain(ctx, c, q)), [b"after"], "after the quota")
    await _delete(ctx, c, (q.rid, q.key))
    return None if accepted == QUOTA else f"quota {accepted}"


@case("queue.large-msg", "a too-long SEND is LARGE_MSG once authorized, before the queue's "
      "state: on a suspended queue too; unsigned to a secured queue AUTH; nothing is stored",
      "MSG-5", "MSG-1", "CMD-17", "TRANS-12", "DEP-12")
async def _large(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C")
    limit = _message_limit(ctx.deployed_version)
    long = b"m" * (limit + 1)
    ctx.expect(await ctx.send(sender, q, long), error="LARGE_MSG", step="unsecured queue")
    k = await ctx.secure(owner, q)
    # the authorization is verified before the command runs (Server.hs:1140-1151, 1253)
    q.sender_key = None
    ctx.expect(await ctx.send(sender, q, long), error="AUTH",
               step="a too-long unsigned SEND to a secured queue")
    q.sender_key = k
    ctx.expect(await ctx.send(sender, q, long), error="LARGE_MSG", step="secured queue")
    ctx.expect(await ctx.send(sender, q, b"kept"), "OK", step="a SEND that fits")
    off = await ctx.request(owner, OFF(), q.rid, q.key)
    ctx.expect(off, "COUNT" if ctx.extended else "OK", step="OFF")  # DIV-19
    # the length comes before the status (Server.hs:1844-1853, MSG-5)
    ctx.expect(await ctx.send(sender, q, long), error="LARGE_MSG", step="suspended queue")
    ctx.expect(await ctx.send(sender, q, b"late"), error="AUTH",
               step="a SEND that fits, to the suspended queue")
    Context.expect_bodies(_bodies(await _drain(ctx, owner, q)), [b"kept"],
                          "what the queue holds")
    await _delete(ctx, owner, (q.rid, q.key))
    return None if limit == 16048 else f"limit {limit} at version {ctx.version}"


# ---------------------------------------------------------------------------------------------
# Error codes not checked elsewhere


@case("queue.err.no-entity", "SEND and LGET without an entity ID get CMD NO_ENTITY; a signed "
      "recipient command without one gets CMD NO_AUTH", "TRANS-7", "CMD-20", "AUTH-2")
async def _no_entity(ctx: Context) -> str | None:
    c = await ctx.connect()
    k = ctx.key()
    send = SEND(flags=MsgFlags(notification=False), body=b"x")
    # Protocol.hs:1728-1731: SEND needs its entity, signed or not
    ctx.expect(await ctx.request(c, send, b""), error="CMD NO_ENTITY", step="unsigned SEND")
    ctx.expect(await ctx.request(c, send, b"", k), error="CMD NO_ENTITY", step="signed SEND")
    # Protocol.hs:1732, 1749-1751: LGET without entity (deployed LGET, the seed's keyless one)
    lget: Command = LGET(sender_key=None) if ctx.extended else DeployedLGET()
    ctx.expect(await ctx.request(c, lget, b""), error="CMD NO_ENTITY", step="LGET")
    # Protocol.hs:1737-1742, 1754-1757: SUB and the other commands need both, else NO_AUTH
    ctx.expect(await ctx.request(c, KEY(sender_key=k.public), b"", k), error="CMD NO_AUTH",
               step="signed KEY without an entity ID")
    ctx.expect(await ctx.request(c, SUB(), b"", k), error="CMD NO_AUTH",
               step="signed SUB without an entity ID")
    return None


@case("queue.err.prohibited", "on one session a queue is read with SUB or GET: SUB after GET "
      "and GET while subscribed get CMD PROHIBITED", "MSG-3", "CMD-20")
async def _prohibited(ctx: Context) -> str | None:
    a, b = await ctx.connect(), await ctx.connect()
    q = await ctx.create(a, "C")
    # GET marks the session (Server.hs:1680-1683); SUB there is PROHIBITED (Server.hs:1626-1629)
    got = await ctx.request(a, GET(), q.rid, q.key)
    ctx.expect(got, "MSG" if ctx.extended else "OK", step="GET")  # DIV-28: the Initial record
    ctx.expect(await ctx.request(a, SUB(), q.rid, q.key), error="CMD PROHIBITED",
               step="SUB after GET on the same session")
    await ctx.subscribe(b, q)
    # GET on a subscribed session is PROHIBITED (Server.hs:1676-1678)
    ctx.expect(await ctx.request(b, GET(), q.rid, q.key), error="CMD PROHIBITED",
               step="GET on a subscribed session")
    await _delete(ctx, a, (q.rid, q.key))
    return None


@case("queue.err.session", "below version 7 a transmission naming another session ID gets "
      "ERR SESSION with its corrId", "DEP-11", "DEP-12", "CMD-20", needs="deployed")
async def _session(ctx: Context) -> str | None:
    # From 7 the session ID is implied and cannot be wrong (Transport.hs:884); version 6
    # names it, and the server compares (Protocol.hs:2243, 2250). Deployed servers accept 6
    # under ALPN smp/1 (DEP-12), so the case opens a version-6 connection at any run version.
    if ctx.version == 6:
        c = await ctx.connect()
    else:
        c = await SmpClient.connect(ctx.address, timeout=ctx.timeout, version=6)
        ctx.clients.append(c)
    own = c.session_id
    for what, session in (("all zero bytes", bytes(len(own))),
                          ("all 0xff bytes", b"\xff" * len(own)),
                          ("one byte shorter", own[:-1])):
        corr = ctx.random(24)
        raw = transmission_at(6, session, Transmission(b"", corr, b"", PING().encode()))
        reply = await ctx.raw_request(c, raw, corr)
        ctx.expect(reply, error="SESSION", step=f"PING naming a session ID of {what}")
    ctx.expect(await ctx.request(c, PING()), "PONG", step="PING naming its own session")
    return None if ctx.version == 6 else "on a version-6 connection"


def _require_service_layout(ctx: Context, c: SmpClient) -> None:
    v = c.session.version
    if v is not None and v < SERVICES:
        raise Skip(f"a transmission has no service signature below version {SERVICES} "
                   f"(Protocol.hs:1632, Transport.hs:886); the run speaks {v}")


@case("queue.err.service", "a transmission with a service signature from a client that is no "
      "service gets ERR SERVICE, and the command does nothing", "AUTH-4", "DEP-10", "CMD-20")
async def _service(ctx: Context) -> str | None:
    c = await ctx.connect()
    _require_service_layout(ctx, c)
    signature = ctx.random(64)  # an Ed25519 signature's length, as the parser needs
    draft = ctx.draft()
    corr = ctx.random(24)
    new = ctx.encoded(c, ctx.new_command(draft, subscribe=False))
    # Server.hs:1243, 1271-1276: a service signature without a service session is SERVICE
    reply = await ctx.raw_request(c, _signed(c, draft.key, corr, b"", new,
                                       service_signature=signature), corr)
    ctx.expect(reply, error="SERVICE", step="NEW with a service signature")
    q = await ctx.create(c)
    k = ctx.key()
    corr = ctx.random(24)
    key = KEY(sender_key=k.public).encode()
    reply = await ctx.raw_request(c, _signed(c, q.key, corr, q.rid, key,
                                       service_signature=signature), corr)
    ctx.expect(reply, error="SERVICE", step="KEY with a service signature")
    # the refused KEY set nothing: another key is still accepted
    ctx.expect(await ctx.request(c, KEY(sender_key=ctx.key().public), q.rid, q.key), "OK",
               step="KEY after the refused one")
    await _delete(ctx, c, (q.rid, q.key))
    return None


@case("queue.err.service-order", "a service signature where deployed checks something first: "
      "an unknown queue AUTH, PING CMD HAS_AUTH, an unknown command CMD UNKNOWN (seed: SERVICE)",
      "AUTH-2", "AUTH-4", "DEP-10", "CMD-20")
async def _service_order(ctx: Context) -> str | None:
    c = await ctx.connect()
    _require_service_layout(ctx, c)
    signature = ctx.random(64)
    k = ctx.key()
    # deployed: the command is parsed and its credentials checked first (Protocol.hs:2243-2248),
    # an unknown queue fails before the service check (Server.hs:1237), which comes only with
    # the queue (Server.hs:1241-1243); the seed design answers SERVICE whatever it is (AUTH-4)
    tries = (("KEY to a queue that does not exist", ctx.random(24),
              KEY(sender_key=k.public).encode(), "AUTH"),
             ("PING with an authorization", b"", PING().encode(), "CMD HAS_AUTH"),
             ("an unknown command", b"", b"HELLO", "CMD UNKNOWN"))
    wrong = []
    for what, entity, command, deployed in tries:
        corr = ctx.random(24)
        reply = await ctx.raw_request(c, _signed(c, k, corr, entity, command,
                                           service_signature=signature), corr)
        want = "SERVICE" if ctx.extended else deployed
        if reply.error != want:
            wrong.append(f"{what}: expected ERR {want}, got {reply.error or reply.tag}")
    if wrong:
        raise Fail("with a service signature: " + "; ".join(wrong))
    return None


@case("queue.err.proxy", "proxy errors: PFWD for no session is PROXY NO_SESSION, PRXY with a "
      "wrong password PROXY BASIC_AUTH, RFWD that does not open CRYPTO (below 7: no client key, "
      "PROXY BROKER TRANSPORT NO_AUTH)", "DEP-14", "DEP-15", "CMD-20", needs="deployed")
async def _proxy(ctx: Context) -> str | None:
    c = await ctx.connect()
    v = c.negotiated.version
    # Server.hs:1405-1432: a session the proxy does not have
    pfwd = DeployedPFWD(version=v, key=DhKeyPair.generate(ctx.random).public,
                        enc_transmission=ctx.random(200))
    ctx.expect(await ctx.request(c, pfwd, ctx.random(32)), error="PROXY NO_SESSION",
               step="PFWD naming no relay session")
    # Server.hs:1376-1380: PRXY takes the server password as NEW does
    note = None
    if ctx.password is not None:
        relay = relay_server(parse_server_address(ctx.address))
        ctx.expect(await ctx.request(c, DeployedPRXY(relay=relay, basic_auth=b"x")),
                   error="PROXY BASIC_AUTH", step="PRXY with a wrong password")
    else:
        note = "no server password in the address: PRXY not checked"
    # Server.hs:1976-1979: RFWD opens with the session secret of the client's hello key,
    # which hellos carry from 7 (DEP-12); without it TENoServerAuth
    corr = ctx.random(24)
    rfwd = DeployedRFWD(enc_fwd_transmission=ctx.random(300))
    want = "CRYPTO" if v >= 7 else "PROXY BROKER TRANSPORT NO_AUTH"
    ctx.expect(await ctx.request(c, rfwd, corr_id=corr), error=want,
               step="RFWD that does not open")
    return note
