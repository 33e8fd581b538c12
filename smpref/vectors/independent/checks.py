"""Independent re-derivation of each vector set (the verifier's second code path).

Nothing here imports smpref.crypto, smpref.wire or smpref.links: X25519 comes from
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
from collections.abc import Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from smpref.vectors.independent import salsa


class VectorCheckError(Exception):
    """A vector does not hold under the independent path."""


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


def check_short_link(vectors: dict[str, Any]) -> int:
    for _, t in _tests(vectors):
        parsed = parse_short_link(t["link"])
        if t["result"] == "invalid":
            _expect(parsed is None, t, "an invalid link parses")
            continue
        _expect(parsed is not None, t, "a valid link does not parse")
        assert parsed is not None
        for name in ("canonical", "type", "hosts", "port", "fingerprint", "linkKey", "linkId"):
            _expect(parsed[name] == t[name], t, f"{name} differs")
        _expect(parse_short_link(t["canonical"]) == parsed, t, "the canonical form differs")
    return int(vectors["numberOfTests"])


CHECKS: dict[str, Callable[[dict[str, Any]], int]] = {
    "hkdf.json": check_hkdf,
    "link.json": check_link,
    "link-response.json": check_link_response,
    "short-link.json": check_short_link,
}
