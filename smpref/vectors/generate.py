"""Generators of the vector sets, from fixed seeds (``smpref vectors generate``).

Each generator uses smpref's own code paths (smpref.crypto, smpref.wire,
smpref.text.short_links); the verifier in :mod:`smpref.vectors.independent` recomputes every
value another way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smpref.client.core import LinkKeys
from smpref.crypto.block_chain import CHAIN_INFO, CHAIN_INIT_INFO
from smpref.crypto.link_crypto import LINK_DATA_INFO, link_data_key, seal_link_response, seal_part
from smpref.crypto.primitives import cb_nonce, hkdf_sha512, x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.crypto.ratchet import LABEL_MESSAGE, LABEL_NEXT, LABEL_ROTATION, LABEL_UPDATE
from smpref.errors import UriSyntaxError
from smpref.text.short_links import parse_short_link
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    ERR,
    SUB,
    LinkBlob,
    LinkData,
    LinkPart,
    LinkPartPriority,
    NtfMetadata,
    OptionalLinkData,
    OptionalPartKind,
    QueueLink,
    RatchetRecord,
    RcvMessage,
    RcvMsgFlags,
    RecordKind,
)


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
         random(32), CHAIN_INIT_INFO, 64),
        ("block chain step (TRANS-10)", ["TRANS-10"], b"", random(32), CHAIN_INFO, 88),
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
        valid.append(_test(f"link part {i}: {len(plaintext)}-byte plaintext",
                           ["LINK-1", "LINK-2", "LINK-3", "LINK-4", "DIV-2", "DIV-8", "DIV-13"],
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
        tests.append(_test(f"LINK {i}", ["LINK-9", "LINK-10", "DIV-3", "DIV-12"], flags=flags,
                           sealed=sealed,
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
            extra = ["DIV-2"] if "Deployed" in flags else ["DIV-26"] if "?x=" in text else []
            tests.append(_test(f"rejected: {exc.what}", [*reqs, *extra], "invalid", flags,
                               link=text, errorColumn=exc.column))
            continue
        tests.append(_test("accepted", [*reqs, "SLINK-6", "SLINK-10", "DIV-1", "DIV-25"],
                           "valid", flags, link=text,
                           canonical=link.canonical(), type=link.link_type.name.lower(),
                           hosts=list(link.hosts), port=link.effective_port,
                           fingerprint=link.fingerprint or b"", linkKey=link.link_key,
                           linkId=link.link_id))
    return [{"type": "ShortLinkTest", "tests": tests}]




def corpus() -> dict[str, Any]:
    """Every vector file and schema by path relative to vectors/ (JSON objects)."""
    files: dict[str, Any] = {}
    for vector_set, groups in SETS.values():
        files[vector_set.filename] = vector_set.build(groups())
        files[vector_set.schema_filename] = vector_set.schema()
    return files



# --- ratchet ---------------------------------------------------------------------------------

RATCHET = VectorSet(
    name="ratchet",
    algorithm="seed 003 queue ratchet",
    header=("Records of one queue as the server stores and delivers them (QENC-1..QENC-10): "
            "the sealed initial key, messages under one-time keys from a labelled HKDF-SHA512 "
            "chain, ChaCha20-Poly1305 with aad 'SimpleXQueueRatchet' || kind || Int64 seq, and "
            "key updates sealed to the owner (libsodium sealed box). A test delivers "
            "'delivered' in order (all accepted) and then 'record', whose verdict is the test's "
            "result, as the owner's mirror decides it (QENC-8).",),
    test_fields={"ownerPrivateKey": "hex", "ownerPublicKey": "hex", "delivered": "strings",
                 "record": "hex", "plaintext": "hex", "keyAfter": "hex", "reason": "string",
                 "serverQueuePrivateKey": "hex", "msgId": "hex", "timestamp": "int",
                 "notification": "bool", "last": "bool", "encBody": "hex"},
    optional=frozenset({"plaintext", "keyAfter", "reason", "delivered", "serverQueuePrivateKey",
                        "msgId", "timestamp", "notification", "last", "encBody"}),
    notes={"Chain": "a step of a 64-message chain with key updates in the middle",
           "Gap": "messages before this one were lost (expired)",
           "Replay": "a record delivered again", "Reorder": "an older record after a newer",
           "TamperedSeq": "the record's sequence number was changed",
           "WrongLabel": "encrypted with a key derived under another label",
           "WrongKind": "the record kind was changed",
           "SealedSeq": "an update whose sealed sequence number differs from the record's"},
)


def ratchet_groups() -> list[Json]:
    from smpref.crypto import ratchet as rt
    from smpref.crypto.primitives import aead_encrypt, hkdf_sha512

    random = SeededRandom(b"vectors ratchet")
    owner = random(32)
    owner_public = x25519_public(owner)
    state, initial = rt.start(owner_public, random)
    records: list[tuple[bytes, bytes, bytes]] = [(initial, b"", state.key)]
    for i in range(64):
        if i in (20, 45):
            state, update = rt.update(state, owner_public, random)
            records.append((update, b"", state.key))
        body = b"message %d " % i + random(i % 7)
        state, record = rt.encrypt(state, body)
        records.append((record, body, state.key))
    keys: dict[str, Any] = {"ownerPrivateKey": owner, "ownerPublicKey": owner_public}
    chain = []
    for n, (record, body, key_after) in enumerate(records):
        chain.append(_test(f"record {n} of the chain", ["QENC-1", "QENC-2", "QENC-3", "QENC-4",
                                                         "QENC-5", "QENC-6", "QENC-10", "DIV-27",
                                                         "DIV-28"],
                           flags=["Chain"], delivered=[r.hex() for r, _, _ in records[:n]],
                           record=record, plaintext=body, keyAfter=key_after, **keys))
    # Verdicts (QENC-8) on a short prefix: Initial, m0, m1, m2.
    prefix = [r for r, _, _ in records[:3]]
    m2 = rt.decode_record(records[3][0])
    record_type = RatchetRecord
    wrong_kind = record_type(kind=RecordKind.Update, seq=m2.seq, payload=m2.payload)
    tampered_seq = record_type(kind=m2.kind, seq=m2.seq + 1, payload=m2.payload)
    # m2 again, encrypted with a key derived under a wrong label
    state2 = rt.RatchetState(seq=3, key=records[2][2])
    wrong_key = hkdf_sha512(b"", state2.key, b"SimpleXQueueRatchet msg", 32)
    wrong_label = record_type(kind=m2.kind, seq=3, payload=aead_encrypt(
        wrong_key, bytes(12), rt.record_aad(m2.kind, 3), records[3][1]))
    update_at = next(i for i, (r, _, _) in enumerate(records) if rt.decode_record(
        r).kind is RecordKind.Update)
    update_record = rt.decode_record(records[update_at][0])
    sealed_seq = record_type(kind=update_record.kind, seq=update_record.seq + 1,
                             payload=update_record.payload)
    verdicts = [
        _test("gap: m1 was lost", ["QENC-8", "QENC-9", "DIV-30"], "acceptable", ["Gap"],
              delivered=[r.hex() for r in prefix[:2]], record=records[3][0],
              plaintext=records[3][1], keyAfter=records[3][2], **keys),
        _test("gap before a key update", ["QENC-8", "QENC-9"], "acceptable", ["Gap"],
              delivered=[r.hex() for r, _, _ in records[:update_at - 2]],
              record=records[update_at][0], keyAfter=records[update_at][2], **keys),
        _test("replay of m1", ["QENC-8"], "invalid", ["Replay"],
              delivered=[r.hex() for r in prefix], record=records[2][0], reason="replay",
              **keys),
        _test("reorder: m1 after m2", ["QENC-8"], "invalid", ["Reorder"],
              delivered=[r.hex() for r, _, _ in (records[0], records[1], records[3])],
              record=records[2][0], reason="replay", **keys),
        _test("tampered sequence number", ["QENC-8", "QENC-6"], "invalid", ["TamperedSeq"],
              delivered=[r.hex() for r in prefix], record=tampered_seq.encode(),
              reason="tampered", **keys),
        _test("wrong label", ["QENC-8", "QENC-10"], "invalid", ["WrongLabel"],
              delivered=[r.hex() for r in prefix], record=wrong_label.encode(),
              reason="tampered", **keys),
        _test("wrong kind", ["QENC-8", "QENC-6"], "invalid", ["WrongKind"],
              delivered=[r.hex() for r in prefix], record=wrong_kind.encode(),
              reason="tampered", **keys),
        _test("sealed sequence number differs", ["QENC-8", "QENC-6"], "invalid",
              ["SealedSeq"], delivered=[r.hex() for r, _, _ in records[:update_at]],
              record=sealed_seq.encode(), reason="tampered", **keys),
    ]
    return [{"type": "RatchetChainTest", "tests": chain},
            {"type": "RatchetVerdictTest", "tests": verdicts},
            {"type": "MsgBodyTest", "tests": _msg_bodies(random, owner, records)}]


def _msg_bodies(random: SeededRandom, owner: bytes, records: list[Any]) -> list[Json]:
    """MSG's encBody (QENC-7): RcvMessage padded to 16106 and boxed with rcvDhSecret."""
    from smpref.crypto.primitives import box_key, secretbox
    from smpref.wire.blocks import pad

    rcv_message = RcvMessage
    flags = RcvMsgFlags
    from smpref.crypto.ratchet import decode_record

    tests = []
    for n, (record, _, _) in enumerate(records[:3]):
        server = random(32)
        msg_id, timestamp = random(24), 1_767_225_600 + n
        notification, last = n == 1, n == 2
        body = rcv_message(timestamp=timestamp, flags=flags(notification=notification,
                                                             last=last),
                           record=decode_record(record)).encode()
        enc = secretbox(box_key(x25519_public(owner), server), msg_id, pad(body, 16106))
        tests.append(_test(f"MSG body {n}", ["QENC-7", "ROT-4", "DIV-21", "DIV-27", "DIV-29"],
                           ownerPrivateKey=owner, ownerPublicKey=x25519_public(owner),
                           serverQueuePrivateKey=server, msgId=msg_id, timestamp=timestamp,
                           notification=notification, last=last, record=record,
                           encBody=enc))
    return tests


