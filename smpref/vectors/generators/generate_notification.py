"""The notification.json vector set: its declaration and its generator, from fixed seeds."""

from __future__ import annotations

from typing import Any

from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.vectors.generators.entries import entry
from smpref.vectors.vector_sets import Json, VectorSet
from smpref.wire.messages import (
    NtfMetadata,
)

SET = VectorSet(
    name="notification",
    algorithm="SMP notification metadata",
    header=("NMSG's sealed metadata (MSG-7): crypto_box(rcvNtfDhSecret, nonce, "
            "pad(ss(msgId) || Int64 timestamp, 128)), where rcvNtfDhSecret is the X25519 "
            "agreement of the recipient's rcvNtfDhKey and the server's notifier key.",),
    test_fields={"recipientNtfPrivateKey": "hex", "serverNtfPrivateKey": "hex", "nonce": "hex",
                 "msgId": "hex", "timestamp": "int", "encMetadata": "hex"},
    notes={"Tampered": "a ciphertext byte was changed"},
)


def groups() -> list[Json]:
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
        tests.append(entry(f"NMSG metadata {n}", ["MSG-7", "CMD-34"], encMetadata=sealed,
                           **common))
        if n == 0:
            tests.append(entry("tampered", ["MSG-7"], "invalid", ["Tampered"],
                               encMetadata=sealed[:30] + bytes([sealed[30] ^ 1]) + sealed[31:],
                               **common))
    return [{"type": "NotificationTest", "tests": tests}]
