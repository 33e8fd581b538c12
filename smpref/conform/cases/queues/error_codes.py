"""Queues: the error codes no other case checks: a missing entity, SUB and GET on one session,
a wrong session ID, service signatures, and the proxy's errors.

Each case checks what deployed SMP (simplexmq 6.5.5) answers at the version the run speaks, and
the seed design where it differs (``ctx.extended``). Expected values come from the spec and
simplexmq's source, cited as ``File.hs:line``; nothing is learned from smpref's model.
"""

from __future__ import annotations

from smpref.client.connection import SmpClient
from smpref.client.core import DhKeyPair
from smpref.client.proxied import relay_server
from smpref.conform.case_verdicts import Fail, Skip
from smpref.conform.cases.queues.exchanges import SERVICES, delete_queues, signed
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.text.addresses import parse_server_address
from smpref.wire.messages import (
    GET,
    KEY,
    LGET,
    PING,
    SEND,
    SUB,
    DeployedLGET,
    DeployedPFWD,
    DeployedPRXY,
    DeployedRFWD,
    MsgFlags,
)
from smpref.wire.structs import Command
from smpref.wire.transmission import Transmission, transmission_at

group = CaseGroup("queues")
case = group.case


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
    await delete_queues(ctx, a, (q.rid, q.key))
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
    reply = await ctx.raw_request(c, signed(c, draft.key, corr, b"", new,
                                       service_signature=signature), corr)
    ctx.expect(reply, error="SERVICE", step="NEW with a service signature")
    q = await ctx.create(c)
    k = ctx.key()
    corr = ctx.random(24)
    key = KEY(sender_key=k.public).encode()
    reply = await ctx.raw_request(c, signed(c, q.key, corr, q.rid, key,
                                       service_signature=signature), corr)
    ctx.expect(reply, error="SERVICE", step="KEY with a service signature")
    # the refused KEY set nothing: another key is still accepted
    ctx.expect(await ctx.request(c, KEY(sender_key=ctx.key().public), q.rid, q.key), "OK",
               step="KEY after the refused one")
    await delete_queues(ctx, c, (q.rid, q.key))
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
        reply = await ctx.raw_request(c, signed(c, k, corr, entity, command,
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
