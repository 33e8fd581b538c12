"""The independent check of handshake.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PublicKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from smpref.vectors.independent.shared import confirmed, expect, ss, tests, unhex

#: the signed session key's DER around the X25519 SPKI and the signature: (header, algorithm
#: identifier and BIT STRING header, signature size), for a 32-byte (Ed25519) or 57-byte
#: (Ed448) TLS key
_LAYOUTS = {32: (bytes.fromhex("3078"), bytes.fromhex("300506032b6570034100"), 64),
            57: (bytes.fromhex("3081aa"), bytes.fromhex("300506032b6571037300"), 114)}


def _signed_key_ok(t: dict[str, Any]) -> bool:
    der, public = unhex(t, "signedKey"), unhex(t, "tlsPublicKey")
    if len(public) not in _LAYOUTS:
        return False
    header, middle, size = _LAYOUTS[len(public)]
    signed = bytes.fromhex("302c302a300506032b656e032100") + unhex(t, "sessionKey")
    if der[:-size] != header + signed + middle or len(der) != len(header + signed + middle) + size:
        return False
    verifier = Ed25519PublicKey if len(public) == 32 else Ed448PublicKey
    try:
        verifier.from_public_bytes(public).verify(der[-size:], signed)
    except InvalidSignature:
        return False
    return True


def _w16(n: int) -> bytes:
    return n.to_bytes(2, "big")


def _leaf_key(certificate: bytes) -> bytes:
    from cryptography import x509

    key = x509.load_der_x509_certificate(certificate).public_key()
    assert isinstance(key, Ed25519PublicKey | Ed448PublicKey)
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def check_handshake(vectors: dict[str, Any]) -> int:
    for group, t in tests(vectors):
        kind = group["type"]
        if kind == "KeyHashTest":
            digest = hashlib.sha256(unhex(t, "certificate")).digest()
            expect(digest == unhex(t, "keyHash"), t, "keyHash differs")
            expect(base64.urlsafe_b64encode(digest).decode() == t["keyHashBase64url"], t,
                    "base64url form differs")
        elif kind == "SignedKeyTest":
            ok = _signed_key_ok(t)
            expect(ok == (t["result"] == "valid"), t, f"signed key verifies: {ok}")
        elif kind == "ServerHelloTest":
            expected = _w16(t["minVersion"]) + _w16(t["maxVersion"]) + ss(unhex(t, "sessionId"))
            expect((t["maxVersion"] >= 7) == ("certificates" in t and "signedKey" in t), t,
                    "the chain and signed key are there exactly from version 7")
            if t["maxVersion"] >= 7:
                certs = [bytes.fromhex(c) for c in t["certificates"]]
                expect(bool(certs), t, "from version 7 the hello carries the chain")
                expected += bytes([len(certs)]) + b"".join(_w16(len(c)) + c for c in certs)
                expected += _w16(len(unhex(t, "signedKey"))) + unhex(t, "signedKey")
                expect(len(certs) >= 2 and hashlib.sha256(certs[1]).digest()
                       == unhex(t, "keyHash"), t,
                       "the key hash is not the SHA-256 of the chain's identity certificate")
                at = 16 if unhex(t, "signedKey")[1] != 0x81 else 17  # the X25519 key's offset
                expect(_signed_key_ok({**t, "sessionKey": unhex(t, "signedKey")[at:at + 32].hex(),
                                        "tlsPublicKey": _leaf_key(certs[0]).hex()}), t,
                        "the hello's signed key does not verify with the leaf's key")
            expect(expected == unhex(t, "encoded"), t, "server hello bytes differ")
        else:
            expected = _w16(t["version"]) + ss(unhex(t, "keyHash"))
            expect("clientKey" not in t or t["version"] >= 7, t, "a key before version 7")
            expect(("proxyServer" in t) == (t["version"] >= 14), t,
                    "the proxy flag is there exactly from version 14")
            if "clientKey" in t:
                expected += ss(bytes.fromhex("302a300506032b656e032100") + unhex(t, "clientKey"))
            if t["version"] >= 14:
                expected += b"T" if t["proxyServer"] else b"F"
            if t["version"] >= 16:
                expected += b"0"
            expect(expected == unhex(t, "encoded"), t, "client hello bytes differ")
    return confirmed(vectors)
