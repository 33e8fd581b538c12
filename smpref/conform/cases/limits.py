"""Limits: message size and link data size (the quota: queue.quota, in
queues/quota_and_size.py)."""

from __future__ import annotations

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.crypto.randomness import Random
from smpref.wire.messages import (
    LinkBlob,
    LinkPart,
    LinkPartPriority,
)

group = CaseGroup("limits")
case = group.case


def _limit(version: int | None) -> int:
    """SEND's largest body at a deployed version, from DEP-12 (``maxMessageLength``:
    16088 below 8, 16064 from 8, 16048 from 11), written here apart from the server's table;
    the seed design's is 16048 (MSG-5)."""
    if version is None or version >= 11:
        return 16048
    return 16064 if version >= 8 else 16088


@case("limit.message-size", "a 16048-byte body is accepted; 16049 bytes get ERR LARGE_MSG "
      "(below version 11, deployed's larger limit of that version)", "MSG-5", "TRANS-12")
async def _limit_size(ctx: Context) -> str | None:
    c = await ctx.connect()
    q = await ctx.create(c, "C")
    limit = _limit(ctx.deployed_version)
    ctx.expect(await ctx.send(c, q, b"m" * limit), "OK", step=f"{limit} bytes")
    ctx.expect(await ctx.send(c, q, b"m" * (limit + 1)), error="LARGE_MSG",
               step=f"{limit + 1} bytes")
    if await ctx.receive(c, q, 1, via_get=True) != [b"m" * limit]:
        raise Fail("the largest message did not come back intact")
    return None if limit == 16048 else f"limit {limit} at version {ctx.version}"


def _blob_of_size(size: int, random: Random) -> LinkBlob:
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
