"""The fields of the three kinds of log line: queue record, queue state, message (STORE-8).

Each ``*_fields`` function gives the fields of one line in their fixed order; each
``*_from_fields`` parses them back strictly and raises :class:`~smpref.store.lines.LineError`
naming the field. The field tables in spec/storage.md describe exactly these functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from smpref.crypto.ratchet import RatchetState
from smpref.errors import LineError, WireError
from smpref.model.records import Link, Notifier, QueueRecord, StoredRecord
from smpref.model.states import QueueStatus
from smpref.store.lines import b64, unb64
from smpref.wire.dialects import Dialect
from smpref.wire.keys import AUTH_ALGORITHMS, PublicKey
from smpref.wire.messages import ConnectionMode, LinkBlob, RecordKind

FORMAT_VERSION = "1"
T = TypeVar("T")

Fields = list[tuple[str, str]]


def _flag(value: bool) -> str:
    return "1" if value else "0"


def _int(fields: dict[str, str], name: str) -> int:
    text = _get(fields, name)
    if not text.isdigit() or (len(text) > 1 and text[0] == "0"):
        raise LineError(f"{name}: not a decimal number")
    return int(text)


def _bool(fields: dict[str, str], name: str) -> bool:
    text = _get(fields, name)
    if text not in ("0", "1"):
        raise LineError(f"{name}: not 0 or 1")
    return text == "1"


def _get(fields: dict[str, str], name: str) -> str:
    try:
        return fields[name]
    except KeyError:
        raise LineError(f"field {name} is missing") from None


def _key(text: str, what: str) -> PublicKey:
    try:
        return PublicKey.from_der(unb64(text, what), AUTH_ALGORITHMS)
    except WireError as exc:
        raise LineError(f"{what}: {exc}") from None


def _parts(text: str, what: str, count: int) -> list[str]:
    parts = text.split(",")
    if len(parts) != count:
        raise LineError(f"{what}: expected {count} comma-separated values")
    return parts


def _optional(fields: dict[str, str], name: str, parse: Callable[[str], T]) -> T | None:
    return parse(fields[name]) if name in fields else None


def _check_version(fields: dict[str, str], allowed: set[str]) -> None:
    if _get(fields, "v") != FORMAT_VERSION:
        raise LineError(f"v: unknown format version {fields['v']!r}")
    unknown = set(fields) - allowed
    if unknown:
        raise LineError(f"unknown field {sorted(unknown)[0]}")


# --- queue_rec.log --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LinkMeta:
    """What queue_rec.log says about the blob: its size and SHA-256, not its bytes (STORE-4)."""

    link_id: bytes
    size: int
    digest: bytes
    drop_on_send: bool


def record_fields(version: int, queue: QueueRecord, link: LinkMeta | None) -> Fields:
    """A queue_rec.log line: every field of the record except the ratchet and ``can_write``,
    which change with messages and live in queue_state.log."""
    fields: Fields = [
        ("v", FORMAT_VERSION), ("ver", str(version)), ("rid", b64(queue.recipient_id)),
        ("rk", b64(queue.recipient_key.der)), ("rdh", b64(queue.rcv_dh_secret)),
        ("own", b64(queue.owner_key)), ("sdh", b64(queue.server_dh_public)),
        ("sid", b64(queue.sender_id)), ("mode", str(queue.mode.value.decode())),
        ("upd", str(queue.updated_at)), ("off", _flag(queue.suspended)),
    ]
    if queue.sender_key is not None:
        fields.append(("sk", b64(queue.sender_key.der)))
    if link is not None:
        fields.append(("link", f"{b64(link.link_id)},{link.size},{b64(link.digest)},"
                               f"{_flag(link.drop_on_send)}"))
    if queue.notifier is not None:
        n = queue.notifier
        fields.append(("ntf", f"{b64(n.notifier_id)},{b64(n.key.der)},{b64(n.dh_secret)}"))
    if queue.dialect is Dialect.DEPLOYED:  # absent: seed, as every store written before DEP-1
        fields.append(("dia", "d"))
    return fields


_RECORD_FIELDS = {"v", "ver", "rid", "rk", "rdh", "own", "sdh", "sid", "mode", "upd", "off",
                  "sk", "link", "ntf", "dia"}


@dataclass(frozen=True, slots=True)
class StoredQueue:
    """A parsed queue_rec.log line: the record's fields without the blob, ratchet, can_write."""

    version: int
    recipient_id: bytes
    recipient_key: PublicKey
    rcv_dh_secret: bytes
    owner_key: bytes
    server_dh_public: bytes
    sender_id: bytes
    mode: ConnectionMode
    updated_at: int
    suspended: bool
    sender_key: PublicKey | None
    link: LinkMeta | None
    notifier: Notifier | None
    dialect: Dialect = Dialect.SEED

    @classmethod
    def of(cls, version: int, queue: QueueRecord, link: LinkMeta | None) -> StoredQueue:
        """What a queue_rec.log line written from ``queue`` holds."""
        return cls(version, queue.recipient_id, queue.recipient_key, queue.rcv_dh_secret,
                   queue.owner_key, queue.server_dh_public, queue.sender_id, queue.mode,
                   queue.updated_at, queue.suspended, queue.sender_key, link, queue.notifier,
                   queue.dialect)

    def queue(self, blob: LinkBlob | None, ratchet: RatchetState, can_write: bool
              ) -> QueueRecord:
        """The record, with the blob read from blob.data (None when it has no link)."""
        link = None
        if self.link is not None:
            assert blob is not None, "a queue with a link has a blob"
            link = Link(self.link.link_id, blob, self.link.size, self.link.drop_on_send)
        return QueueRecord(
            recipient_id=self.recipient_id, recipient_key=self.recipient_key,
            rcv_dh_secret=self.rcv_dh_secret, owner_key=self.owner_key,
            server_dh_public=self.server_dh_public, sender_id=self.sender_id, mode=self.mode,
            ratchet=ratchet, updated_at=self.updated_at, sender_key=self.sender_key,
            link=link, notifier=self.notifier,
            status=QueueStatus.SUSPENDED if self.suspended else QueueStatus.ACTIVE,
            can_write=can_write, dialect=self.dialect)


