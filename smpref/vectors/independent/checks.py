"""Independent re-derivation of each vector set (the verifier's second code path).

Nothing here imports smpref.crypto, smpref.wire or smpref.text.short_links: X25519 comes from
``cryptography``, HKDF is RFC 5869 written with ``hmac``, XSalsa20-Poly1305 and HSalsa20 from
their definitions (:mod:`.salsa`), and short links are parsed with a regular expression
written from spec/links.md. Each check returns how many tests it confirmed and raises
:class:`VectorCheckError` naming the test otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from smpref.errors import MalformedError, VectorCheckError
from smpref.vectors.independent import decoder, salsa


def _h(test: dict[str, Any], name: str) -> bytes:
    return bytes.fromhex(test[name])


def _hkdf(hash_name: str, salt: bytes, ikm: bytes, info: bytes, size: int) -> bytes:
    algorithm = {"SHA-512": "sha512", "SHA-256": "sha256"}[hash_name]
    prk = hmac.digest(salt or bytes(hashlib.new(algorithm).digest_size), ikm, algorithm)
    out, block, counter = b"", b"", 1
    while len(out) < size:
        block = hmac.digest(prk, block + info + bytes([counter]), algorithm)
        out, counter = out + block, counter + 1
    return out[:size]


def _x25519_public(secret: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def _x25519(secret: bytes, public: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(secret).exchange(
        X25519PublicKey.from_public_bytes(public))


def _expect(condition: bool, test: dict[str, Any], what: str) -> None:
    if not condition:
        raise VectorCheckError(f"tcId {test['tcId']} ({test['comment']}): {what}")


def _tests(vectors: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(group, test) for group in vectors["testGroups"] for test in group["tests"]]


def check_hkdf(vectors: dict[str, Any]) -> int:
    for group, t in _tests(vectors):
        okm = _hkdf(group["hash"], _h(t, "salt"), _h(t, "ikm"), _h(t, "info"), t["size"])
        _expect(okm == _h(t, "okm"), t, "HKDF output differs")
    return int(vectors["numberOfTests"])


def _unpad(padded: bytes) -> bytes | None:
    if len(padded) < 2 or int.from_bytes(padded[:2], "big") > len(padded) - 2:
        return None
    return padded[2 : 2 + int.from_bytes(padded[:2], "big")]


def _open_part(sb_key: bytes, sealed: bytes) -> bytes | None:
    if len(sealed) < 24 + 16 + 2:
        return None
    opened = salsa.secretbox_open(salsa.hsalsa20(sb_key, bytes(16)), sealed[:24], sealed[24:])
    return None if opened is None else _unpad(opened)


def check_link(vectors: dict[str, Any]) -> int:
    for group, t in _tests(vectors):
        pk = _h(t, "linkPrivateKey")
        _expect(_x25519_public(pk) == _h(t, "linkPublicKey"), t, "k is not the key of pk")
        if group["type"] == "X25519Test":
            shared = _x25519(pk, _h(t, "peerPublicKey"))
            _expect(shared == _h(t, "sharedSecret"), t, "X25519 shared secret differs")
            continue
        sb_key = _hkdf("SHA-512", b"", _h(t, "decryptKey"), b"SimpleXLinkData", 32)
        opened = _open_part(sb_key, _h(t, "sealed"))
        if t["result"] == "invalid":
            _expect(opened is None, t, "an invalid part opened")
            continue
        k = _h(t, "linkPublicKey")
        _expect(hashlib.sha256(k).digest() == _h(t, "linkId"), t, "linkId is not SHA-256(k)")
        _expect(sb_key == _h(t, "sbKey"), t, "sbKey differs")
        plaintext = _h(t, "plaintext")
        _expect(opened == plaintext, t, "the part does not open to the plaintext")
        padded_len = -(-(len(plaintext) + 2) // 256) * 256
        padded = len(plaintext).to_bytes(2, "big") + plaintext + b"#" * (padded_len - 2 -
                                                                          len(plaintext))
        nonce = _h(t, "nonce")
        resealed = nonce + salsa.secretbox(salsa.hsalsa20(sb_key, bytes(16)), nonce, padded)
        _expect(resealed == _h(t, "sealed"), t, "sealing again gives other bytes")
    return int(vectors["numberOfTests"])


def _cb_nonce(corr_id: bytes) -> bytes:
    return corr_id[:24] if len(corr_id) >= 24 else corr_id.ljust(24, b"\x00")


def check_link_response(vectors: dict[str, Any]) -> int:
    for _, t in _tests(vectors):
        server, k = _h(t, "serverSessionPrivateKey"), _h(t, "linkPublicKey")
        _expect(_x25519_public(server) == _h(t, "serverSessionPublicKey"), t,
                "server session public key differs")
        _expect(_x25519_public(_h(t, "linkPrivateKey")) == k, t, "k is not the key of pk")
        _expect(_cb_nonce(_h(t, "corrId")) == _h(t, "nonce"), t, "cbNonce(corrId) differs")
        shared = _x25519(_h(t, "linkPrivateKey"), _h(t, "serverSessionPublicKey"))
        _expect(shared == _x25519(server, k), t, "the two sides disagree on the secret")
        key = salsa.hsalsa20(shared, bytes(16))
        opened = salsa.secretbox_open(key, _cb_nonce(_h(t, "openCorrId")), _h(t, "sealed"))
        if t["result"] == "invalid":
            _expect(opened is None, t, "an invalid LINK opened")
            continue
        _expect(opened is not None and opened == _h(t, "queueLink"), t,
                "LINK does not open to the QueueLink")
        assert opened is not None
        # QueueLink starts with ss(linkId), and linkId must be SHA-256(k) (LINK-10)
        _expect(opened[0] == 32 and opened[1:33] == hashlib.sha256(k).digest(), t,
                "the QueueLink's link ID is not SHA-256(k)")
    return int(vectors["numberOfTests"])


_LINK_RE = re.compile(
    r"https://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?"
    r"/(?P<type>i|invitation|c|contact)/?#/?(?P<key>[A-Za-z0-9_-]+)(?:=|%3[Dd]){0,2}"
    r"(?:\?(?P<query>[^ ]*))?")
_LABEL_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _b64_32(text: str) -> bytes | None:
    text = text.replace("%3D", "=").replace("%3d", "=").rstrip("=")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


def _host(text: str) -> str | None:
    if text.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(text[1:-1]).compressed}]"
        except ValueError:
            return None
    labels = text.split(".")
    if len(text) > 253 or not all(_LABEL_RE.fullmatch(label) for label in labels):
        return None
    return text.lower()


def parse_short_link(text: str) -> dict[str, Any] | None:
    """A short link's fields, or None if it is not a valid seed 004 link (spec/links.md)."""
    m = _LINK_RE.fullmatch(text)
    if m is None:
        return None
    host, key = _host(m["host"]), _b64_32(m["key"])
    port = int(m["port"]) if m["port"] else None
    if host is None or key is None or (port is not None and not 1 <= port <= 65535):
        return None
    hosts, fingerprint, seen = [host], None, set()
    for param in (m["query"].split("&") if m["query"] is not None else []):
        name, _, value = param.partition("=")
        if name in seen or name not in ("f", "h"):
            return None
        seen.add(name)
        if name == "f":
            fingerprint = _b64_32(value)
            if fingerprint is None:
                return None
        else:
            for extra in re.split(r",|%2[Cc]", value):
                parsed = _host(extra)
                if parsed is None or parsed in hosts:
                    return None
                hosts.append(parsed)
    kind = "i" if m["type"] in ("i", "invitation") else "c"
    canonical = f"https://{hosts[0]}{'' if port is None else f':{port}'}/{kind}#/"
    canonical += base64.urlsafe_b64encode(key).decode().rstrip("=")
    params = []
    if fingerprint is not None:
        params.append("f=" + base64.urlsafe_b64encode(fingerprint).decode().rstrip("="))
    if len(hosts) > 1:
        params.append("h=" + ",".join(hosts[1:]))
    canonical += ("?" + "&".join(params)) if params else ""
    return {"canonical": canonical, "type": "invitation" if kind == "i" else "contact",
            "hosts": hosts, "port": 443 if port is None else port,
            "fingerprint": (fingerprint or b"").hex(), "linkKey": key.hex(),
            "linkId": hashlib.sha256(_x25519_public(key)).hexdigest()}


