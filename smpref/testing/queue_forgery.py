"""The model's state machine: forged ratchet records (QENC-8). A record the server never sent,
made from one it did (replayed, a byte of its payload or header flipped, cut short, renumbered,
of another kind, past a gap, resealed), goes to copies of both ratchet mirrors, smpref's
owner's and the second implementation's (:mod:`smpref.independent.ratchet_mirror`): they must
agree on every verdict, refuse what the spec refuses, and keep their state when they refuse.
"""

from __future__ import annotations

import copy

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from smpref.crypto.primitives import sealed_box
from smpref.crypto.ratchet import MAX_SKIP
from smpref.errors import RatchetError
from smpref.independent.ratchet_mirror import RatchetMirror
from smpref.testing.machine_base import counted
from smpref.testing.queue_exchanges import PICK, QueueExchanges, QueueHandle
from smpref.wire.messages import SealedSecret

#: how a forged record is made from a delivered one (QENC-8): the same again, a byte of its
#: payload or of its header flipped, cut short, its sequence number moved on, its kind changed
FORGERIES = ("replay", "flip-payload", "flip-header", "truncate", "later-seq", "other-kind",
             "gap", "resealed")


def forge(record: bytes, forgery: str, at: int, by: int) -> bytes:
    """A record made from ``record`` (``kind(1) || seq(8) || payload``) by ``forgery``."""
    if forgery == "replay":
        return record
    if forgery == "flip-payload":  # a record without a payload (a quota marker) gets one
        if len(record) <= 9:
            return record + bytes([at % 256])
        i = 9 + at % (len(record) - 9)
        return record[:i] + bytes([record[i] ^ 1 + at % 255]) + record[i + 1:]
    if forgery == "flip-header":
        i = 1 + at % 8
        return record[:i] + bytes([record[i] ^ 1 + at % 255]) + record[i + 1:]
    if forgery == "truncate":
        return record[:at % len(record)]
    if forgery == "later-seq":
        seq = int.from_bytes(record[1:9], "big", signed=True) + by
        return record[:1] + seq.to_bytes(8, "big", signed=True) + record[9:]
    kinds = b"IMUQ"
    other = kinds[(kinds.index(record[0]) + 1 + at % 3) % 4] if record[:1] in (
        b"I", b"M", b"U", b"Q") else kinds[0]
    return bytes([other]) + record[1:]


def refused_by_spec(forgery: str, record: bytes, forged: bytes, next_seq: int) -> bool:
    """Whether QENC-8 refuses the forged record outright: a replay of anything but a quota
    marker at or beyond the next number, a changed payload or kind of a Message (it no
    longer decrypts), a record cut into its header."""
    kind = record[:1]
    if forgery == "replay":
        return not (kind == b"Q" and int.from_bytes(record[1:9], "big", signed=True) >= next_seq)
    if forgery in ("flip-payload", "other-kind"):
        return kind == b"M" and forged != record
    if forgery == "truncate":
        return len(forged) < 9
    return forgery == "resealed"  # its secret names another number, or does not open


#: smpref's refusal reasons in the second implementation's words (QENC-8): a gap beyond
#: MAX_SKIP is "gap"; a key record missing or a mirror never started cannot open: "tampered"
REASONS = {"malformed": "malformed", "replay": "replay", "gap-too-large": "gap",
           "tampered": "tampered"}



