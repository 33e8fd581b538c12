"""Block framing of one connection: padded or encrypted 16384-byte blocks (TRANS-2, TRANS-10).

:class:`Framing` is sans-IO: it turns transmissions into blocks and blocks into
transmissions, advancing the block encryption chains once per block.
:mod:`smpref.transport.streams` moves the blocks over asyncio streams.
"""

from __future__ import annotations

from typing import Final

from smpref.crypto.block_chain import BlockChain, chain_keys
from smpref.errors import BlockError
from smpref.wire.blocks import BLOCK_PAYLOAD, BLOCK_SIZE, batch_contents, decode_batch, pad, unpad

#: room for transmissions in an encrypted block: 16 tag, 2 pad length, 1 count (TRANS-3;
#: simplexmq Protocol.hs:2154-2155)
ENCRYPTED_PAYLOAD: Final = BLOCK_SIZE - 19



class Framing:
    """Both directions of one connection's block codec."""

    def __init__(self) -> None:
        self.send_chain: BlockChain | None = None
        self.recv_chain: BlockChain | None = None

    @property
    def encrypted(self) -> bool:
        return self.send_chain is not None

    def encrypt(self, session_id: bytes, shared_secret: bytes, *, server: bool) -> None:
        """Switch to encrypted blocks (TRANS-10): the server sends with ck1, the client ck2."""
        ck1, ck2 = chain_keys(session_id, shared_secret)
        send, recv = (ck1, ck2) if server else (ck2, ck1)
        self.send_chain, self.recv_chain = BlockChain(send), BlockChain(recv)

    @property
    def payload(self) -> int:
        return ENCRYPTED_PAYLOAD if self.encrypted else BLOCK_PAYLOAD

    def encode(self, transmissions: list[bytes]) -> list[bytes]:
        """Blocks carrying the transmissions, in order, as few as fit."""
        contents = batch_contents(transmissions, self.payload)
        if self.send_chain is None:
            return [pad(c) for c in contents]
        chain = self.send_chain
        return [chain.encrypt(c) for c in contents]

    def open(self, block: bytes) -> bytes:
        """The content of one received block (decrypted and unpadded).

        Raises:
            BlockError: the block has the wrong size, does not decrypt or does not unpad.
        """
        if len(block) != BLOCK_SIZE:
            raise BlockError(f"a block is {BLOCK_SIZE} bytes, got {len(block)}")
        return self.recv_chain.decrypt(block) if self.recv_chain else unpad(block)

    def decode(self, block: bytes) -> list[bytes]:
        """The transmissions of one received block.

        Raises:
            BlockError: the block does not decrypt, or its content is not a valid batch.
        """
        return decode_batch(self.open(block))
