"""Retention: the embedded server's clock moves (RET-*)."""

from __future__ import annotations

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.model.config import DAY
from smpref.wire.messages import (
    GET,
)

group = CaseGroup("expiry")
case = group.case


@case("retention.unsecured-invitation", "an unsecured invitation queue expires after 90 days "
      "(in deployed SMP: never)", "RET-1", "RET-6", "DEP-8", needs="clock")
async def _ret_invitation(ctx: Context) -> str | None:
    server = ctx.require_clock()
    c = await ctx.connect()
    kept, gone = await ctx.create(c), await ctx.create(c)
    await ctx.secure(c, kept)
    server.clock.advance(91 * DAY)
    await server.sweep_cycle()
    if not ctx.extended:  # a queue created in deployed SMP never expires by date (DEP-8)
        ctx.expect(await ctx.request(c, GET(), gone.rid, gone.key), "MSG", "OK",
                   step="the unsecured queue created in deployed SMP after 91 days")
    else:
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
    await server.sweep_cycle()
    bodies = await ctx.receive(c, q, 1, via_get=True)
    if bodies != [b"new"]:
        raise Fail(f"after 22 days the queue delivered {bodies!r}; the old message should be gone")
    ctx.expect(await ctx.request(c, GET(), q.rid, q.key), "OK", step="nothing else left")
    return None
