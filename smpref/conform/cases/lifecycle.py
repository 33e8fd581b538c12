"""Queue lifecycles: create, secure, send, receive, suspend, delete (CMD-*, MSG-*)."""

from __future__ import annotations

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.wire.messages import (
    COUNT,
    DEL,
    GET,
    OFF,
    SKEY,
)

group = CaseGroup("lifecycle")
case = group.case


@case("life.invitation", "invitation queue: create, KEY, send, subscribe, receive, OFF, DEL",
      "CMD-10", "CMD-13", "CMD-16", "CMD-17", "CMD-18", "MSG-2", "MSG-4", "ROT-3", "CMD-21",
      "CMD-32", "DEP-7")
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
        remaining = ctx.message(off, COUNT, "OFF").remaining
        if remaining != 0:
            raise Fail(f"OFF on an empty queue answered COUNT {remaining}")
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
    if ctx.deployed_version is not None and ctx.deployed_version < 9:  # DEP-12
        # NEW below 9 cannot say the queue is a messaging queue: it has no mode, and a
        # sender cannot secure it (DEP-12)
        ctx.expect(await ctx.request(sender, SKEY(sender_key=k.public), q.sid, k),
                   error="AUTH", step=f"SKEY on a queue created at version {ctx.version}")
        return f"version {ctx.version}: a queue has no mode, SKEY gets AUTH"
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
    await ctx.ended(a, q.rid)
    return None


@case("life.del-end", "DEL on one session ends another's subscription", "CMD-21", "MSG-8")
async def _life_deld(ctx: Context) -> str | None:
    a, b = await ctx.connect(), await ctx.connect()
    q = await ctx.create(a)
    await ctx.subscribe(b, q)
    ctx.expect(await ctx.request(a, DEL(), q.rid, q.key), "OK")
    # the seed design ends the subscription with END (MSG-8, DIV-48); deployed sends DELD from
    # version 10, END below
    await ctx.ended(b, q.rid, deleted=True)
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
