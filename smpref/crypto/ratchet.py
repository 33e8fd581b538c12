"""Seed 003 queue encryption: the server's hash ratchet and the owner's mirror (QENC-1..QENC-9).

Server side, per queue, the state is ``(seq, key, since_update)``:

* start: sample ``rk0``; store it; enqueue ``Initial(seq 0, sealed_box(owner, 0 || rk0))``;
* message: ``prk = HKDF-Extract("", key)``; ``mk = Expand(prk, "SimpleXQueueRatchet message")``;
  ``next = Expand(prk, "SimpleXQueueRatchet next")``; the record is ``Message(seq,
  ChaCha20-Poly1305(mk, nonce 0, aad = "SimpleXQueueRatchet" || kind || seq, body))``; the key
  is replaced by ``next`` and ``mk`` is forgotten;
* update: ``rot = Expand(prk, "SimpleXQueueRatchet rotation")``, fresh ``r``,
  ``key = HKDF(salt = r, ikm = rot, info = "SimpleXQueueRatchet update")``, and the record is
  ``Update(seq, sealed_box(owner, seq || r))`` with a fresh ephemeral key: a server that leaks
  its state later cannot open it, so the update restores secrecy (post-compromise security).

The mirror follows the same steps; ``ClientRatchet.receive`` states what it does on a gap, a
reorder, a replay or a tampered record (QENC-8).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from smpref.crypto.primitives import (
    aead_decrypt,
    aead_encrypt,
    hkdf_expand_sha512,
    hkdf_extract_sha512,
    hkdf_sha512,
    sealed_box,
    sealed_box_open,
)
from smpref.errors import CryptoError, RatchetError, WireError
from smpref.wire.buffer import Writer
from smpref.wire.messages import RatchetRecord, RecordKind, SealedSecret
from smpref.wire.schema import decode_struct

Random = Callable[[int], bytes]

LABEL_MESSAGE = b"SimpleXQueueRatchet message"
LABEL_NEXT = b"SimpleXQueueRatchet next"
LABEL_ROTATION = b"SimpleXQueueRatchet rotation"
LABEL_UPDATE = b"SimpleXQueueRatchet update"
AAD_PREFIX = b"SimpleXQueueRatchet"
NONCE = bytes(12)  # every message key encrypts exactly one record
KEY_SIZE = 32
#: the longest gap of lost (expired) messages the mirror skips over (QENC-8)
MAX_SKIP = 1024



def _steps(key: bytes) -> tuple[bytes, bytes]:
    """(message key, next key) from one ratchet key: one extract, two labelled expands."""
    prk = hkdf_extract_sha512(b"", key)
    return hkdf_expand_sha512(prk, LABEL_MESSAGE, KEY_SIZE), hkdf_expand_sha512(
        prk, LABEL_NEXT, KEY_SIZE)


def _updated(key: bytes, randomness: bytes) -> bytes:
    prk = hkdf_extract_sha512(b"", key)
    rotation = hkdf_expand_sha512(prk, LABEL_ROTATION, KEY_SIZE)
    return hkdf_sha512(randomness, rotation, LABEL_UPDATE, KEY_SIZE)


def record_aad(kind: RecordKind, seq: int) -> bytes:
    """The AEAD associated data: the label, the record kind and the sequence number."""
    w = Writer(AAD_PREFIX)
    w.raw(kind.value)
    w.int64(seq)
    return bytes(w)


def decode_record(data: bytes) -> RatchetRecord:
    """Decode a stored record (``RatchetRecord``), strictly."""
    return decode_struct(RatchetRecord, data)


@dataclass(frozen=True, slots=True)
class RatchetState:
    """The server's ratchet for one queue. ``seq`` is the next sequence number to assign."""

    seq: int
    key: bytes
    since_update: int = 0


def start(owner_public: bytes, random: Random) -> tuple[RatchetState, bytes]:
    """QENC-1: the initial key, and the Initial record sealed to the owner."""
    initial = random(KEY_SIZE)
    plaintext = SealedSecret(seq=0, secret=initial).encode()
    record = RatchetRecord(kind=RecordKind.Initial, seq=0,
                           payload=sealed_box(owner_public, plaintext, random(32)))
    return RatchetState(seq=1, key=initial), bytes(record.encode())


def encrypt(state: RatchetState, body: bytes) -> tuple[RatchetState, bytes]:
    """QENC-2: encrypt one message under a one-time key; the used keys are dropped."""
    message_key, next_key = _steps(state.key)
    kind = RecordKind.Message
    ciphertext = aead_encrypt(message_key, NONCE, record_aad(kind, state.seq), body)
    record = RatchetRecord(kind=kind, seq=state.seq, payload=ciphertext)
    return RatchetState(state.seq + 1, next_key, state.since_update + 1), bytes(record.encode())