_META = ("tcId", "comment", "flags", "requirements", "result", "errorColumn")


def _check_parsed(vectors: dict[str, Any], field: str,
                  parse: Callable[[str], dict[str, Any] | None]) -> int:
    """Text vectors: invalid ones do not parse; valid ones parse to exactly the vector's
    fields, and their canonical form parses to the same."""
    for _, t in _tests(vectors):
        parsed = parse(t[field])
        if t["result"] == "invalid":
            _expect(parsed is None, t, f"an invalid {field} parses")
            continue
        _expect(parsed is not None, t, f"a valid {field} does not parse")
        assert parsed is not None
        expected = {k: v for k, v in t.items() if k not in (*_META, field)}
        _expect(parsed == expected, t, f"fields differ: {parsed} != {expected}")
        _expect(parse(t["canonical"]) == parsed, t, "the canonical form differs")
    return int(vectors["numberOfTests"])


def check_short_link(vectors: dict[str, Any]) -> int:
    return _check_parsed(vectors, "link", parse_short_link)


# --- ratchet (QENC) --------------------------------------------------------------------------

_LABEL = b"SimpleXQueueRatchet "


def _expand(prk: bytes, label: bytes) -> bytes:
    return hmac.digest(prk, label + b"\x01", "sha512")[:32]  # one SHA-512 block is enough


