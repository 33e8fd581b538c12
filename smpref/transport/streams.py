"""Blocks and the handshake over asyncio streams: the transport's only I/O.

:class:`BlockStream` reads exactly 16384 bytes per block (a short read is the end of the
connection, TRANS-2) and writes what :class:`~smpref.transport.framing.Framing` encodes.
:func:`accept` and :func:`connect` run the sans-IO handshake of
:mod:`smpref.transport.handshake` over a stream and switch it to encrypted blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable

from smpref.crypto.randomness import Random
from smpref.errors import ConnectionClosedError
from smpref.transport.credentials import ServerCredentials
from smpref.transport.framing import Framing
from smpref.transport.handshake import (
    Accepted,
    ClientHandshake,
    Connected,
    ServerHandshake,
    start_encryption,
)
from smpref.transport.versions import SMPREF_VERSION
from smpref.wire.blocks import BLOCK_SIZE, pad, unpad


class BlockStream:
    """Blocks over an asyncio stream pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.framing = Framing()
        self.blocks_read = 0
        self.blocks_written = 0

    async def read_block(self) -> bytes:
        """Exactly one block's bytes. Raises ConnectionClosedError on EOF, even mid-block."""
        try:
            block = await self.reader.readexactly(BLOCK_SIZE)
            self.blocks_read += 1
            return block
        except asyncio.IncompleteReadError as exc:
            raise ConnectionClosedError(
                f"connection closed after {len(exc.partial)} bytes of a block") from None
        except (ConnectionError, OSError) as exc:
            raise ConnectionClosedError(str(exc)) from None

    async def receive(self) -> list[bytes]:
        """The transmissions of the next block (BlockError if it is bad)."""
        return self.framing.decode(await self.read_block())

    async def read_handshake(self) -> bytes:
        """The content of an unencrypted handshake block (TRANS-9)."""
        return unpad(await self.read_block())

    async def write_handshake(self, content: bytes) -> None:
        self.writer.write(pad(content))
        await self.writer.drain()

    def write(self, transmissions: list[bytes]) -> int:
        """Queue the transmissions' blocks for sending; returns the number of blocks."""
        blocks = self.framing.encode(transmissions)
        self.writer.write(b"".join(blocks))
        self.blocks_written += len(blocks)
        return len(blocks)

    async def send(self, transmissions: list[bytes]) -> None:
        self.write(transmissions)
        await self.writer.drain()

    async def close(self) -> None:
        if self.writer.is_closing():
            return
        self.writer.close()
        with contextlib.suppress(TimeoutError, OSError, ssl.SSLError):
            await asyncio.wait_for(self.writer.wait_closed(), 5)


async def accept(stream: BlockStream, credentials: ServerCredentials, session_id: bytes,
                 random: Random, versions: tuple[int, int] = (SMPREF_VERSION, SMPREF_VERSION),
                 *, seen: Callable[[bytes], None] | None = None) -> Accepted:
    """Run the server's side of the handshake on ``stream``; ``seen`` gets the client hello's
    bytes before they are judged."""
    handshake = ServerHandshake(credentials, session_id, random, versions)
    await stream.write_handshake(handshake.hello())
    hello = await stream.read_handshake()
    if seen is not None:
        seen(hello)
    accepted = handshake.receive(hello)
    start_encryption(stream.framing, session_id, accepted.block_secret, server=True)
    return accepted


async def connect(stream: BlockStream, key_hash: bytes, session_id: bytes,
                  tls_leaf_der: bytes | None, random: Random, *, alpn: str | None = None,
                  version: int | None = None, proxy: bool = False) -> Connected:
    """Run the client's side of the handshake on ``stream`` (``alpn``: what TLS selected;
    ``version``: a deployed version to force; ``proxy``: as a proxy's connection to a relay,
    DEP-15)."""
    handshake = ClientHandshake(key_hash, session_id, tls_leaf_der, random, alpn=alpn,
                                version=version, proxy=proxy)
    reply = handshake.receive(await stream.read_handshake())
    await stream.write_handshake(reply)
    assert handshake.connected is not None
    start_encryption(stream.framing, session_id, handshake.block_secret, server=False)
    return handshake.connected
