"""The conformance cases. Each has an ID, the requirement IDs it checks, and what it needs.

``needs`` is ``core`` (any server speaking SMP: deployed v17/v18 or smpref), ``seed`` (smpref's
seed extensions: a deployed server reports skip) or ``clock`` (moving the server's clock: only
the embedded server). IDs are stable: reports and ``--cases`` globs use them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from smpref.client.connection import SmpClient
from smpref.client.core import AuthKeyPair, make_link_blob, read_link_blob
from smpref.conform.context import (
    Context,
    Fail,
    Info,
    Queue,
    Skip,
)
from smpref.model.config import DAY
from smpref.text.addresses import parse_server_address
from smpref.transport.framing import BlockStream
from smpref.transport.tls import client_context
from smpref.wire.blocks import encode_batch
from smpref.wire.buffer import write_large, write_short_string
from smpref.wire.hellos import ClientHello, ServerHello
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    KEY,
    LGET,
    LSET,
    NDEL,
    NSUB,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    LinkBlob,
    LinkData,
    LinkPart,
    LinkPartPriority,
    MsgFlags,
)
from smpref.wire.transmission import Transmission, authorized_bytes

CaseFunction = Callable[[Context], Awaitable[str | None]]


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    requirements: tuple[str, ...]
    needs: str
    run: CaseFunction


CASES: list[Case] = []


def case(case_id: str, title: str, *requirements: str,
         needs: str = "core") -> Callable[[CaseFunction], CaseFunction]:
    def register(function: CaseFunction) -> CaseFunction:
        CASES.append(Case(case_id, title, requirements, needs, function))
        return function
    return register


# ---------------------------------------------------------------------------------------------
# Credentials: every command against none, a wrong key, the right key, a wrong entity and the
# other party's entity (TRANS-7, AUTH-1..AUTH-3).


@dataclass
class Target:
    """One command ready to send, and what each credential variant must get."""

    message: Any
    entity: bytes
    key: AuthKeyPair | None
    ok: tuple[str, ...]
    ok_error: str | None = None
    none_error: str = "CMD NO_AUTH"
    #: every party's ID for the same queue (recipient, sender, and with the seed extensions
    #: notifier and link key), for the variants that send the command with another party's ID
    parties: dict[str, bytes] = field(default_factory=dict)


Setup = Callable[[Context, SmpClient, bool], Awaitable[Target]]


async def _queue(ctx: Context, c: SmpClient, full: bool, mode: str = "M", *,
                 link: bool = False, notifier: bool = False) -> tuple[Queue, dict[str, bytes]]:
    """A queue, with a link and a notifier when ``full`` (seed), and its parties' IDs."""
    q = await ctx.create(c, mode, link=link or full, notifier=notifier or full)
    parties = {"recipient": q.rid, "sender": q.sid}
    if q.notifier_id:
        parties["notifier"] = q.notifier_id
    if q.link is not None:
        parties["link"] = q.link.k  # the link reader's entity ID (LINK-6)
    return q, parties


async def _setup_new(ctx: Context, c: SmpClient, full: bool) -> Target:
    draft = ctx.draft()
    return Target(ctx.new_command(draft, subscribe=False), b"", draft.key, ("IDS",))


