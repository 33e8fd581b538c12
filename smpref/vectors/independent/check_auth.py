"""The independent check of auth.json: every vector recomputed without smpref's code."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from smpref.independent import salsa
from smpref.vectors.independent.shared import cb_nonce, confirmed, expect, ss, tests, unhex, x25519

# TRANS-7 and LINK-8, restated from the spec: the rule of each command.
_RULES = {"NEW": "creator", "SEND": "optional", "PING": "none", "LGET": "when"}


_COMMANDS = {"NEW", "KEY", "SKEY", "LSET", "LGET", "NDEL", "SUB", "SEND", "ACK", "GET", "OFF",
             "DEL", "NSUB", "PING"}


def _field(data: bytes, i: int) -> tuple[bytes, int]:
    if i >= len(data) or i + 1 + data[i] > len(data):
        raise ValueError("transmission field runs past the end")
    return data[i + 1 : i + 1 + data[i]], i + 1 + data[i]


def _credential_answer(transmission: bytes) -> str:
    auth, i = _field(transmission, 0)
    if len(auth) not in (0, 64, 80, 114):
        raise ValueError(f"authorization of {len(auth)} bytes")
    if auth:
        if transmission[i : i + 1] != b"0":
            raise ValueError("service signature byte")
        i += 1
    _, i = _field(transmission, i)
    entity, i = _field(transmission, i)
    command = transmission[i:]
    tag = command.split(b" ")[0].decode("ascii", "replace")
    if tag not in _COMMANDS:
        raise ValueError(f"not a command tag: {tag!r}")
    rule = _RULES.get(tag, "required")
    if rule == "when":
        rule = "required" if command.startswith(b"LGET 1") else "forbidden"
    if rule == "creator":
        return "CMD NO_AUTH" if not auth else "CMD HAS_AUTH" if entity else "ok"
    if rule == "none":
        return "CMD HAS_AUTH" if auth or entity else "ok"
    if not entity:
        return "CMD NO_ENTITY" if rule in ("optional", "forbidden") else "CMD NO_AUTH"
    if rule == "forbidden" and auth:
        return "CMD HAS_AUTH"
    if rule == "required" and not auth:
        return "CMD NO_AUTH"
    return "ok"


def check_auth(vectors: dict[str, Any]) -> int:
    for group, t in tests(vectors):
        if group["type"] == "CredentialTest":
            answer = _credential_answer(unhex(t, "transmission"))
            expect(answer == t["answer"], t, f"credential rule: {answer}, not {t['answer']}")
            continue
        if "Ktv" in t["flags"]:
            key = Ed25519PrivateKey.from_private_bytes(unhex(t, "privateKey"))
            expect(key.sign(unhex(t, "message")) == unhex(t, "signature"), t, "signature differs")
            expect(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
                    == unhex(t, "verifyKey"), t, "public key differs")
            continue
        session, corr, entity = unhex(t, "sessionId"), unhex(t, "corrId"), unhex(t, "entityId")
        command, signature = unhex(t, "command"), unhex(t, "signature")
        authorized = ss(session) + ss(corr) + ss(entity) + command
        expect(authorized == unhex(t, "authorized"), t, "authorized bytes differ")
        expect(ss(signature) + b"0" + ss(corr) + ss(entity) + command
                == unhex(t, "transmission"), t, "transmission bytes differ")
        if group["algorithm"] == "Ed25519":
            try:
                Ed25519PublicKey.from_public_bytes(unhex(t, "verifyKey")).verify(signature,
                                                                              authorized)
                ok = True
            except InvalidSignature:
                ok = False
        else:
            shared = x25519(unhex(t, "serverSessionPrivateKey"), unhex(t, "verifyKey"))
            expected = salsa.secretbox(salsa.hsalsa20(shared, bytes(16)), cb_nonce(corr),
                                       hashlib.sha512(authorized).digest())
            ok = hmac.compare_digest(expected, signature)
        expect(ok == (t["result"] == "valid"), t, f"verifies: {ok}, vector: {t['result']}")
    return confirmed(vectors)
