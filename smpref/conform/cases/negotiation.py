"""The handshake: identity and version negotiation (TRANS-1, TRANS-9, TRANS-11)."""

from __future__ import annotations

import asyncio

from smpref.conform.case_verdicts import Fail
from smpref.conform.context import Context
from smpref.conform.registry import CaseGroup
from smpref.text.addresses import parse_server_address
from smpref.transport.streams import BlockStream
from smpref.transport.tls import client_context
from smpref.wire.hellos import ClientHello, ServerHello

group = CaseGroup("negotiation")
case = group.case


@case("handshake.identity", "a client that asks for another server's keyHash is refused",
      "TRANS-1", "TRANS-9")
async def _handshake_identity(ctx: Context) -> str | None:
    server = parse_server_address(ctx.address)
    reader, writer = await asyncio.open_connection(server.hosts[0], server.effective_port,
                                                   ssl=client_context(), server_hostname="")
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