def _sealed_open(owner: bytes, payload: bytes) -> bytes | None:
    """libsodium crypto_box_seal_open, from its construction."""
    if len(payload) < 48:
        return None
    epk = payload[:32]
    nonce = hashlib.blake2b(epk + _x25519_public(owner), digest_size=24).digest()
    key = salsa.hsalsa20(_x25519(owner, epk), bytes(16))
    return salsa.secretbox_open(key, nonce, payload[32:])


class _Mirror:
    """The owner's ratchet mirror, from spec/queue-encryption.md (QENC-8)."""

    def __init__(self, owner: bytes) -> None:
        self.owner, self.next, self.key = owner, 0, b""

    def receive(self, data: bytes) -> tuple[str, bytes, str]:
        """(verdict, plaintext, reason); the state changes only when not invalid."""
        if len(data) < 9 or data[:1] not in (b"I", b"M", b"U", b"Q"):
            return "invalid", b"", "malformed"
        kind, seq, payload = data[:1], int.from_bytes(data[1:9], "big", signed=True), data[9:]
        if kind == b"Q":
            return ("valid", b"", "") if seq >= self.next else ("invalid", b"", "replay")
        if seq < self.next:
            return "invalid", b"", "replay"
        if kind == b"I":
            secret = self._secret(seq, payload) if seq == 0 else None
            if secret is None:
                return "invalid", b"", "tampered"
            self.key, self.next = secret, 1
            return "valid", b"", ""
        skipped, key = seq - self.next, self.key
        for _ in range(skipped):
            key = _expand(hmac.digest(bytes(64), key, "sha512"), _LABEL + b"next")
        prk = hmac.digest(bytes(64), key, "sha512")
        verdict = "acceptable" if skipped else "valid"
        if kind == b"U":
            randomness = self._secret(seq, payload)
            if randomness is None:
                return "invalid", b"", "tampered"
            rotation = _expand(prk, _LABEL + b"rotation")
            self.key = _hkdf("SHA-512", randomness, rotation, _LABEL + b"update", 32)
            self.next = seq + 1
            return verdict, b"", ""
        aad = b"SimpleXQueueRatchet" + kind + data[1:9]
        try:
            body = ChaCha20Poly1305(_expand(prk, _LABEL + b"message")).decrypt(bytes(12),
                                                                               payload, aad)
        except InvalidTag:
            return "invalid", b"", "tampered"
        self.key, self.next = _expand(prk, _LABEL + b"next"), seq + 1
        return verdict, body, ""

    def _secret(self, seq: int, payload: bytes) -> bytes | None:
        plaintext = _sealed_open(self.owner, payload)
        if plaintext is None or len(plaintext) != 40:
            return None
        if int.from_bytes(plaintext[:8], "big", signed=True) != seq:
            return None
        return plaintext[8:]


