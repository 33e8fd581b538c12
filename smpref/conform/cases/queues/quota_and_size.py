"""Queues: the quota and its marker, and the size limit of a message.

Each case checks what deployed SMP (simplexmq 6.5.5) answers at the version the run speaks, and
the seed design where it differs (``ctx.extended``). Expected values come from the spec and
simplexmq's source, cited as ``File.hs:line``; nothing is learned from smpref's model.
"""

from __future__ import annotations

from smpref.client.connection import SmpClient
from smpref.conform.case_verdicts import Fail, Info
from smpref.conform.cases.queues.exchanges import (
    delete_queues,
    drain,
    pipelined,
    record_bodies,
    take_one,
)
from smpref.conform.context import Context, Queue
from smpref.conform.registry import CaseGroup
from smpref.wire.messages import GET, OFF, SEND, MsgFlags

group = CaseGroup("queues")
case = group.case

#: deployed's queue quota: a constant, not a setting (Server/Env/STM.hs:255-256,
#: Server/Main.hs:531); the seed design's default (MSG-6)
QUOTA = 128


def _message_limit(version: int | None) -> int:
    """SEND's largest body: deployed's ``maxMessageLength`` by version (Protocol.hs:300-304),
    16048 in the seed design (MSG-5)."""
    if version is None or version >= 11:
        return 16048
    return 16064 if version >= 8 else 16088


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
        for reply in await pipelined(ctx, c, batch):
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
        record, reply = await take_one(ctx, c, q, reply)
        if record[0] != "control":
            got.append(record)
    ctx.expect(await ctx.send(c, q, b"too early"), error="QUOTA",
               step="SEND with two messages read and the rest still queued")
    got += await drain(ctx, c, q, reply)
    want = [b"q%d" % i for i in range(accepted)] + [b"<quota>"]
    bodies = record_bodies(got)
    if bodies != want:
        extra = [b for b in bodies if not b.startswith(b"q")]
        raise Fail(f"received {len(bodies)} records, expected the {accepted} messages in order "
                   f"and one quota marker last (MSG-6, DEP-7); odd ones: {extra[:3]!r}")
    if any(flag for _, _, flag in got):
        raise Fail("a record arrived with the notification flag set; none was asked for "
                   "(Protocol.hs:794-800)")
    ctx.expect(await ctx.send(c, q, b"after"), "OK", step="SEND to the emptied queue")
    Context.expect_bodies(record_bodies(await drain(ctx, c, q)), [b"after"], "after the quota")
    await delete_queues(ctx, c, (q.rid, q.key))
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
    Context.expect_bodies(record_bodies(await drain(ctx, owner, q)), [b"kept"],
                          "what the queue holds")
    await delete_queues(ctx, owner, (q.rid, q.key))
    return None if limit == 16048 else f"limit {limit} at version {ctx.version}"
