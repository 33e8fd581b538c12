"""Model throughput: full queue lifecycles per second against the raw crypto they need.

One lifecycle, through the wire format both ways (smpref.testing.loopback):
NEW (owner), KEY (owner), SEND (sender, signed), SUB (owner: OK + MSG with the Initial
record), ACK (MSG with the message), ACK (OK); the owner opens both MSGs and runs the ratchet
mirror. That is 6 Ed25519 signatures, 6 verifications and 4 secretbox operations on padded
16,106-byte bodies (2 seals, 2 opens), besides X25519 agreements, sealed boxes, HKDF steps and
an AEAD that the baseline does not count.

The baseline, measured in the same run, is the raw libsodium cost (through PyNaCl) of exactly
those 6 signs, 6 verifies and 4 secretbox operations. The ratio model : baseline is the model's
overhead, Python and the uncounted crypto included.
Run: ``make bench`` (or ``python bench/model.py [--seconds S]``).
"""

from __future__ import annotations

import argparse
import platform
from collections.abc import Callable
from typing import Any

import nacl.bindings as sodium
from timing import rate

from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue
from smpref.testing.loopback import Loopback
from smpref.wire import message_class
from smpref.wire.messages import (
    ACK,
    KEY,
    NEW,
    SEND,
    SUB,
    ConnectionMode,
    MsgFlags,
    QueueRequest,
    SubscriptionMode,
)

SIGNS_PER_LIFECYCLE = 6
SECRETBOXES_PER_LIFECYCLE = 4
PADDED_BODY = 16106


def M(tag: str, **fields: Any) -> Any:  # noqa: N802
    return message_class(tag)(**fields)


def make_lifecycle() -> Callable[[], None]:
    lb = Loopback(seed=1)
    owner_conn, sender_conn = lb.connect(), lb.connect()
    mode = ConnectionMode.Invitation
    flags = MsgFlags(notification=False)
    request = QueueRequest(conn_mode=mode, queue_link=None)
    body = b"x" * 1000

    def lifecycle() -> None:
        rnd = lb.client_random
        owner = OwnedQueue(AuthKeyPair.ed25519(rnd), DhKeyPair.generate(rnd))
        ids = owner_conn.send(NEW(rcv_auth_key=owner.auth_key.public,
                                rcv_dh_key=owner.dh_key.public, basic_auth=None,
                                sub_mode=SubscriptionMode.OnlyCreate,
                                queue_request=request, ntf_request=None), key=owner.auth_key)
        owner.created(ids[0].message)
        rid = owner.recipient_id
        sender_key = AuthKeyPair.ed25519(rnd)
        assert owner_conn.send(KEY(sender_key=sender_key.public), rid,
                               owner.auth_key)[0].tag == "OK"
        assert sender_conn.send(SEND(flags=flags, body=body), owner.sender_id,
                                sender_key)[0].tag == "OK"
        initial = owner_conn.send(SUB(), rid, owner.auth_key)[1]
        owner.open_message(initial.message)
        message = owner_conn.send(ACK(msg_id=initial.message.msg_id), rid,
                                  owner.auth_key)[0]
        assert owner.open_message(message.message)[1].body == body
        assert owner_conn.send(ACK(msg_id=message.message.msg_id), rid,
                               owner.auth_key)[0].tag == "OK"

    return lifecycle


def make_baseline() -> Callable[[], None]:
    public, secret = sodium.crypto_sign_seed_keypair(b"\x01" * 32)
    message = b"m" * 120  # about the size of an authorized transmission
    key, nonce, padded = b"\x02" * 32, b"\x03" * 24, b"\x04" * PADDED_BODY
    sealed = sodium.crypto_secretbox_easy(padded, nonce, key)

    def baseline() -> None:
        for _ in range(SIGNS_PER_LIFECYCLE):
            signed = sodium.crypto_sign(message, secret)
            sodium.crypto_sign_open(signed, public)
        for _ in range(SECRETBOXES_PER_LIFECYCLE // 2):
            sodium.crypto_secretbox_easy(padded, nonce, key)
            sodium.crypto_secretbox_open_easy(sealed, nonce, key)

    return baseline


def make_full_baseline() -> Callable[[], None]:
    """Every libsodium call a lifecycle makes, without the model around it.

    Besides the 6 signs, 6 verifies and 4 secretboxes: 2 X25519 key agreements
    (crypto_box_beforenm: server and owner), 2 scalar multiplications by the base point (the
    server's queue key and the sealed box's ephemeral key), one sealed box and its opening,
    2 ratchet steps (an HKDF-SHA512 extract and two expands each) and one AEAD each way.
    """
    import hmac

    narrow = make_baseline()
    secret, public = b"\x05" * 32, sodium.crypto_scalarmult_base(b"\x06" * 32)
    key, nonce12 = b"\x07" * 32, b"\x00" * 12
    sealed = sodium.crypto_box_seal(b"s" * 40, sodium.crypto_scalarmult_base(secret))
    message = b"x" * 1000
    aead = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(message, b"a" * 28, nonce12, key)

    def full() -> None:
        narrow()
        for _ in range(2):
            sodium.crypto_box_beforenm(public, secret)
            sodium.crypto_scalarmult_base(secret)
            prk = hmac.digest(bytes(64), key, "sha512")
            hmac.digest(prk, b"SimpleXQueueRatchet message\x01", "sha512")
            hmac.digest(prk, b"SimpleXQueueRatchet next\x01", "sha512")
        sodium.crypto_box_seal(b"s" * 40, public)
        sodium.crypto_box_seal_open(sealed, sodium.crypto_scalarmult_base(secret), secret)
        sodium.crypto_aead_chacha20poly1305_ietf_encrypt(message, b"a" * 28, nonce12, key)
        sodium.crypto_aead_chacha20poly1305_ietf_decrypt(aead, b"a" * 28, nonce12, key)

    return full


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    model = rate(make_lifecycle(), args.seconds)
    raw = rate(make_baseline(), args.seconds)
    full = rate(make_full_baseline(), args.seconds)
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(f"{'lifecycles/s (model)':<40} {model:>10,.0f}")
    print(f"{'signs+verifies+secretboxes sets/s':<40} {raw:>10,.0f}   "
          f"model : baseline {raw / model:.2f}x")
    print(f"{'all primitive calls of a lifecycle, sets/s':<40} {full:>10,.0f}   "
          f"model : baseline {full / model:.2f}x")


if __name__ == "__main__":
    main()
