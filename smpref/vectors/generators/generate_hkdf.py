"""The hkdf.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from smpref.crypto.block_chain import CHAIN_INFO, CHAIN_INIT_INFO
from smpref.crypto.link_crypto import LINK_DATA_INFO
from smpref.crypto.primitives import hkdf_sha512
from smpref.crypto.randomness import SeededRandom
from smpref.crypto.ratchet import LABEL_MESSAGE, LABEL_NEXT, LABEL_ROTATION, LABEL_UPDATE
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet

SET = VectorSet(
    name="hkdf",
    algorithm="HKDF",
    header=("Every HKDF use in the smpref spec, HKDF-SHA512 (RFC 5869), and RFC 5869's own "
            "known answers for SHA-256 so that an implementation can check its HKDF first.",),
    group_fields={"hash": "string"},
    test_fields={"use": "string", "salt": "hex", "ikm": "hex", "info": "hex", "size": "int",
                 "okm": "hex"},
    notes={"Ktv": "a published known-answer test (RFC 5869 appendix A)"},
)


def groups() -> list[Json]:
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
         random(32), CHAIN_INIT_INFO, 64),
        ("block chain step (TRANS-10)", ["TRANS-10"], b"", random(32), CHAIN_INFO, 88),
    ]
    sha512 = [entry(comment, reqs, use=comment.split(" (")[0], salt=salt, ikm=ikm, info=info,
                    size=size, okm=hkdf_sha512(salt, ikm, info, size))
              for comment, reqs, salt, ikm, info, size in uses]
    ikm = bytes.fromhex("0b" * 22)
    rfc = [
        entry("RFC 5869 A.1 test case 1", [], flags=["Ktv"], use="RFC 5869",
              salt=bytes.fromhex("000102030405060708090a0b0c"), ikm=ikm,
              info=bytes.fromhex("f0f1f2f3f4f5f6f7f8f9"), size=42,
              okm=bytes.fromhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
                                "34007208d5b887185865")),
        entry("RFC 5869 A.3 test case 3: empty salt and info", [], flags=["Ktv"],
              use="RFC 5869", salt=b"", ikm=ikm, info=b"", size=42,
              okm=bytes.fromhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
                                "9d201395faa4b61a96c8")),
    ]
    return [{"type": "HkdfTest", "hash": "SHA-512", "tests": sha512},
            {"type": "HkdfTest", "hash": "SHA-256", "tests": rfc}]