# --- auth ------------------------------------------------------------------------------------

AUTH = VectorSet(
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


def auth_groups() -> list[Json]:
    from smpref.crypto.auth import authenticator, sign
    from smpref.crypto.primitives import ed25519_public, ed25519_sign
    from smpref.wire.transmission import Transmission, authorized_bytes

    random = SeededRandom(b"vectors auth")
    seed = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    kat = [_test("RFC 8032 7.1 TEST 1", [], flags=["Ktv"], privateKey=seed,
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
        ed.append(_test(f"Ed25519, {case}", ["TRANS-4", "TRANS-5", "TRANS-6", "AUTH-1"],
                        "valid" if case == "valid" else "invalid", flags, sessionId=session,
                        corrId=corr, entityId=entity, command=command,
                        authorized=authorized_bytes(session, corr, entity, command),
                        transmission=Transmission(signature, corr, entity, command).encode(),
                        verifyKey=verify_key, signature=signature))
        queue_secret, server_secret = random(32), random(32)
        box = authenticator(queue_secret, x25519_public(server_secret), corr, authorized)
        verify_queue = x25519_public(random(32) if case == "wrong key" else queue_secret)
        x.append(_test(f"X25519 authenticator, {case}", ["TRANS-4", "TRANS-5", "TRANS-6",
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



# --- block -----------------------------------------------------------------------------------

BLOCK = VectorSet(
    name="block",
    algorithm="SMP transport blocks",
    header=("Padding (ENC-1), block content count(1) 1*Large(transmission) (TRANS-3) in a "
            "padded 16384-byte block (TRANS-2), and the block encryption chain of smp-wire "
            "2.4 (TRANS-10): chain keys from the session ID and the X25519 secret of the "
            "session keys, then per block a secretbox of the content padded to 16368 bytes.",),
    test_fields={"content": "hex", "paddedSize": "int", "padded": "hex",
                 "transmissions": "strings", "block": "hex", "sessionId": "hex",
                 "clientPrivateKey": "hex", "serverPrivateKey": "hex", "ck1": "hex",
                 "ck2": "hex", "contents": "strings", "blocks": "strings",
                 "direction": "string"},
    optional=frozenset({"content", "paddedSize", "padded", "transmissions", "block",
                        "sessionId", "clientPrivateKey", "serverPrivateKey", "ck1", "ck2",
                        "contents", "blocks", "direction"}),
    notes={"EmptyBatch": "a count of zero", "Trailing": "bytes after the last transmission",
           "Overlong": "a length that runs past the content",
           "Tampered": "a ciphertext byte was changed", "Reordered": "blocks out of order"},
)


def block_groups() -> list[Json]:
    from smpref.crypto.block_chain import BlockChain, chain_keys
    from smpref.crypto.primitives import x25519
    from smpref.wire.blocks import encode_batch, encode_block, pad

    random = SeededRandom(b"vectors block")
    pads = [_test(f"pad {len(c)} bytes to {n}", ["ENC-1"], content=c, paddedSize=n,
                  padded=pad(c, n)) for c, n in ((b"", 2), (b"abc", 8), (random(100), 256))]
    batch_items = [[random(40)], [random(10), b"", random(300)]]
    batches = [_test(f"{len(items)} transmissions", ["TRANS-2", "TRANS-3", "ENC-9"],
                     transmissions=[t.hex() for t in items], content=encode_batch(items),
                     block=encode_block(items)) for items in batch_items]
    good = encode_batch([b"abc"])
    batches += [
        _test("count 0", ["TRANS-3"], "invalid", ["EmptyBatch"], content=b"\x00"),
        _test("a byte after the last transmission", ["TRANS-3"], "invalid", ["Trailing"],
              content=good + b"\x00"),
        _test("length past the end", ["TRANS-3"], "invalid", ["Overlong"],
              content=b"\x01\x00\x09abc"),
    ]
    chains = []
    session, client, server = random(32), random(32), random(32)
    ck1, ck2 = chain_keys(session, x25519(client, x25519_public(server)))
    for direction, ck in (("server to client", ck1), ("client to server", ck2)):
        contents = [encode_batch([random(20 + 50 * i)]) for i in range(3)]
        chain = BlockChain(ck)
        blocks = [chain.encrypt(c) for c in contents]
        common: dict[str, Any] = {
                  "sessionId": session, "clientPrivateKey": client, "serverPrivateKey": server,
                  "ck1": ck1, "ck2": ck2, "direction": direction}
        chains.append(_test(f"three blocks, {direction}", ["TRANS-10"],
                            contents=[c.hex() for c in contents],
                            blocks=[b.hex() for b in blocks], **common))
        if direction == "server to client":
            tampered = bytearray(blocks[1])
            tampered[100] ^= 1
            chains += [
                _test("second block tampered", ["TRANS-10"], "invalid", ["Tampered"],
                      contents=[c.hex() for c in contents[:2]],
                      blocks=[blocks[0].hex(), bytes(tampered).hex()], **common),
                _test("blocks out of order", ["TRANS-10"], "invalid", ["Reordered"],
                      contents=[c.hex() for c in contents[:2]],
                      blocks=[blocks[1].hex(), blocks[0].hex()], **common),
            ]
    return [{"type": "PadTest", "tests": pads}, {"type": "BatchTest", "tests": batches},
            {"type": "BlockChainTest", "tests": chains}]



# --- encoding --------------------------------------------------------------------------------

ENCODING = VectorSet(
    name="encoding",
    algorithm="SMP command and response encodings",
    header=("Every command and response of spec/commands.smpn, with every optional field "
            "present and absent, and bodies that must be rejected: ERR CMD UNKNOWN for an "
            "undefined tag, ERR CMD SYNTAX otherwise (ENC-1..ENC-10). 'fields' is the JSON "
            "form of docs/cli.md (hex bytes, keys as algorithm and raw key).",),
    test_fields={"tag": "string", "fields": "object", "encoded": "hex", "error": "string"},
    optional=frozenset({"tag", "fields", "error"}),
    notes={"AllFields": "every Maybe present", "NoOptional": "every Maybe absent",
           "UnknownTag": "an undefined tag", "Truncated": "the last byte removed",
           "Extended": "one byte added", "BadByte": "a Maybe, Bool, enum or key byte is wrong"},
)


def _sample(codec: Any, random: SeededRandom, full: bool) -> Any:
    from smpref.wire import type_codecs as c

    if isinstance(codec, c.BoolCodec):
        return random(1)[0] % 2 == 0
    if isinstance(codec, c.IntCodec):
        return int.from_bytes(random(2), "big") % (codec.high + 1)
    if isinstance(codec, c.BytesCodec):
        if codec.size is not None:
            return random(codec.size)
        return random(24 if codec.prefix == 1 else 40)
    if isinstance(codec, c.TextCodec):
        return "text " + random(4).hex()
    if isinstance(codec, c.KeyCodec):
        from smpref.wire import PublicKey

        algorithms = sorted(codec.allowed, key=lambda a: a.label)
        alg = algorithms[random(1)[0] % len(algorithms)]
        return PublicKey(alg, random(alg.raw_length))
    if isinstance(codec, c.MaybeCodec):
        return _sample(codec.inner, random, full) if full else None
    if isinstance(codec, c.ListCodec):
        return tuple(_sample(codec.inner, random, full) for _ in range(2 if full else 1))
    if isinstance(codec, c.FramedCodec):
        return _sample(codec.inner, random, full)
    if isinstance(codec, c.EnumCodec):
        members = list(codec.enum_type)
        return members[random(1)[0] % len(members)]
    if isinstance(codec, c.UnionCodec):
        variants = sorted(codec.variants.values(), key=lambda v: (len(v.fields), v.tag))
        return _sample(variants[0], random, full)  # the simplest; ERR covers every variant
    if isinstance(codec, c.StructCodec):
        return codec.cls(**{f.attr: _sample(f.codec, random, full) for f in codec.fields})
    raise TypeError(codec)


# Rules and divergences each message's bytes also show (spec/encoding.md, divergences.md).
_EXTRA_ENCODING_REQUIREMENTS = {
    "NEW": ("ENC-5", "DIV-5", "DIV-6", "QUEUE-7", "DIV-15"), "KEY": ("ENC-5",),
    "SKEY": ("ENC-5",), "LGET": ("ENC-5", "DIV-4"), "LSET": ("DIV-7", "QUEUE-7", "DIV-15"),
    "IDS": ("ENC-5", "DIV-11"),
    "COUNT": ("DIV-19",), "ERR": ("ENC-8", "CMD-20"), "SUB": ("DIV-22",),
}


def encoding_groups() -> list[Json]:
    from smpref.wire import SCHEMA, message_to_json

    random = SeededRandom(b"vectors encoding")
    valid: list[Json] = []

    def add(message: Any, comment: str, flags: list[str]) -> None:
        form = message_to_json(message)
        reqs = [*message.DEF.requirements, "ENC-1", "ENC-6", "ENC-10", "CMD-1", "CMD-3",
                *_EXTRA_ENCODING_REQUIREMENTS.get(message.TAG, ())]
        valid.append(_test(comment, reqs, flags=flags, tag=form["tag"], fields=form["fields"],
                           encoded=message.encode()))

    for codec in SCHEMA.messages.values():
        tag = codec.definition.tag
        add(_sample(codec, random, True), f"{tag}, every field", ["AllFields"])
        if any(f.codec.type_name.startswith("Maybe") for f in codec.fields):
            add(_sample(codec, random, False), f"{tag}, no optional field", ["NoOptional"])
    from smpref.wire.type_codecs import UnionCodec

    error_type = SCHEMA.codecs["ErrorType"]
    assert isinstance(error_type, UnionCodec)
    err = ERR
    for variant in sorted(error_type.variants.values(), key=lambda v: v.tag):
        add(err(error=_sample(variant, random, True)), f"ERR {variant.tag.decode()}", [])
    return [{"type": "EncodingTest", "tests": valid + _encoding_rejections(valid)}]


def _encoding_rejections(valid: list[Json]) -> list[Json]:
    """Bodies smpref must reject, with the ERR its decoder answers (ENC-2, ENC-3, ENC-7)."""
    from smpref.notation import load, message_open_ended

    invalid: list[Json] = []

    def reject(data: bytes, comment: str, flags: list[str], extra: tuple[str, ...] = ()) -> None:
        """The error is what smpref's decoder answers (ENC-7); it must answer one."""
        from smpref.errors import UnknownCommandError, WireError
        from smpref.wire import decode_message

        try:
            decode_message(data)
        except UnknownCommandError:
            error = "UNKNOWN"
        except WireError:
            error = "SYNTAX"
        else:
            raise AssertionError(f"{comment}: smpref accepts it")
        invalid.append(_test(comment, ["ENC-2", "ENC-3", "ENC-7", *extra], "invalid", flags,
                             encoded=data, error=error))

    reject(b"FOO", "unknown tag", ["UnknownTag"])
    reject(b"send F x", "tags are upper case", ["UnknownTag"])
    defs = load()
    for test in list(valid):
        data = bytes.fromhex(test["encoded"])
        definition = defs.messages[test["tag"]]
        if test["tag"] == "ERR" or message_open_ended(defs, definition):
            continue  # a cut inside a field that reads to the end is another valid body (ENC-9)
        if "NoOptional" in test["flags"] and any(t["tag"] == test["tag"] and "AllFields"
                                                 in t["flags"] for t in valid):
            continue
        reject(data[:-1], f"{test['tag']} truncated", ["Truncated"])
        reject(data + b"\x00", f"{test['tag']} extended", ["Extended"])
    new = next(bytes.fromhex(t["encoded"]) for t in valid if t["tag"] == "NEW"
               and "NoOptional" in t["flags"])
    reject(new[:-3] + b"2" + new[-2:], "NEW with a Maybe byte '2'", ["BadByte"])
    reject(b"SEND X body", "SEND with a Bool byte 'X'", ["BadByte"])
    reject(b"KEY " + bytes([44]) + bytes(44), "KEY with a DER that is no key", ["BadByte"])
    reject(b"ERR CMD SYNTAXX", "ERR with an unknown CommandError", ["BadByte"])
    reject(b"ERR NOPE", "ERR with an unknown ErrorType", ["BadByte"])
    reject(b"SUB ", "SUB followed by a space", ["Extended"])
    reject(b"ERR CMD NO_QUEUE", "deployed's legacy NO_QUEUE spelling", ["BadByte"], ("DIV-23",))
    reject(b"SEND TF x", "a second SEND flag character", ["BadByte"], ("DIV-23",))
    reject(b"SEND", "SEND without its fields", ["Truncated"])
    return invalid



# --- address ---------------------------------------------------------------------------------

ADDRESS = VectorSet(
    name="address",
    algorithm="SMP server addresses and queue URIs",
    header=("Server addresses and queue URIs as deployed (URI-1..URI-10): parsed fields and "
            "deployed's canonical rendering (padded base64url, percent-encoded query values, "
            "extra hosts in srv= when the minimum client version is below 2, k=s for "
            "messaging queues below version 4), and strings that must be rejected.",),
    test_fields={"uri": "string", "canonical": "string", "keyHash": "hex", "hosts": "strings",
                 "port": "int", "basicAuth": "string", "senderId": "hex", "versions": "string",
                 "dhKey": "hex", "queueMode": "string", "kind": "string"},
    optional=frozenset({"canonical", "keyHash", "hosts", "port", "basicAuth", "senderId",
                        "versions", "dhKey", "queueMode", "kind"}),
    notes={"Legacy": "the legacy v1 form '#<dhKey>'", "Deployed": "a deployed test string",
           "UnknownParam": "an unknown query parameter, ignored as deployed does"},
)

_KH = "LcJUMfVhwD8yxjAiSaDzzGF3-kLG4Uh0Fl_ZIjrRwjI="
_DH = "MCowBQYDK2VuAyEAjiswwI3O_NlS8Fk3HJUW870EY2bAwmttMBsvRB9eV3o%3D"
_URIS: list[tuple[str, list[str], list[str]]] = [
    (f"smp://{_KH}@smp.simplex.im", [], ["URI-1", "URI-2", "URI-9"]),
    (f"smp://{_KH}:secret@a.org,b.onion:5223", [], ["URI-1", "URI-3"]),
    (f"smp://{_KH.rstrip('=')}@A.org", [], ["URI-2"]),
    (f"smp://{_KH}@smp.simplex.im/3456-w==#/?v=1-2&dh={_DH}", ["Deployed"], ["URI-4", "URI-6"]),
    (f"smp://{_KH}@smp.simplex.im:5223/3456-w==#{_DH.replace('%3D', '=')}", ["Legacy"],
     ["URI-7"]),
    (f"smp://{_KH}@h.org:5223/3456-w==#/?extra_param=abc&v=1&dh={_DH}", ["UnknownParam"],
     ["URI-8"]),
    (f"smp://{_KH}@a.org,b.onion/AQID#/?v=1-4&dh={_DH}&q=m", [], ["URI-5", "URI-6"]),
    (f"smp://{_KH}@a.org/AQID#/?v=2-4&dh={_DH}&q=m&srv=b.onion%2Cc.org", [], ["URI-6"]),
    (f"smp://{_KH}@a.org/AQID#/?v=1-3&dh={_DH}&k=s", [], ["URI-5", "URI-6"]),
    (f"smp://{_KH}@a.org/AQID#/?v=4&dh={_DH}&q=c", [], ["URI-6"]),
    ("smp://1234-w==@smp.simplex.im", ["Deployed"], ["URI-2"]),
    (f"smp://{_KH}@a.org/AQID#/?v=4-1&dh={_DH}", [], ["URI-5"]),
    (f"smp://{_KH}@a.org/AQID#/?v=1&dh=AAAA", [], ["URI-5"]),
    (f"smp://{_KH}@a.org/AQID#/?v=1&dh={_DH}&q=c&k=s", [], ["URI-5"]),
    (f"smp://{_KH}:pw@a.org/AQID#/?v=1&dh={_DH}", [], ["URI-4"]),
    (f"smp://{_KH}@a.org,a.org", [], ["URI-1"]),
]


def address_groups() -> list[Json]:
    from smpref.text.addresses import QueueUri, parse_uri

    tests = []
    for text, flags, reqs in _URIS:
        try:
            value = parse_uri(text)
        except UriSyntaxError as exc:
            extra = ["DIV-24"] if "1234-w" in text else []
            tests.append(_test(f"rejected: {exc.what}", [*reqs, *extra], "invalid", flags,
                               uri=text))
            continue
        server = value.server if isinstance(value, QueueUri) else value
        fields: dict[str, Any] = {"kind": "queue" if isinstance(value, QueueUri) else "server",
                                  "canonical": value.canonical(), "keyHash": server.key_hash,
                                  "hosts": list(server.hosts), "port": server.effective_port}
        if server.basic_auth is not None:
            fields["basicAuth"] = server.basic_auth
        if isinstance(value, QueueUri):
            fields.update(senderId=value.sender_id, versions=str(value.versions),
                          dhKey=value.dh_key.raw, queueMode=(value.queue_mode.name.lower()
                                                             if value.queue_mode else "none"))
        extra = ["DIV-26"] if "UnknownParam" in flags else []
        tests.append(_test("accepted", [*reqs, "URI-10", *extra], "valid", flags, uri=text,
                           **fields))
    return [{"type": "AddressTest", "tests": tests}]



# --- handshake -------------------------------------------------------------------------------

HANDSHAKE = VectorSet(
    name="handshake",
    algorithm="SMP handshake",
    header=("The server identity keyHash, SHA-256 of the identity certificate's DER (TRANS-1), "
            "with deployed SMP's own test CA as a known answer; the server's X25519 session key "
            "signed with its Ed25519 TLS key in the deployed DER layout; and the server and "
            "client hello messages (TRANS-9). tls-unique (TRANS-8) is a property of a live TLS "
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
           "WrongKey": "signed by another TLS key", "Tampered": "a signature byte was changed"},
)


def _certificates(random: SeededRandom) -> tuple[bytes, bytes, bytes]:
    """(leaf DER, identity DER, leaf seed): a deterministic Ed25519 chain."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding
    from cryptography.x509.oid import NameOID

    ca_key = Ed25519PrivateKey.from_private_bytes(random(32))
    leaf_seed = random(32)
    leaf_key = Ed25519PrivateKey.from_private_bytes(leaf_seed)
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
    return leaf.public_bytes(Encoding.DER), ca.public_bytes(Encoding.DER), leaf_seed


def handshake_groups() -> list[Json]:
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
    leaf, identity, leaf_seed = _certificates(random)
    hashes = [
        _test("deployed SMP's test CA", ["TRANS-1"], flags=["Deployed"], certificate=deployed,
              keyHash=key_hash(deployed),
              keyHashBase64url=base64.urlsafe_b64encode(key_hash(deployed)).decode()),
        _test("the chain's identity certificate", ["TRANS-1"], certificate=identity,
              keyHash=key_hash(identity),
              keyHashBase64url=base64.urlsafe_b64encode(key_hash(identity)).decode()),
    ]
    session = x25519_public(random(32))
    signed = signed_session_key(leaf_seed, session)
    tampered = signed[:-1] + bytes([signed[-1] ^ 1])
    keys = [
        _test("signed session key", ["TRANS-9"], tlsPublicKey=ed25519_public(leaf_seed),
              sessionKey=session, signedKey=signed),
        _test("signed by another key", ["TRANS-9"], "invalid", ["WrongKey"],
              tlsPublicKey=ed25519_public(random(32)), sessionKey=session, signedKey=signed),
        _test("tampered signature", ["TRANS-9"], "invalid", ["Tampered"],
              tlsPublicKey=ed25519_public(leaf_seed), sessionKey=session, signedKey=tampered),
    ]
    session_id = random(32)
    server = []
    for low, high, chain, key in ((6, 6, (), None), (6, 18, (leaf, identity), signed)):
        since_v7: dict[str, Any] = {} if key is None else {
            "certificates": [c.hex() for c in chain], "signedKey": key}
        server.append(_test(f"server hello, versions {low}-{high}", ["TRANS-9"],
                            minVersion=low, maxVersion=high, sessionId=session_id,
                            encoded=ServerHello(low, high, session_id, chain, key).encode(),
                            **since_v7))
    client_key = x25519_public(random(32))
    client = []
    for v, ckey in ((6, None), (11, client_key), (18, client_key)):
        present: dict[str, Any] = {}
        if ckey is not None:
            present["clientKey"] = ckey
        if v >= 14:
            present["proxyServer"] = False
        client.append(_test(f"client hello, version {v}", ["TRANS-9"], version=v,
                            keyHash=key_hash(identity),
                            encoded=ClientHello(v, key_hash(identity), ckey).encode(),
                            **present))
    return [{"type": "KeyHashTest", "tests": hashes}, {"type": "SignedKeyTest", "tests": keys},
            {"type": "ServerHelloTest", "tests": server},
            {"type": "ClientHelloTest", "tests": client}]



# --- notification ----------------------------------------------------------------------------

NOTIFICATION = VectorSet(
    name="notification",
    algorithm="SMP notification metadata",
    header=("NMSG's sealed metadata (MSG-7): crypto_box(rcvNtfDhSecret, nonce, "
            "pad(ss(msgId) || Int64 timestamp, 128)), where rcvNtfDhSecret is the X25519 "
            "agreement of the recipient's rcvNtfDhKey and the server's notifier key.",),
    test_fields={"recipientNtfPrivateKey": "hex", "serverNtfPrivateKey": "hex", "nonce": "hex",
                 "msgId": "hex", "timestamp": "int", "encMetadata": "hex"},
    notes={"Tampered": "a ciphertext byte was changed"},
)


def notification_groups() -> list[Json]:
    from smpref.crypto.primitives import box_key, secretbox
    from smpref.wire.blocks import pad

    random = SeededRandom(b"vectors notification")
    tests = []
    for n in range(3):
        recipient, server, nonce, msg_id = random(32), random(32), random(24), random(24)
        timestamp = 1_767_225_600 + 3600 * n
        meta = NtfMetadata(msg_id=msg_id, timestamp=timestamp).encode()
        sealed = secretbox(box_key(x25519_public(recipient), server), nonce, pad(meta, 128))
        common: dict[str, Any] = {"recipientNtfPrivateKey": recipient,
                                  "serverNtfPrivateKey": server,
                  "nonce": nonce, "msgId": msg_id, "timestamp": timestamp}
        tests.append(_test(f"NMSG metadata {n}", ["MSG-7", "CMD-34"], encMetadata=sealed,
                           **common))
        if n == 0:
            tests.append(_test("tampered", ["MSG-7"], "invalid", ["Tampered"],
                               encMetadata=sealed[:30] + bytes([sealed[30] ^ 1]) + sealed[31:],
                               **common))
    return [{"type": "NotificationTest", "tests": tests}]



# --- credential rules (in auth.json) ---------------------------------------------------------

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
                    answer = exc.smp_error
                tests.append(_test(f"{body.split(b' ')[0].decode()}, authorization {auth}, "
                                   f"entity {entity}", ["TRANS-7", "LINK-8"],
                                   transmission=tx.encode(), answer=answer))
    return tests


#: every vector set, in one place: its declaration and its generator
SETS: dict[str, tuple[VectorSet, Callable[[], list[Json]]]] = {
    s.name: (s, g) for s, g in (
        (HKDF, hkdf_groups), (LINK, link_groups), (LINK_RESPONSE, link_response_groups),
        (SHORT_LINK, short_link_groups), (RATCHET, ratchet_groups), (AUTH, auth_groups),
        (BLOCK, block_groups), (ENCODING, encoding_groups), (ADDRESS, address_groups),
        (HANDSHAKE, handshake_groups), (NOTIFICATION, notification_groups))
}
