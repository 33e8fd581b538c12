"""Salsa20, HSalsa20 and XSalsa20-Poly1305 written from Bernstein's definitions.

Only the verifier uses this (smpref's generator uses libsodium through PyNaCl), so that the two
paths share no code. Poly1305 itself comes from ``cryptography``. Slow and fine for vectors;
:func:`box_open` hands the bulk to libsodium where the state machines need speed.
"""

from __future__ import annotations

import struct

from cryptography.hazmat.primitives.poly1305 import Poly1305
from nacl.bindings import crypto_secretbox_open
from nacl.exceptions import CryptoError

_SIGMA = struct.unpack("<4I", b"expand 32-byte k")
_MASK = 0xFFFFFFFF


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) & _MASK) | (value >> (32 - shift))


def _rounds(state: list[int]) -> list[int]:
    x = list(state)
    for _ in range(10):  # 20 rounds: a column round then a row round, ten times
        for a, b, c, d in ((0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6), (15, 3, 7, 11),
                           (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14)):
            x[b] ^= _rotl((x[a] + x[d]) & _MASK, 7)
            x[c] ^= _rotl((x[b] + x[a]) & _MASK, 9)
            x[d] ^= _rotl((x[c] + x[b]) & _MASK, 13)
            x[a] ^= _rotl((x[d] + x[c]) & _MASK, 18)
    return x


def _state(key: bytes, block: bytes) -> list[int]:
    k = struct.unpack("<8I", key)
    n = struct.unpack("<4I", block)
    return [_SIGMA[0], k[0], k[1], k[2], k[3], _SIGMA[1], n[0], n[1], n[2], n[3],
            _SIGMA[2], k[4], k[5], k[6], k[7], _SIGMA[3]]


def hsalsa20(key: bytes, block: bytes) -> bytes:
    """HSalsa20: 20 rounds, no final addition, words 0, 5, 10, 15, 6, 7, 8, 9."""
    x = _rounds(_state(key, block))
    return struct.pack("<8I", x[0], x[5], x[10], x[15], x[6], x[7], x[8], x[9])


def salsa20_stream(key: bytes, nonce8: bytes, length: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < length:
        state = _state(key, nonce8 + struct.pack("<Q", counter))
        mixed = _rounds(state)
        out += struct.pack("<16I", *((a + b) & _MASK for a, b in zip(mixed, state, strict=True)))
        counter += 1
    return bytes(out[:length])


def xsalsa20_stream(key: bytes, nonce24: bytes, length: int) -> bytes:
    return salsa20_stream(hsalsa20(key, nonce24[:16]), nonce24[16:], length)


def secretbox(key: bytes, nonce24: bytes, message: bytes) -> bytes:
    """crypto_secretbox_xsalsa20poly1305, ``tag || ciphertext``."""
    stream = xsalsa20_stream(key, nonce24, 32 + len(message))
    ciphertext = bytes(m ^ s for m, s in zip(message, stream[32:], strict=True))
    return Poly1305.generate_tag(stream[:32], ciphertext) + ciphertext


def secretbox_open(key: bytes, nonce24: bytes, boxed: bytes) -> bytes | None:
    """The message, or None when the tag does not verify."""
    if len(boxed) < 16:
        return None
    tag, ciphertext = boxed[:16], boxed[16:]
    stream = xsalsa20_stream(key, nonce24, 32 + len(ciphertext))
    try:
        Poly1305.verify_tag(stream[:32], ciphertext, tag)
    except Exception:  # cryptography raises InvalidSignature
        return None
    return bytes(c ^ s for c, s in zip(ciphertext, stream[32:], strict=True))


def box_open(key: bytes, nonce24: bytes, boxed: bytes, *, pure: bool = False) -> bytes | None:
    """XSalsa20-Poly1305 opened with a key the caller derived: :func:`secretbox_open` when
    ``pure``, else libsodium's secretbox through PyNaCl's bindings (not smpref's crypto), a
    hundred times faster for what the state machines open at every step. None when the tag
    does not verify."""
    if pure:
        return secretbox_open(key, nonce24, boxed)
    try:
        return crypto_secretbox_open(boxed, nonce24, key)
    except CryptoError:
        return None
