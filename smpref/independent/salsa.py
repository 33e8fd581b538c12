"""Salsa20, HSalsa20 and XSalsa20-Poly1305 written from Bernstein's definitions.

Only the verifier uses this (smpref's generator uses libsodium through PyNaCl), so that the two
paths share no code. Poly1305 itself comes from ``cryptography``. Pure Python, so still tens
of times slower than libsodium on short boxes: :func:`box_open` hands the bulk to libsodium
where the state machines open a box at every step.
"""

from __future__ import annotations

import struct

from cryptography.hazmat.primitives.poly1305 import Poly1305
from nacl.bindings import crypto_secretbox_open
from nacl.exceptions import CryptoError

_SIGMA = struct.unpack("<4I", b"expand 32-byte k")
_MASK = 0xFFFFFFFF


def _rounds(state: list[int], m: int = _MASK) -> list[int]:  # noqa: PLR0915 (written out)
    """The 20 rounds: a column round then a row round, ten times.

    Each word may hold many blocks' words side by side, one 64-bit lane per block, with ``m``
    masking every lane to 32 bits (:func:`salsa20_stream`): a sum of two words has 33 bits
    and a word shifted left 18 bits has 50, so no lane reaches the next, and the bits that a
    right shift brings down from the next lane land above bit 31, where ``m`` cuts them off.

    Written out on sixteen local words, the quarter-rounds in Bernstein's order: about twice
    as fast in CPython as indexing a list through a rotation function."""
    x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15 = state
    for _ in range(10):
        # the column round: quarter-rounds of (0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6),
        # (15, 3, 7, 11); each is b ^= (a + d) <<< 7, c ^= (b + a) <<< 9, d ^= (c + b) <<< 13,
        # a ^= (d + c) <<< 18
        t = (x0 + x12) & m
        x4 ^= ((t << 7) | (t >> 25)) & m
        t = (x4 + x0) & m
        x8 ^= ((t << 9) | (t >> 23)) & m
        t = (x8 + x4) & m
        x12 ^= ((t << 13) | (t >> 19)) & m
        t = (x12 + x8) & m
        x0 ^= ((t << 18) | (t >> 14)) & m
        t = (x5 + x1) & m
        x9 ^= ((t << 7) | (t >> 25)) & m
        t = (x9 + x5) & m
        x13 ^= ((t << 9) | (t >> 23)) & m
        t = (x13 + x9) & m
        x1 ^= ((t << 13) | (t >> 19)) & m
        t = (x1 + x13) & m
        x5 ^= ((t << 18) | (t >> 14)) & m
        t = (x10 + x6) & m
        x14 ^= ((t << 7) | (t >> 25)) & m
        t = (x14 + x10) & m
        x2 ^= ((t << 9) | (t >> 23)) & m
        t = (x2 + x14) & m
        x6 ^= ((t << 13) | (t >> 19)) & m
        t = (x6 + x2) & m
        x10 ^= ((t << 18) | (t >> 14)) & m
        t = (x15 + x11) & m
        x3 ^= ((t << 7) | (t >> 25)) & m
        t = (x3 + x15) & m
        x7 ^= ((t << 9) | (t >> 23)) & m
        t = (x7 + x3) & m
        x11 ^= ((t << 13) | (t >> 19)) & m
        t = (x11 + x7) & m
        x15 ^= ((t << 18) | (t >> 14)) & m
        # the row round: (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14)
        t = (x0 + x3) & m
        x1 ^= ((t << 7) | (t >> 25)) & m
        t = (x1 + x0) & m
        x2 ^= ((t << 9) | (t >> 23)) & m
        t = (x2 + x1) & m
        x3 ^= ((t << 13) | (t >> 19)) & m
        t = (x3 + x2) & m
        x0 ^= ((t << 18) | (t >> 14)) & m
        t = (x5 + x4) & m
        x6 ^= ((t << 7) | (t >> 25)) & m
        t = (x6 + x5) & m
        x7 ^= ((t << 9) | (t >> 23)) & m
        t = (x7 + x6) & m
        x4 ^= ((t << 13) | (t >> 19)) & m
        t = (x4 + x7) & m
        x5 ^= ((t << 18) | (t >> 14)) & m
        t = (x10 + x9) & m
        x11 ^= ((t << 7) | (t >> 25)) & m
        t = (x11 + x10) & m
        x8 ^= ((t << 9) | (t >> 23)) & m
        t = (x8 + x11) & m
        x9 ^= ((t << 13) | (t >> 19)) & m
        t = (x9 + x8) & m
        x10 ^= ((t << 18) | (t >> 14)) & m
        t = (x15 + x14) & m
        x12 ^= ((t << 7) | (t >> 25)) & m
        t = (x12 + x15) & m
        x13 ^= ((t << 9) | (t >> 23)) & m
        t = (x13 + x12) & m
        x14 ^= ((t << 13) | (t >> 19)) & m
        t = (x14 + x13) & m
        x15 ^= ((t << 18) | (t >> 14)) & m
    return [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15]


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
    """The first ``length`` bytes of the Salsa20 key stream: block ``i`` is the 20 rounds of
    the state for (key, nonce, counter ``i``), plus that state, as 16 little-endian words.

    Every block is computed at once: word ``j`` of all the states is one integer holding word
    ``j`` of block ``i`` in its lane ``i`` (bits 64i to 64i+31), and :func:`_rounds` runs on
    those integers with a mask of every lane. Only the counter differs between blocks."""
    if length <= 0:
        return b""
    blocks = -(-length // 64)
    lane_ones = int.from_bytes((b"\x01" + bytes(7)) * blocks, "little")
    mask = _MASK * lane_ones

    def lanes(words: list[int]) -> int:
        return int.from_bytes(b"".join(struct.pack("<Q", w) for w in words), "little")

    state = [w * lane_ones for w in _state(key, nonce8 + bytes(8))]
    state[8] = lanes([i & _MASK for i in range(blocks)])  # the counter, low word
    state[9] = lanes([i >> 32 for i in range(blocks)])  # and high word
    mixed = _rounds(state, mask)
    out = bytearray(64 * blocks)
    for j, (a, b) in enumerate(zip(mixed, state, strict=True)):
        word = ((a + b) & mask).to_bytes(8 * blocks, "little")
        for k in range(4):  # byte k of word j of every block
            out[4 * j + k::64] = word[k::8]
    return bytes(out[:length])


def xsalsa20_stream(key: bytes, nonce24: bytes, length: int) -> bytes:
    return salsa20_stream(hsalsa20(key, nonce24[:16]), nonce24[16:], length)


def _xor(data: bytes, stream: bytes) -> bytes:
    """``data`` XOR ``stream`` (as long as ``data``), byte by byte, done as one big integer."""
    n = len(data)
    return (int.from_bytes(data, "little") ^ int.from_bytes(stream[:n], "little")).to_bytes(
        n, "little")


def secretbox(key: bytes, nonce24: bytes, message: bytes) -> bytes:
    """crypto_secretbox_xsalsa20poly1305, ``tag || ciphertext``."""
    stream = xsalsa20_stream(key, nonce24, 32 + len(message))
    ciphertext = _xor(message, stream[32:])
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
    return _xor(ciphertext, stream[32:])


def box_open(key: bytes, nonce24: bytes, boxed: bytes, *, pure: bool = False) -> bytes | None:
    """XSalsa20-Poly1305 opened with a key the caller derived: :func:`secretbox_open` when
    ``pure``, else libsodium's secretbox through PyNaCl's bindings (not smpref's crypto), tens
    of times faster for what the state machines open at every step. None when the tag
    does not verify."""
    if pure:
        return secretbox_open(key, nonce24, boxed)
    try:
        return crypto_secretbox_open(boxed, nonce24, key)
    except CryptoError:
        return None
