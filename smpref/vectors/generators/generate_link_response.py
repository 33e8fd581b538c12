"""The link-response.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.client.core import LinkKeys
from smpref.crypto.link_crypto import seal_link_response
from smpref.crypto.primitives import cb_nonce, x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    LinkBlob,
    LinkPart,
    LinkPartPriority,
    QueueLink,
)

SET = VectorSet(
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


def groups() -> list[Json]:
    random = SeededRandom(b"vectors link-response")
    queue_link = QueueLink
    blob = LinkBlob
    part = LinkPart
    mandatory = LinkPartPriority.Mandatory
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
        tests.append(entry(f"LINK {i}", ["LINK-9", "LINK-10", "DIV-3", "DIV-12"], flags=flags,
                           sealed=sealed,
                           openCorrId=corr_id, **common))
        if i == 0:
            tampered = bytearray(sealed)
            tampered[20] ^= 0x80
            tests.append(entry("tampered", ["LINK-9"], "invalid", ["Tampered"],
                               sealed=bytes(tampered), openCorrId=corr_id, **common))
            tests.append(entry("opened with another corrId", ["LINK-9"], "invalid",
                               ["WrongNonce"], sealed=sealed, openCorrId=random(24), **common))
    return [{"type": "LinkResponseTest", "tests": tests}]
