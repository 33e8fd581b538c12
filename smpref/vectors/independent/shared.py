"""What the independent checkers share: reading tests, HKDF, X25519, padding, hosts.

Nothing here imports smpref's codecs or crypto: these are the second code path that every
vector is checked along (pyca/cryptography, the standard library and this package only).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from smpref.errors import VectorCheckError
from smpref.independent.basics import hkdf, unpad, x25519, x25519_public
from smpref.independent.link_response import cb_nonce

__all__ = ["cb_nonce", "hkdf", "unpad", "x25519", "x25519_public"]


def unhex(test: dict[str, Any], name: str) -> bytes:
    return bytes.fromhex(test[name])








#: tcIds whose checks passed since the last :func:`reset` (the check in progress)
_CONFIRMED: set[int] = set()


def reset() -> None:
    """Start counting for a new check (the caller of a check does this)."""
    _CONFIRMED.clear()


def expect(condition: bool, test: dict[str, Any], what: str) -> None:
    """One assertion about one test; a test counts as confirmed once an assertion about it
    held, so a check that skips a test reports one fewer (:func:`confirmed`)."""
    if not condition:
        _CONFIRMED.clear()
        raise VectorCheckError(f"tcId {test['tcId']} ({test['comment']}): {what}")
    _CONFIRMED.add(test["tcId"])


def confirmed(vectors: dict[str, Any]) -> int:
    """How many of the file's tests the check asserted something about, counted, not
    declared: the number a check returns."""
    ids = {test["tcId"] for _, test in tests(vectors)}
    count = len(_CONFIRMED & ids)
    _CONFIRMED.clear()
    return count


def tests(vectors: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(group, test) for group in vectors["testGroups"] for test in group["tests"]]




LABEL_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def parse_host(text: str) -> str | None:
    if text.startswith("["):
        try:
            return f"[{ipaddress.IPv6Address(text[1:-1]).compressed}]"
        except ValueError:
            return None
    labels = text.split(".")
    if len(text) > 253 or not all(LABEL_RE.fullmatch(label) for label in labels):
        return None
    if labels[-1].isdigit():  # only a dotted quad may end in a numeric label
        octets = [int(label) for label in labels if label.isdigit() and len(label) <= 3]
        if len(labels) != 4 or len(octets) != 4 or max(octets) > 255 or any(
                len(label) > 1 and label[0] == "0" for label in labels):
            return None
    return text.lower()


META = ("tcId", "comment", "flags", "requirements", "result", "errorColumn")


def check_parsed(vectors: dict[str, Any], field: str,
                  parse: Callable[[str], dict[str, Any] | None]) -> int:
    """Text vectors: invalid ones do not parse; valid ones parse to exactly the vector's
    fields, and their canonical form parses to the same."""
    for _, t in tests(vectors):
        parsed = parse(t[field])
        if t["result"] == "invalid":
            expect(parsed is None, t, f"an invalid {field} parses")
            continue
        expect(parsed is not None, t, f"a valid {field} does not parse")
        assert parsed is not None
        expected = {k: v for k, v in t.items() if k not in (*META, field)}
        expect(parsed == expected, t, f"fields differ: {parsed} != {expected}")
        expect(parse(t["canonical"]) == parsed, t, "the canonical form differs")
    return confirmed(vectors)


def ss(data: bytes) -> bytes:
    return bytes([len(data)]) + data


def w16(n: int) -> bytes:
    """A big-endian Word16 (ENC-1)."""
    return n.to_bytes(2, "big")


def pad(content: bytes, size: int) -> bytes:
    """ENC-1's padding: the Word16 length, the content, then '#' up to ``size``."""
    return w16(len(content)) + content + b"#" * (size - 2 - len(content))


#: the SubjectPublicKeyInfo prefix of each key type a vector carries raw (ENC-5)
SPKI = {"Ed25519": bytes.fromhex("302a300506032b6570032100"),
        "X25519": bytes.fromhex("302a300506032b656e032100")}