def _mode(text: str) -> ConnectionMode:
    for mode in ConnectionMode:
        if mode.value.decode() == text:
            return mode
    raise LineError("mode: not M or C")


def _link_meta(text: str) -> LinkMeta:
    lid, size, digest, drop = _parts(text, "link", 4)
    if drop not in ("0", "1") or not size.isdigit():
        raise LineError("link: bad size or drop flag")
    meta = LinkMeta(unb64(lid, "link id"), int(size), unb64(digest, "link digest"), drop == "1")
    if len(meta.digest) != 32:
        raise LineError("link digest: not 32 bytes")
    return meta


def _notifier(text: str) -> Notifier:
    nid, key, secret = _parts(text, "ntf", 3)
    return Notifier(unb64(nid, "notifier id"), _key(key, "notifier key"),
                    unb64(secret, "notifier dh secret"))


def record_from_fields(fields: dict[str, str]) -> StoredQueue:
    _check_version(fields, _RECORD_FIELDS)
    return StoredQueue(
        version=_int(fields, "ver"),
        recipient_id=unb64(_get(fields, "rid"), "rid"),
        recipient_key=_key(_get(fields, "rk"), "rk"),
        rcv_dh_secret=unb64(_get(fields, "rdh"), "rdh"),
        owner_key=unb64(_get(fields, "own"), "own"),
        server_dh_public=unb64(_get(fields, "sdh"), "sdh"),
        sender_id=unb64(_get(fields, "sid"), "sid"),
        mode=_mode(_get(fields, "mode")),
        updated_at=_int(fields, "upd"),
        suspended=_bool(fields, "off"),
        sender_key=_optional(fields, "sk", lambda t: _key(t, "sk")),
        link=_optional(fields, "link", _link_meta),
        notifier=_optional(fields, "ntf", _notifier),
        dialect=_dialect(fields.get("dia")),
    )


