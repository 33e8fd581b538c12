"""The handshake messages and the signed session key (TRANS-1, TRANS-9)."""

from __future__ import annotations

import base64
from importlib import resources

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from reqs import req

from smpref.crypto.primitives import ed25519_public, x25519_public
from smpref.crypto.session_keys import key_hash, signed_session_key, verify_signed_session_key
from smpref.errors import CryptoError, WireError
from smpref.wire.hellos import ClientHello, ServerHello


@req("TRANS-1")
def test_key_hash_of_deployed_test_ca() -> None:
    pem = (resources.files("smpref.vectors") / "fixtures" / "simplexmq-test-ca.crt").read_bytes()
    der = x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
    # deployed's testKeyHash (simplexmq tests/SMPClient.hs:83)
    assert base64.urlsafe_b64encode(key_hash(der)).decode() == (
        "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI=")


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


def _ed448_chain() -> tuple[list[bytes], object]:
    """An Ed448 identity and leaf, as ``smp-server init --sign-algorithm ED448`` makes them
    (TRANS-13)."""
    import datetime

    from cryptography.hazmat.primitives.asymmetric import ed448
    from cryptography.x509.oid import NameOID

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = ed448.Ed448PrivateKey.generate(), ed448.Ed448PrivateKey.generate()

    def build(subject: str, key: object, ca: bool) -> x509.Certificate:
        return (x509.CertificateBuilder().subject_name(name(subject))
                .issuer_name(name("SMP server CA")).public_key(key)  # type: ignore[arg-type]
                .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                .sign(ca_key, None))
    ca = build("SMP server CA", ca_key.public_key(), True)
    leaf = build("server", leaf_key.public_key(), False)
    return [leaf.public_bytes(Encoding.DER), ca.public_bytes(Encoding.DER)], leaf_key


@req("TRANS-1", "TRANS-9")
def test_ed448_servers_chain_and_signed_session_key_are_accepted() -> None:
    """Deployed servers may sign with Ed448 (TRANS-13): the signed key is then 173 bytes
    (TRANS-9)."""
    import hashlib

    from smpref.errors import IdentityError
    from smpref.transport.tls import check_identity
    from smpref.wire.keys import KeyAlgorithm, PublicKey

    chain, leaf_key = _ed448_chain()
    leaf_public = check_identity(tuple(chain), chain[0], hashlib.sha256(chain[1]).digest())
    session_public = x25519_public(bytes(range(32)))
    inner = bytes.fromhex("302c") + PublicKey(KeyAlgorithm.X25519, session_public).der
    signature = leaf_key.sign(inner)  # type: ignore[attr-defined]
    der = (bytes.fromhex("3081aa") + inner + bytes.fromhex("300506032b6571")
           + bytes.fromhex("037300") + signature)
    assert len(der) == 173
    assert verify_signed_session_key(der, leaf_public) == session_public
    tampered = der[:-1] + bytes([der[-1] ^ 1])
    with pytest.raises(CryptoError):
        verify_signed_session_key(tampered, leaf_public)
    with pytest.raises(IdentityError, match="keyHash"):
        check_identity(tuple(chain), chain[0], bytes(32))
    with pytest.raises(IdentityError, match="TLS presented"):
        check_identity(tuple(chain), chain[1], hashlib.sha256(chain[1]).digest())
    with pytest.raises(IdentityError, match="not signed"):
        other, _ = _ed448_chain()
        check_identity((chain[0], other[1]), chain[0], hashlib.sha256(other[1]).digest())


@req("DEP-15", "TRANS-10")
@pytest.mark.parametrize(("offered", "chosen", "flag"), [((6, 18), 18, True),
                                                        ((6, 13), 10, False),
                                                        ((6, 9), 9, False)])
def test_a_proxy_connects_to_a_relay_unencrypted_and_keeps_an_old_one_at_10(
        tmp_path: object, offered: tuple[int, int], chosen: int, flag: bool) -> None:
    """Transport.hs:796-812, 865-873: a proxy's hello carries its key and, from 14, the proxy
    flag; its blocks are never encrypted; a relay below 14 is kept at 10, where none are."""
    from pathlib import Path

    from smpref.transport.credentials import load_or_create
    from smpref.transport.handshake import ClientHandshake, ServerHandshake
    from smpref.transport.versions import SMP_ALPN

    credentials = load_or_create(Path(str(tmp_path)) / "credentials", "127.0.0.1")
    session = b"s" * 32
    server = ServerHandshake(credentials, session, lambda n: b"\x07" * n, offered)
    client = ClientHandshake(credentials.key_hash, session, None, lambda n: b"\x09" * n,
                             alpn=SMP_ALPN, proxy=True)
    hello = ClientHello.decode(client.receive(server.hello()))
    assert (hello.version, hello.proxy_server, hello.client_key is not None) == \
        (chosen, flag, True)
    assert client.block_secret is None
    accepted = server.receive(hello.encode())
    assert accepted.block_secret is None and accepted.client_key == hello.client_key
    assert client.connected is not None and client.connected.hello_key
