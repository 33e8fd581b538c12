"""The handshake.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="handshake",
    algorithm="SMP handshake",
    header=("The server identity keyHash, SHA-256 of the identity certificate's DER (TRANS-1), "
            "with deployed SMP's own test CA as a known answer; the server's X25519 session key "
            "signed with its Ed25519 or Ed448 TLS key in the deployed DER layout; and the "
            "server and client hello messages (TRANS-9) at the versions where they change "
            "(6, 7, 11, 14, 16, 18), the server's with the key hash a client computes from "
            "its chain from version 7. tls-unique (TRANS-8) is a property of a live TLS "
            "session and has no offline vector.",),
    test_fields={"certificate": "hex", "keyHash": "hex", "keyHashBase64url": "string",
                 "tlsPublicKey": "hex", "sessionKey": "hex", "signedKey": "hex",
                 "minVersion": "int", "maxVersion": "int", "version": "int",
                 "sessionId": "hex", "certificates": "strings", "clientKey": "hex",
                 "proxyServer": "bool", "encoded": "hex"},
    optional=frozenset({"certificate", "keyHash", "keyHashBase64url", "tlsPublicKey",
                        "sessionKey", "signedKey", "minVersion", "maxVersion", "version",
                        "sessionId", "certificates", "clientKey", "proxyServer", "encoded"}),
    notes={"Deployed": "deployed SMP's test CA certificate (tests/fixtures/ca.crt) and keyHash",
           "Ed448": "an Ed448 chain and session key signature, as smp-server init "
                    "--sign-algorithm ED448 makes them (the default is Ed25519); a client "
                    "must accept both (CLNT-29)",
           "WrongKey": "signed by another TLS key", "Tampered": "a signature byte was changed"},
)


def certificates(random: SeededRandom, algorithm: str = "ED25519"
                  ) -> tuple[bytes, bytes, Any]:
    """(leaf DER, identity DER, leaf private key): a deterministic chain, both keys Ed25519 or
    both Ed448 (as ``smp-server init --sign-algorithm`` makes them)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PrivateKey
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding
    from cryptography.x509.oid import NameOID

    def key() -> Any:
        if algorithm == "ED448":
            return Ed448PrivateKey.from_private_bytes(random(57))
        return Ed25519PrivateKey.from_private_bytes(random(32))

    ca_key, leaf_key = key(), key()
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    end = datetime.datetime(2036, 1, 1, tzinfo=datetime.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca = (x509.CertificateBuilder().subject_name(name("smpref vectors CA"))
          .issuer_name(name("smpref vectors CA")).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, None))
    leaf = (x509.CertificateBuilder().subject_name(name("smp.example"))
            .issuer_name(ca.subject).public_key(leaf_key.public_key())
            .serial_number(2).not_valid_before(start).not_valid_after(end)
            .sign(ca_key, None))
    return leaf.public_bytes(Encoding.DER), ca.public_bytes(Encoding.DER), leaf_key


def _ed448(session: bytes, session_id: bytes) -> list[list[Json]]:
    """The Ed448 chain's key hash, signed session keys and server hello, from a random of its
    own, so that adding them changed no Ed25519 vector."""
    import base64

    from smpref.crypto.session_keys import key_hash, signed_session_key
    from smpref.wire.hellos import ServerHello

    random = SeededRandom(b"vectors handshake ed448")
    leaf, identity, leaf_key = certificates(random, "ED448")
    public = leaf_key.public_key().public_bytes_raw()
    other = certificates(random, "ED448")[2].public_key().public_bytes_raw()
    signed = signed_session_key(leaf_key, session)
    tampered = signed[:-1] + bytes([signed[-1] ^ 1])
    flags = ["Ed448"]
    hashes = [entry("an Ed448 chain's identity certificate", ["TRANS-1"], flags=flags,
                    certificate=identity, keyHash=key_hash(identity),
                    keyHashBase64url=base64.urlsafe_b64encode(key_hash(identity)).decode())]
    keys = [
        entry("signed session key, Ed448", ["TRANS-9"], flags=flags, tlsPublicKey=public,
              sessionKey=session, signedKey=signed),
        entry("signed by another Ed448 key", ["TRANS-9"], "invalid", ["Ed448", "WrongKey"],
              tlsPublicKey=other, sessionKey=session, signedKey=signed),
        entry("tampered Ed448 signature", ["TRANS-9"], "invalid", ["Ed448", "Tampered"],
              tlsPublicKey=public, sessionKey=session, signedKey=tampered),
    ]
    server = [entry("server hello, versions 6-18, an Ed448 chain", ["TRANS-9"], flags=flags,
                    minVersion=6, maxVersion=18, sessionId=session_id,
                    encoded=ServerHello(6, 18, session_id, (leaf, identity), signed).encode(),
                    certificates=[leaf.hex(), identity.hex()], signedKey=signed,
                    keyHash=key_hash(identity))]
    return [hashes, keys, server]