def _dialect(text: str | None) -> Dialect:
    if text is None:
        return Dialect.SEED
    if text != "d":
        raise LineError("dia: not d")
    return Dialect.DEPLOYED


# --- queue_state.log ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class QueueState:
    """A queue_state.log line: the commit point of every change to a queue (STORE-13).

    ``rec``: the version of the queue_rec.log line in force. ``journal``: the message journal's
    ID, or None when there is none. ``read_lines``/``read_bytes``: the consumed prefix of the
    journal. ``write_lines``/``write_bytes``: its committed size. Live records are the lines in
    between.
    """

    rec: int
    journal: str | None
    read_lines: int
    read_bytes: int
    write_lines: int
    write_bytes: int
    can_write: bool
    ratchet: RatchetState


def state_fields(state: QueueState) -> Fields:
    r = state.ratchet
    return [
        ("v", FORMAT_VERSION), ("rec", str(state.rec)), ("jnl", state.journal or "-"),
        ("rd", f"{state.read_lines},{state.read_bytes}"),
        ("wr", f"{state.write_lines},{state.write_bytes}"),
        ("cw", _flag(state.can_write)),
        ("rat", f"{r.seq},{b64(r.key)},{r.since_update}"),
    ]


def _pair(fields: dict[str, str], name: str) -> tuple[int, int]:
    a, b = _parts(_get(fields, name), name, 2)
    if not (a.isdigit() and b.isdigit()):
        raise LineError(f"{name}: not two decimal numbers")
    return int(a), int(b)


def state_from_fields(fields: dict[str, str]) -> QueueState:
    _check_version(fields, {"v", "rec", "jnl", "rd", "wr", "cw", "rat"})
    journal = _get(fields, "jnl")
    if journal != "-":
        unb64(journal, "jnl")
    read_lines, read_bytes = _pair(fields, "rd")
    write_lines, write_bytes = _pair(fields, "wr")
    if read_lines > write_lines or read_bytes > write_bytes:
        raise LineError("rd: past wr")
    seq, key, since = _parts(_get(fields, "rat"), "rat", 3)
    if not (seq.isdigit() and since.isdigit()):
        raise LineError("rat: bad sequence number or count")
    ratchet_key = unb64(key, "rat key")
    if len(ratchet_key) != 32:
        raise LineError("rat key: not 32 bytes")
    return QueueState(
        rec=_int(fields, "rec"), journal=None if journal == "-" else journal,
        read_lines=read_lines, read_bytes=read_bytes, write_lines=write_lines,
        write_bytes=write_bytes, can_write=_bool(fields, "cw"),
        ratchet=RatchetState(int(seq), ratchet_key, int(since)))


# --- messages.<id>.log ----------------------------------------------------------------------

def message_fields(record: StoredRecord) -> Fields:
    """A journal line: the server's metadata and the ratchet record, ciphertext (STORE-3)."""
    return [("v", FORMAT_VERSION), ("id", b64(record.msg_id)), ("ts", str(record.timestamp)),
            ("k", record.kind.value.decode()), ("n", _flag(record.notification)),
            ("d", b64(record.data))]


def message_from_fields(fields: dict[str, str]) -> StoredRecord:
    _check_version(fields, {"v", "id", "ts", "k", "n", "d"})
    kind_text = _get(fields, "k")
    kinds = [k for k in RecordKind if k.value.decode() == kind_text]
    if not kinds:
        raise LineError("k: not a record kind")
    return StoredRecord(unb64(_get(fields, "id"), "id"), _int(fields, "ts"),
                        _bool(fields, "n"), kinds[0], unb64(_get(fields, "d"), "d"))
