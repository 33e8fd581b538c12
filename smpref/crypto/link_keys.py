"""Seed 004 link keys: the link carries X25519 private key ``pk``; ``k`` is its public key.

Seed 004 names the pair ``(k, pk)`` with ``pk`` the *private* key placed in the link and ``k``
the public key; smpref keeps those names (spec/links.md, LINK-1..LINK-3).
"""

from __future__ import annotations

from smpref.crypto.primitives import sha256, x25519_public

LINK_KEY_SIZE = 32


def link_public_key(pk: bytes) -> bytes:
    """``k``: the raw X25519 public key of the link's private key ``pk`` (LINK-1)."""
    return x25519_public(pk)


def link_id(k: bytes) -> bytes:
    """``sha256(k)``: the link ID the owner uses in NEW and LSET (LINK-2)."""
    return sha256(k)
