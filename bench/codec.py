"""Codec throughput: transmissions decoded and encoded per second, against a baseline.

Cases: PING, a SEND with a 16,000-byte body, and a full NEW with a QueueLink (and notifier
request). For each, the same run measures:

* decode: ``Transmission.decode`` + ``decode_transmission_message`` (fields, credential rule);
* encode: ``message.encode()`` + ``Transmission(...).encode()``;
* baseline: a bare ``memoryview`` loop over the same bytes that only slices out the
  transmission's parts and the command tag (the least work any pure-Python decoder must do).

The ratio decode/baseline is what to watch: it does not depend on the machine's speed.
Run: ``make bench`` (or ``python bench/codec.py [--seconds S]``). One process, one core.
"""

from __future__ import annotations

import argparse
import platform

from timing import rate

from smpref.wire import (
    KeyAlgorithm,
    Message,
    PublicKey,
    Transmission,
    decode_transmission_message,
)
from smpref.wire.messages import (
    NEW,
    PING,
    SEND,
    ConnectionMode,
    LinkBlob,
    LinkPart,
    LinkPartPriority,
    MsgFlags,
    NtfRequest,
    QueueLink,
    QueueRequest,
    SubscriptionMode,
)

SIG = b"\x01" * 64


def _key(alg: KeyAlgorithm, fill: int) -> PublicKey:
    return PublicKey(alg, bytes([fill]) * alg.raw_length)


def cases() -> dict[str, tuple[Message, Transmission]]:
    ping = PING()
    send = SEND(flags=MsgFlags(notification=True),
                                 body=b"m" * 16000)
    new = NEW(
        rcv_auth_key=_key(KeyAlgorithm.ED25519, 1),
        rcv_dh_key=_key(KeyAlgorithm.X25519, 2),
        basic_auth=b"server password",
        sub_mode=SubscriptionMode.Subscribe,
        queue_request=QueueRequest(
            conn_mode=ConnectionMode.Contact,
            queue_link=QueueLink(
                link_id=b"L" * 32, sender_id=b"S" * 24,
                enc_link_data=LinkBlob(parts=(LinkPart(
                    priority=LinkPartPriority.Mandatory, sealed=b"D" * 15000),
                ))),
        ),
        ntf_request=NtfRequest(
            notifier_id=b"N" * 24, ntf_auth_key=_key(KeyAlgorithm.ED25519, 3),
            rcv_ntf_dh_key=_key(KeyAlgorithm.X25519, 4)),
    )
    corr = b"c" * 24
    return {
        "PING": (ping, Transmission(b"", corr, b"", ping.encode())),
        "SEND 16 KB": (send, Transmission(b"", corr, b"s" * 24, send.encode())),
        "NEW + link": (new, Transmission(SIG, corr, b"", new.encode())),
    }


def baseline(data: bytes) -> bytes:
    """Slice the transmission's parts and the tag out of a memoryview, nothing more."""
    mv = memoryview(data)
    n = mv[0]
    pos = 1 + n + (1 if n else 0)  # authorization, and the service-signature Maybe byte
    n = mv[pos]
    _corr = bytes(mv[pos + 1 : pos + 1 + n])
    pos += 1 + n
    n = mv[pos]
    _entity = bytes(mv[pos + 1 : pos + 1 + n])
    pos += 1 + n
    command = bytes(mv[pos:])
    end = command.find(b" ")
    return command if end < 0 else command[:end]  # a tag alone (PING) has no space


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{platform.processor() or 'unknown cpu'}")
    print(f"{'case':<12} {'bytes':>6} {'decode/s':>10} {'encode/s':>10} "
          f"{'baseline/s':>11} {'baseline:decode':>16}")
    for name, (message, tx) in cases().items():
        data = tx.encode()
        assert decode_transmission_message(Transmission.decode(data)) == message
        decode_rate = rate(lambda d=data: decode_transmission_message(Transmission.decode(d)),
                           args.seconds)
        encode_rate = rate(lambda m=message, t=tx: Transmission(
            t.authorization, t.corr_id, t.entity_id, m.encode()).encode(), args.seconds)
        base_rate = rate(lambda d=data: baseline(d), args.seconds)
        print(f"{name:<12} {len(data):>6} {decode_rate:>10,.0f} {encode_rate:>10,.0f} "
              f"{base_rate:>11,.0f} {base_rate / decode_rate:>15.1f}x")


if __name__ == "__main__":
    main()
