"""The conversation set as annotated hex: the docs page a reader follows byte by byte.

Rendered from conversation.json alone (``smpref docs vectors``): each block of each session in
order, its bytes split into the fields the spec names (TRANS-3, TRANS-4, TRANS-9, TRANS-10,
DEP-7), with every key and nonce that made it. Where a value is long (a certificate, a
16384-byte block) the page shows its start and end and names the vector that holds it whole.
"""

from __future__ import annotations

import json
from typing import Any

Json = Any
#: bytes of hex on one line of the page, and the characters they take (the annotation follows)
_WIDTH = 16
HEX_COLUMN = 3 * _WIDTH
SERVER = "server to client"


def _hex_lines(data: bytes, limit: int | None = None) -> list[str]:
    """Hex in lines of 32 bytes; beyond ``limit`` bytes, the first and last line only."""
    rows = [data[i:i + _WIDTH].hex(" ") for i in range(0, len(data), _WIDTH)] or [""]
    if limit is not None and len(data) > limit:
        hidden = len(data) - _WIDTH - (len(data) - 1) % _WIDTH - 1
        return [rows[0], f"… ({hidden} bytes not shown) …", rows[-1]]
    return rows


def _field(lines: list[str], data: bytes, meaning: str, limit: int | None = 256) -> None:
    """One field: its hex (indented) and, on the first line, what it is."""
    rows = _hex_lines(data, limit)
    lines.append(f"{rows[0]:<{HEX_COLUMN}}  {meaning}")
    lines.extend(rows[1:])


def _ss(lines: list[str], data: bytes, meaning: str, limit: int | None = 256) -> None:
    """A ShortString: its length byte, then its bytes."""
    if not data:
        _field(lines, b"\x00", f"length 0: {meaning}")
        return
    _field(lines, bytes([len(data)]), f"length {len(data)}")
    _field(lines, data, meaning, limit)


def _server_hello(lines: list[str], group: Json, hello: bytes, session_id: bytes) -> None:
    low, high = group["serverVersions"]
    _field(lines, hello[:2], f"Word16 min version {low}")
    _field(lines, hello[2:4], f"Word16 max version {high}")
    _ss(lines, session_id, "sessionId = tls-unique" + (
        "; a range below 7 ends here: no chain, no signed key" if high < 7 else ""))
    at = 5 + len(session_id)
    if high < 7:
        return
    certificates = [bytes.fromhex(c) for c in group["server"]["certificates"]]
    _field(lines, hello[at:at + 1], f"count {len(certificates)}: the certificate chain")
    at += 1
    for name, der in zip(("leaf (online) certificate", "identity (CA) certificate"),
                         certificates, strict=True):
        _field(lines, hello[at:at + 2], f"Large length {len(der)}")
        _field(lines, der, f"{name}, DER", limit=64)
        at += 2 + len(der)
    der = hello[at + 2:]
    _field(lines, hello[at:at + 2], f"Large length {len(der)}: the signed session key")
    _field(lines, der[:2], "DER SEQUENCE, 120 bytes")
    _field(lines, der[2:4], "DER SEQUENCE, 44 bytes: what is signed starts here")
    _field(lines, der[4:16], "X25519 SubjectPublicKeyInfo prefix")
    _field(lines, der[16:48], "the server's session key for this connection (X25519)")
    _field(lines, der[48:55], "AlgorithmIdentifier Ed25519")
    _field(lines, der[55:58], "BIT STRING, 65 bytes, 0 unused bits")
    _field(lines, der[58:], "Ed25519 signature by the leaf's key over bytes 2-47 above")


def _client_hello(lines: list[str], group: Json, hello: bytes) -> None:
    version = group["version"]
    _field(lines, hello[:2], f"Word16 version {version}, chosen from the server's range")
    _ss(lines, hello[3:35], "keyHash = SHA-256 of the identity certificate")
    rest = hello[35:]
    if version >= 7:
        _field(lines, rest[:1], "length 44: ss(the client's X25519 key, as an SPKI), "
               "with no Maybe byte")
        _field(lines, rest[1:13], "X25519 SubjectPublicKeyInfo prefix")
        _field(lines, rest[13:45], "the client's session key for this connection")
        rest = rest[45:]
    if version >= 14:
        _field(lines, rest[:1], "'F': not a proxy")
        rest = rest[1:]
    if version >= 16:
        _field(lines, rest[:1], "'0': no client service")


def _transmission(lines: list[str], group: Json, session_id: bytes, tx: Json,
                  encoded: bytes) -> None:
    version = group["version"]
    authorization = bytes.fromhex(tx["authorization"])
    signer = tx["signer"]
    _ss(lines, authorization, (
        f"authorization: the {signer}'s Ed25519 signature of ss(sessionId) ss(corrId) "
        "ss(entityId) command" if authorization else "authorization: none"))
    at = 1 + len(authorization)
    if authorization and version >= 16:
        _field(lines, encoded[at:at + 1], "'0': no service signature")
        at += 1
    if version < 7:
        _ss(lines, session_id, "sessionId, sent below version 7")
        at += 1 + len(session_id)
    corr = bytes.fromhex(tx["corrId"])
    _ss(lines, corr, "corrId" if corr else "corrId: empty, a pushed message")
    entity = bytes.fromhex(tx["entityId"])
    _ss(lines, entity, "entityId: the queue" if entity else "entityId: empty")
    at += 2 + len(corr) + len(entity)
    _field(lines, encoded[at:], f"command {tx['message']['tag']} (its fields below)",
           limit=128)


