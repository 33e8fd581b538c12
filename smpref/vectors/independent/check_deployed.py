"""The independent check of deployed.json: every layout rebuilt by hand from TRANS-4, TRANS-6,
DEP-11 and DEP-12, every authorization recomputed with pyca/cryptography and the pure-Python
XSalsa20 here, none of it from spec/commands.smpn or smpref's codecs."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from smpref.independent import salsa
from smpref.vectors.independent.shared import (
    cb_nonce,
    confirmed,
    expect,
    hkdf,
    pad,
    ss,
    tests,
    unhex,
    x25519,
    x25519_public,
)

_ED25519_SPKI = bytes.fromhex("302a300506032b6570032100")
_X25519_SPKI = bytes.fromhex("302a300506032b656e032100")


def _authorization(t: dict[str, Any], authorized: bytes) -> bytes:
    """The authorization a test's keys give (TRANS-6)."""
    if "Ed25519" in t["flags"]:
        return Ed25519PrivateKey.from_private_bytes(unhex(t, "signingKey")).sign(authorized)
    if "X25519" in t["flags"]:
        shared = x25519(unhex(t, "queueKey"), unhex(t, "serverSessionKey"))
        return salsa.secretbox(salsa.hsalsa20(shared, bytes(16)), cb_nonce(unhex(t, "corrId")),
                               hashlib.sha512(authorized).digest())
    return b""


def _transmission(t: dict[str, Any]) -> None:
    version = t["version"]
    session, corr, entity = unhex(t, "sessionId"), unhex(t, "corrId"), unhex(t, "entityId")
    command = unhex(t, "command")
    authorized = ss(session) + ss(corr) + ss(entity) + command
    expect(authorized == unhex(t, "authorized"), t, "authorized bytes differ")
    authorization = _authorization(t, authorized)
    expect(hmac.compare_digest(authorization, bytes.fromhex(t.get("authorization", ""))), t,
           "the authorization differs")
    sent = ss(authorization)
    if authorization and version >= 16:
        sent += b"0"  # no service signature (TRANS-4)
    if version < 7:
        sent += ss(session)  # sent below 7, implied from 7
    sent += ss(corr) + ss(entity) + command
    expect(sent == unhex(t, "encoded"), t, f"the transmission at version {version} differs")


def _new(t: dict[str, Any]) -> None:
    version = t["version"]
    password = bytes.fromhex(t["basicAuth"]) if "basicAuth" in t else None
    out = b"NEW " + ss(unhex(t, "rcvAuthKey")) + ss(unhex(t, "rcvDhKey"))
    expect(unhex(t, "rcvAuthKey").startswith(_ED25519_SPKI), t, "rcvAuthKey is not an SPKI")
    expect(unhex(t, "rcvDhKey").startswith(_X25519_SPKI), t, "rcvDhKey is not an X25519 SPKI")
    if version < 9:  # ['A' ss(auth)] subMode (DEP-11; simplexmq Protocol.hs:1771, 1782)
        out += b"A" + ss(password) if password is not None else b""
        out += b"S" if t["subscribe"] else b"C"
        expect("mode" not in t, t, "a mode below version 9")
    else:
        expect(t.get("mode") in ("M", "C"), t, f"version {version}'s NEW states the mode")
        out += b"1" + ss(password) if password is not None else b"0"
        out += b"S" if t["subscribe"] else b"C"
        if version < 15:
            out += b"T" if t["mode"] == "M" else b"F"
        else:
            out += b"1" + t["mode"].encode() + b"0"  # queueReqData without link data
        if version >= 17:
            out += (b"1" + ss(unhex(t, "ntfAuthKey")) + ss(unhex(t, "ntfDhKey"))
                    if "ntfAuthKey" in t else b"0")
    expect(out == unhex(t, "encoded"), t, f"NEW at version {version} differs")


def _ids(t: dict[str, Any]) -> None:
    version = t["version"]
    out = b"IDS " + ss(unhex(t, "rcvId")) + ss(unhex(t, "sndId")) + ss(unhex(t, "srvDhKey"))
    expect((version >= 9) == (t.get("mode") in ("M", "C")), t,
           "IDS states the mode exactly from version 9")
    if 9 <= version < 15:
        out += b"T" if t["mode"] == "M" else b"F"  # senderCanSecure
    if version >= 15:
        out += b"1" + t["mode"].encode()
        out += b"1" + ss(unhex(t, "linkId")) if "linkId" in t else b"0"
    if version >= 16:
        out += b"0"  # no service ID
    if version >= 17:
        out += (b"1" + ss(unhex(t, "notifierId")) + ss(unhex(t, "srvNtfDhKey"))
                if "notifierId" in t else b"0")
    expect(out == unhex(t, "encoded"), t, f"IDS at version {version} differs")


