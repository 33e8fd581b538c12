"""Transport block encryption with forward secrecy (TRANS-10; simplexmq Crypto.hs:1452-1464).

``(ck1, ck2) = split32(HKDF-SHA512(salt = sessionId, ikm = X25519(client key, server key),
"SimpleXSbChainInit", 64))``; the server sends with ``ck1`` and receives with ``ck2`` (the
client the other way round). Per block: ``(next ck, sbKey, nonce) = split(HKDF-SHA512("", ck,
"SimpleXSbChain", 88), 32, 32, 24)`` and the block is ``sbEncrypt(sbKey, nonce,
pad(content, 16368))``: a 16-byte tag and 16368 bytes, 16384 in all.
"""

from __future__ import annotations

from dataclasses import dataclass

from smpref.crypto.primitives import hkdf_sha512, sb_decrypt, sb_encrypt
from smpref.errors import BlockError, CryptoError
from smpref.wire.blocks import BLOCK_SIZE, pad, unpad

CHAIN_INIT_INFO = b"SimpleXSbChainInit"
CHAIN_INFO = b"SimpleXSbChain"
PADDED_CONTENT = BLOCK_SIZE - 16


def chain_keys(session_id: bytes, shared_secret: bytes) -> tuple[bytes, bytes]:
    """(ck1, ck2): the server's sending chain and the server's receiving chain."""
    okm = hkdf_sha512(session_id, shared_secret, CHAIN_INIT_INFO, 64)
    return okm[:32], okm[32:]


def chain_step(chain_key: bytes) -> tuple[bytes, bytes, bytes]:
    """(next chain key, secretbox key, 24-byte nonce) for one block."""
    okm = hkdf_sha512(b"", chain_key, CHAIN_INFO, 88)
    return okm[:32], okm[32:64], okm[64:88]


@dataclass
class BlockChain:
    """One direction of a connection's block encryption; advances one step per block."""

    chain_key: bytes

    def encrypt(self, content: bytes) -> bytes:
        self.chain_key, key, nonce = chain_step(self.chain_key)
        return sb_encrypt(key, nonce, pad(content, PADDED_CONTENT))

    def decrypt(self, block: bytes) -> bytes:
        """The content of an encrypted block. The chain advances whether it decrypts or not,
        as deployed's does (Transport.hs tGetBlock): a connection that goes on after a bad
        block (DEP-9) reads the next one with the next key.

        Raises:
            BlockError: wrong size, a tag that does not verify, or bad padding (ERR BLOCK).
        """
        if len(block) != BLOCK_SIZE:
            raise BlockError(f"an encrypted block is {BLOCK_SIZE} bytes, got {len(block)}")
        self.chain_key, key, nonce = chain_step(self.chain_key)
        try:
            return unpad(sb_decrypt(key, nonce, block))
        except CryptoError:
            raise BlockError("block does not decrypt (tampered, reordered or lost)") from None