def _check_msg_body(t: dict[str, Any]) -> None:
    """QENC-7: open encBody with X25519(owner, server queue key) and msgId as nonce."""
    _expect(_x25519_public(_h(t, "ownerPrivateKey")) == _h(t, "ownerPublicKey"), t,
            "owner key pair differs")
    shared = _x25519(_h(t, "ownerPrivateKey"), _x25519_public(_h(t, "serverQueuePrivateKey")))
    padded = salsa.secretbox_open(salsa.hsalsa20(shared, bytes(16)), _h(t, "msgId"),
                                  _h(t, "encBody"))
    _expect(padded is not None and len(padded) == 16106, t, "encBody does not open")
    assert padded is not None
    body = _unpad(padded)
    _expect(body is not None, t, "bad padding")
    assert body is not None
    flags = {b"T": True, b"F": False}
    _expect(int.from_bytes(body[:8], "big", signed=True) == t["timestamp"], t, "timestamp")
    _expect(flags.get(body[8:9]) == t["notification"], t, "notification flag")
    _expect(flags.get(body[9:10]) == t["last"], t, "last flag")
    _expect(body[10:11] == b" " and body[11:] == _h(t, "record"), t, "record differs")


def check_ratchet(vectors: dict[str, Any]) -> int:
    for group, t in _tests(vectors):
        if group["type"] == "MsgBodyTest":
            _check_msg_body(t)
            continue
        owner = _h(t, "ownerPrivateKey")
        _expect(_x25519_public(owner) == _h(t, "ownerPublicKey"), t, "owner key pair differs")
        mirror = _Mirror(owner)
        for i, earlier in enumerate(t["delivered"]):
            verdict, _, reason = mirror.receive(bytes.fromhex(earlier))
            _expect(verdict != "invalid", t, f"delivered record {i} is rejected ({reason})")
        verdict, body, reason = mirror.receive(_h(t, "record"))
        _expect(verdict == t["result"], t, f"verdict {verdict}, the vector says {t['result']}")
        if verdict == "invalid":
            _expect(reason == t["reason"], t, f"rejected as {reason}, not {t['reason']}")
            continue
        _expect(body == _h(t, "plaintext") if "plaintext" in t else not body, t,
                "plaintext differs")
        _expect(mirror.key == _h(t, "keyAfter"), t, "the ratchet key after it differs")
    return int(vectors["numberOfTests"])


# --- auth -----------------------------------------------------------------------------------


def _ss(data: bytes) -> bytes:
    return bytes([len(data)]) + data


# TRANS-7 and LINK-8, restated from the spec: the rule of each command.
_RULES = {"NEW": "creator", "SEND": "optional", "PING": "none", "LGET": "when"}
_COMMANDS = {"NEW", "KEY", "SKEY", "LSET", "LGET", "NDEL", "SUB", "SEND", "ACK", "GET", "OFF",
             "DEL", "NSUB", "PING"}


def _field(data: bytes, i: int) -> tuple[bytes, int]:
    if i >= len(data) or i + 1 + data[i] > len(data):
        raise ValueError("transmission field runs past the end")
    return data[i + 1 : i + 1 + data[i]], i + 1 + data[i]


