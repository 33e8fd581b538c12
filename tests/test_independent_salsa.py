"""The verifier's own XSalsa20-Poly1305 (smpref.independent.salsa) seals and opens exactly as
libsodium does: its key stream computes all blocks at once, one 64-bit lane per block, so a
fault between lanes or in the block counter shows only past the first block. Hence lengths
drawn uniformly (Hypothesis's own binary strategy rarely passes 32 bytes), the block edges
one by one, and a box of 65,537 blocks, where the counter's low 16 bits have all turned."""

from __future__ import annotations

import nacl.bindings
import pytest
from hypothesis import given
from hypothesis import strategies as st

from smpref.independent import salsa

keys = st.binary(min_size=32, max_size=32)
nonces = st.binary(min_size=24, max_size=24)
#: any length up to about 20 blocks, each equally likely
messages = st.integers(0, 1300).flatmap(lambda n: st.binary(min_size=n, max_size=n))


@given(keys, nonces, messages)
def test_secretbox_is_libsodiums(key: bytes, nonce: bytes, message: bytes) -> None:
    boxed = salsa.secretbox(key, nonce, message)
    assert boxed == nacl.bindings.crypto_secretbox(message, nonce, key)
    assert salsa.secretbox_open(key, nonce, boxed) == message


@pytest.mark.parametrize("length", [0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129])
def test_every_block_edge_is_libsodiums(length: int) -> None:
    """The stream starts 32 bytes in (the Poly1305 key), so these cut each block's edges."""
    key, nonce = bytes(range(1, 33)), bytes(range(200, 224))
    message = bytes((7 * i + 3) % 256 for i in range(length))
    assert salsa.secretbox(key, nonce, message) == nacl.bindings.crypto_secretbox(
        message, nonce, key)


@given(keys, nonces, st.integers(min_value=0, max_value=16 + 3 * 64 + 23), st.integers(0, 7))
def test_a_changed_bit_does_not_open(key: bytes, nonce: bytes, index: int, bit: int) -> None:
    boxed = bytearray(salsa.secretbox(key, nonce, bytes(3 * 64 + 24)))
    boxed[index] ^= 1 << bit
    assert salsa.secretbox_open(key, nonce, bytes(boxed)) is None


def test_a_long_stream_is_libsodiums_in_every_block() -> None:
    """Zeros sealed are the key stream itself: a link blob's 16 KB, then 4 MB (65,537 blocks,
    past every value of the counter's low 16 bits)."""
    key, nonce = bytes(range(32)), bytes(range(100, 124))
    for size in (16_384 + 17, 64 * (1 << 16) + 64 - 32):
        message = bytes(size)
        assert salsa.secretbox(key, nonce, message) == nacl.bindings.crypto_secretbox(
            message, nonce, key), size
    assert salsa.xsalsa20_stream(key, nonce, 0) == b""
    assert salsa.xsalsa20_stream(key, nonce, -64) == b""


@given(keys, keys)
def test_hsalsa20_of_a_shared_secret_is_crypto_box_beforenm(secret: bytes, other: bytes) -> None:
    """(HSalsa20 of any other block is the first step of every box above.)"""
    public = nacl.bindings.crypto_scalarmult_base(other)
    shared = nacl.bindings.crypto_scalarmult(secret, public)
    assert salsa.hsalsa20(shared, bytes(16)) == nacl.bindings.crypto_box_beforenm(public, secret)