#: each answer's forms, from the version each begins (DEP-12; simplexmq Protocol.hs:1835-1859):
#: SOK from 16, DELD from 10, BLOCKED from 12 (AUTH below) and its client notice from 18
_NOTICE = b'ERR BLOCKED reason=content,notice={"ttl":86400}'
_ANSWERS: dict[str, list[tuple[int, bytes]]] = {
    "SOK": [(0, b"OK"), (16, b"SOK 0")],
    "DELD": [(0, b"END"), (10, b"DELD")],
    "ERR BLOCKED reason=spam": [(0, b"ERR AUTH"), (12, b"ERR BLOCKED reason=spam")],
    _NOTICE.decode(): [(0, b"ERR AUTH"), (12, b"ERR BLOCKED reason=content"), (18, _NOTICE)],
}


def _answer(t: dict[str, Any]) -> None:
    expect(t["response"] in _ANSWERS, t, f"no such answer: {t['response']!r}")
    forms = _ANSWERS.get(t["response"], [])
    expected = [form for first, form in forms if t["version"] >= first][-1]
    expect(expected == unhex(t, "encoded"), t, f"{t['response']} at {t['version']} differs")


def _sealed(sb_key: bytes, nonce: bytes, root: Ed25519PrivateKey, data: bytes,
            padded: int) -> bytes:
    signature = root.sign(data)
    plain = ss(signature) + data
    body = len(plain).to_bytes(2, "big") + plain + b"#" * (padded - len(plain) - 2)
    return nonce + salsa.secretbox(salsa.hsalsa20(sb_key, bytes(16)), nonce, body)


def _link_data(t: dict[str, Any]) -> None:
    fixed, root = unhex(t, "fixedData"), Ed25519PrivateKey.from_private_bytes(unhex(t, "rootKey"))
    link_key = hashlib.sha3_256(fixed).digest()
    expect(link_key == unhex(t, "linkKey"), t, "linkKey is not SHA3-256(fixedData)")
    root_spki = _ED25519_SPKI + root.public_key().public_bytes_raw()
    expect(fixed[4:5 + len(root_spki)] == ss(root_spki), t,
           "fixedData does not carry the root key after its version range")
    if "Contact" in t["flags"]:
        derived = hkdf("SHA-512", b"", link_key, b"SimpleXContactLink", 56)
        expect(derived[:24] == unhex(t, "linkId"), t, "linkId differs")
    else:
        derived = bytes(24) + hkdf("SHA-512", b"", link_key, b"SimpleXInvLink", 32)
        expect("linkId" not in t, t, "an invitation's link ID is the server's")
    expect(derived[24:] == unhex(t, "sbKey"), t, "sbKey differs")
    for part, nonce, data, padded in (("encFixed", "fixedNonce", fixed, 2008),
                                      ("encUser", "userNonce", unhex(t, "userData"), 13784)):
        expected = _sealed(derived[24:], unhex(t, nonce), root, data, padded)
        expect(expected == unhex(t, part), t, f"{part} differs")


#: the SPKI prefixes of ENC-5, and the keys deployed's tests publish (base64)
_SPKI = {"Ed25519": _ED25519_SPKI, "X25519": _X25519_SPKI}
_PUBLISHED = {"MCowBQYDK2VwAyEAfAOflyvbJv1fszgzkQ6buiZJVgSpQWsucXq7U6zjMgY=",
              "MCowBQYDK2VuAyEAriy+HcARIhqsgSjVnjKqoft+y6pxrxdY68zn4+LjYhQ="}


def _key_encoding(t: dict[str, Any]) -> None:
    expect(t["keyAlgorithm"] in _SPKI, t, "not an Ed25519 or X25519 key")
    der = _SPKI.get(t["keyAlgorithm"], b"") + unhex(t, "rawKey")
    expect(der == unhex(t, "spki"), t, "the SPKI is not the prefix and the raw key")
    expect(base64.b64encode(der).decode() == t["spkiBase64"], t, "the base64 form differs")
    expect(t["spkiBase64"] in _PUBLISHED, t, "not a key deployed's tests publish")


def _box(secret: bytes, public: bytes, nonce: bytes, message: bytes) -> bytes:
    """NaCl crypto_box: XSalsa20-Poly1305 keyed by HSalsa20 of the X25519 secret."""
    return salsa.secretbox(salsa.hsalsa20(x25519(secret, public), bytes(16)), nonce, message)


