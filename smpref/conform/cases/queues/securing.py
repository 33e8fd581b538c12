"""Queues: securing: KEY on contact and messaging queues, SKEY, and which SENDs a secured
queue accepts.

Each case checks what deployed SMP (simplexmq 6.5.5) answers at the version the run speaks, and
the seed design where it differs (``ctx.extended``). Expected values come from the spec and
simplexmq's source, cited as ``File.hs:line``; nothing is learned from smpref's model.
"""

from __future__ import annotations

from smpref.conform.cases.queues.exchanges import (
    SENDER_SECURES,
    delete_queues,
    drain,
    record_bodies,
)
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.wire.messages import KEY, SKEY

group = CaseGroup("queues")
case = group.case


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
        Context.expect_bodies(record_bodies(await drain(ctx, owner, q)), [b"signed"], step)
        await delete_queues(ctx, owner, (q.rid, q.key))
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
        await delete_queues(ctx, owner, (q.rid, q.key))
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
    Context.expect_bodies(record_bodies(await drain(ctx, owner, q)), [b"signed"])
    await delete_queues(ctx, owner, (q.rid, q.key))
    return None
