"""Queues: NEW and IDS: IDS's fields at each version, the subscription mode, the server
password, client-chosen sender and link IDs, and DH keys NEW must refuse.

Each case checks what deployed SMP (simplexmq 6.5.5) answers at the version the run speaks, and
the seed design where it differs (``ctx.extended``). Expected values come from the spec and
simplexmq's source, cited as ``File.hs:line``; nothing is learned from smpref's model.
"""

from __future__ import annotations

from dataclasses import replace

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, DhKeyPair, Reply, deployed_new
from smpref.conform.case_verdicts import Fail, Info, Skip
from smpref.conform.cases.queues.exchanges import (
    NOTIFIER_CREDENTIALS,
    SENDER_SECURES,
    SERVICES,
    SHORT_LINKS,
    delete_queues,
    drain,
    record_bodies,
    signed,
)
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.crypto.primitives import sha3_384
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    GET,
    IDS,
    PING,
    ConnectionMode,
    ContactLink,
    DeployedLinkData,
    DeployedNEW,
    MessagingLink,
    NewNtfCreds,
    NtfRequest,
    QueueReqData,
    SubscriptionMode,
)

group = CaseGroup("queues")
case = group.case


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
        got = record_bodies(await drain(ctx, c, q))
        Context.expect_bodies(got, [b"for " + q.mode.encode()], f"{q.mode} queue")
    await delete_queues(ctx, c, *((q.rid, q.key) for q in queues))
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
    await delete_queues(ctx, owner, (subscribed.rid, subscribed.key), (quiet.rid, quiet.key))
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
        await delete_queues(ctx, c, (q.rid, q.key))
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
        await delete_queues(ctx, c, (ids.rcv_id, draft.key))
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
    await delete_queues(ctx, c, (ids.rcv_id, key))
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
    await delete_queues(ctx, c, *made)
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
    await delete_queues(ctx, c, *made)
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
    await delete_queues(ctx, c, (first.rid, first.key), (again.rid, again.key))
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
        await delete_queues(ctx, c, (other.rid, other.key))
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
    await delete_queues(ctx, c, *made)
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
        reply = await ctx.raw_request(c, signed(c, draft.key, corr, b"", bad), corr)
        ctx.expect(reply, error="CMD SYNTAX", step=f"NEW whose DH key is {what}")
    q = await ctx.create(c)  # the server still serves the session
    await delete_queues(ctx, c, (q.rid, q.key))
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
        await delete_queues(ctx, c, (reply.message.rcv_id, key))
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
            await delete_queues(ctx, c, (reply.message.rcv_id, draft.key))
        ctx.expect(await ctx.request(c, PING()), "PONG",
                   step="PING after a NEW whose notifier DH key is low-order")
        answers.append(f"with a low-order notifier DH key: {_answer_of(reply)}")
    raise Info("; ".join(answers) + " (deployed accepts them, smpref refuses them: DIV-41)")


def _answer_of(reply: Reply) -> str:
    return f"ERR {reply.error}" if reply.error else reply.tag