def groups() -> list[Json]:
    import base64
    from importlib import resources

    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    from smpref.crypto.primitives import ed25519_public
    from smpref.crypto.session_keys import key_hash, signed_session_key
    from smpref.wire.hellos import ClientHello, ServerHello

    random = SeededRandom(b"vectors handshake")
    pem = (resources.files("smpref.vectors") / "fixtures" / "simplexmq-test-ca.crt").read_bytes()
    deployed = x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
    leaf, identity, leaf_private = certificates(random)
    leaf_seed = leaf_private.private_bytes_raw()
    hashes = [
        entry("deployed SMP's test CA", ["TRANS-1"], flags=["Deployed"], certificate=deployed,
              keyHash=key_hash(deployed),
              keyHashBase64url=base64.urlsafe_b64encode(key_hash(deployed)).decode()),
        entry("the chain's identity certificate", ["TRANS-1"], certificate=identity,
              keyHash=key_hash(identity),
              keyHashBase64url=base64.urlsafe_b64encode(key_hash(identity)).decode()),
    ]
    session = x25519_public(random(32))
    signed = signed_session_key(leaf_seed, session)
    tampered = signed[:-1] + bytes([signed[-1] ^ 1])
    keys = [
        entry("signed session key", ["TRANS-9"], tlsPublicKey=ed25519_public(leaf_seed),
              sessionKey=session, signedKey=signed),
        entry("signed by another key", ["TRANS-9"], "invalid", ["WrongKey"],
              tlsPublicKey=ed25519_public(random(32)), sessionKey=session, signedKey=signed),
        entry("tampered signature", ["TRANS-9"], "invalid", ["Tampered"],
              tlsPublicKey=ed25519_public(leaf_seed), sessionKey=session, signedKey=tampered),
    ]
    session_id = random(32)
    server = []
    for low, high, chain, key in ((6, 6, (), None), (6, 18, (leaf, identity), signed)):
        # from 7 the key hash is the SHA-256 of the chain's second certificate; below, the
        # hello has no chain and the client takes it from the address (TRANS-1, DEP-11)
        since_v7: dict[str, Any] = {} if key is None else {
            "certificates": [c.hex() for c in chain], "signedKey": key,
            "keyHash": key_hash(identity)}
        server.append(entry(f"server hello, versions {low}-{high}", ["TRANS-9"],
                            minVersion=low, maxVersion=high, sessionId=session_id,
                            encoded=ServerHello(low, high, session_id, chain, key).encode(),
                            **since_v7))
    client_key = x25519_public(random(32))
    client = []
    # where the client hello changes: 6 (no key), 7 (the key), 11 (blocks encrypted with it),
    # 14 (the proxy flag), 16 (no service), 18 (the newest)
    for v, ckey in ((6, None), (7, client_key), (11, client_key), (14, client_key),
                    (16, client_key), (18, client_key)):
        present: dict[str, Any] = {}
        if ckey is not None:
            present["clientKey"] = ckey
        if v >= 14:
            present["proxyServer"] = False
        client.append(entry(f"client hello, version {v}", ["TRANS-9"], version=v,
                            keyHash=key_hash(identity),
                            encoded=ClientHello(v, key_hash(identity), ckey).encode(),
                            **present))
    ed448_hashes, ed448_keys, ed448_server = _ed448(session, session_id)
    return [{"type": "KeyHashTest", "tests": hashes + ed448_hashes},
            {"type": "SignedKeyTest", "tests": keys + ed448_keys},
            {"type": "ServerHelloTest", "tests": server + ed448_server},
            {"type": "ClientHelloTest", "tests": client}]