async def _setup_key(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(KEY(sender_key=ctx.key().public), q.rid, q.key, ("OK",),
                  parties=parties)


async def _setup_skey(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    k = ctx.key()
    return Target(SKEY(sender_key=k.public), q.sid, k, ("OK",), parties=parties)


async def _setup_lset(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, "C", link=True)
    assert q.link is not None
    blob = make_link_blob(q.link, ctx.random, LinkData(conn_req=b"again", user_data=b"v2"))
    return Target(LSET(enc_link_data=blob), q.rid, q.key, ("OK",), parties=parties)


async def _setup_lget(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, "M", link=True)
    assert q.link is not None
    k = ctx.key()
    # The owner's link ID names the link too, but LGET must use k (LINK-6).
    parties["link ID"] = q.link.link_id
    return Target(LGET(sender_key=k.public), q.link.k, k, ("LINK",), parties=parties)


async def _setup_ndel(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, notifier=True)
    return Target(NDEL(), q.rid, q.key, ("OK",), parties=parties)


async def _setup_sub(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    ok = ("OK", "MSG") if ctx.extended else ("OK", "SOK", "MSG")
    return Target(SUB(), q.rid, q.key, ok, parties=parties)


async def _setup_send(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    key = await ctx.secure(c, q)
    return Target(SEND(flags=MsgFlags(notification=False), body=b"hello"),
                  q.sid, key, ("OK",), none_error="AUTH", parties=parties)


async def _setup_ack(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    # Nothing was delivered on this session: the right key passes authorization and reaches
    # the queue, which answers NO_MSG (MSG-4).
    return Target(ACK(msg_id=b""), q.rid, q.key, (), ok_error="NO_MSG", parties=parties)


async def _setup_get(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(GET(), q.rid, q.key, ("MSG", "OK"), parties=parties)


async def _setup_off(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(OFF(), q.rid, q.key, ("COUNT",) if ctx.extended else ("OK",),
                  parties=parties)


async def _setup_del(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full)
    return Target(DEL(), q.rid, q.key, ("OK",), parties=parties)


async def _setup_nsub(ctx: Context, c: SmpClient, full: bool) -> Target:
    q, parties = await _queue(ctx, c, full, notifier=True)
    return Target(NSUB(), q.notifier_id, q.notifier_key, ("OK",), parties=parties)


#: command -> (setup, its own party, requirement IDs, needs)
CREDENTIAL_COMMANDS: dict[str, tuple[Setup, str, tuple[str, ...], str]] = {
    "NEW": (_setup_new, "creator", ("CMD-10", "AUTH-1"), "core"),
    "KEY": (_setup_key, "recipient", ("CMD-13", "AUTH-1"), "core"),
    "SKEY": (_setup_skey, "sender", ("CMD-14", "QUEUE-11"), "core"),
    "LSET": (_setup_lset, "recipient", ("LINK-5", "AUTH-1"), "seed"),
    "LGET": (_setup_lget, "link", ("LINK-6", "LINK-7", "LINK-8"), "seed"),
    "NDEL": (_setup_ndel, "recipient", ("CMD-15", "AUTH-1"), "seed"),
    "SUB": (_setup_sub, "recipient", ("CMD-16", "AUTH-1"), "core"),
    "SEND": (_setup_send, "sender", ("CMD-17", "MSG-1"), "core"),
    "ACK": (_setup_ack, "recipient", ("CMD-18", "MSG-4"), "core"),
    "GET": (_setup_get, "recipient", ("CMD-19", "AUTH-1"), "core"),
    "OFF": (_setup_off, "recipient", ("ROT-3", "AUTH-1"), "core"),
    "DEL": (_setup_del, "recipient", ("CMD-21", "AUTH-1"), "core"),
    "NSUB": (_setup_nsub, "notifier", ("CMD-23", "CMD-12"), "seed"),
}

VARIANTS = {
    "none": "without an authorization",
    "wrong-key": "authorized by a key the queue does not have",
    "right-key": "authorized by the right key",
    "wrong-entity": "with the right key and an entity ID that names nothing",
}
#: the other parties whose IDs a command is tried with; notifier and link exist only with the
#: seed extensions (NEW's NtfRequest and QueueLink)
PARTIES = {"recipient": "core", "sender": "core", "notifier": "seed", "link": "seed",
           "link ID": "seed"}


def _credential_case(command: str, variant: str, setup: Setup, party: str = "") -> CaseFunction:
    async def run(ctx: Context) -> str | None:
        c = await ctx.connect()
        t = await setup(ctx, c, bool(party) and PARTIES[party] == "seed")
        if variant == "none":
            reply = await ctx.request(c, t.message, t.entity, None)
            if command == "LGET":  # a key in LGET requires its signature (LINK-8)
                ctx.expect(reply, error="CMD NO_AUTH")
                return None
            ctx.expect(reply, error=t.none_error)
        elif variant == "wrong-key":
            reply = await ctx.request(c, t.message, t.entity, ctx.key())
            ctx.expect(reply, error="AUTH")
        elif variant == "right-key":
            reply = await ctx.request(c, t.message, t.entity, t.key)
            if t.ok_error is not None:
                ctx.expect(reply, error=t.ok_error)
            else:
                ctx.expect(reply, *t.ok)
        elif variant == "wrong-entity":
            if command == "NEW":  # NEW must have an empty entity (TRANS-7)
                reply = await ctx.request(c, t.message, ctx.random(24), t.key)
                ctx.expect(reply, error="CMD HAS_AUTH")
                return None
            reply = await ctx.request(c, t.message, ctx.random(len(t.entity)), t.key)
            ctx.expect(reply, error="AUTH")
        else:  # the same queue's other party: the right key, that party's ID
            reply = await ctx.request(c, t.message, t.parties[party], t.key)
            ctx.expect(reply, error="AUTH", step=f"with the {party}'s ID")
        return None
    return run


def _register_credentials() -> None:
    for command, (setup, own, reqs, needs) in CREDENTIAL_COMMANDS.items():
        requirements = ("TRANS-7", "AUTH-2", "AUTH-3", *reqs)
        for variant, text in VARIANTS.items():
            case(f"cred.{command.lower()}.{variant}", f"{command} {text}", *requirements,
                 needs=needs)(_credential_case(command, variant, setup))
        if command == "NEW":
            continue  # NEW has no queue yet, so no other party
        for party, party_needs in PARTIES.items():
            if party == own or (party == "link ID" and command != "LGET"):
                continue
            slug = party.replace(" ", "-")
            case(f"cred.{command.lower()}.as-{slug}",
                 f"{command} with the right key and the {party}'s ID of the same queue",
                 *requirements, needs="seed" if "seed" in (needs, party_needs) else "core")(
                _credential_case(command, "party", setup, party))


_register_credentials()


@case("cred.new.password", "NEW without the server password, or with a wrong one, gets AUTH",
      "CMD-10", "QUEUE-10")
async def _new_password(ctx: Context) -> str | None:
    if ctx.password is None:
        raise Skip("the address carries no server password (basicAuth): nothing to check")
    c = await ctx.connect()
    for what, override in (("without", None), ("with a wrong", b"x" + ctx.password)):
        draft = ctx.draft()
        command = ctx.new_command(draft, subscribe=False, password=override,
                                  omit_password=override is None)
        ctx.expect(await ctx.request(c, command, key=draft.key), error="AUTH",
                   step=f"NEW {what} password")
    await ctx.create(c)  # and with it
    return None


@case("cred.ping.none", "PING without credentials gets PONG", "CMD-22", "TRANS-7")
async def _ping(ctx: Context) -> str | None:
    c = await ctx.connect()
    ctx.expect(await ctx.request(c, PING()), "PONG")
    return None


@case("cred.ping.entity", "PING with an entity ID gets ERR CMD HAS_AUTH", "CMD-22", "TRANS-7")
async def _ping_entity(ctx: Context) -> str | None:
    c = await ctx.connect()
    ctx.expect(await ctx.request(c, PING(), ctx.random(24)), error="CMD HAS_AUTH")
    return None


@case("cred.ping.key", "PING with an authorization gets ERR CMD HAS_AUTH", "CMD-22", "TRANS-7")
async def _ping_key(ctx: Context) -> str | None:
    c = await ctx.connect()
    ctx.expect(await ctx.request(c, PING(), b"", ctx.key()), error="CMD HAS_AUTH")
    return None


@case("cred.send.unsecured-signed", "a signed SEND to a queue without a sender key gets AUTH",
      "MSG-1", "CMD-17")
async def _send_unsecured_signed(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c)
    q.sender_key = ctx.key()
    ctx.expect(await ctx.send(c, q, b"x"), error="AUTH")
    return None


# ---------------------------------------------------------------------------------------------
# Lifecycles


@case("life.invitation", "invitation queue: create, KEY, send, subscribe, receive, OFF, DEL",
      "CMD-10", "CMD-13", "CMD-16", "CMD-17", "CMD-18", "MSG-2", "MSG-4", "ROT-3", "CMD-21")
async def _life_invitation(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner)
    ctx.expect(await ctx.send(sender, q, b"confirmation"), "OK", step="unsigned SEND")
    await ctx.secure(owner, q)
    ctx.expect(await ctx.send(sender, q, b"one"), "OK", step="signed SEND")
    ctx.expect(await ctx.send(sender, q, b"two"), "OK", step="signed SEND")
    first = await ctx.subscribe(owner, q)
    bodies = await ctx.receive(owner, q, 3, first=first)
    if bodies != [b"confirmation", b"one", b"two"]:
        raise Fail(f"received {bodies!r}, sent confirmation, one, two in that order")
    off = await ctx.request(owner, OFF(), q.rid, q.key)
    if ctx.extended:
        ctx.expect(off, "COUNT", step="OFF")
        if off.message.remaining != 0:
            raise Fail(f"OFF on an empty queue answered COUNT {off.message.remaining}")
    else:
        ctx.expect(off, "OK", step="OFF")
    ctx.expect(await ctx.send(sender, q, b"late"), error="AUTH", step="SEND after OFF")
    ctx.expect(await ctx.request(owner, DEL(), q.rid, q.key), "OK", step="DEL")
    ctx.expect(await ctx.request(owner, GET(), q.rid, q.key), error="AUTH",
               step="GET after DEL")
    return None


@case("life.skey", "the sender secures an invitation queue with SKEY, then sends signed",
      "CMD-14", "QUEUE-11", "MSG-1")
async def _life_skey(ctx: Context) -> str | None:
    owner, sender = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner)
    k = ctx.key()
    ctx.expect(await ctx.request(sender, SKEY(sender_key=k.public), q.sid, k), "OK")
    ctx.expect(await ctx.request(sender, SKEY(sender_key=k.public), q.sid, k), "OK",
               step="SKEY again with the same key (idempotent retry)")
    other = ctx.key()
    ctx.expect(await ctx.request(sender, SKEY(sender_key=other.public), q.sid, other),
               error="AUTH", step="SKEY with another key")
    q.sender_key = k
    ctx.expect(await ctx.send(sender, q, b"signed"), "OK")
    Context.expect_bodies(await ctx.receive(owner, q, 1, via_get=True), [b"signed"])
    return None


@case("life.contact", "contact queue: unsigned SENDs from many senders; SKEY is refused",
      "QUEUE-2", "QUEUE-11", "MSG-1")
async def _life_contact(ctx: Context) -> str | None:
    owner = await ctx.connect()
    q = await ctx.create(owner, "C")
    k = ctx.key()
    ctx.expect(await ctx.request(owner, SKEY(sender_key=k.public), q.sid, k), error="AUTH",
               step="SKEY on a contact queue")
    senders = [await ctx.connect() for _ in range(3)]
    for i, sender in enumerate(senders):
        ctx.expect(await ctx.send(sender, q, b"request %d" % i), "OK")
    bodies = await ctx.receive(owner, q, 3, via_get=True)
    if sorted(bodies) != [b"request 0", b"request 1", b"request 2"]:
        raise Fail(f"received {bodies!r}")
    return None


@case("life.get", "GET delivers without subscribing; OK once the queue is empty",
      "CMD-19", "MSG-3", "MSG-4")
async def _life_get(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    ctx.expect(await ctx.send(c, q, b"a"), "OK")
    Context.expect_bodies(await ctx.receive(c, q, 1, via_get=True), [b"a"])
    ctx.expect(await ctx.request(c, GET(), q.rid, q.key), "OK", step="GET on an empty queue")
    return None


@case("life.sub-end", "a second subscriber takes over; the first gets END", "CMD-33", "MSG-2")
async def _life_end(ctx: Context) -> str | None:
    a, b = await ctx.connect(), await ctx.connect()
    q = await ctx.create(a, subscribe=True)
    await ctx.subscribe(b, q)
    await ctx.event(a, "END", q.rid)
    return None


@case("life.del-end", "DEL on one session ends another's subscription", "CMD-21", "MSG-8")
async def _life_deld(ctx: Context) -> str | None:
    a, b = await ctx.connect(), await ctx.connect()
    q = await ctx.create(a)
    await ctx.subscribe(b, q)
    ctx.expect(await ctx.request(a, DEL(), q.rid, q.key), "OK")
    # smpref ends the subscription with END (MSG-8); deployed sends DELD from v10 on
    await ctx.event(b, "END" if ctx.extended else ("DELD", "END"), q.rid)
    return None


@case("life.redelivery", "an unacknowledged message is delivered again to the next subscriber",
      "MSG-2", "MSG-9")
async def _life_redelivery(ctx: Context) -> str | None:
    a, sender = await ctx.connect(), await ctx.connect()
    q = await ctx.create(a, "C")
    ctx.expect(await ctx.send(sender, q, b"keep me"), "OK")
    first = await ctx.subscribe(a, q)
    if first.tag != "MSG":  # a record is now in flight on a, unacknowledged
        await ctx.event(a, "MSG", q.rid)
    await a.close()
    b = await ctx.connect()
    again = await ctx.subscribe(b, q)
    bodies = await ctx.receive(b, q, 1, first=again)
    if bodies != [b"keep me"]:
        raise Fail(f"received {bodies!r} after resubscribing")
    return None


# ---------------------------------------------------------------------------------------------
# Links (seed 004)


@case("link.lset-lget", "NEW with a link; LGET reads it, LSET replaces it, LGET sees the change",
      "LINK-2", "LINK-4", "LINK-5", "LINK-6", "LINK-9", "LINK-10", needs="seed")
async def _link_roundtrip(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C", link=True)
    assert q.link is not None
    if q.ids.link_id != q.link.link_id:
        raise Fail("IDS does not return the link ID NEW carried")
    data = await _read_link(ctx, reader, q)
    if data.conn_req != b"conformance":
        raise Fail("LGET returned other link data than NEW stored")
    blob = make_link_blob(q.link, ctx.random, LinkData(conn_req=b"changed", user_data=b"v2"))
    ctx.expect(await ctx.request(owner, LSET(enc_link_data=blob), q.rid, q.key), "OK")
    if (await _read_link(ctx, reader, q)).conn_req != b"changed":
        raise Fail("LGET after LSET returned the old link data")
    return None


async def _read_link(ctx: Context, c: SmpClient, q: Queue, key: AuthKeyPair | None = None
                     ) -> Any:
    assert q.link is not None
    message = LGET(sender_key=key.public if key else None)
    corr, data = c.session.transmission(message, q.link.k, key)
    reply = (await c.send_transmissions([(corr, data)]))[0]
    ctx.expect(reply, "LINK", step="LGET")
    queue_link = c.session.open_link(q.link, corr, reply.message.sealed)
    if queue_link.sender_id != q.sid:
        raise Fail("LINK's sender ID is not the queue's")
    mandatory, _ = read_link_blob(q.link, queue_link.enc_link_data)
    return mandatory


@case("link.lget-secures", "LGET with a key secures an invitation queue and drops its link",
      "LINK-7", "LINK-8", "LINK-11", needs="seed")
async def _link_secure(ctx: Context) -> str | None:
    owner, reader = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "M", link=True)
    k = ctx.key()
    await _read_link(ctx, reader, q, k)
    q.sender_key = k
    ctx.expect(await ctx.send(reader, q, b"hi"), "OK", step="SEND signed by the LGET key")
    assert q.link is not None
    reply = await ctx.request(reader, LGET(sender_key=None), q.link.k)
    ctx.expect(reply, error="AUTH", step="LGET after the queue was secured")
    return None


@case("link.lset-without-link", "LSET on a queue without a link gets ERR CMD PROHIBITED",
      "LINK-5", needs="seed")
async def _lset_no_link(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    blob = make_link_blob(ctx.draft(link=True).link,  # type: ignore[arg-type]
                          ctx.random, LinkData(conn_req=b"x", user_data=b""))
    ctx.expect(await ctx.request(c, LSET(enc_link_data=blob), q.rid, q.key),
               error="CMD PROHIBITED")
    return None


@case("ntf.nmsg", "NEW with a notifier; NSUB; a SEND asking for it yields NMSG",
      "CMD-12", "CMD-23", "CMD-34", "MSG-7", needs="seed")
async def _ntf(ctx: Context) -> str | None:
    owner, notifier = await ctx.connect(), await ctx.connect()
    q = await ctx.create(owner, "C", notifier=True)
    ctx.expect(await ctx.request(notifier, NSUB(), q.notifier_id, q.notifier_key), "OK")
    ctx.expect(await ctx.send(owner, q, b"ping me", notify=True), "OK")
    await ctx.event(notifier, "NMSG", q.notifier_id)
    return None


# ---------------------------------------------------------------------------------------------
# Malformed blocks and transmissions


async def _raw(ctx: Context, c: SmpClient, transmission: bytes, corr: bytes) -> Any:
    """Send one raw transmission; the answer comes with ``corr`` or as an ERR with none."""
    future = c.answer(corr) if corr else None
    await c.send_raw([transmission])
    try:
        if future is not None:
            return await asyncio.wait_for(future, ctx.timeout)
        return await ctx.event(c, "ERR")
    except TimeoutError:
        raise Fail("no answer to a malformed transmission") from None
    finally:
        c.forget(corr)


@case("tx.unknown-command", "an unknown command tag gets ERR CMD UNKNOWN", "CMD-2", "CMD-20")
async def _tx_unknown(ctx: Context) -> str | None:
    c = await ctx.connect()
    corr = ctx.random(24)
    reply = await _raw(ctx, c, Transmission(b"", corr, b"", b"HELLO").encode(), corr)
    ctx.expect(reply, error="CMD UNKNOWN")
    return None


@case("tx.syntax", "a known tag with fields that do not parse gets ERR CMD SYNTAX",
      "CMD-2", "CMD-20")
async def _tx_syntax(ctx: Context) -> str | None:
    c = await ctx.connect()
    corr = ctx.random(24)
    q = await ctx.create(c)
    command = b"KEY \x05abc"
    signed = q.key.authorize(authorized_bytes(c.session_id, corr, q.rid, command), corr,
                             c.session.server_session_public)
    reply = await _raw(ctx, c, Transmission(signed, corr, q.rid, command).encode(), corr)
    ctx.expect(reply, error="CMD SYNTAX")
    return None


@case("tx.bad-auth-length", "an authorization of 10 bytes gets ERR BLOCK", "TRANS-5")
async def _tx_auth_length(ctx: Context) -> str | None:
    c = await ctx.connect()
    corr = ctx.random(24)
    raw = bytearray()
    write_short_string(raw, b"\x01" * 10)
    raw += b"0"
    write_short_string(raw, corr)
    write_short_string(raw, b"")
    raw += b"PING"
    reply = await _raw(ctx, c, bytes(raw), b"")
    ctx.expect(reply, error="BLOCK")
    ctx.expect(await ctx.request(c, PING()), "PONG", step="the connection still works")
    return None


@case("tx.truncated", "a transmission cut inside its corrId gets ERR BLOCK", "TRANS-4")
async def _tx_truncated(ctx: Context) -> str | None:
    c = await ctx.connect()
    reply = await _raw(ctx, c, b"\x00\x18abc", b"")
    ctx.expect(reply, error="BLOCK")
    return None


@case("tx.batch", "several transmissions in one block are all answered, in order",
      "TRANS-3", "CMD-22")
async def _tx_batch(ctx: Context) -> str | None:
    c = await ctx.connect()
    items = [c.session.transmission(PING()) for _ in range(20)]
    replies = await c.send_transmissions(items)
    for reply in replies:
        ctx.expect(reply, "PONG")
    return None


async def _closes(ctx: Context, c: SmpClient, block: bytes, what: str) -> str | None:
    """The server must reject the block and execute nothing from it (TRANS-3).

    smpref closes the connection (TRANS-15). A deployed server may instead answer ``ERR
    BLOCK`` and go on (smp-wire §3.9: undecodable transmissions get an error); at a deployed
    version both are accepted. Either way a PONG for a PING inside the block fails the case.
    """
    await c.send_block(block)
    deadline = asyncio.get_running_loop().time() + ctx.timeout
    outcome = ""
    while not outcome and asyncio.get_running_loop().time() < deadline:
        if not c.events.empty():
            event = c.events.get_nowait()
            if event.tag == "PONG":
                raise Fail(f"the server executed a transmission from {what}")
            if event.error == "BLOCK":
                outcome = "ERR BLOCK"
        elif c.closed_reason is not None:
            outcome = "closed"
        else:
            await asyncio.sleep(0.02)
    if ctx.extended and outcome != "closed":
        raise Fail(f"smpref servers close the connection after {what} (TRANS-15); "
                   f"got {outcome or 'nothing'}")
    if not outcome:
        raise Fail(f"the server neither closed the connection nor answered ERR BLOCK after {what}")
    if outcome == "ERR BLOCK":
        ctx.expect(await ctx.request(c, PING()), "PONG", step="the same connection afterwards")
    fresh = await ctx.connect()
    ctx.expect(await ctx.request(fresh, PING()), "PONG", step="a new connection afterwards")
    return None if outcome == "closed" else "answered ERR BLOCK and kept the connection"


@case("block.garbage", "a block that does not decrypt ends that connection only",
      "TRANS-2", "TRANS-10", "TRANS-15")
async def _block_garbage(ctx: Context) -> str | None:
    c = await ctx.connect()
    other = await ctx.connect()
    result = await _closes(ctx, c, ctx.random(16384), "a block that does not decrypt")
    ctx.expect(await ctx.request(other, PING()), "PONG", step="another open connection")
    return result


@case("block.zero-count", "a block whose batch has 0 transmissions is rejected",
      "TRANS-3", "TRANS-15")
async def _block_zero(ctx: Context) -> str | None:
    c = await ctx.connect()
    chain = c.stream.framing.send_chain
    assert chain is not None
    return await _closes(ctx, c, chain.encrypt(b"\x00"), "a batch with count 0")


@case("block.trailing", "a batch with bytes after its transmissions is rejected, unexecuted",
      "TRANS-3", "TRANS-15")
async def _block_trailing(ctx: Context) -> str | None:
    c = await ctx.connect()
    chain = c.stream.framing.send_chain
    assert chain is not None
    _, data = c.session.transmission(PING())
    return await _closes(ctx, c, chain.encrypt(encode_batch([data]) + b"xx"), "trailing bytes")


@case("block.length-overrun", "a transmission length beyond the block is rejected",
      "TRANS-3", "TRANS-15")
async def _block_overrun(ctx: Context) -> str | None:
    c = await ctx.connect()
    chain = c.stream.framing.send_chain
    assert chain is not None
    content = bytearray(b"\x01")
    write_large(content, b"x" * 10)
    content[1:3] = (5000).to_bytes(2, "big")
    return await _closes(ctx, c, chain.encrypt(bytes(content)), "an overrunning length")


@case("block.cut", "a connection cut in the middle of a block leaves the server serving",
      "TRANS-2")
async def _block_cut(ctx: Context) -> str | None:
    c = await ctx.connect()
    c.stream.writer.write(ctx.random(5000))
    await c.stream.writer.drain()
    await c.close()
    fresh = await ctx.connect()
    ctx.expect(await ctx.request(fresh, PING()), "PONG", step="a new connection afterwards")
    return None


@case("handshake.identity", "a client that asks for another server's keyHash is refused",
      "TRANS-1", "TRANS-9")
async def _handshake_identity(ctx: Context) -> str | None:
    server = parse_server_address(ctx.address)
    reader, writer = await asyncio.open_connection(server.hosts[0], server.effective_port,
                                                   ssl=client_context(), server_hostname=None)
    stream = BlockStream(reader, writer)
    try:
        hello = ServerHello.decode(await stream.read_handshake())
        await stream.write_handshake(ClientHello(hello.max_version, ctx.random(32)).encode())
        try:
            await asyncio.wait_for(stream.read_block(), ctx.timeout)
        except Exception:
            return None
        raise Fail("the server went on after a client hello with a wrong keyHash")
    finally:
        await stream.close()


@case("handshake.version", "the server's range holds a version smpref speaks; it is negotiated",
      "TRANS-9", "TRANS-11")
async def _handshake_version(ctx: Context) -> str | None:
    c = await ctx.connect()
    low, high = c.connected.server_range
    if not low <= c.negotiated.version <= high:
        raise Fail(f"negotiated {c.negotiated.version} outside the server's range {low}-{high}")
    return (f"server range {low}-{high}; negotiated {c.negotiated.version} "
            f"({'seed extensions' if c.extended else 'deployed core'})")


# ---------------------------------------------------------------------------------------------
# Limits


@case("limit.message-size", "a 16048-byte body is accepted; 16049 bytes get ERR LARGE_MSG",
      "MSG-5", "TRANS-12")
async def _limit_size(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    ctx.expect(await ctx.send(c, q, b"m" * 16048), "OK", step="16048 bytes")
    ctx.expect(await ctx.send(c, q, b"m" * 16049), error="LARGE_MSG", step="16049 bytes")
    if await ctx.receive(c, q, 1, via_get=True) != [b"m" * 16048]:
        raise Fail("the largest message did not come back intact")
    return None


@case("limit.quota", "a full queue answers ERR QUOTA until it is drained", "MSG-6")
async def _limit_quota(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    sent = 0
    for _ in range(1000):
        reply = await ctx.send(c, q, b"q%d" % sent)
        if reply.error == "QUOTA":
            break
        ctx.expect(reply, "OK", step=f"SEND {sent + 1}")
        sent += 1
    else:
        raise Info("no QUOTA within 1000 messages: the quota is above 1000")
    ctx.expect(await ctx.send(c, q, b"again"), error="QUOTA", step="SEND to a full queue")
    bodies = await ctx.receive(c, q, sent + 1, via_get=True)
    if bodies[:sent] != [b"q%d" % i for i in range(sent)] or bodies[sent] != b"<quota>":
        raise Fail("the messages before QUOTA did not all come back in order, then the marker")
    ctx.expect(await ctx.send(c, q, b"after"), "OK", step="SEND after draining")
    return f"quota {sent} messages"


def _blob_of_size(size: int, random: Any) -> Any:
    """A one-part blob whose encoding is exactly ``size`` bytes (count, priority, Large)."""
    return LinkBlob(parts=(LinkPart(priority=LinkPartPriority.Mandatory,
                                    sealed=random(size - 4)),))


@case("limit.link-size", "link data at the size limit is accepted; one byte more is refused",
      "QUEUE-6", needs="seed")
async def _limit_link(ctx: Context) -> str | None:
    c = await ctx.connect()
    for mode, limit in (("M", 8192), ("C", 15360)):
        await ctx.create(c, mode, link=True, blob=_blob_of_size(limit, ctx.random))
        q = ctx.draft(mode, link=True)
        reply = await ctx.request(c, ctx.new_command(q, subscribe=False, blob=_blob_of_size(
            limit + 1, ctx.random)), key=q.key)
        ctx.expect(reply, error="LARGE_MSG", step=f"{mode} blob of {limit + 1} bytes")
    return None


# ---------------------------------------------------------------------------------------------
# Retention: the embedded server's clock moves


@case("retention.unsecured-invitation", "an unsecured invitation queue expires after 90 days",
      "RET-1", "RET-6", needs="clock")
async def _ret_invitation(ctx: Context) -> str | None:
    server = ctx.require_clock()
    c = await ctx.connect()
    kept, gone = await ctx.create(c), await ctx.create(c)
    await ctx.secure(c, kept)
    server.clock.advance(91 * DAY)
    server.sweep_cycle()
    ctx.expect(await ctx.request(c, GET(), gone.rid, gone.key), error="AUTH",
               step="the unsecured queue after 91 days")
    ctx.expect(await ctx.request(c, GET(), kept.rid, kept.key), "MSG", "OK",
               step="the secured queue after 91 days")
    return None


@case("retention.message-ttl", "messages expire after 21 days", "RET-5", needs="clock")
async def _ret_messages(ctx: Context) -> str | None:
    server = ctx.require_clock()
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    ctx.expect(await ctx.send(c, q, b"old"), "OK")
    server.clock.advance(22 * DAY)
    ctx.expect(await ctx.send(c, q, b"new"), "OK")
    server.sweep_cycle()
    bodies = await ctx.receive(c, q, 1, via_get=True)
    if bodies != [b"new"]:
        raise Fail(f"after 22 days the queue delivered {bodies!r}; the old message should be gone")
    ctx.expect(await ctx.request(c, GET(), q.rid, q.key), "OK", step="nothing else left")
    return None