def _block(lines: list[str], group: Json, test: Json) -> None:
    connection = group["connections"][test["connection"]]
    session_id = bytes.fromhex(connection["tlsUnique"])
    content = bytes.fromhex(test["content"])
    lines += ["", "Content:", "```"]
    if "hello" in test:
        if test["direction"] == SERVER:
            _server_hello(lines, group, content, session_id)
        else:
            _client_hello(lines, group, content)
    else:
        _field(lines, content[:1], f"count {content[0]}: transmissions in this block")
        at = 1
        for tx in test["transmissions"]:
            size = int.from_bytes(content[at:at + 2], "big")
            _field(lines, content[at:at + 2], f"Large length {size}")
            _transmission(lines, group, session_id, tx, content[at + 2:at + 2 + size])
            at += 2 + size
    lines.append("```")
    for tx in test.get("transmissions", []):
        if tx["message"]["fields"]:
            lines += ["", f"The fields of {tx['message']['tag']} "
                      "([JSON form](../../json.md)):", "```json",
                      json.dumps(tx["message"]["fields"], indent=1), "```"]
        if "opened" in tx:
            _opened(lines, tx["opened"])
    block = bytes.fromhex(test["block"])
    if "chainKey" not in test:
        lines += ["", f"On the wire, the content padded to {len(block)} bytes: its length "
                  f"as Word16 (`{len(content).to_bytes(2, 'big').hex()}`), the content, "
                  f"then `23` ('#') to the end. Not encrypted"
                  + (": a hello never is." if "hello" in test else " below version 11.")]
        return
    lines += ["", "On the wire, encrypted (TRANS-10):", "```"]
    _field(lines, bytes.fromhex(test["chainKey"]), "chain key of this direction")
    _field(lines, bytes.fromhex(test["blockKey"]), "HKDF bytes 32-63: the secretbox key")
    _field(lines, bytes.fromhex(test["nonce"]), "HKDF bytes 64-87: the nonce")
    _field(lines, bytes.fromhex(test["nextChainKey"]), "HKDF bytes 0-31: the next chain key")
    _field(lines, block[:16], "Poly1305 tag")
    _field(lines, block[16:], "XSalsa20 of the content padded to 16368 bytes", limit=64)
    lines.append("```")


def _opened(lines: list[str], opened: Json) -> None:
    plain = bytes.fromhex(opened["plaintext"])
    lines += ["", "The MSG body, opened by the recipient (DEP-7):", "```"]
    _field(lines, bytes.fromhex(opened["sharedSecret"]),
           "X25519(recipient's dhPrivateKey, the server's key from IDS)")
    _field(lines, bytes.fromhex(opened["rcvDhSecret"]),
           "rcvDhSecret = HSalsa20(that secret, 16 zero bytes)")
    _field(lines, bytes.fromhex(opened["nonce"]), "nonce: the msgId")
    _field(lines, plain[:8], f"plaintext: Int64 timestamp {opened['timestamp']}")
    _field(lines, plain[8:9], "flag: 'T' notify, 'F' not")
    _field(lines, plain[9:10], "' '")
    _field(lines, plain[10:], "the body the sender sent")
    lines += [f"(padded to {opened['paddedLength']} bytes before sealing, tag first)", "```"]


def page(vectors: Json) -> str:
    """The annotated conversations, as Markdown."""
    lines = ["", "## The conversations, byte by byte", "",
             "Every block below is a test of `vectors/conversation.json` (its tcId in the "
             "heading), in the order sent. The group's keys come first; with them and the "
             "spec's layouts, each block can be computed from the ones before it."]
    for group in vectors["testGroups"]:
        version = group["version"]
        alpn = group["alpn"] or "none"
        lines += ["", f"### Version {version} (ALPN {alpn})", "",
                  "| key | value |", "|---|---|"]
        for name, c in group["connections"].items():
            for key, value in c.items():
                lines.append(f"| {name} {key} | `{value}` |")
        for name, keys in group["parties"].items():
            for key, value in keys.items():
                lines.append(f"| {name} {key} | `{value}` |")
        lines.append(f"| server tlsPrivateKey (Ed25519 seed) | "
                     f"`{group['server']['tlsPrivateKey']}` |")
        lines.append(f"| server keyHash | `{group['server']['keyHash']}` |")
        for test in group["tests"]:
            arrow = "→ server" if test["direction"] != SERVER else "← server"
            lines += ["", f"#### tcId {test['tcId']}: {test['connection']} {arrow}: "
                      f"{test['what']}"]
            _block(lines, group, test)
    return "\n".join(lines) + "\n"
