"""The auth.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    SUB,
)

SET = VectorSet(
    name="auth",
    algorithm="SMP transmission authorization",
    header=("Authorized bytes ss(sessionId) || ss(corrId) || ss(entityId) || command, Ed25519 "
            "signatures over them, and X25519 authenticators crypto_box(X25519(queue key, "
            "server session key), cbNonce(corrId), sha512(authorized)) (TRANS-5, TRANS-6, "
            "AUTH-1). Each test gives the transmission as sent; 'verifyKey' and 'sessionId' "
            "are what the server verifies with. RFC 8032 known answers first.",),
    group_fields={"algorithm": "string"},
    test_fields={"sessionId": "hex", "corrId": "hex", "entityId": "hex", "command": "hex",
                 "authorized": "hex", "transmission": "hex", "verifyKey": "hex",
                 "serverSessionPrivateKey": "hex", "privateKey": "hex", "message": "hex",
                 "signature": "hex", "answer": "string"},
    optional=frozenset({"sessionId", "corrId", "entityId", "command", "authorized",
                        "transmission", "verifyKey", "serverSessionPrivateKey", "privateKey",
                        "message", "signature", "answer"}),
    notes={"Ktv": "a published known-answer test (RFC 8032 section 7.1)",
           "WrongKey": "verified with another key", "WrongSession": "made for another session"},
)


def groups() -> list[Json]:
    from smpref.crypto.auth import authenticator, sign
    from smpref.crypto.primitives import ed25519_public, ed25519_sign
    from smpref.wire.transmission import Transmission, authorized_bytes

    random = SeededRandom(b"vectors auth")
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    kat = [entry("RFC 8032 7.1 TEST 1", [], flags=["Ktv"], privateKey=seed,
                 verifyKey=ed25519_public(seed), message=b"", signature=ed25519_sign(seed, b""))]
    sub = SUB()
    ed, x = [], []
    for case in ("valid", "wrong key", "wrong session"):
        session, corr, entity = random(32), random(24), random(24)
        command = sub.encode()
        key = random(32)
        signed_session = random(32) if case == "wrong session" else session
        authorized = authorized_bytes(signed_session, corr, entity, command)
        signature = sign(key, authorized)
        verify_key = ed25519_public(random(32) if case == "wrong key" else key)
        flags = {"wrong key": ["WrongKey"], "wrong session": ["WrongSession"]}.get(case, [])
        ed.append(entry(f"Ed25519, {case}", ["TRANS-4", "TRANS-5", "TRANS-6", "AUTH-1"],
                        "valid" if case == "valid" else "invalid", flags, sessionId=session,
                        corrId=corr, entityId=entity, command=command,
                        authorized=authorized_bytes(session, corr, entity, command),
                        transmission=Transmission(signature, corr, entity, command).encode(),
                        verifyKey=verify_key, signature=signature))
        queue_secret, server_secret = random(32), random(32)
        box = authenticator(queue_secret, x25519_public(server_secret), corr, authorized)
        verify_queue = x25519_public(random(32) if case == "wrong key" else queue_secret)
        x.append(entry(f"X25519 authenticator, {case}", ["TRANS-4", "TRANS-5", "TRANS-6",
                                                          "AUTH-1"],
                       "valid" if case == "valid" else "invalid", flags, sessionId=session,
                       corrId=corr, entityId=entity, command=command,
                       authorized=authorized_bytes(session, corr, entity, command),
                       transmission=Transmission(box, corr, entity, command).encode(),
                       verifyKey=verify_queue, serverSessionPrivateKey=server_secret,
                       signature=box))
    return [{"type": "SignatureTest", "algorithm": "Ed25519", "tests": kat + ed},
            {"type": "AuthenticatorTest", "algorithm": "X25519", "tests": x},
            {"type": "CredentialTest", "algorithm": "none", "tests": credential_tests()}]


def credential_tests() -> list[Json]:
    """TRANS-7: the answer to each (command, authorization present, entity present)."""
    from smpref.errors import CredentialError
    from smpref.wire import decode_message
    from smpref.wire.transmission import Transmission, check_credentials

    key = bytes([44]) + bytes.fromhex("302a300506032b6570032100") + bytes(32)
    dh = bytes([44]) + bytes.fromhex("302a300506032b656e032100") + bytes(32)
    bodies = [b"NEW " + key + dh + b"0S1M00", b"SEND F x", b"PING", b"SUB", b"KEY " + key,
              b"LGET 0", b"LGET 1" + key, b"NSUB", b"ACK \x00"]
    tests = []
    for body in bodies:
        for auth in (False, True):
            for entity in (False, True):
                tx = Transmission(b"s" * 64 if auth else b"", b"c" * 24,
                                  b"e" * 24 if entity else b"", body)
                try:
                    check_credentials(decode_message(body).DEF, tx, decode_message(body))
                    answer = "ok"
                except CredentialError as exc:
                    answer = exc.smp_error.value
                tests.append(entry(f"{body.split(b' ')[0].decode()}, authorization {auth}, "
                                   f"entity {entity}", ["TRANS-7", "LINK-8"],
                                   transmission=tx.encode(), answer=answer))
    return tests