def _credential_answer(transmission: bytes) -> str:
    auth, i = _field(transmission, 0)
    if len(auth) not in (0, 64, 80, 114):
        raise ValueError(f"authorization of {len(auth)} bytes")
    if auth:
        if transmission[i : i + 1] != b"0":
            raise ValueError("service signature byte")
        i += 1
    _, i = _field(transmission, i)
    entity, i = _field(transmission, i)
    command = transmission[i:]
    tag = command.split(b" ")[0].decode("ascii", "replace")
    if tag not in _COMMANDS:
        raise ValueError(f"not a command tag: {tag!r}")
    rule = _RULES.get(tag, "required")
    if rule == "when":
        rule = "required" if command.startswith(b"LGET 1") else "forbidden"
    if rule == "creator":
        return "CMD NO_AUTH" if not auth else "CMD HAS_AUTH" if entity else "ok"
    if rule == "none":
        return "CMD HAS_AUTH" if auth or entity else "ok"
    if not entity:
        return "CMD NO_ENTITY" if rule in ("optional", "forbidden") else "CMD NO_AUTH"
    if rule == "forbidden" and auth:
        return "CMD HAS_AUTH"
    if rule == "required" and not auth:
        return "CMD NO_AUTH"
    return "ok"


def check_auth(vectors: dict[str, Any]) -> int:
    for group, t in _tests(vectors):
        if group["type"] == "CredentialTest":
            answer = _credential_answer(_h(t, "transmission"))
            _expect(answer == t["answer"], t, f"credential rule: {answer}, not {t['answer']}")
            continue
        if "Ktv" in t["flags"]:
            key = Ed25519PrivateKey.from_private_bytes(_h(t, "privateKey"))
            _expect(key.sign(_h(t, "message")) == _h(t, "signature"), t, "signature differs")
            _expect(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
                    == _h(t, "verifyKey"), t, "public key differs")
            continue
        session, corr, entity = _h(t, "sessionId"), _h(t, "corrId"), _h(t, "entityId")
        command, signature = _h(t, "command"), _h(t, "signature")
        authorized = _ss(session) + _ss(corr) + _ss(entity) + command
        _expect(authorized == _h(t, "authorized"), t, "authorized bytes differ")
        _expect(_ss(signature) + b"0" + _ss(corr) + _ss(entity) + command
                == _h(t, "transmission"), t, "transmission bytes differ")
        if group["algorithm"] == "Ed25519":
            try:
                Ed25519PublicKey.from_public_bytes(_h(t, "verifyKey")).verify(signature,
                                                                              authorized)
                ok = True
            except InvalidSignature:
                ok = False
        else:
            shared = _x25519(_h(t, "serverSessionPrivateKey"), _h(t, "verifyKey"))
            expected = salsa.secretbox(salsa.hsalsa20(shared, bytes(16)), _cb_nonce(corr),
                                       hashlib.sha512(authorized).digest())
            ok = hmac.compare_digest(expected, signature)
        _expect(ok == (t["result"] == "valid"), t, f"verifies: {ok}, vector: {t['result']}")
    return int(vectors["numberOfTests"])


# --- block ----------------------------------------------------------------------------------


def _pad(content: bytes, size: int) -> bytes:
    return len(content).to_bytes(2, "big") + content + b"#" * (size - 2 - len(content))


def _batch(content: bytes) -> list[bytes] | None:
    """Block content as transmissions, or None when it is malformed (TRANS-3)."""
    if not content or content[0] == 0:
        return None
    items, pos = [], 1
    for _ in range(content[0]):
        if pos + 2 > len(content):
            return None
        n = int.from_bytes(content[pos : pos + 2], "big")
        if pos + 2 + n > len(content):
            return None
        items.append(content[pos + 2 : pos + 2 + n])
        pos += 2 + n
    return items if pos == len(content) else None


