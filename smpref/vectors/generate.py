"""Generators of the vector sets, from fixed seeds (``smpref vectors generate``).

Each generator uses smpref's own code paths (smpref.crypto, smpref.wire, smpref.links); the
verifier in :mod:`smpref.vectors.independent` recomputes every value another way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from smpref.crypto.link_crypto import LINK_DATA_INFO, link_data_key, seal_link_response, seal_part
from smpref.crypto.primitives import cb_nonce, hkdf_sha512, x25519_public
from smpref.crypto.ratchet import LABEL_MESSAGE, LABEL_NEXT, LABEL_ROTATION, LABEL_UPDATE
from smpref.errors import UriSyntaxError
from smpref.links import parse_short_link
from smpref.model.client import LinkKeys
from smpref.model.environment import SeededRandom
from smpref.vectors.files import Json, VectorSet
from smpref.wire import enum_type, type_class

SB_CHAIN_INIT = b"SimpleXSbChainInit"
SB_CHAIN = b"SimpleXSbChain"


def _hex(data: bytes) -> str:
    return data.hex()


def _test(comment: str, requirements: list[str], result: str = "valid",
          flags: list[str] | None = None, **fields: Any) -> Json:
    test = {"comment": comment, "requirements": requirements, "result": result,
            "flags": flags or []}
    test.update({k: _hex(v) if isinstance(v, bytes) else v for k, v in fields.items()})
    return test


# --- hkdf ------------------------------------------------------------------------------------

HKDF = VectorSet(
    name="hkdf",
    algorithm="HKDF",
    header=("Every HKDF use in the smpref spec, HKDF-SHA512 (RFC 5869), and RFC 5869's own "
            "known answers for SHA-256 so that an implementation can check its HKDF first.",),
    group_fields={"hash": "string"},
    test_fields={"use": "string", "salt": "hex", "ikm": "hex", "info": "hex", "size": "int",
                 "okm": "hex"},
    notes={"Ktv": "a published known-answer test (RFC 5869 appendix A)"},
)


def hkdf_groups() -> list[Json]:
    random = SeededRandom(b"vectors hkdf")
    uses: list[tuple[str, list[str], bytes, bytes, bytes, int]] = []
    for i in range(2):
        uses.append((f"link data key (LINK-3), link key {i}", ["LINK-3"], b"", random(32),
                     LINK_DATA_INFO, 32))
    key = random(32)
    uses += [
        ("ratchet message key (QENC-2)", ["QENC-2", "QENC-10"], b"", key, LABEL_MESSAGE, 32),
        ("ratchet next key (QENC-2)", ["QENC-2", "QENC-10"], b"", key, LABEL_NEXT, 32),
        ("ratchet rotation key (QENC-4)", ["QENC-4", "QENC-10"], b"", key, LABEL_ROTATION, 32),
        ("ratchet updated key: salt is the fresh randomness (QENC-4)", ["QENC-4", "QENC-10"],
         random(32), random(32), LABEL_UPDATE, 32),
        ("block chain init: salt is the session ID (TRANS-10)", ["TRANS-10"], random(32),
         random(32), SB_CHAIN_INIT, 64),
        ("block chain step (TRANS-10)", ["TRANS-10"], b"", random(32), SB_CHAIN, 88),
    ]
    sha512 = [_test(comment, reqs, use=comment.split(" (")[0], salt=salt, ikm=ikm, info=info,
                    size=size, okm=hkdf_sha512(salt, ikm, info, size))
              for comment, reqs, salt, ikm, info, size in uses]
    ikm = bytes.fromhex("0b" * 22)
    rfc = [
        _test("RFC 5869 A.1 test case 1", [], flags=["Ktv"], use="RFC 5869",
              salt=bytes.fromhex("000102030405060708090a0b0c"), ikm=ikm,
              info=bytes.fromhex("f0f1f2f3f4f5f6f7f8f9"), size=42,
              okm=bytes.fromhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
                                "34007208d5b887185865")),
        _test("RFC 5869 A.3 test case 3: empty salt and info", [], flags=["Ktv"],
              use="RFC 5869", salt=b"", ikm=ikm, info=b"", size=42,
              okm=bytes.fromhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
                                "9d201395faa4b61a96c8")),
    ]
    return [{"type": "HkdfTest", "hash": "SHA-512", "tests": sha512},
            {"type": "HkdfTest", "hash": "SHA-256", "tests": rfc}]


# --- link ------------------------------------------------------------------------------------

LINK = VectorSet(
    name="link",
    algorithm="seed 004 link keys and link data",
    header=("The link key pair (pk in the link, k its X25519 public key), the link ID "
            "SHA-256(k), the link data key HKDF-SHA512('', pk, 'SimpleXLinkData', 32), and "
            "link parts: nonce || secretbox(HSalsa20(sbKey, 0^16), nonce, pad(plaintext)) with "
            "padding to a multiple of 256 (LINK-1..LINK-4). RFC 7748 known answers first.",),
    test_fields={"linkPrivateKey": "hex", "linkPublicKey": "hex", "linkId": "hex",
                 "sbKey": "hex", "nonce": "hex", "plaintext": "hex", "sealed": "hex",
                 "decryptKey": "hex", "sharedSecret": "hex", "peerPublicKey": "hex"},
    optional=frozenset({"linkId", "sbKey", "nonce", "plaintext", "sealed", "decryptKey",
                        "sharedSecret", "peerPublicKey"}),
    notes={"Ktv": "a published known-answer test (RFC 7748 section 6.1)",
           "Tampered": "a ciphertext byte was changed",
           "WrongKey": "opened with another link's key",
           "Truncated": "the sealed part is shorter than nonce, tag and padding length"},
)


def link_groups() -> list[Json]:
    random = SeededRandom(b"vectors link")
    alice = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    bob_pub = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    kat = [_test("RFC 7748 6.1: Alice's key and the shared secret with Bob", ["LINK-1"],
                 flags=["Ktv"], linkPrivateKey=alice,
                 linkPublicKey=bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4"
                                             "eba4a98eaa9b4e6a"),
                 peerPublicKey=bob_pub,
                 sharedSecret=bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e33"
                                            "76f09b3c1e161742"))]
    link_data = type_class("LinkData")
    optional = type_class("OptionalLinkData")
    profile = enum_type("OptionalPartKind")["Profile"]
    plaintexts = [
        link_data(conn_req=b"", user_data=b"").encode(),
        link_data(conn_req=b"binary connection request " * 4, user_data=b"{\"p\":1}").encode(),
        optional(kind=profile, data=b"profile " * 40).encode(),
    ]
    valid, invalid = [], []
    for i, plaintext in enumerate(plaintexts):
        keys = LinkKeys(random(32))
        sb_key = link_data_key(keys.pk)
        nonce = random(24)
        sealed = seal_part(sb_key, nonce, plaintext)
        valid.append(_test(f"link part {i}: {len(plaintext)}-byte plaintext",
                           ["LINK-1", "LINK-2", "LINK-3", "LINK-4"],
                           linkPrivateKey=keys.pk, linkPublicKey=keys.k, linkId=keys.link_id,
                           sbKey=sb_key, nonce=nonce, plaintext=plaintext, sealed=sealed,
                           decryptKey=keys.pk))
        if i == 1:
            tampered = bytearray(sealed)
            tampered[40] ^= 1
            other = LinkKeys(random(32))
            invalid += [
                _test("tampered ciphertext", ["LINK-4"], "invalid", ["Tampered"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=bytes(tampered),
                      decryptKey=keys.pk),
                _test("opened with another link's key", ["LINK-4"], "invalid", ["WrongKey"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=sealed,
                      decryptKey=other.pk),
                _test("truncated to 41 bytes", ["LINK-4"], "invalid", ["Truncated"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=sealed[:41],
                      decryptKey=keys.pk),
                _test("last byte removed", ["LINK-4"], "invalid", ["Truncated"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=sealed[:-1],
                      decryptKey=keys.pk),
            ]
    return [{"type": "X25519Test", "tests": kat},
            {"type": "LinkPartTest", "tests": valid + invalid}]


# --- link-response ---------------------------------------------------------------------------

LINK_RESPONSE = VectorSet(
    name="link-response",
    algorithm="seed 004 LINK response",
    header=("LINK's sealed field: crypto_box(X25519(server session key, k), cbNonce(corrId), "
            "QueueLink), opened by the reader with X25519(pk, server session public key) "
            "(LINK-9). cbNonce: 24 bytes as is, shorter right-padded with zeros, longer cut.",),
    test_fields={"serverSessionPrivateKey": "hex", "serverSessionPublicKey": "hex",
                 "linkPrivateKey": "hex", "linkPublicKey": "hex", "corrId": "hex",
                 "nonce": "hex", "queueLink": "hex", "sealed": "hex", "openCorrId": "hex"},
    notes={"Tampered": "a ciphertext byte was changed",
           "WrongNonce": "opened with another corrId",
           "ShortCorrId": "a corrId shorter than 24 bytes, right-padded with zeros"},
)


def link_response_groups() -> list[Json]:
    random = SeededRandom(b"vectors link-response")
    queue_link = type_class("QueueLink")
    blob = type_class("LinkBlob")
    part = type_class("LinkPart")
    mandatory = enum_type("LinkPartPriority")["Mandatory"]
    tests = []
    for i, corr_id in enumerate((random(24), random(24), b"short corr")):
        server = random(32)
        keys = LinkKeys(random(32))
        plain = queue_link(link_id=keys.link_id, sender_id=random(24), enc_link_data=blob(
            parts=(part(priority=mandatory, sealed=random(60 + 100 * i)),))).encode()
        sealed = seal_link_response(server, keys.k, corr_id, plain)
        common: dict[str, Any] = {
            "serverSessionPrivateKey": server, "serverSessionPublicKey": x25519_public(server),
            "linkPrivateKey": keys.pk, "linkPublicKey": keys.k, "corrId": corr_id,
            "nonce": cb_nonce(corr_id), "queueLink": plain}
        flags = ["ShortCorrId"] if len(corr_id) < 24 else []
        tests.append(_test(f"LINK {i}", ["LINK-9", "LINK-10"], flags=flags, sealed=sealed,
                           openCorrId=corr_id, **common))
        if i == 0:
            tampered = bytearray(sealed)
            tampered[20] ^= 0x80
            tests.append(_test("tampered", ["LINK-9"], "invalid", ["Tampered"],
                               sealed=bytes(tampered), openCorrId=corr_id, **common))
            tests.append(_test("opened with another corrId", ["LINK-9"], "invalid",
                               ["WrongNonce"], sealed=sealed, openCorrId=random(24), **common))
    return [{"type": "LinkResponseTest", "tests": tests}]


# --- short-link ------------------------------------------------------------------------------

SHORT_LINK = VectorSet(
    name="short-link",
    algorithm="seed 004 short links",
    header=("Short links users paste, with their parsed fields and canonical form "
            "(SLINK-1..SLINK-10), and strings that must be rejected.",),
    test_fields={"link": "string", "canonical": "string", "type": "string", "hosts": "strings",
                 "port": "int", "fingerprint": "hex", "linkKey": "hex", "linkId": "hex",
                 "errorColumn": "int"},
    optional=frozenset({"canonical", "type", "hosts", "port", "fingerprint", "linkKey",
                        "linkId", "errorColumn"}),
    notes={"SeedExample": "the form of seed 004's own example (slash before '#')",
           "LongType": "the long type word", "Padded": "base64url with padding",
           "Deployed": "a deployed SimpleX link type, not seed 004's"},
)

_KEY = "abcdefghij0123456789abcdefghij0123456789abc"
_FP = "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI"
_LINKS: list[tuple[str, list[str], list[str]]] = [
    (f"https://smp8.simplex.im/c#/{_KEY}", [], ["SLINK-1"]),
    (f"https://smp8.simplex.im/c/#{_KEY}", ["SeedExample"], ["SLINK-3"]),
    (f"https://smp8.simplex.im/contact#{_KEY}", ["LongType"], ["SLINK-3"]),
    (f"https://smp8.simplex.im/invitation#/{_KEY}=", ["LongType", "Padded"], ["SLINK-7"]),
    (f"https://SMP8.simplex.im:5223/i#/{_KEY}?f={_FP}=&h=b.onion%2Cc.org", ["Padded"],
     ["SLINK-2", "SLINK-4", "SLINK-8"]),
    (f"https://[2001:db8::1]/c#/{_KEY}?h=a.org", [], ["SLINK-8"]),
    ("http://smp8.simplex.im/c#/" + _KEY, [], ["SLINK-9"]),
    ("https://smp8.simplex.im/a#" + _KEY, ["Deployed"], ["SLINK-9"]),
    ("https://smp8.simplex.im/c#/abc", [], ["SLINK-7"]),
    ("https://smp8.simplex.im/c#/" + _KEY + "?x=1", [], ["SLINK-5"]),
    ("https://smp8.simplex.im/c#/" + _KEY + f"?f={_FP}&f={_FP}", [], ["SLINK-5"]),
    ("https://smp8.simplex.im:0/c#/" + _KEY, [], ["SLINK-2"]),
]


def short_link_groups() -> list[Json]:
    tests = []
    for text, flags, reqs in _LINKS:
        try:
            link = parse_short_link(text)
        except UriSyntaxError as exc:
            tests.append(_test(f"rejected: {exc.what}", reqs, "invalid", flags, link=text,
                               errorColumn=exc.column))
            continue
        tests.append(_test("accepted", [*reqs, "SLINK-10"], "valid", flags, link=text,
                           canonical=link.canonical(), type=link.link_type.name.lower(),
                           hosts=list(link.hosts), port=link.effective_port,
                           fingerprint=link.fingerprint or b"", linkKey=link.link_key,
                           linkId=link.link_id))
    return [{"type": "ShortLinkTest", "tests": tests}]


SETS: dict[str, tuple[VectorSet, Callable[[], list[Json]]]] = {
    s.name: (s, g) for s, g in (
        (HKDF, hkdf_groups), (LINK, link_groups), (LINK_RESPONSE, link_response_groups),
        (SHORT_LINK, short_link_groups))
}


def corpus() -> dict[str, Any]:
    """Every vector file and schema by path relative to vectors/ (JSON objects)."""
    files: dict[str, Any] = {}
    for vector_set, groups in SETS.values():
        files[vector_set.filename] = vector_set.build(groups())
        files[vector_set.schema_filename] = vector_set.schema()
    return files


def digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()
