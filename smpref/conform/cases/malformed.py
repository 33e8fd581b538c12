"""Malformed transmissions and blocks: ERR answers, closed connections, batches."""

from __future__ import annotations

import asyncio

from smpref.client.connection import SmpClient
from smpref.client.core import Reply
from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.wire.blocks import encode_batch
from smpref.wire.buffer import Writer
from smpref.wire.messages import (
    PING,
)
from smpref.wire.transmission import authorized_bytes

group = CaseGroup("malformed")
case = group.case


async def _raw(ctx: Context, c: SmpClient, transmission: bytes, corr: bytes) -> Reply:
    """Send one raw transmission; the answer comes with ``corr``, or as an ERR with none
    when the transmission carries no corrId the server could read."""
    if corr:
        return await ctx.raw_request(c, transmission, corr, "a malformed transmission")
    await c.send_raw([transmission])
    return await ctx.event(c, "ERR")


@case("tx.unknown-command", "an unknown command tag gets ERR CMD UNKNOWN", "CMD-2", "CMD-20")
async def _tx_unknown(ctx: Context) -> str | None:
    c = await ctx.connect()
    corr = ctx.random(24)
    reply = await _raw(ctx, c, ctx.raw_transmission(c, b"", corr, b"", b"HELLO"), corr)
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
    reply = await _raw(ctx, c, ctx.raw_transmission(c, signed, corr, q.rid, command), corr)
    ctx.expect(reply, error="CMD SYNTAX")
    return None


@case("tx.bad-auth-length", "an authorization of 10 bytes gets ERR BLOCK", "TRANS-5")
async def _tx_auth_length(ctx: Context) -> str | None:
    c = await ctx.connect()
    corr = ctx.random(24)
    raw = Writer()
    raw.short_string(b"\x01" * 10)  # neither a signature nor an authenticator (TRANS-5)
    raw.nothing()  # no service signature
    raw.short_string(corr)
    raw.short_string(b"")
    raw.raw(PING().encode())
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


async def _closes(ctx: Context, c: SmpClient, block: bytes, what: str, *,
                  chains_match: bool = True) -> str | None:
    """The server must reject the block and execute nothing from it (TRANS-3).

    smpref closes the connection (TRANS-15). A deployed server may instead answer ``ERR
    BLOCK`` and go on (DEP-9; undecodable transmissions get an error, simplexmq
    Protocol.hs:2240-2251); at a deployed version both are accepted. Either way a PONG for a
    PING inside the block fails the case.

    After ``ERR BLOCK`` the same connection must still answer a PING, unless ``chains_match``
    is False: a block that does not decrypt was not made with the client's send chain, and a
    receiver advances its chain for every block it reads (DEP-9), so from then on the
    two ends' block keys differ and nothing more can be said on that connection. Other
    connections and new ones must be served in every case.
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
    if outcome == "ERR BLOCK" and chains_match:
        ctx.expect(await ctx.request(c, PING()), "PONG", step="the same connection afterwards")
    fresh = await ctx.connect()
    ctx.expect(await ctx.request(fresh, PING()), "PONG", step="a new connection afterwards")
    if outcome == "closed":
        return None
    return "answered ERR BLOCK and kept the connection" + (
        "" if chains_match else " (whose block keys no longer match the client's: not probed)")


@case("block.garbage", "a block that does not decrypt ends that connection only",
      "TRANS-2", "TRANS-10", "TRANS-15")
async def _block_garbage(ctx: Context) -> str | None:
    c = await ctx.connect()
    other = await ctx.connect()
    result = await _closes(ctx, c, ctx.random(16384), "a block that does not decrypt",
                           chains_match=False)
    ctx.expect(await ctx.request(other, PING()), "PONG", step="another open connection")
    return result


@case("block.zero-count", "a block whose batch has 0 transmissions is rejected",
      "TRANS-3", "TRANS-15")
async def _block_zero(ctx: Context) -> str | None:
    c = await ctx.connect()
    return await _closes(ctx, c, ctx.block(c, b"\x00"), "a batch with count 0")


@case("block.trailing", "a batch with bytes after its transmissions is rejected, unexecuted",
      "TRANS-3", "TRANS-15")
async def _block_trailing(ctx: Context) -> str | None:
    c = await ctx.connect()
    _, data = c.session.transmission(PING())
    return await _closes(ctx, c, ctx.block(c, encode_batch([data]) + b"xx"), "trailing bytes")


@case("block.length-overrun", "a transmission length beyond the block is rejected",
      "TRANS-3", "TRANS-15")
async def _block_overrun(ctx: Context) -> str | None:
    c = await ctx.connect()
    content = Writer()
    content.list_count(1)
    content.word16(5000)  # the length of a transmission of 10 bytes
    content.raw(b"x" * 10)
    return await _closes(ctx, c, ctx.block(c, bytes(content)), "an overrunning length")


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
