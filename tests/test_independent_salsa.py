"""The verifier's own XSalsa20-Poly1305 (smpref.independent.salsa) seals and opens exactly as
libsodium does, at every length: its key stream computes all blocks at once, one 64-bit lane
per block, so a fault between lanes shows up only past the first block."""

from __future__ import annotations

import nacl.bindings
from hypothesis import given
from hypothesis import strategies as st

from smpref.independent import salsa

keys = st.binary(min_size=32, max_size=32)
nonces = st.binary(min_size=24, max_size=24)


@given(keys, nonces, st.binary(max_size=1300))
def test_secretbox_is_libsodiums(key: bytes, nonce: bytes, message: bytes) -> None:
    boxed = salsa.secretbox(key, nonce, message)
    assert boxed == nacl.bindings.crypto_secretbox(message, nonce, key)
    assert salsa.secretbox_open(key, nonce, boxed) == message


@given(keys, nonces, st.integers(min_value=0, max_value=16 + 3 * 64 + 23), st.integers(0, 7))
def test_a_changed_bit_does_not_open(key: bytes, nonce: bytes, index: int, bit: int) -> None:
    boxed = bytearray(salsa.secretbox(key, nonce, bytes(3 * 64 + 24)))
    boxed[index] ^= 1 << bit
    assert salsa.secretbox_open(key, nonce, bytes(boxed)) is None


def test_a_long_stream_is_libsodiums_in_every_block() -> None:
    """A link blob's size: 16 KB of zeros sealed is the key stream itself, block by block."""
    key, nonce = bytes(range(32)), bytes(range(100, 124))
    message = bytes(16_384 + 17)
    assert salsa.secretbox(key, nonce, message) == nacl.bindings.crypto_secretbox(
        message, nonce, key)
    assert salsa.xsalsa20_stream(key, nonce, 0) == b""


@given(keys, keys)
def test_hsalsa20_of_a_shared_secret_is_crypto_box_beforenm(secret: bytes, other: bytes) -> None:
    """(HSalsa20 of any other block is the first step of every box above.)"""
    public = nacl.bindings.crypto_scalarmult_base(other)
    shared = nacl.bindings.crypto_scalarmult(secret, public)
    assert salsa.hsalsa20(shared, bytes(16)) == nacl.bindings.crypto_box_beforenm(public, secret)