def check_block(vectors: dict[str, Any]) -> int:
    for group, t in _tests(vectors):
        if group["type"] == "PadTest":
            _expect(_pad(_h(t, "content"), t["paddedSize"]) == _h(t, "padded"), t, "padding")
        elif group["type"] == "BatchTest":
            items = _batch(_h(t, "content"))
            if t["result"] == "invalid":
                _expect(items is None, t, "malformed content parses")
                continue
            _expect(items == [bytes.fromhex(x) for x in t["transmissions"]], t, "batch")
            _expect(_pad(_h(t, "content"), 16384) == _h(t, "block"), t, "block padding")
        else:
            _check_chain(t)
    return int(vectors["numberOfTests"])


def _check_chain(t: dict[str, Any]) -> None:
    secret = _x25519(_h(t, "clientPrivateKey"), _x25519_public(_h(t, "serverPrivateKey")))
    okm = _hkdf("SHA-512", _h(t, "sessionId"), secret, b"SimpleXSbChainInit", 64)
    _expect(okm[:32] == _h(t, "ck1") and okm[32:] == _h(t, "ck2"), t, "chain keys differ")
    chains = {"server to client": okm[:32], "client to server": okm[32:]}
    _expect(t["direction"] in chains, t, f"unknown direction {t['direction']!r}")
    ck = chains[t["direction"]]
    ok = True
    for content, block in zip(t["contents"], t["blocks"], strict=True):
        step = _hkdf("SHA-512", b"", ck, b"SimpleXSbChain", 88)
        ck, key, nonce = step[:32], step[32:64], step[64:]
        opened = salsa.secretbox_open(salsa.hsalsa20(key, bytes(16)), nonce,
                                      bytes.fromhex(block))
        if opened is None or _unpad(opened) != bytes.fromhex(content):
            ok = False
            break
        _expect(len(bytes.fromhex(block)) == 16384 and len(opened) == 16368, t, "block size")
    _expect(ok == (t["result"] == "valid"), t, f"chain opens: {ok}, vector: {t['result']}")


# --- encoding -------------------------------------------------------------------------------


def check_encoding(vectors: dict[str, Any]) -> int:
    for _, t in _tests(vectors):
        try:
            decoded = decoder.decode(_h(t, "encoded"))
        except MalformedError as exc:
            _expect(t["result"] == "invalid", t, f"a valid body is rejected: {exc}")
            _expect(exc.unknown == (t["error"] == "UNKNOWN"), t, "the error kind differs")
            continue
        _expect(t["result"] == "valid", t, "an invalid body decodes")
        _expect(decoded == {"tag": t["tag"], "fields": t["fields"]}, t, "decoded fields differ")
    return int(vectors["numberOfTests"])


# --- address --------------------------------------------------------------------------------

_AUTHORITY = re.compile(r"smp://(?P<kh>[A-Za-z0-9_-]+(?:=|%3[Dd]){0,2})(?::(?P<auth>[A-Za-z0-9!$&'()*+;._~-]+))?"
                        r"@(?P<hosts>[^/:#]+(?:,[^/:#]+)*)(?::(?P<port>[0-9]{1,5}))?")
_X25519_SPKI = bytes.fromhex("302a300506032b656e032100")


def _b64(text: str) -> bytes | None:
    text = text.replace("%3D", "=").replace("%3d", "=").rstrip("=")
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        return None
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64_padded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