def _padded_batch(transmission: bytes) -> bytes:
    """One transmission as a batch, padded to 16226 bytes (deployed paddedProxiedTLength)."""
    batch = b"\x01" + len(transmission).to_bytes(2, "big") + transmission
    return len(batch).to_bytes(2, "big") + batch + b"#" * (16226 - len(batch) - 2)


def _forwarding(t: dict[str, Any]) -> None:
    """DEP-14: the four seals of a privately routed command, rebuilt by hand."""
    relay = x25519_public(unhex(t, "relaySessionKey"))
    ephemeral, proxy = unhex(t, "ephemeralKey"), unhex(t, "proxyKey")
    corr, rfwd_corr = unhex(t, "corrId"), unhex(t, "rfwdCorrId")
    entity, version = unhex(t, "entityId"), t["version"]
    expect(len(corr) == len(rfwd_corr) == 24, t, "the nonces are 24 bytes")
    command, queue = unhex(t, "command"), unhex(t, "queueKey")
    expect(command == b"SKEY " + ss(_X25519_SPKI + x25519_public(queue)), t,
           "the command is not SKEY with the queueKey's public key")
    # signed over the relay session's ID, with the relay's session key of the proxy's
    # connection; from 16 the authorization is followed by '0', the session ID is implied
    authorized = ss(unhex(t, "sessionId")) + ss(corr) + ss(entity) + command
    authorization = _box(queue, relay, corr, hashlib.sha512(authorized).digest())
    inner = ss(authorization) + (b"0" if version >= 16 else b"") + ss(corr) + ss(entity) \
        + command
    expect(inner == unhex(t, "encoded"), t, "the inner transmission differs")
    sealed = _box(ephemeral, relay, corr, _padded_batch(inner))
    expect(sealed == unhex(t, "encTransmission"), t, "encTransmission differs")
    forwarded = (ss(corr) + version.to_bytes(2, "big")
                 + ss(_X25519_SPKI + x25519_public(ephemeral)) + sealed)
    expect(_box(proxy, relay, rfwd_corr, forwarded) == unhex(t, "encFwdTransmission"), t,
           "encFwdTransmission differs")
    answer = unhex(t, "answer")
    expect(answer == ss(b"") + ss(corr) + ss(entity) + b"OK", t, "the answer is not OK")
    response = _box(ephemeral, relay, corr[::-1], _padded_batch(answer))
    expect(response == unhex(t, "encResponse"), t, "encResponse differs")
    expect(_box(proxy, relay, rfwd_corr[::-1], ss(corr) + response)
           == unhex(t, "encFwdResponse"), t, "encFwdResponse differs")


def _message_body(t: dict[str, Any]) -> None:
    """DEP-7: the plaintext from its parts, the key from the two DH keys, the seal."""
    stamp = t["timestamp"].to_bytes(8, "big")
    if t["quota"]:
        expect(not t["notification"] and t["body"] == "", t, "the marker carries a timestamp")
        plaintext = b"QUOTA " + stamp
    else:
        plaintext = stamp + (b"T" if t["notification"] else b"F") + b" " + unhex(t, "body")
    expect(plaintext == unhex(t, "plaintext"), t, "the MSG plaintext differs")
    shared = x25519(unhex(t, "recipientDhPrivateKey"), unhex(t, "serverDhPublicKey"))
    key = salsa.hsalsa20(shared, bytes(16))
    expect((shared, key) == (unhex(t, "sharedSecret"), unhex(t, "rcvDhSecret")), t,
           "the shared secret or rcvDhSecret differs")
    expect(salsa.secretbox_open(key, unhex(t, "msgId"), unhex(t, "encBody"))
           == pad(plaintext, 16106), t,
           "encBody is not the padded plaintext sealed with rcvDhSecret and the msgId")


def check_deployed(vectors: dict[str, Any]) -> int:
    checks = {"TransmissionTest": _transmission, "NewTest": _new, "IdsTest": _ids,
              "AnswerTest": _answer, "LinkDataTest": _link_data,
              "KeyEncodingTest": _key_encoding, "ForwardingTest": _forwarding,
              "MsgBodyTest": _message_body}
    for group, t in tests(vectors):
        if "version" in t or group["type"] not in ("LinkDataTest", "KeyEncodingTest",
                                                    "MsgBodyTest"):
            expect(6 <= t["version"] <= 18, t, "not a version deployed SMP defines (6-18)")
        checks[group["type"]](t)
    return confirmed(vectors)