def update(state: RatchetState, owner_public: bytes, random: Random
           ) -> tuple[RatchetState, bytes]:
    """QENC-4: mix fresh randomness into the key; seal it to the owner with a fresh key."""
    randomness = random(KEY_SIZE)
    plaintext = SealedSecret(seq=state.seq, secret=randomness).encode()
    record = RatchetRecord(kind=RecordKind.Update, seq=state.seq,
                           payload=sealed_box(owner_public, plaintext, random(32)))
    return RatchetState(state.seq + 1, _updated(state.key, randomness), 0), bytes(
        record.encode())


def quota_marker(state: RatchetState) -> bytes:
    """The quota marker record: it names the next sequence number and does not use it."""
    return bytes(RatchetRecord(kind=RecordKind.Quota, seq=state.seq, payload=b"").encode())


class RecordVerdict(enum.Enum):
    """What the mirror decided about a record (QENC-8); test vectors use the same words."""

    VALID = "valid"  # decrypted in order
    GAP = "acceptable"  # decrypted after skipping lost (expired) messages
    INVALID = "invalid"  # rejected; the state is unchanged



@dataclass(frozen=True, slots=True)
class Received:
    """A record the mirror accepted."""

    kind: RecordKind
    seq: int
    body: bytes | None  # the message (Message records); None for Initial, Update, Quota
    verdict: RecordVerdict
    skipped: int = 0


class ClientRatchet:
    """The owner's mirror of one queue's ratchet (QENC-5, QENC-8).

    On each record, in the order the server delivers them:

    * ``seq < next``: a replay or a reorder: rejected (``replay``); the key is gone.
    * ``seq == next``: decrypted and the state advances.
    * ``seq > next``, a Message or an Update: the records in between were lost messages (the
      server expires only Message records, QENC-9); the mirror steps over them, at most
      MAX_SKIP, without keeping their keys, and accepts the record with verdict
      ``acceptable`` if it decrypts or opens.
    * an Initial record other than the first (seq 0, first record): ``missing-key-record`` or
      ``replay``.
    * a Quota marker is accepted when ``seq >= next`` and changes nothing.
    * a record that does not decrypt (tampered payload, sequence number or kind): ``tampered``.

    A rejected record leaves the state unchanged.
    """

    def __init__(self, owner_secret: bytes) -> None:
        self.owner_secret = owner_secret
        self.next_seq = 0
        self.key: bytes | None = None

    def receive(self, data: bytes) -> Received:
        try:
            record = decode_record(data)
        except WireError as exc:
            raise RatchetError("malformed", str(exc)) from None
        kind, seq = record.kind, record.seq
        if kind is RecordKind.Quota:
            if seq < self.next_seq:
                raise RatchetError("replay", f"quota marker {seq} before {self.next_seq}")
            return Received(kind, seq, None, RecordVerdict.VALID)
        if seq < self.next_seq:
            raise RatchetError("replay", f"record {seq} was already received "
                                         f"(next is {self.next_seq})")
        if kind is RecordKind.Initial:
            return self._initial(record)
        if self.key is None:
            raise RatchetError("not-initialised", "no Initial record was received")
        skipped = seq - self.next_seq
        if skipped > MAX_SKIP:
            raise RatchetError("gap-too-large", f"{skipped} lost records, at most {MAX_SKIP}")
        key = self.key
        for _ in range(skipped):  # lost Message records: step over, keep none of their keys
            key = _steps(key)[1]
        verdict = RecordVerdict.GAP if skipped else RecordVerdict.VALID
        if kind is RecordKind.Update:
            randomness = self._open_secret(record)
            self.key, self.next_seq = _updated(key, randomness), seq + 1
            return Received(kind, seq, None, verdict, skipped)
        message_key, next_key = _steps(key)
        try:
            body = aead_decrypt(message_key, NONCE, record_aad(record.kind, record.seq),
                                record.payload)
        except CryptoError:
            raise RatchetError("tampered", f"message {record.seq} does not decrypt") from None
        self.key, self.next_seq = next_key, seq + 1
        return Received(kind, seq, body, verdict, skipped)

    def _initial(self, record: RatchetRecord) -> Received:
        # An Initial record numbered 0 after the first one was refused as a replay already.
        # mutant-equivalent[NotEq_Gt]: here seq >= next >= 0: a smaller (or negative) number was
        #   refused as a replay before
        if record.seq != 0:
            raise RatchetError("missing-key-record",
                               f"Initial record {record.seq} when {self.next_seq} is expected")
        self.key = self._open_secret(record)
        self.next_seq = 1
        return Received(record.kind, 0, None, RecordVerdict.VALID)

    def _open_secret(self, record: RatchetRecord) -> bytes:
        try:
            plaintext = sealed_box_open(self.owner_secret, record.payload)
            secret = decode_struct(SealedSecret, plaintext)
        except (CryptoError, WireError) as exc:
            raise RatchetError("tampered", f"key record {record.seq}: {exc}") from None
        if secret.seq != record.seq:
            raise RatchetError("tampered", f"sealed sequence number {secret.seq} is not "
                                           f"the record's {record.seq}")
        return bytes(secret.secret)

