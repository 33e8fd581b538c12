"""A decoder for SMP commands and responses written by hand from the spec pages.

It shares nothing with smpref.wire: the layouts below were transcribed from the command
reference and deployed's encoders (CMD-1, CMD-20; simplexmq Protocol.hs:1681-1712, 1825-1863,
1947-2001), so that the encoding vectors are confirmed by a second reading of the spec rather
than by the codec tables that produced them. It returns the JSON form of
docs/json.md, or raises :class:`MalformedError` with ``unknown`` set for an undefined tag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smpref.errors import MalformedError

KEY_PREFIXES = {
    bytes.fromhex("302a300506032b6570032100"): ("Ed25519", 32),
    bytes.fromhex("302a300506032b656e032100"): ("X25519", 32),
    bytes.fromhex("3043300506032b6571033a00"): ("Ed448", 57),
    bytes.fromhex("3042300506032b656f033900"): ("X448", 56),
}
AUTH_KEYS = {"Ed25519", "Ed448", "X25519"}



class _In:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise MalformedError("short read")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def ss(self) -> bytes:
        return self.take(self.take(1)[0])

    def large(self) -> bytes:
        return self.take(int.from_bytes(self.take(2), "big"))

    def rest(self) -> bytes:
        out = self.data[self.pos :]
        self.pos = len(self.data)
        return out

    def word(self) -> str:
        end = self.data.find(b" ", self.pos)
        end = len(self.data) if end < 0 else end
        raw = self.data[self.pos : end]
        self.pos = end
        return raw.decode("ascii", "replace")

    def char(self, table: dict[bytes, str]) -> str:
        value = self.take(1)
        if value not in table:
            raise MalformedError(f"bad byte {value!r}")
        return table[value]

    def maybe(self, read: Callable[[], Any]) -> Any:
        flag = self.take(1)
        if flag == b"0":
            return None
        if flag == b"1":
            return read()
        raise MalformedError("bad Maybe byte")

    def space(self) -> None:
        if self.take(1) != b" ":
            raise MalformedError("expected a space")

    def end(self) -> None:
        if self.pos != len(self.data):
            raise MalformedError("trailing bytes")


def _key(i: _In, allowed: set[str]) -> dict[str, str]:
    der = i.ss()
    for prefix, (name, size) in KEY_PREFIXES.items():
        if der.startswith(prefix) and len(der) == len(prefix) + size and name in allowed:
            return {"algorithm": name, "raw": der[len(prefix) :].hex()}
    raise MalformedError("bad key")


def _auth_key(i: _In) -> dict[str, str]:
    return _key(i, AUTH_KEYS)


def _dh_key(i: _In) -> dict[str, str]:
    return _key(i, {"X25519"})


def _blob(i: _In) -> dict[str, Any]:
    inner = _In(i.large())
    count = inner.take(1)[0]
    if count == 0:
        raise MalformedError("empty blob")
    parts = [{"priority": inner.char({b"M": "Mandatory", b"O": "Optional"}),
              "sealed": inner.large().hex()} for _ in range(count)]
    inner.end()
    return {"parts": parts}


def _queue_link(i: _In) -> dict[str, Any]:
    return {"linkId": i.ss().hex(), "senderId": i.ss().hex(), "encLinkData": _blob(i)}


_MODE = {b"M": "Invitation", b"C": "Contact"}


def _new(i: _In) -> dict[str, Any]:
    return {
        "rcvAuthKey": _auth_key(i),
        "rcvDhKey": _dh_key(i),
        "basicAuth": i.maybe(lambda: i.ss().hex()),
        "subMode": i.char({b"S": "Subscribe", b"C": "OnlyCreate"}),
        "queueRequest": i.maybe(lambda: {"connMode": i.char(_MODE),
                                         "queueLink": i.maybe(lambda: _queue_link(i))}),
        "ntfRequest": i.maybe(lambda: {"notifierId": i.ss().hex(), "ntfAuthKey": _auth_key(i),
                                       "rcvNtfDhKey": _dh_key(i)}),
    }


def _bool(i: _In) -> bool:
    return i.char({b"T": "T", b"F": "F"}) == "T"


def _send(i: _In) -> dict[str, Any]:
    flags = {"notification": _bool(i)}
    i.space()
    return {"flags": flags, "body": i.rest().hex()}


def _ids(i: _In) -> dict[str, Any]:
    return {
        "rcvId": i.ss().hex(), "sndId": i.ss().hex(), "rcvPublicDhKey": _dh_key(i),
        "queueMode": i.maybe(lambda: i.char(_MODE)),
        "linkId": i.maybe(lambda: i.ss().hex()),
        "serviceId": i.maybe(lambda: i.ss().hex()),
        "serverNtfCreds": i.maybe(lambda: {"notifierId": i.ss().hex(),
                                           "srvNtfDhKey": _dh_key(i)}),
    }


_COMMAND_ERRORS = {"UNKNOWN", "SYNTAX", "PROHIBITED", "NO_AUTH", "HAS_AUTH", "NO_ENTITY"}
_HANDSHAKE = {"PARSE", "IDENTITY", "BAD_AUTH", "BAD_SERVICE"}


def _word_in(i: _In, words: set[str]) -> str:
    word = i.word()
    if word not in words:
        raise MalformedError(f"bad word {word!r}")
    return word


def _union(i: _In, plain: set[str], with_fields: dict[str, Callable[[_In], dict[str, Any]]]
           ) -> dict[str, Any]:
    tag = i.word()
    if tag in plain:
        return {"tag": tag}
    if tag in with_fields:
        i.space()
        return {"tag": tag, **with_fields[tag](i)}
    raise MalformedError(f"bad tag {tag!r}")


def _text(i: _In) -> str:
    try:
        return i.rest().decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedError("bad UTF-8") from None


def _transport_error(i: _In) -> dict[str, Any]:
    return _union(i, {"BLOCK", "VERSION", "LARGE_MSG", "SESSION", "NO_AUTH"},
                  {"HANDSHAKE": lambda j: {"error": _word_in(j, _HANDSHAKE)}})


def _broker_error(i: _In) -> dict[str, Any]:
    return _union(i, {"NETWORK", "TIMEOUT", "HOST", "NO_SERVICE"},
                  {"RESPONSE": lambda j: {"response": j.ss().hex()},
                   "UNEXPECTED": lambda j: {"response": j.ss().hex()},
                   "TRANSPORT": lambda j: {"error": _transport_error(j)}})


def _proxy_error(i: _In) -> dict[str, Any]:
    return _union(i, {"BASIC_AUTH", "NO_SESSION"},
                  {"PROTOCOL": lambda j: {"error": _error_type(j)},
                   "BROKER": lambda j: {"error": _broker_error(j)}})


def _error_type(i: _In) -> dict[str, Any]:
    return _union(i, {"BLOCK", "SESSION", "AUTH", "SERVICE", "CRYPTO", "QUOTA", "NO_MSG",
                      "LARGE_MSG", "EXPIRED", "INTERNAL"},
                  {"CMD": lambda j: {"error": _word_in(j, _COMMAND_ERRORS)},
                   "PROXY": lambda j: {"error": _proxy_error(j)},
                   "BLOCKED": lambda j: {"info": {"text": _text(j)}},
                   "STORE": lambda j: {"message": _text(j)}})


def _none(i: _In) -> dict[str, Any]:
    return {}


# tag -> how the fields after "TAG " read; None: the message has no fields
MESSAGES: dict[str, Callable[[_In], dict[str, Any]] | None] = {
    "NEW": _new,
    "KEY": lambda i: {"senderKey": _auth_key(i)},
    "SKEY": lambda i: {"senderKey": _auth_key(i)},
    "LSET": lambda i: {"encLinkData": _blob(i)},
    "LGET": lambda i: {"senderKey": i.maybe(lambda: _auth_key(i))},
    "NDEL": None, "SUB": None, "GET": None, "OFF": None, "DEL": None, "NSUB": None,
    "PING": None,
    "SEND": _send,
    "ACK": lambda i: {"msgId": i.ss().hex()},
    "IDS": _ids,
    "LINK": lambda i: {"sealed": i.rest().hex()},
    "MSG": lambda i: {"msgId": i.ss().hex(), "encBody": i.rest().hex()},
    "COUNT": lambda i: {"remaining": int.from_bytes(i.take(4), "big")},
    "OK": None, "END": None, "PONG": None,
    "NMSG": lambda i: {"nonce": i.take(24).hex(), "encMetadata": i.ss().hex()},
    "ERR": lambda i: {"error": _error_type(i)},
}


def decode(data: bytes) -> dict[str, Any]:
    """``{"tag": ..., "fields": {...}}`` of a command or response body."""
    space = data.find(b" ")
    tag_bytes = data if space < 0 else data[:space]
    tag = tag_bytes.decode("ascii", "replace")
    if tag not in MESSAGES:
        raise MalformedError(f"unknown tag {tag!r}", unknown=True)
    read = MESSAGES[tag]
    if read is None:
        if space >= 0:
            raise MalformedError("trailing bytes")
        return {"tag": tag, "fields": {}}
    if space < 0:
        raise MalformedError("missing fields")
    i = _In(data[space + 1 :])
    fields = read(i)
    i.end()
    return {"tag": tag, "fields": fields}