class ForgedRecords(QueueExchanges):
    """The rule that forges records, beside the queue's own rules (it only reads the records
    the owner was delivered)."""

    def __init__(self) -> None:
        super().__init__()
        #: whether QENC-8's bound on a gap was forged in this run (once a run, whatever the
        #: forgery drawn)
        self.gaps_forged = False

    @precondition(lambda self: self.FORGES and any(h.records_seen for h in self.handles))
    @rule(q=PICK, which=PICK, forgery=st.sampled_from(FORGERIES),
          at=st.integers(0, 1 << 20),
          by=st.integers(1, 2 * MAX_SKIP))
    @counted
    def forged_record(self, q: int, which: int, forgery: str, at: int,
                      by: int) -> None:
        """A record the server never sent, made from one it did (QENC-8): the owner's
        mirror must refuse what the spec refuses and keep its state then, and agree with the
        second implementation's mirror on every verdict. Both are copies: the real ones go
        on with the real records."""
        handles = [h for h in self.handles if h.records_seen]
        handle = handles[q % len(handles)]
        assert handle.independent is not None and handle.owner.mirror is not None
        record = handle.records_seen[which % len(handle.records_seen)]
        if forgery == "resealed":
            self._resealed(handle)
        elif forgery != "gap":
            self._forged(handle, record, forge(record, forgery, at, by), forgery)
        if forgery == "gap" or not self.gaps_forged:  # and the bound, once a run
            self._forge_gaps(handle, at, by)

    def _forge_gaps(self, handle: QueueHandle, at: int, by: int) -> None:
        """The latest record of each kind, renumbered to leave exactly ``by`` records unseen,
        and QENC-8's bound on a gap on both sides of it (MAX_SKIP - 1, MAX_SKIP, MAX_SKIP +
        1)."""
        assert handle.independent is not None
        self.gaps_forged = True
        self.stats["gaps forged"] += 1
        latest = {r[:1]: r for r in handle.records_seen if r[:1] != b"I"}
        for record in latest.values():
            seq = int.from_bytes(record[1:9], "big", signed=True)
            for gap in sorted({by, MAX_SKIP - 1, MAX_SKIP, MAX_SKIP + 1}):
                self._forged(handle, record, forge(
                    record, "later-seq", at, gap + handle.independent.next - seq), "gap")

    def _resealed(self, handle: QueueHandle) -> None:
        """Update records the server never made, numbered next, whose sealed secret (sealed
        to the owner's public key, as anyone can) names the number before or after, does not
        decode, or was changed on the way: QENC-5 and QENC-8 refuse each."""
        assert handle.independent is not None
        rnd = self.lb.client_random
        header = b"U" + handle.independent.next.to_bytes(8, "big", signed=True)
        owner = handle.owner.dh_key.public.raw
        sealed = [sealed_box(owner, SealedSecret(seq=handle.independent.next + delta,
                                                 secret=rnd(32)).encode(), rnd(32))
                  for delta in (-1, 1)]
        garbage = sealed_box(owner, b"not a sealed secret", rnd(32))
        flipped = sealed[0][:-1] + bytes([sealed[0][-1] ^ 1])
        for payload in (*sealed, garbage, flipped):
            self._forged(handle, header, header + payload, "resealed")
        # an Initial record numbered next, its secret naming that number: a key record is
        # missing, not a new start (QENC-8); and to mirrors that have seen nothing yet, a
        # quota marker numbered before the Initial record's 0
        initial = b"I" + header[1:]
        self._forged(handle, initial, initial + sealed_box(owner, SealedSecret(
            seq=handle.independent.next, secret=rnd(32)).encode(), rnd(32)), "resealed")
        early = b"Q" + (-1).to_bytes(8, "big", signed=True)
        self._forged(handle, early, early, "resealed", fresh=True)

    def _forged(self, handle: QueueHandle, record: bytes, forged: bytes, forgery: str, *,
                fresh: bool = False) -> None:
        """Copies of both mirrors take one forged record, and must agree (QENC-8); with
        ``fresh``, new mirrors of the queue's owner that have seen nothing yet."""
        assert handle.independent is not None and handle.owner.mirror is not None
        ours, theirs = copy.deepcopy(handle.owner.mirror), copy.deepcopy(handle.independent)
        if fresh:
            secret = handle.owner.dh_key.secret
            ours, theirs = type(ours)(secret), RatchetMirror(secret)
        before = (ours.next_seq, ours.key)
        why = ""
        try:
            verdict = ours.receive(forged).verdict.value
        except RatchetError as exc:
            verdict, why = "invalid", REASONS.get(exc.reason, "tampered")
        other, _, reason = theirs.receive(forged)
        seq = int.from_bytes(record[1:9], "big", signed=True)
        what = f"forged record ({forgery} of {record[:1].decode()}{seq})"
        assert (verdict, why) == (other, reason), (
            f"{what}: smpref's mirror says {verdict} ({why or 'no reason'}), the second "
            f"implementation {other} ({reason or 'no reason'})")
        refused = refused_by_spec(forgery, record, forged, theirs.next if fresh else
                                   handle.independent.next)
        if refused:
            assert verdict == "invalid", f"{what}: accepted, the spec refuses it (QENC-8)"
        if verdict == "invalid":
            assert (ours.next_seq, ours.key) == before, f"{what}: a refusal changed the state"
            self.stats["forged records refused"] += 1
