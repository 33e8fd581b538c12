"""Deployed short-link data (DEP-5; simplexmq Crypto/ShortLink.hs:41-125):
smpref.crypto.deployed_links seals what it opens, and refuses what it must."""

from __future__ import annotations

import pytest

from smpref.crypto import deployed_links as links
from smpref.crypto.primitives import ed25519_public
from smpref.errors import CryptoError


def test_a_part_opens_with_its_key_and_root_and_not_otherwise() -> None:
    root, other = bytes(range(32)), bytes(range(1, 33))
    key = links.link_key(b"fixed data")
    link_id, sb_key = links.contact_link_keys(key)
    assert len(link_id) == 24 and len(sb_key) == 32
    assert links.invitation_sb_key(key) != sb_key  # another info string, another key
    sealed = links.seal_part(sb_key, bytes(24), links.signed(root, b"user data"),
                             links.USER_PADDED)
    assert len(sealed) == 24 + 16 + links.USER_PADDED == 13824
    assert links.open_part(sb_key, sealed, ed25519_public(root)) == b"user data"
    with pytest.raises(CryptoError, match="signature"):
        links.open_part(sb_key, sealed, ed25519_public(other))
    with pytest.raises(CryptoError, match="does not open"):
        links.open_part(links.invitation_sb_key(key), sealed, ed25519_public(root))
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(CryptoError):
        links.open_part(sb_key, tampered, ed25519_public(root))
    with pytest.raises(CryptoError, match="do not fit"):
        links.seal_part(sb_key, bytes(24), b"x" * links.FIXED_PADDED, links.FIXED_PADDED)


def test_the_derivations_agree_with_an_independent_computation() -> None:
    """For deployed's test LinkKey "0123456789abcdef0123456789abcdef"
    (tests/AgentTests/ConnectionRequestTests.hs), the contact link ID and key and the
    invitation key as computed separately from ShortLink.hs by another reader (deployed's
    suite publishes no KDF outputs; smpref's notes record these)."""
    key = b"0123456789abcdef0123456789abcdef"
    link_id, sb_key = links.contact_link_keys(key)
    assert link_id.hex() == "7bb6cac6ddda05661de73a9974926c4d3d30f3dd36e0e365"
    assert sb_key.hex() == "92f91f61f480698b6edcbc6277359f463f5810065e47253f72657bb8847e0ebe"
    assert links.invitation_sb_key(key).hex() == \
        "7414e908a26d11b2e23016afa771e45d62bcdd72a14237958069e33f9c2c2319"
