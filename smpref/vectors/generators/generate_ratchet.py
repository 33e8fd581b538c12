"""The ratchet.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.crypto.primitives import hkdf_sha512, x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    RatchetRecord,
    RcvMessage,
    RcvMsgFlags,
    RecordKind,
)

SET = VectorSet(
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


def groups() -> list[Json]:
    from smpref.crypto import ratchet as rt
    from smpref.crypto.primitives import aead_encrypt

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
        chain.append(entry(f"record {n} of the chain", ["QENC-1", "QENC-2", "QENC-3", "QENC-4",
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
        entry("gap: m1 was lost", ["QENC-8", "QENC-9", "DIV-30"], "acceptable", ["Gap"],
              delivered=[r.hex() for r in prefix[:2]], record=records[3][0],
              plaintext=records[3][1], keyAfter=records[3][2], **keys),
        entry("gap before a key update", ["QENC-8", "QENC-9"], "acceptable", ["Gap"],
              delivered=[r.hex() for r, _, _ in records[:update_at - 2]],
              record=records[update_at][0], keyAfter=records[update_at][2], **keys),
        entry("replay of m1", ["QENC-8"], "invalid", ["Replay"],
              delivered=[r.hex() for r in prefix], record=records[2][0], reason="replay",
              **keys),
        entry("reorder: m1 after m2", ["QENC-8"], "invalid", ["Reorder"],
              delivered=[r.hex() for r, _, _ in (records[0], records[1], records[3])],
              record=records[2][0], reason="replay", **keys),
        entry("tampered sequence number", ["QENC-8", "QENC-6"], "invalid", ["TamperedSeq"],
              delivered=[r.hex() for r in prefix], record=tampered_seq.encode(),
              reason="tampered", **keys),
        entry("wrong label", ["QENC-8", "QENC-10"], "invalid", ["WrongLabel"],
              delivered=[r.hex() for r in prefix], record=wrong_label.encode(),
              reason="tampered", **keys),
        entry("wrong kind", ["QENC-8", "QENC-6"], "invalid", ["WrongKind"],
              delivered=[r.hex() for r in prefix], record=wrong_kind.encode(),
              reason="tampered", **keys),
        entry("sealed sequence number differs", ["QENC-8", "QENC-6"], "invalid",
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
        tests.append(entry(f"MSG body {n}", ["QENC-7", "ROT-4", "DIV-21", "DIV-27", "DIV-29"],
                           ownerPrivateKey=owner, ownerPublicKey=x25519_public(owner),
                           serverQueuePrivateKey=server, msgId=msg_id, timestamp=timestamp,
                           notification=notification, last=last, record=record,
                           encBody=enc))
    return tests