def parse_address(text: str) -> dict[str, Any] | None:
    """Server address or queue URI fields, from spec/addresses.md, or None."""
    m = _AUTHORITY.match(text)
    if m is None:
        return None
    key_hash = _b64(m["kh"])
    parsed_hosts = [_host(h) for h in m["hosts"].split(",")]
    hosts = [h for h in parsed_hosts if h is not None]
    port = int(m["port"]) if m["port"] else None
    if key_hash is None or len(key_hash) != 32 or len(hosts) != len(parsed_hosts) or len(
            set(hosts)) != len(hosts):
        return None
    if port is not None and not 1 <= port <= 65535:
        return None
    rest = text[m.end():]
    out: dict[str, Any] = {"keyHash": key_hash.hex(), "port": 5223 if port is None else port}
    if not rest:
        out.update(kind="server", hosts=hosts)
        if m["auth"]:
            out["basicAuth"] = m["auth"]
        auth = f":{m['auth']}" if m["auth"] else ""
        out["canonical"] = (f"smp://{_b64_padded(key_hash)}{auth}@{','.join(hosts)}"
                            f"{'' if port is None else f':{port}'}")
        return out
    if m["auth"]:
        return None
    return _parse_queue(rest, key_hash, hosts, port, out)


def _parse_queue(rest: str, key_hash: bytes, hosts: list[str], port: int | None,
                 out: dict[str, Any]) -> dict[str, Any] | None:
    q = re.fullmatch(r"/(?P<sid>[A-Za-z0-9_-]+=*)#(?P<frag>.*)", rest)
    if q is None:
        return None
    sender = _b64(q["sid"])
    frag, params = q["frag"], {}
    legacy_dh = None
    if not frag.startswith("/?"):
        legacy_dh, _, frag = frag.partition("/?")
        frag = "/?" + frag if frag else ""
    for param in (frag[2:].split("&") if frag else []):
        name, _, value = param.partition("=")
        if name in params:
            return None
        params[name] = urllib.parse.unquote(value)
    if legacy_dh and "dh" in params:
        return None
    version = params.get("v", "1" if legacy_dh else None)
    vm = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", version or "")
    dh = _b64(legacy_dh or params.get("dh", ""))
    if not sender or vm is None or dh is None:
        return None
    low, high = int(vm[1]), int(vm[2] or vm[1])
    if low > high or len(dh) != 44 or not dh.startswith(_X25519_SPKI):
        return None
    mode = {"m": "messaging", "c": "contact", None: "none"}.get(params.get("q"), "bad")
    if mode == "bad" or params.get("k", "s") != "s":
        return None
    if params.get("k") == "s":
        if mode == "contact":
            return None
        mode = "messaging"
    for extra in (params["srv"].split(",") if params.get("srv") else []):
        host = _host(extra)
        if host is None:
            return None
        if host not in hosts:
            hosts.append(host)
    in_authority = hosts[:1] if low < 2 else hosts
    canonical = (f"smp://{_b64_padded(key_hash)}@{','.join(in_authority)}"
                 f"{'' if port is None else f':{port}'}/{_b64_padded(sender)}#/?"
                 f"v={low if low == high else f'{low}-{high}'}"
                 f"&dh={urllib.parse.quote(_b64_padded(dh), safe='-_.~')}")
    if mode != "none":
        canonical += f"&q={mode[0]}"
    if mode == "messaging" and low < 4:
        canonical += "&k=s"
    if low < 2 and len(hosts) > 1:
        canonical += "&srv=" + urllib.parse.quote(",".join(hosts[1:]), safe="-_.~")
    out.update(kind="queue", hosts=hosts, senderId=sender.hex(), dhKey=dh[12:].hex(),
               versions=f"{low}" if low == high else f"{low}-{high}", queueMode=mode,
               canonical=canonical)
    return out


def check_address(vectors: dict[str, Any]) -> int:
    return _check_parsed(vectors, "uri", parse_address)


# --- handshake ------------------------------------------------------------------------------


def _signed_key_ok(t: dict[str, Any]) -> bool:
    der = _h(t, "signedKey")
    spki = bytes.fromhex("302a300506032b656e032100") + _h(t, "sessionKey")
    layout = (bytes.fromhex("3078302c") + spki + bytes.fromhex("300506032b6570034100"))
    if len(der) != 122 or der[:-64] != layout:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(_h(t, "tlsPublicKey")).verify(der[-64:],
                                                                          der[2:48])
    except InvalidSignature:
        return False
    return True


