"""The link.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from smpref.client.core import LinkKeys
from smpref.crypto.link_crypto import link_data_key, seal_part
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    LinkData,
    OptionalLinkData,
    OptionalPartKind,
)

SET = VectorSet(
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


def groups() -> list[Json]:
    random = SeededRandom(b"vectors link")
    alice = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    bob_pub = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    kat = [entry("RFC 7748 6.1: Alice's key and the shared secret with Bob", ["LINK-1"],
                 flags=["Ktv"], linkPrivateKey=alice,
                 linkPublicKey=bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4"
                                             "eba4a98eaa9b4e6a"),
                 peerPublicKey=bob_pub,
                 sharedSecret=bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e33"
                                            "76f09b3c1e161742"))]
    link_data = LinkData
    optional = OptionalLinkData
    profile = OptionalPartKind.Profile
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
        valid.append(entry(f"link part {i}: {len(plaintext)}-byte plaintext",
                           ["LINK-1", "LINK-2", "LINK-3", "LINK-4", "DIV-2", "DIV-8", "DIV-13"],
                           linkPrivateKey=keys.pk, linkPublicKey=keys.k, linkId=keys.link_id,
                           sbKey=sb_key, nonce=nonce, plaintext=plaintext, sealed=sealed,
                           decryptKey=keys.pk))
        if i == 1:
            tampered = bytearray(sealed)
            tampered[40] ^= 1
            other = LinkKeys(random(32))
            invalid += [
                entry("tampered ciphertext", ["LINK-4"], "invalid", ["Tampered"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=bytes(tampered),
                      decryptKey=keys.pk),
                entry("opened with another link's key", ["LINK-4"], "invalid", ["WrongKey"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=sealed,
                      decryptKey=other.pk),
                entry("truncated to 41 bytes", ["LINK-4"], "invalid", ["Truncated"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=sealed[:41],
                      decryptKey=keys.pk),
                entry("last byte removed", ["LINK-4"], "invalid", ["Truncated"],
                      linkPrivateKey=keys.pk, linkPublicKey=keys.k, sealed=sealed[:-1],
                      decryptKey=keys.pk),
            ]
    return [{"type": "X25519Test", "tests": kat},
            {"type": "LinkPartTest", "tests": valid + invalid}]
