"""The handshake messages and the signed session key (TRANS-1, TRANS-9)."""

from __future__ import annotations

import base64
from importlib import resources

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from reqs import req

from smpref.crypto.primitives import CryptoError, ed25519_public, x25519_public
from smpref.errors import WireError
from smpref.wire.handshake import (
    ClientHello,
    ServerHello,
    key_hash,
    signed_session_key,
    verify_signed_session_key,
)


@req("TRANS-1")
def test_key_hash_of_deployed_test_ca() -> None:
    pem = (resources.files("smpref.vectors") / "fixtures" / "simplexmq-test-ca.crt").read_bytes()
    der = x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
    assert base64.urlsafe_b64encode(key_hash(der)).decode() == (
        "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=")  # smp-wire 2.3: deployed testKeyHash


@req("TRANS-9")
def test_signed_session_key_layout_and_verification() -> None:
    seed, session = b"t" * 32, x25519_public(b"s" * 32)
    der = signed_session_key(seed, session)
    assert len(der) == 122 and der[:4] == bytes.fromhex("3078302c")
    assert verify_signed_session_key(der, ed25519_public(seed)) == session
    with pytest.raises(CryptoError):
        verify_signed_session_key(der, ed25519_public(b"u" * 32))
    with pytest.raises(CryptoError):
        verify_signed_session_key(der[:-1] + b"\x00", ed25519_public(seed))


@req("TRANS-9", "DIV-23")
def test_hellos_round_trip_and_are_strict() -> None:
    hello = ServerHello(6, 18, b"i" * 32, (b"leaf", b"ca"), b"k" * 122)
    assert ServerHello.decode(hello.encode()) == hello
    assert ServerHello.decode(ServerHello(6, 6, b"i").encode()) == ServerHello(6, 6, b"i")
    for version in (6, 11, 14, 18):
        client = ClientHello(version, b"h" * 32, x25519_public(b"c" * 32) if version >= 7
                             else None, proxy_server=False)
        assert ClientHello.decode(client.encode()) == client
    with pytest.raises(WireError):
        ClientHello.decode(ClientHello(18, b"h" * 32).encode() + b"x")
    with pytest.raises(WireError):
        ServerHello.decode(b"\x00\x12\x00\x06\x00")  # min above max
