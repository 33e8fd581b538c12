"""The crypto wrappers against independent paths and published known answers."""

from __future__ import annotations

import hashlib
import hmac

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given
from hypothesis import strategies as st
from nacl.public import Box, PrivateKey, PublicKey, SealedBox
from reqs import req

from smpref.crypto import primitives as p
from smpref.crypto.link_crypto import link_data_key, open_part, padded_size, seal_part
from smpref.independent.link_data import open_part as independent_open_part

KEY32 = st.binary(min_size=32, max_size=32)


def rfc5869_sha512(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    """HKDF written from RFC 5869 with hmac (independent of `cryptography`)."""
    prk = hmac.digest(salt or bytes(64), ikm, "sha512")
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac.digest(prk, block + info + bytes([counter]), "sha512")
        out += block
        counter += 1
    return out[:length]


@given(st.binary(max_size=64), KEY32, st.binary(max_size=40), st.integers(1, 100))
def test_hkdf_matches_rfc5869_by_definition(salt: bytes, ikm: bytes, info: bytes, n: int) -> None:
    assert p.hkdf_sha512(salt, ikm, info, n) == rfc5869_sha512(salt, ikm, info, n)
    prk = p.hkdf_extract_sha512(salt, ikm)
    assert p.hkdf_expand_sha512(prk, info, n) == rfc5869_sha512(salt, ikm, info, n)


def test_rfc7748_and_rfc8032_known_answers() -> None:
    a = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    b_pub = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    assert p.x25519_public(a).hex() == (
        "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
    assert p.x25519(a, b_pub).hex() == (
        "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    assert p.ed25519_public(seed).hex() == (
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    assert p.ed25519_sign(seed, b"").hex() == (
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc6"
        "1e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")


@given(KEY32, KEY32)
def test_hsalsa20_of_the_shared_secret_is_crypto_box_beforenm(sk: bytes, other: bytes) -> None:
    pk = p.x25519_public(other)
    shared = X25519PrivateKey.from_private_bytes(sk).exchange(
        X25519PublicKey.from_public_bytes(pk))
    assert p.hsalsa20(shared) == p.box_key(pk, sk)


@req("LINK-4")
@given(KEY32, KEY32, st.binary(min_size=24, max_size=24), st.binary(max_size=300))
def test_prekeyed_secretbox_with_a_raw_dh_secret_is_nacl_crypto_box(
        sk: bytes, other: bytes, nonce: bytes, message: bytes) -> None:
    """LINK-4: sbEncrypt keyed with the raw X25519 secret equals NaCl crypto_box."""
    pk = p.x25519_public(other)
    raw = p.x25519(sk, pk)
    expected = Box(PrivateKey(sk), PublicKey(pk)).encrypt(message, nonce).ciphertext
    assert p.sb_encrypt(raw, nonce, message) == expected


@req("QENC-1", "QENC-4")
@given(KEY32, KEY32, st.binary(max_size=100))
def test_sealed_box_opens_with_pynacl_sealedbox(sk: bytes, eph: bytes, message: bytes) -> None:
    sealed = p.sealed_box(p.x25519_public(sk), message, eph)
    assert SealedBox(PrivateKey(sk)).decrypt(sealed) == message
    assert p.sealed_box_open(sk, sealed) == message


@req("QENC-2")
@given(KEY32, st.binary(max_size=40), st.binary(max_size=200))
def test_aead_is_rfc8439_chacha20poly1305(key: bytes, aad: bytes, message: bytes) -> None:
    nonce = bytes(12)
    sealed = p.aead_encrypt(key, nonce, aad, message)
    assert sealed == ChaCha20Poly1305(key).encrypt(nonce, message, aad)
    assert p.aead_decrypt(key, nonce, aad, sealed) == message


@req("LINK-3", "LINK-4")
def test_link_data_key_and_parts() -> None:
    pk = hashlib.sha256(b"link").digest()
    assert link_data_key(pk) == rfc5869_sha512(b"", pk, b"SimpleXLinkData", 32)
    nonce = bytes(range(24))  # not a palindrome: a reversed or shuffled nonce shows
    sealed = seal_part(link_data_key(pk), nonce, b"hello")
    assert len(sealed) == 24 + 16 + padded_size(5) == 24 + 16 + 256
    assert sealed[:24] == nonce
    # the reader written again from LINK-3/LINK-4 (smpref.independent) opens what smpref seals,
    # so a mistake shared by smpref's sealing and opening sides does not pass
    assert independent_open_part(pk, sealed, pure=True) == b"hello"
    assert open_part(link_data_key(pk), sealed) == b"hello"
    for broken in (sealed[:-1], sealed[:30], sealed[:24] + bytes([sealed[24] ^ 1]) + sealed[25:]):
        try:
            open_part(link_data_key(pk), broken)
        except p.CryptoError:
            continue
        raise AssertionError("a broken part opened")
    assert padded_size(254) == 256 and padded_size(255) == 512


def test_x25519_public_matches_cryptography() -> None:
    sk = hashlib.sha256(b"x").digest()
    expected = X25519PrivateKey.from_private_bytes(sk).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)
    assert p.x25519_public(sk) == expected