def _w16(n: int) -> bytes:
    return n.to_bytes(2, "big")


def check_handshake(vectors: dict[str, Any]) -> int:
    for group, t in _tests(vectors):
        kind = group["type"]
        if kind == "KeyHashTest":
            digest = hashlib.sha256(_h(t, "certificate")).digest()
            _expect(digest == _h(t, "keyHash"), t, "keyHash differs")
            _expect(base64.urlsafe_b64encode(digest).decode() == t["keyHashBase64url"], t,
                    "base64url form differs")
        elif kind == "SignedKeyTest":
            ok = _signed_key_ok(t)
            _expect(ok == (t["result"] == "valid"), t, f"signed key verifies: {ok}")
        elif kind == "ServerHelloTest":
            expected = _w16(t["minVersion"]) + _w16(t["maxVersion"]) + _ss(_h(t, "sessionId"))
            _expect((t["maxVersion"] >= 7) == ("certificates" in t and "signedKey" in t), t,
                    "the chain and signed key are there exactly from version 7")
            if t["maxVersion"] >= 7:
                certs = [bytes.fromhex(c) for c in t["certificates"]]
                _expect(bool(certs), t, "from version 7 the hello carries the chain")
                expected += bytes([len(certs)]) + b"".join(_w16(len(c)) + c for c in certs)
                expected += _w16(len(_h(t, "signedKey"))) + _h(t, "signedKey")
                _expect(_signed_key_ok({**t, "sessionKey": _h(t, "signedKey")[16:48].hex(),
                                        "tlsPublicKey": _leaf_key(certs[0]).hex()}), t,
                        "the hello's signed key does not verify with the leaf's key")
            _expect(expected == _h(t, "encoded"), t, "server hello bytes differ")
        else:
            expected = _w16(t["version"]) + _ss(_h(t, "keyHash"))
            _expect("clientKey" not in t or t["version"] >= 7, t, "a key before version 7")
            _expect(("proxyServer" in t) == (t["version"] >= 14), t,
                    "the proxy flag is there exactly from version 14")
            if "clientKey" in t:
                expected += _ss(bytes.fromhex("302a300506032b656e032100") + _h(t, "clientKey"))
            if t["version"] >= 14:
                expected += b"T" if t["proxyServer"] else b"F"
            if t["version"] >= 16:
                expected += b"0"
            _expect(expected == _h(t, "encoded"), t, "client hello bytes differ")
    return int(vectors["numberOfTests"])


def _leaf_key(certificate: bytes) -> bytes:
    from cryptography import x509

    key = x509.load_der_x509_certificate(certificate).public_key()
    assert isinstance(key, Ed25519PublicKey)
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def check_notification(vectors: dict[str, Any]) -> int:
    for _, t in _tests(vectors):
        shared = _x25519(_h(t, "recipientNtfPrivateKey"),
                         _x25519_public(_h(t, "serverNtfPrivateKey")))
        opened = salsa.secretbox_open(salsa.hsalsa20(shared, bytes(16)), _h(t, "nonce"),
                                      _h(t, "encMetadata"))
        if t["result"] == "invalid":
            _expect(opened is None, t, "tampered metadata opens")
            continue
        _expect(opened is not None and len(opened) == 128, t, "metadata does not open")
        assert opened is not None
        expected = _ss(_h(t, "msgId")) + t["timestamp"].to_bytes(8, "big")
        _expect(_unpad(opened) == expected, t, "metadata differs")
    return int(vectors["numberOfTests"])


CHECKS: dict[str, Callable[[dict[str, Any]], int]] = {
    "hkdf.json": check_hkdf,
    "link.json": check_link,
    "link-response.json": check_link_response,
    "short-link.json": check_short_link,
    "ratchet.json": check_ratchet,
    "auth.json": check_auth,
    "block.json": check_block,
    "encoding.json": check_encoding,
    "address.json": check_address,
    "handshake.json": check_handshake,
    "notification.json": check_notification,
}
